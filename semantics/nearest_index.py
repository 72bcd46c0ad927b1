"""Nearest source index as exact integer arithmetic in (x, in, out): the form a decomposition computes in the
graph when the lengths are known only at run time. Equal to ``affine`` + ``taps.nearest_pick`` + the edge
clamp for every length (tests/semantics/test_nearest_index.py checks every in, out in 1..40 against the
oracle's own taps, both ONNX conventions).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .coords import bind_resize
from .ir import ResizeIR
from .taps import axis_taps, nearest_pick


@dataclass(frozen=True)
class Linear:
    """c_in*in + c_out*out + c_one, integer coefficients: one coefficient of the index formula."""

    c_in: int
    c_out: int
    c_one: int

    def __call__(self, in_len, out_len):
        return self.c_in * in_len + self.c_out * out_len + self.c_one

    def __add__(self, other: "Linear") -> "Linear":
        return Linear(self.c_in + other.c_in, self.c_out + other.c_out, self.c_one + other.c_one)

    def times(self, k: int) -> "Linear":
        return Linear(k * self.c_in, k * self.c_out, k * self.c_one)

    def __str__(self) -> str:
        terms = [f"{c}*{n}" for c, n in ((self.c_in, "in"), (self.c_out, "out")) if c] + \
                ([str(self.c_one)] if self.c_one or not (self.c_in or self.c_out) else [])
        return " + ".join(terms).replace("+ -", "- ").replace("1*", "")


ONE = Linear(0, 0, 1)
# Largest output length whose index arithmetic (``NearestIndex``, p, q, r computed from the lengths) stays inside
# int32: the largest intermediate b*x + d stays below r*out with r <= 4*out (half-pixel modes with rounding), plus
# one r of slack for a quotient correction.
INT32_MAX_OUT = 23000


def _at_least(f, out_from: int, bound: int) -> bool:
    """Whether f(in, out) >= bound for every integer in >= 1, out >= ``out_from``, for f a polynomial of degree at
    most 2 (products of two ``Linear``): written in u = in - 1, v = out - out_from (both >= 0), every coefficient
    non-negative and the constant at least ``bound``. Sufficient only: False may be a bound it cannot see."""
    g = lambda u, v: f(1 + u, out_from + v)  # noqa: E731
    c0 = g(0, 0)
    cuu, cvv = (g(2, 0) - 2 * g(1, 0) + c0) / 2, (g(0, 2) - 2 * g(0, 1) + c0) / 2
    cu, cv, cuv = g(1, 0) - c0 - cuu, g(0, 1) - c0 - cvv, g(1, 1) - g(1, 0) - g(0, 1) + c0
    poly = lambda u, v: c0 + cu * u + cv * v + cuu * u * u + cvv * v * v + cuv * u * v  # noqa: E731
    if any(poly(u, v) != g(u, v) for u, v in ((3, 5), (7, 2), (11, 13))):
        return False  # not of degree 2: no claim
    return c0 >= bound and min(cu, cv, cuu, cvv, cuv) >= 0


@dataclass(frozen=True)
class NearestIndex:
    """The source index of output x along one resized axis, for every (in, out) with in, out >= 1:

        x                                  if copy_equal and in == out (an axis whose lengths agree is copied)
        clamp(out1, 0, in-1)               elif out1 is not None and out == 1
        clamp(floor((p*x + q) / r), 0, in-1)   otherwise (r > 0 there)

    p, q, r are integer-linear in (in, out), with the nearest rounding folded in, so the whole map is exact
    integer arithmetic for every run-time length. ``by_scale``: p, q, r read the common scale S / I of a
    keep_aspect_ratio_policy (``aspect_index``) in place of (in, out); the clamp, the out == 1 piece and the copy
    still read the axis' own lengths."""

    p: Linear
    q: Linear
    r: Linear
    out1: int | None = None
    copy_equal: bool = False
    by_scale: bool = False

    def indices(self, in_len: int, out_len: int, scale: tuple[int, int] | None = None):
        """The index table (int64 [out_len]) in numpy: what a lowering computes in the graph (``scale``: (I, S),
        the common scale's lengths, where ``by_scale``)."""
        x = np.arange(out_len, dtype=np.int64)
        if self.copy_equal and in_len == out_len:
            return x
        if self.out1 is not None and out_len == 1:
            return np.full(1, min(max(self.out1, 0), in_len - 1), dtype=np.int64)
        at = scale if self.by_scale else (in_len, out_len)
        p, q, r = (int(f(*at)) for f in (self.p, self.q, self.r))
        return np.clip((p * x + q) // r, 0, in_len - 1)

    # The pieces a graph may leave out because the formula already gives their values for every length (proven
    # on the formula's polynomials, ``_at_least``): fewer ops run per inference.

    def _out_from(self) -> int:
        return 1 if self.out1 is None else 2  # out == 1 takes the out1 piece where there is one

    def _out1_in_range(self) -> bool:
        return self.out1 is None or self.out1 <= 0  # a graph writes max(out1, 0): in range for every in >= 1

    def needs_low_clamp(self) -> bool:
        """Whether floor((p*x + q) / r) can fall below 0 for some x in [0, out-1] (or the out1 piece does)."""
        p, q, lo = self.p, self.q, self._out_from()
        return self.by_scale or not (self._out1_in_range() and _at_least(lambda i, o: q(i, o), lo, 0)
                    and _at_least(lambda i, o: p(i, o) * (o - 1) + q(i, o), lo, 0))

    def needs_high_clamp(self) -> bool:
        """Whether floor((p*x + q) / r) can pass in-1 for some x in [0, out-1] (or the out1 piece does): r > 0 and
        p*x + q < r*in at both ends of x (linear in x) keep it below in."""
        p, q, r, lo = self.p, self.q, self.r, self._out_from()
        return self.by_scale or not (self._out1_in_range() and _at_least(lambda i, o: r(i, o), lo, 1)
                    and _at_least(lambda i, o: r(i, o) * i - q(i, o), lo, 1)
                    and _at_least(lambda i, o: r(i, o) * i - p(i, o) * (o - 1) - q(i, o), lo, 1))

    def needs_copy(self) -> bool:
        """Whether the copy of an axis of equal lengths L differs from the formula there: floor((p*x + q) / r) = x
        for x in [0, L-1] when r*x <= p*x + q < r*x + r at both ends of x (L = 1 with an out1 piece: 0 = x)."""
        if not self.copy_equal or self.by_scale:
            return self.copy_equal
        p, q, r, lo = self.p, self.q, self.r, self._out_from()

        def slack(x_of):  # (p - r)*x + q at x = x_of(out)
            return lambda i, o: (p(i, o) - r(i, o)) * x_of(o) + q(i, o)

        ends = (lambda n: 0, lambda n: n - 1)
        diag = lambda f: lambda i, o: f(o, o)  # noqa: E731 -- in = out = L, L from out's own lower bound
        return not (self._out1_in_range() and _at_least(diag(r), lo, 1) and all(
            _at_least(diag(slack(e)), lo, 0) and _at_least(diag(lambda i, o, e=e: r(i, o) - slack(e)(i, o)), lo, 1)
            for e in ends))

    def __str__(self) -> str:
        s = f"floor(({self.p})*x + {self.q}) / ({self.r})), clamped to [0, in-1]"
        if self.out1 is not None:
            s += f"; {self.out1} at out == 1"
        if self.copy_equal:
            s += "; x where in == out"
        return s


@dataclass(frozen=True)
class NoNearestIndex:
    """Why a Resize has no exact integer index form (``field``: the IR field that decides it)."""

    reason: str
    field: str


# src = (p*x + q) / r per coordinate mode, output length from sizes (scale out/in, formula length out).
_BASE = {
    "asymmetric": (Linear(1, 0, 0), Linear(0, 0, 0), Linear(0, 1, 0)),          # x*in/out
    "half_pixel": (Linear(2, 0, 0), Linear(1, -1, 0), Linear(0, 2, 0)),         # ((2x+1)*in - out) / 2out
    "tf_half_pixel_for_nn": (Linear(2, 0, 0), Linear(1, 0, 0), Linear(0, 2, 0)),  # (2x+1)*in / 2out
    "align_corners": (Linear(1, 0, -1), Linear(0, 0, 0), Linear(0, 1, -1)),     # x*(in-1)/(out-1), out > 1
}
# pytorch_half_pixel is half_pixel but for its length-1 rule; half_pixel_symmetric's offset
# in/2 * (1 - out/formula_length) is 0 when the formula length is the integer out (sizes, stretch).
_BASE["pytorch_half_pixel"] = _BASE["half_pixel_symmetric"] = _BASE["half_pixel"]


def _rounded(p: Linear, q: Linear, r: Linear, rule: str):
    """Fold a nearest rounding of (p*x + q)/r into one floor: ceil(n/r) = floor((n + r - 1)/r),
    round half down ceil(n/r - 1/2) = floor((2n + r - 1)/2r), round half up floor((2n + r)/2r)."""
    if rule == "floor":
        return p, q, r
    if rule == "ceil":
        return p, q + r + Linear(0, 0, -1), r
    if rule == "round_prefer_floor":
        return p.times(2), q.times(2) + r + Linear(0, 0, -1), r.times(2)
    if rule == "round_prefer_ceil":
        return p.times(2), q.times(2) + r, r.times(2)
    return None


# Output-length rules that give exactly k*in for an integer scale k: the float products of onnxruntime and PyTorch
# too, for every output the forms take (k*in <= INT32_MAX_OUT < 2^24: exact in float32); OpenVINO's floor_eps adds
# 1e-6 to k, which drifts from 10^6 on.
_EXACT_SIZE_RULES = ("floor", "round", "floor_fp32", "floor_fp64")


def integer_scales(ir: ResizeIR) -> tuple[int, ...] | None:
    """The scales of ``ir`` when every one is a static positive integer k under an exact length rule, else None.
    There out = k*in exactly, and the scale in the formula (k, or out/in) is out/in: the map is the one of
    sizes out = k*in, so the index form of sizes holds with out computed as k*in."""
    if not isinstance(ir.scales, tuple) or ir.size_rule not in _EXACT_SIZE_RULES:
        return None
    ks = [Fraction(s) for s in ir.scales]
    return tuple(int(k) for k in ks) if all(k.denominator == 1 and k > 0 for k in ks) else None


def run_time_form_refusal(ir: ResizeIR) -> NoNearestIndex | None:
    """Why no form over run-time lengths in integer arithmetic of (in, out) expresses ``ir`` (the nearest index
    form here, the antialias window form in ``window_form``), for what both share; None where nothing does."""
    if ir.aspect_policy != "stretch":
        return NoNearestIndex(f"keep_aspect_ratio_policy {ir.aspect_policy} derives the lengths from a rounded "
                              f"common scale", "keep_aspect_ratio_policy")
    if ir.coord not in _BASE:
        return NoNearestIndex(f"{ir.coord} reads the roi and an extrapolation value",
                              "coordinate_transformation_mode")
    if ir.pads:
        return NoNearestIndex("OpenVINO pads add zeros before the resize", "pads")
    return None


def common_refusal(ir: ResizeIR) -> NoNearestIndex | None:
    """Why no nearest index form holds for ``ir`` whatever gives its lengths (sizes or scales), or None."""
    if ir.sampler.kind != "nearest":
        return NoNearestIndex(f"{ir.sampler.kind} reads more than one tap (an index form is for nearest only)",
                              "mode")
    refused = run_time_form_refusal(ir)
    if refused is not None:
        return refused
    if ir.exclude_outside:
        return NoNearestIndex("exclude_outside turns a pick outside the input into 0", "exclude_outside")
    if _rounded(ONE, ONE, ONE, ir.sampler.nearest) is None:
        return NoNearestIndex(f"nearest rounding {ir.sampler.nearest} has no integer form here", "nearest_mode")
    return None


def resolved_simple(ir: ResizeIR) -> ResizeIR:
    """``ir`` with onnxruntime's Resize-10 / Upsample rounding "simple" (floor on an axis the user scale enlarges,
    ceil on one it shrinks: ``coords.bind_resize``) spelled as the one rule it is on every axis, where the static
    scales decide it alike (an axis of scale 1 reads whole coordinates: either rule); else ``ir`` itself."""
    if ir.sampler.kind != "nearest" or ir.sampler.nearest != "simple" or not isinstance(ir.scales, tuple) or \
            ir.scale_source != "user":
        return ir
    rules = {"ceil" if Fraction(s) < 1 else "floor" for s in ir.scales if Fraction(s) != 1}
    if len(rules) != 1:
        return ir
    return dataclasses.replace(ir, sampler=dataclasses.replace(ir.sampler, nearest=rules.pop()))


def nearest_index(ir: ResizeIR) -> NearestIndex | NoNearestIndex:
    """The exact integer source-index form shared by every resized axis of a nearest Resize whose output
    lengths are given (sizes, static or fed at run time) or whole multiples of the input lengths (static
    integer scales, ``integer_scales``), or why there is none."""
    ir = resolved_simple(ir)
    refused = common_refusal(ir)
    if refused is not None:
        return refused
    if ir.sizes is None and integer_scales(ir) is None:
        return NoNearestIndex("the output lengths come from scales (a float32 product, not a given length)"
                              if not isinstance(ir.scales, tuple) or ir.size_rule in _EXACT_SIZE_RULES else
                              f"the output lengths come from scales by the {ir.size_rule} rule", "scales")
    return _form(ir)


def _form(ir: ResizeIR, by_scale: bool = False) -> NearestIndex:
    """``_BASE``'s map of ``ir.coord`` with its rounding folded in, and its pieces at out == 1 and equal lengths."""
    s = ir.sampler
    folded = _rounded(*_BASE[ir.coord], s.nearest)
    # Output length 1: align_corners reads 0; pytorch_half_pixel reads 0 or -1/2 (its length1 rule), which
    # every rounding then clamps to 0. Elsewhere the general formula holds at out == 1 too.
    out1 = None
    if ir.coord == "align_corners":
        out1 = 0
    elif ir.coord == "pytorch_half_pixel":
        out1 = nearest_pick(Fraction(-1, 2) if ir.length1 == "minus_half" else Fraction(0), s.nearest)
    return NearestIndex(*folded, out1=out1, copy_equal=ir.equal_length_identity, by_scale=by_scale)


# The modes whose map reads the formula's output length (``coords.affine``): its length-1 rule, its span, its offset.
_READS_FORMULA_LENGTH = ("align_corners", "pytorch_half_pixel", "half_pixel_symmetric")


def aspect_index(ir: ResizeIR) -> NearestIndex | NoNearestIndex:
    """The index form of a nearest Resize whose sizes are kept to the input's aspect (keep_aspect_ratio_policy
    not_larger / not_smaller), or why there is none. Every resized axis then reads one common scale S / I: the
    smallest ratio sizes[k] / in[k] (not_larger) or the largest (not_smaller), and its output length is
    round_half_up(in * S / I) (``coords.bind_resize``). Its map is the sizes form's with (in, out) read as (I, S)
    where the mode's map reads the scale (every mode here but align_corners, whose map reads the axis' own
    lengths). Where the map reads the formula's output length (``_READS_FORMULA_LENGTH``), that length must be the
    integer one: half_pixel_symmetric's offset in/2 * (1 - out / formula length) is then 0."""
    refused = aspect_refusal(ir) or common_refusal(dataclasses.replace(ir, aspect_policy="stretch"))
    if refused is not None:
        return refused
    return _form(ir, by_scale=reads_scale(ir))


def aspect_refusal(ir: ResizeIR) -> NoNearestIndex | None:
    """Why no form reading one common scale S / I expresses ``ir`` (``aspect_index``, and the window's,
    ``window_form.aspect_window``), for what both share; None where nothing does."""
    if ir.aspect_policy == "stretch" or ir.sizes is None:
        return NoNearestIndex("the sizes are not kept to the input's aspect", "keep_aspect_ratio_policy")
    if ir.formula_length != "integer" and ir.coord in _READS_FORMULA_LENGTH:
        return NoNearestIndex(f"{ir.coord} reads the fractional output length in * S / I", "formula_length")
    return None


def reads_scale(ir: ResizeIR) -> bool:
    """Whether the coordinate map of ``ir`` reads its scale (under a keep-aspect policy the common S / I), every
    mode but align_corners, whose map reads the axis' own lengths."""
    return ir.coord != "align_corners"


def oracle_nearest_indices(ir: ResizeIR, in_len: int, out_len: int):
    """The oracle's own nearest taps (``bind_resize`` + ``taps.axis_taps``) for one axis of ``ir`` resized
    from in_len to out_len: what ``NearestIndex.indices`` must equal."""
    return oracle_nearest_taps(ir, in_len, out_len)[0]


def oracle_nearest_taps(ir: ResizeIR, in_len: int, out_len: int):
    """(index int64 [out], inside bool [out]) of ``oracle_nearest_indices``: ``inside`` False where the tap weighs
    0, a pick outside the input under exclude_outside (``taps._nearest_taps``)."""
    one = dataclasses.replace(ir, rank=1, axes=(0,), sizes=(int(out_len),), scales=None, roi=None,
                              input_shape=None, pads=())
    bound = bind_resize(one, (int(in_len),))
    return picks(bound, bound.axes[0] if bound.axes else None, out_len)


def picks(bound, axis, out_len: int):
    """(index int64 [out], inside bool [out]) of the oracle's nearest taps of ``axis`` of the bound resize
    ``bound`` (None: an axis it copies, every pick its own position and inside)."""
    if axis is None:
        return np.arange(out_len, dtype=np.int64), np.ones(out_len, dtype=bool)
    taps = axis_taps(axis, bound.sampler, bound.exclude_outside)
    return taps.index[:, 0], np.asarray(taps.weight[:, 0] != 0, dtype=bool)


def oracle_aspect_indices(ir: ResizeIR, in_lens: tuple, sizes: tuple, k: int):
    """The oracle's own nearest taps of the k-th resized axis of ``ir`` (keep_aspect_ratio_policy) for input lengths
    ``in_lens`` and ``sizes`` of its resized axes: what ``aspect_index`` must give there."""
    return oracle_aspect_taps(ir, in_lens, sizes, k)[0]


def oracle_aspect_taps(ir: ResizeIR, in_lens: tuple, sizes: tuple, k: int):
    """(index, inside) of ``oracle_aspect_indices``, as ``oracle_nearest_taps`` gives them."""
    n = len(in_lens)
    one = dataclasses.replace(ir, rank=n, axes=tuple(range(n)), sizes=tuple(int(v) for v in sizes), scales=None,
                              roi=None, input_shape=None, pads=())
    bound = bind_resize(one, tuple(int(v) for v in in_lens))
    mine = [a for a in bound.axes if a.axis == k]
    return picks(bound, mine[0] if mine else None, bound.out_shape[k])