"""Rung 3's index form for nearest Resize whose output lengths come from a static scale that is not a whole number,
on input lengths known only at run time (``semantics.nearest_scale``): per resized axis the output length by the
node's own size rule, then the source indices, both computed in the graph from the run-time input length.

Arithmetic. OpenVINO's CPU runs i64 as i32 and divides integers in float32 (``index_ops.floor_div``). The
user scale's index floor((p*x + q) / r) has constant p, q, r. Most scales compact to a short equivalent fraction
(``nearest_scale.compact``: r < 2^14, 5/3 for 0.6f), computed as the sizes form is (``index_graph``); where none
is found (0.999f) p*x nears 2^37, so p = a*r + b and q = c*r + d are reduced here on constants and
floor((b*x + d) / r) is a long division over the base-16 digits of x (``_floor_div_limbs``): each step's partial
remainder R*16 + digit*b stays below 32*r < 2^31. The lengths: the
exact floor(in*n / 2^E) by 12-bit halves of n (``_floor_length``); onnxruntime's and OpenVINO's float32 products
the same way after adding half the unit float32 rounds in*n to (``_fp32_half_unit``): integers only, so no
reduced inference precision can move a length (``test_every_length_rule_under_f32_and_bf16``). Exact for input
and output lengths below ``nearest_scale.MAX_LEN`` (2^16).

Proof by numbers (``grid_verdict``): the axis' subgraph, the input length its one parameter, run on CPU for every
input length of ``in_grid`` (1..160, primes, the largest supported) against the oracle's own taps and length.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from ...semantics.ir import ResizeIR
from ...semantics.nearest_index import NoNearestIndex
from ...semantics.nearest_scale import COMPACT_R, DIGIT_BITS, DIGITS, HALF_BITS, MAX_LEN, CentredIndex, ScaleIndex, \
    oracle_scale_taps, scale_indices
from ..passes import Refusal
from ..index_form import axis_key, first_difference
from .graph import ops
from . import index_ops
from .index_ops import cached_verdict, centred, cut, finish_index, floor_div, index_graph, picks_inside, \
    signature, upstream_names

FORM = "nearest_scale"
REASON = ("index decomposition: output lengths by the node's size rule and source indices computed in integers from "
          "the run-time input lengths (Gather)")


def reason(scaled) -> str:
    return REASON + f", exact for input lengths below {MAX_LEN} and output lengths up to " \
        f"{min(f.max_out for f in scaled)}"


def forms(ir: ResizeIR) -> tuple[ScaleIndex, ...] | Refusal:
    got = scale_indices(ir)
    return Refusal(f"no exact integer index form: {got.reason}", got.field) if isinstance(got, NoNearestIndex) \
        else got


def _const(v: int):
    return ops().constant(np.int64(v)).output(0)


def _floor_div_limbs(x, b: int, d: int, r: int):
    """floor((b*x + d) / r) for x in [0, 16^DIGITS) and constants 0 <= b, d < r < 2^26, in int32: Horner over the
    digits of x keeps b*(x's leading digits) = Q*r + R, so every intermediate stays below 32*r."""

    o = ops()
    base = 1 << DIGIT_BITS
    rc = _const(r)
    quotient, rem = None, None
    rest = x
    for j in reversed(range(DIGITS)):
        high = floor_div(rest, _const(base ** j)) if j else rest  # x < 2^16: quotients below 2^22
        rest = o.subtract(rest, o.multiply(high, _const(base ** j))).output(0) if j else None
        t = o.multiply(high, _const(b)).output(0)
        if rem is not None:
            t = o.add(o.multiply(rem, _const(base)), t).output(0)
        q = floor_div(t, rc, r)
        rem = o.subtract(t, o.multiply(q, rc)).output(0)
        quotient = q if quotient is None else o.add(o.multiply(quotient, _const(base)), q).output(0)
    # R + d >= r as the sign of R + d - r: the CPU plugin compares integers in float32 (measured: 33587987 >=
    # 33587988 is true there), and the sign of an integer survives that rounding; R + d < 2r
    carry = o.convert(o.greater_equal(o.subtract(o.add(rem, _const(d)), rc), _const(0)), "i64").output(0)
    return o.add(quotient, carry).output(0)


def _floor_length(in_len, n: int, e: int, half_unit=None):
    """floor((in*n + half_unit) / 2^e) for in < 2^16 and n < 2^24 in int32: in*n = A*2^12 + B with A = in*n1,
    B = in*n0, both below 2^28, and nested floors (``half_unit``: an i64 below 2^17, or None for 0)."""

    o = ops()
    n1, n0 = divmod(n, 1 << HALF_BITS)
    a, b = o.multiply(in_len, _const(n1)).output(0), o.multiply(in_len, _const(n0)).output(0)
    if half_unit is not None:
        b = o.add(b, half_unit).output(0)
    if e >= HALF_BITS:
        top = o.add(a, floor_div(b, _const(1 << HALF_BITS))).output(0)
        return floor_div(top, _const(1 << (e - HALF_BITS)), 1 << (e - HALF_BITS))
    return o.add(o.multiply(a, _const(1 << (HALF_BITS - e))), floor_div(b, _const(1 << e), 1 << e)).output(0)


def _fp32_half_unit(in_len, n: int):
    """Half the unit a float32 rounds in*n to (``scale_length._fp32_half_unit``'s reason): 2^(b-25) where in*n has
    b >= 25 bits, else 0; b from the constant lengths at which in*n reaches each power of two (the sign of an exact
    int32 difference: the CPU compares integers in float32)."""
    o = ops()
    reach = o.constant(np.array([-(-(1 << k) // n) for k in range(24, 24 + _PRODUCT_BITS)], np.int64))
    above = o.greater_equal(o.subtract(o.unsqueeze(in_len, _const(0)), reach), _const(0))
    count = o.reduce_sum(o.convert(above, "i64"), _const(0))
    return o.gather(o.constant(np.array([0] + [1 << k for k in range(_PRODUCT_BITS)], np.int64)), count,
                    _const(0)).output(0)


_PRODUCT_BITS = 17  # in*n < 2^16 * 2^24: at most 40 bits, 16 past a float32's 24


def length_graph(form: ScaleIndex, in_len):
    """The output length (i64 scalar) by ``form``'s size rule from the i64 scalar ``in_len``, in integers (no float
    op a reduced inference precision could round): the exact floor; onnxruntime's float32 product, the exact floor
    after adding half the unit float32 rounds in*s to (exact for outputs below 2^24: ``MAX_LEN`` bounds them);
    OpenVINO's float32 L * (s + 1e-6f), that product at the float32 scale s + 1e-6f."""
    s = form.scale
    if form.size_rule == "floor_eps" and s != 1:  # lengths.output_length
        s = Fraction(float(np.float32(np.float32(float(s)) + np.float32(1e-6))))
    e = s.denominator.bit_length() - 1
    if form.size_rule == "floor" or s == 1:
        return _floor_length(in_len, s.numerator, e)
    return _floor_length(in_len, s.numerator, e, _fp32_half_unit(in_len, s.numerator))


def _constant_floor(x, p: int, q: int, r: int):
    """floor((p*x + q) / r) for x (i64) in [0, ``MAX_LEN``) and constants p, q >= 0, r > 0: p = a*r + b and
    q = c*r + d reduced here, then floor((b*x + d) / r) by one division fixed by its remainder where r is below
    ``COMPACT_R`` (b*x + d below 2^30), else by the long division over x's digits."""
    o = ops()
    (a, b), (c, d) = divmod(p, r), divmod(q, r)
    if not b:
        part = _const(0)  # d < r
    elif r < COMPACT_R:
        part = floor_div(o.add(o.multiply(x, _const(b)), _const(d)).output(0), _const(r), r)
    else:
        part = _floor_div_limbs(x, b, d, r)
    return o.add(o.add(o.multiply(x, _const(a)), _const(c)), part).output(0)


def _centred_graph(form: CentredIndex, in_len, out_len, inside: bool = False):
    """``CentredIndex``'s two mirrored halves (``index_ops.centred``): each pick a constant floor of a per parity of
    in-1, chosen by a Select on that parity; clamped into [0, in-1] (``inside``: and which picks lay there)."""
    o = ops()
    x = o.range(_const(0), out_len, _const(1), "i64").output(0)

    def sides(a, odd):
        return [o.select(odd, _constant_floor(a, *row[1]), _constant_floor(a, *row[0])).output(0)
                for row in form.picks]

    idx, last = centred(x, in_len, out_len, sides)
    clamped = o.minimum(o.maximum(idx, _const(0)), last).output(0)
    return (clamped, o.logical_and(o.greater_equal(idx, _const(0)), o.less_equal(idx, last)).output(0)) if inside \
        else clamped


def axis_graph(form: ScaleIndex, in_len, inside: bool = False):
    """(index vector [out] i64, out) for the i64 scalar ``in_len``; ``inside`` (exclude_outside): (index, out,
    which picks lie inside the input)."""

    out_len = length_graph(form, in_len)
    if isinstance(form, CentredIndex):
        got = _centred_graph(form, in_len, out_len, inside)
    elif not form.constant or form.form.r.c_one < COMPACT_R:
        # the ratio out / in (the sizes form at the computed length), or a compacted user scale (r < 2^14: b*x + d
        # below 2^30): one division fixed by its remainder
        got = index_graph(form.form, in_len, out_len, inside=inside)
    else:
        x = ops().range(_const(0), out_len, _const(1), "i64").output(0)
        raw = _constant_floor(x, form.form.p.c_one, form.form.q.c_one, form.form.r.c_one)
        idx = finish_index(form.form, raw, x, in_len, out_len)
        got = (idx, picks_inside(form.form, raw, in_len, out_len)) if inside else idx
    return (got[0], out_len, got[1]) if inside else (got, out_len)


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers over input lengths


def _primes(lo: int, hi: int) -> list[int]:
    return [k for k in range(max(lo, 2), hi) if all(k % d for d in range(2, int(k ** 0.5) + 1))]


def in_grid(form: ScaleIndex) -> list[int]:
    """1..160, some primes and round lengths above, and the largest supported input lengths."""
    top = form.max_in()
    picks = set(range(1, 161)) | set(_primes(160, 400)) | {511, 512, 1000, 1009, 4096, 4099, 23000, 65521}
    return sorted({k for k in picks if k <= top} | {top, top - 1, top // 2})


@functools.lru_cache(maxsize=None)
def _oracle(ir: ResizeIR, scale, in_len: int) -> tuple[np.ndarray, np.ndarray]:
    return oracle_scale_taps(ir, scale, in_len)


def grid_verdict(model, ir: ResizeIR, form: ScaleIndex, fixed_in: int | None = None) -> str | None:
    """None when ``model`` (parameter: the i64 scalar input length, unless ``fixed_in`` gives it; output: the
    index vector, then under exclude_outside which picks lie inside) computes the oracle's taps of ``ir`` at
    ``form``'s scale, output length included, on OpenVINO CPU for every input length of ``in_grid`` (only
    ``fixed_in`` where given), else where it does not."""
    grid = [fixed_in] if fixed_in is not None else in_grid(form)

    def check(run):
        one = axis_key(ir)
        for i in grid:
            ran = run.infer([np.array(i, np.int64)] if fixed_in is None else [])
            differs = first_difference([ran[k] for k in range(2 if ir.exclude_outside else 1)],
                                       _oracle(one, form.scale, i))
            if differs is not None:
                return f"{differs[0]} differ from the oracle's taps at scale {float(form.scale)}, in={i} ({differs[1]})"
        return None
    return cached_verdict(index_ops.VERDICTS, (FORM, signature(model), form, tuple(grid), ir.exclude_outside), model,
                          "index", check)


def standalone(form: ScaleIndex, inside: bool = False):
    import openvino as ov

    pi = ops().parameter([], np.int64, name="in")
    got = axis_graph(form, pi.output(0), inside)
    return ov.Model([got[0]] + list(got[2:]), [pi], "nearest_scale")


def prove_axis(indices, in_op, ir: ResizeIR, form: ScaleIndex, fixed_in: int | None, keep=None) -> list[str]:
    """The index subgraph of one axis in the model copy (with ``keep``, which picks lie inside, under
    exclude_outside), its run-time input length (``in_op``, the tagged Maximum, or None where OpenVINO folded it)
    replaced by a parameter and run over ``in_grid``; folded to a constant, compared with the taps at the static
    length."""
    import openvino as ov


    src = indices.get_node()
    if src.get_type_name() == "Constant":
        if fixed_in is None:
            return ["the index vector is a constant but the input length is not static"]
        want, inside = oracle_scale_taps(ir, form.scale, fixed_in)
        if keep is not None and (keep.get_node().get_type_name() != "Constant" or not np.array_equal(
                keep.get_node().get_data().reshape(-1).astype(np.float64), inside.astype(np.float64))):
            return ["the constant index vector's picks inside the input differ from the oracle's taps"]
        return [] if np.array_equal(src.get_data().reshape(-1), want) else \
            ["the constant index vector differs from the oracle's taps"]
    params = []
    if in_op is not None and in_op.get_type_name() != "Constant":
        p = ops().parameter([], np.int64, name="in")
        cut(in_op.output(0), p.output(0))
        reached = upstream_names(src) | (upstream_names(keep.get_node()) if keep is not None else set())
        params = [p] if p.get_name() in reached else []
    if not params and fixed_in is None:
        return ["the index subgraph does not read the input's run-time length"]
    try:
        model = ov.Model([indices] + ([keep] if keep is not None else []), params, "nearest_scale_proof")
    except RuntimeError as e:
        return [f"the index subgraph depends on more than its input length ({str(e).splitlines()[-1][:120]})"]
    verdict = grid_verdict(model, ir, form, None if params else fixed_in)
    return [] if verdict is None else [verdict]

