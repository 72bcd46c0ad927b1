"""Rung 3 for a nearest Resize whose scales are fed at run time (a graph input, or computed in the graph): the
output lengths and the source index of every output computed in integers from the run-time scales, for every
resized axis at once, then one Gather per axis. Without it the node needs the extension: OpenVINO's Interpolate
fed the scales adds 1e-6 to L*s before flooring, and a float32 source coordinate decides a tie wrongly
(``coords.near_tolerance``: 0.5/s = 1.49999996 is 1.5 in float32).

Arithmetic. Each scale is s = M * 2^-F exactly (``scale_length.significand``), so each supported coordinate mode's
source is x = P/M - h with P = N * 2^(F+d) an integer (asymmetric: N = o, d = 0, h = 0; tf_half_pixel_for_nn:
N = 2o+1, d = -1, h = 0; half_pixel, pytorch_half_pixel: N = 2o+1, d = -1, h = 1/2), and every nearest rule is
q + base + [k*r against t*M] for q = floor(P/M), r = P - q*M (``_ROUND``). q comes from a float32 estimate of
P/M (pinned f32, within 1/16 of it for a source below 2^18) less one, made exact by its remainder: P - q*M =
(A - q*Mh) * 2^12 - q*Ml with A = N << (F+d-12) and M = Mh * 2^12 + Ml (``scale_length.halves``), every term
inside int32 (OpenVINO's CPU runs i64 as i32) because an output's source lies below its input length: A < 2^30.
align_corners is o*(L-1)/(out-1), a quotient of integers made exact the same way (``_corner_quotient``).
half_pixel_symmetric's offset reads L and out: its map is symmetric about the input's centre, so each half picks
from |2o+1-out| / (2s) the way tf_half_pixel_for_nn / half_pixel do, per parity of L-1 (``_centred``).

Shape. The axes are computed together, as rows of one [axes, longest output] table (a resized axis costs a
Gather and a Slice of its row, not its own ~40 small ops: OpenVINO spends about a microsecond per op); the
scales are read by a one-hot Select and a sum (a Gather of floats runs in bf16 under that hint, pinned or not),
and a float is never unsqueezed (same), so every op from the scales to the indices runs as written. Under
exclude_outside a pick outside the input weighs 0: each Gather's result is multiplied by which of its picks lie
inside (the unclamped index against [0, L-1]), as the oracle multiplies by the tap's weight.

Proof by numbers (``grid_verdict``): the index subgraph alone, every axis fed another (L, s) of
``scale_grid.grid`` (scales k/L and their float32 neighbours: the ties and the products beside an integer),
against the oracle's own taps (``semantics.nearest_scale.oracle_scale_taps``); ``scale_proof.prove_nearest``
re-reads it from the produced model.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from ...semantics.ir import ResizeIR, RuntimeValue
from ...semantics.nearest_scale import MIRRORED, oracle_scale_taps
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from ..compiled import resize_inputs
from ..index_form import axis_key, first_difference
from ..passes import Candidate, Refusal
from . import index_ops
from .graph import dims, ops, tag
from .index_ops import JOINT, cached_verdict, centred, pow2, signature, tag_of, zeroed_outside
from .interpolate import inexact_spellings
from .pinned import pin_f32, quotient, run_time_minus_one
from .scale_length import MAX_LEN, halves, out_length, significand, unit_axes
from .scale_grid import grid
from .scale_taps import scale_refusal

FORM = "scale_nearest"
MAX_SCALE = 1 << 11  # F + d - 12 >= 0: the numerator's shift is a left shift
COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners",
          "half_pixel_symmetric")
RULES = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil", "simple")
# (N = a*o + b, d, h) of x + h = N * 2^d / s per coordinate mode
_NUMERATOR = {"asymmetric": (1, 0, 0, 0), "tf_half_pixel_for_nn": (2, 1, -1, 0),
              "half_pixel": (2, 1, -1, 1), "pytorch_half_pixel": (2, 1, -1, 1)}
# x = q + r/D - h/2 (0 <= r < D): each rule's pick as q + base + [k*r > t*D] (or >=), None: no comparison
_ROUND = {
    (0, "floor"): (0, None), (0, "ceil"): (0, (1, 0, False)),
    (0, "round_prefer_floor"): (0, (2, 1, False)), (0, "round_prefer_ceil"): (0, (2, 1, True)),
    (1, "floor"): (-1, (2, 1, True)), (1, "ceil"): (0, (2, 1, False)),
    (1, "round_prefer_floor"): (-1, (1, 0, False)), (1, "round_prefer_ceil"): (0, None),
}
REASON = "run-time scale index decomposition: output lengths and source indices computed in integers from the " \
         "run-time scales, one Gather per axis"


def applies(node) -> bool:
    """A nearest Resize whose scales are known only at run time (``node.ir`` is a ResizeIR)."""
    ir = node.ir
    return ir.sampler.kind == "nearest" and isinstance(ir.scales, RuntimeValue) and ir.sizes is None


def refusal(ir: ResizeIR) -> tuple[str, str] | None:
    """(why, field) where this form does not express ``ir``, else None."""
    if ir.coord not in COORDS:
        return f"coordinate mode {ir.coord} has no run-time scale index form", "coordinate_transformation_mode"
    if ir.sampler.nearest not in RULES:
        return f"nearest rounding {ir.sampler.nearest} has no run-time scale index form", "nearest_mode"
    shared = scale_refusal(ir)
    if shared is not None:
        return shared
    if str(ir.dtype) in OPENVINO_DTYPES["wide"]:
        return f"OpenVINO's CPU plugin runs {ir.dtype} as a 32-bit type, so a Gather of it is not exact", "dtype"
    return None


# ----------------------------------------------------------------------------------------------------------
# The index table: one row per axis


def _i64(v):
    return ops().constant(np.int64(v)).output(0)


def _column(v):
    """An integer or boolean [n] vector as [n, 1], against the outputs' [1, longest] (never a float: see the
    module note)."""
    return ops().unsqueeze(v, _i64(1)).output(0)


def _corrected(estimate, remainder_of, den):
    """(q, r) = (floor(P/den), P - q*den) from an f32 ``estimate`` of P/den within 1/16 of it: q1 = floor(estimate)
    - 1 is q, q - 1 or q - 2, so its exact remainder ``remainder_of(q1)`` lies in [0, 3*den) and says how many
    den to add back."""
    o = ops()
    q1 = o.subtract(o.convert(o.floor(estimate), "i64"), _i64(1)).output(0)
    r1 = remainder_of(q1)
    # each test as the sign of a difference: the CPU plugin compares integers in float32, which rounds r1 past
    # 2^24 (an integer's sign survives that rounding)
    zero = _i64(0)
    extra = o.add(o.convert(o.greater_equal(o.subtract(r1, den), zero), "i64"),
                  o.convert(o.greater_equal(o.subtract(r1, o.multiply(den, _i64(2))), zero), "i64")).output(0)
    return o.add(q1, extra).output(0), o.subtract(r1, o.multiply(extra, den)).output(0)


def _f32(v):
    return ops().convert(v, "f32").output(0)


def _scale_quotient(n, d: int, m, f, minus_one):
    """(q, r) of P/M for P = n * 2^(F+d) (``n`` i64 >= 0): P - q*M = (A - q*Mh) * 2^12 - q*Ml, A = n << (F+d-12);
    the estimate A * 2^12 / M in float32 (A rounded to 24 bits: well within the estimate's 1/16)."""
    o = ops()
    mh, ml = halves(m)
    shift = o.minimum(o.maximum(o.add(f, _i64(d - 12)), _i64(0)), _i64(30))
    # n * 2^shift (a Multiply: BitwiseLeftShift is opset 15), below 2^30 (the module note)
    a = o.multiply(n, pow2(shift)).output(0)
    estimate = quotient(o.multiply(_f32(a), o.constant(np.float32(4096))), _f32(m), minus_one)
    return _corrected(estimate, lambda q: o.subtract(o.multiply(o.subtract(a, o.multiply(q, mh)), _i64(4096)),
                                                     o.multiply(q, ml)).output(0), m)


def _corner_quotient(xi, in_len, den, minus_one):
    """(q, r) of o*(L-1)/den: o*(L-1) - q*den by the 12-bit halves of L-1 and den, inside int32 for lengths below
    2^18 (no product o*(L-1) is formed)."""
    o = ops()
    span = o.subtract(in_len, _i64(1)).output(0)
    estimate = quotient(o.multiply(_f32(xi), _f32(span)), _f32(den), minus_one)
    (nh, nl), (dh, dl) = halves(span), halves(den)
    return _corrected(estimate, lambda q: o.add(
        o.multiply(o.subtract(o.multiply(xi, nh), o.multiply(q, dh)), _i64(4096)),
        o.subtract(o.multiply(xi, nl), o.multiply(q, dl))).output(0), den)


def _picked(q, r, den, h: int, rule: str):
    """The nearest pick of x = q + r/den - h/2 by ``rule`` (``_ROUND``)."""
    o = ops()
    base, test = _ROUND[(h, rule)]
    idx = q if base == 0 else o.add(q, _i64(base)).output(0)
    if test is None:
        return idx
    k, t, inclusive = test
    left = r if k == 1 else o.multiply(r, _i64(k))
    right = _i64(0) if t == 0 else den
    hit = (o.greater_equal if inclusive else o.greater)(left, right)
    return o.add(idx, o.convert(hit, "i64")).output(0)


def _rule_pick(q, r, den, h: int, rule: str, s, mirrored: bool = False):
    """``_picked`` by ``rule``, or by its mirror (``MIRRORED``); Resize-10's "simple" (ceil when downscaling, else
    floor) reads the run-time scale."""
    o = ops()
    if rule == "simple":
        down = _column(o.less(s, o.constant(np.float32(1))).output(0))
        low, high = ("floor", "ceil") if mirrored else ("ceil", "floor")
        return o.select(down, _picked(q, r, den, h, low), _picked(q, r, den, h, high)).output(0)
    return _picked(q, r, den, h, MIRRORED[rule] if mirrored else rule)


def _centred(ir: ResizeIR, xi, in_len, out_len, m, f, s, minus_one):
    """half_pixel_symmetric at its fractional output length L*s: x = (L-1)/2 + (2o+1-out) / (2s), symmetric about
    the input's centre (``index_ops.centred``). v = a / (2s) + c/2 = q + r/M + c/2 for (q, r) of a * 2^(F-1) / M,
    and v = (q+1) + r/M - 1/2 where c = 1."""
    o = ops()
    den = _column(m)

    def sides(a, odd):
        q, r = _scale_quotient(a, -1, den, _column(f), minus_one)
        q_up = o.add(q, _i64(1)).output(0)
        return [o.select(odd, _rule_pick(q_up, r, den, 1, ir.sampler.nearest, s, mirrored),
                         _rule_pick(q, r, den, 0, ir.sampler.nearest, s, mirrored)).output(0)
                for mirrored in (False, True)]

    return centred(xi, in_len, out_len, sides)[0]


def index_table(ir: ResizeIR, in_lens, s):
    """(index i64 [n, longest], out i64 [n], inside) for i64 input lengths ``in_lens`` [n] and f32 scales ``s``
    [n]: row k holds axis k's source indices, valid up to its output length out[k] (the rest is never read).
    ``inside`` (under exclude_outside, else None): bool [n, longest], False where the pick lies outside the input
    (the oracle weighs that tap 0)."""
    o = ops()
    m, f = significand(s)
    out = out_length(in_lens, s, (m, f), ir.size_rule)
    xi = o.unsqueeze(o.range(_i64(0), o.reduce_max(out, _i64(0)), _i64(1), "i64"), _i64(0)).output(0)  # [1, longest]
    in_len, out_len = _column(in_lens), _column(out)
    minus_one = run_time_minus_one(o.reduce_min(in_lens, _i64(0)).output(0), o.reduce_min(out, _i64(0)).output(0))
    if ir.coord == "half_pixel_symmetric" and ir.formula_length == "fractional":
        idx = _centred(ir, xi, in_len, out_len, m, f, s, minus_one)
    else:
        if ir.coord == "align_corners":
            den, h = o.maximum(o.subtract(out_len, _i64(1)), _i64(1)).output(0), 0
            q, r = _corner_quotient(xi, in_len, den, minus_one)
        else:  # half_pixel_symmetric at the integer length: half_pixel
            a, b, d, h = _NUMERATOR.get(ir.coord, _NUMERATOR["half_pixel"])
            n = o.add(o.multiply(xi, _i64(a)), _i64(b)).output(0) if a != 1 or b else xi
            den = _column(m)
            q, r = _scale_quotient(n, d, den, _column(f), minus_one)
        idx = _rule_pick(q, r, den, h, ir.sampler.nearest, s)
    # pytorch_half_pixel and align_corners read source 0 at output length 1 (every rule picks 0 there)
    if ir.coord in ("pytorch_half_pixel", "align_corners"):
        idx = o.select(o.equal(out_len, _i64(1)), _i64(0), idx).output(0)
    # the pick's place against the input before the clamp (exclude_outside zeroes what lies outside)
    inside = o.logical_and(o.greater_equal(idx, _i64(0)), o.less(idx, in_len)).output(0) \
        if ir.exclude_outside else None
    idx = o.minimum(o.maximum(idx, _i64(0)), o.subtract(in_len, _i64(1))).output(0)
    # an axis of scale 1 is copied (tf_half_pixel_for_nn would read o + 1/2 there), and one the IR copies at
    # equal lengths (``equal_length_identity``)
    same = o.equal(s, o.constant(np.float32(1)))
    if ir.equal_length_identity:
        same = o.logical_or(same, o.equal(in_lens, out))
    idx = o.select(_column(same.output(0)), xi, idx).output(0)
    if inside is not None:
        inside = o.logical_or(_column(same.output(0)), inside).output(0)
    pin_f32([idx, out] + ([inside] if inside is not None else []), [in_lens, s])  # the significand and the
    # estimate: f32 under any hint
    return idx, out, inside


def rows(idx, out, n: int) -> list:
    """Row k of the index table (or of its ``inside`` table) cut to its output length out[k], for each of the
    ``n`` axes."""
    o = ops()
    got = []
    for k in range(n):
        row = o.gather(idx, _i64(k), _i64(0))
        stop = o.reshape(o.gather(out, _i64(k), _i64(0)), o.constant(np.array([1], np.int64)), False)
        got.append(o.slice(row, o.constant(np.array([0], np.int64)), stop, o.constant(np.array([1], np.int64)),
                           o.constant(np.array([0], np.int64))).output(0))
    return got


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers of the index subgraph, over the grid of (L, s)


@functools.lru_cache(maxsize=None)
def _oracle(ir: ResizeIR, s: float, in_len: int) -> tuple[np.ndarray, np.ndarray]:
    return oracle_scale_taps(ir, Fraction(s), in_len)


def standalone(ir: ResizeIR, n: int):
    """The index subgraph of ``n`` axes alone: parameters the lengths [n] and scales [n], outputs the rows (then,
    under exclude_outside, the rows of ``inside``)."""
    import openvino as ov

    o = ops()
    pi, ps = o.parameter([n], np.int64, name="in"), o.parameter([n], np.float32, name="s")
    idx, out, inside = index_table(ir, pi.output(0), ps.output(0))
    return ov.Model(rows(idx, out, n) + (rows(inside, out, n) if inside is not None else []), [pi, ps],
                    "scale_index")


def _feeds(n: int, fixed: tuple | None):
    """(lengths, scales) per run: each (L, s) of the grid at some axis, the axes fed different pairs (a row that
    read another axis' scale shows); lengths None where ``fixed`` (OpenVINO folded them) gives them."""
    if fixed is not None:
        pairs = [[(L, s) for _, s in grid()] for L in fixed]
    else:
        pairs = [grid()] * n
    count = max(len(p) for p in pairs)
    for j in range(count):
        picked = [p[(j + 7 * k) % len(p)] for k, p in enumerate(pairs)]
        yield [L for L, _ in picked], [s for _, s in picked]


def grid_verdict(model, ir: ResizeIR, n: int, fixed: tuple | None = None) -> str | None:
    """None when ``model`` (parameters: the lengths [n] i64 unless ``fixed`` gives them, the scales [n] f32;
    outputs: the n index rows, then under exclude_outside the n rows of which picks lie inside: 0 / 1 of any
    type) gives the oracle's taps of ``ir``, output lengths included, on OpenVINO CPU for every (L, s) of
    ``scale_grid.grid`` at every axis, else where it does not."""
    one = axis_key(ir)

    def check(run):
        for lengths, scales in _feeds(n, fixed):
            feed = ([] if fixed else [np.array(lengths, np.int64)]) + [np.array(scales, np.float32)]
            run.infer(feed)
            for k, (L, s) in enumerate(zip(lengths, scales)):
                got = [run.get_output_tensor(j).data for j in ([k, n + k] if ir.exclude_outside else [k])]
                differs = first_difference(got, _oracle(one, s, L))
                if differs is not None:
                    return f"{differs[0]} differ from the oracle's taps at L={L}, s={s!r} ({differs[1]})"
        return None
    return cached_verdict(index_ops.VERDICTS, (FORM, signature(model), one, n, fixed), model, "index", check)


# ----------------------------------------------------------------------------------------------------------
# The rung


def _picked_scales(scales, positions: list, count: int):
    """scales[positions] (f32 [n]) by a one-hot Select and a sum over each row, exact (see the module note)."""
    o = ops()
    one_hot = o.constant(np.arange(count)[None, :] == np.array(positions)[:, None])
    return o.reduce_sum(o.select(one_hot, scales, o.constant(np.float32(0))), _i64(1)).output(0)


def rung(node, not_native=()):
    """Rung 3 for a nearest Resize with run-time scales (``applies``)."""
    ir = node.ir
    refused = refusal(ir)
    if refused is not None:
        return Refusal(f"no run-time scale index form: {refused[0]}", refused[1])
    o = ops()
    x = node.inputs[0]
    scales = resize_inputs(ir, node.inputs)[2]
    if scales.get_element_type().get_type_name() != "f32":
        scales = o.convert(scales, "f32").output(0)
    copied = unit_axes(ir, scales)
    axes = [a for a in ir.axes if a not in copied]
    if not axes:
        return Refusal("every scale is the constant 1: nothing to compute", "scales")
    verdict = grid_verdict(standalone(ir, len(axes)), ir, len(axes))
    if verdict is not None:
        return Refusal(verdict, "rung")
    # A Maximum with 0 ends the lengths and the scales (no-ops here): OpenVINO leaves it where it is, and its tag
    in_lens = o.maximum(o.gather(o.shape_of(x, "i64"), o.constant(np.array(axes, np.int64)), _i64(0)), _i64(0))
    s = o.maximum(_picked_scales(scales, [ir.axes.index(a) for a in axes], len(ir.axes)), o.constant(np.float32(0)))
    tag(in_lens, tag_of(node.name, JOINT, "in"))
    tag(s, tag_of(node.name, JOINT, "scale"))
    pin_f32([s.output(0)], [scales])
    y = x
    idx, out, inside = index_table(ir, in_lens.output(0), s.output(0))
    keeps = rows(inside, out, len(axes)) if inside is not None else [None] * len(axes)
    for axis, row, keep in zip(axes, rows(idx, out, len(axes)), keeps):
        g = o.gather(y, row, _i64(axis))
        tag(g, tag_of(node.name, axis, "gather"))
        y = g.output(0) if keep is None else zeroed_outside(node.name, g.output(0), keep, ir.rank, axis)
    reason = REASON + f", exact for lengths below {MAX_LEN} and scales below {MAX_SCALE}" + \
        inexact_spellings(not_native)
    fixed = {axis: dims(x)[axis] if dims(x) is not None else None for axis in ir.axes}
    return Candidate([y], reason, proof={"form": FORM, "axes": axes, "copied": list(copied), "fixed": fixed})
