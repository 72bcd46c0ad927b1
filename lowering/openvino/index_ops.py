"""The integer arithmetic OpenVINO's CPU computes exactly, as graph pieces shared by the run-time index forms
(``nearest_index``, ``nearest_scale``, ``antialias_taps``), and the structure and reach of a compiled index
subgraph, by which their proofs cache and find it.

OpenVINO's CPU plugin runs i64 as i32 (measured: an i64 Multiply wraps at 2^31) and divides integers in
float32 (measured: Divide and FloorMod of i64 values past 2^24 are wrong; Divide truncates toward zero although
the op says python_division), so every division here is OpenVINO's integer Divide as an estimate, fixed by its
exact integer remainder (``floor_div``): integer ops all, which no bf16 / f16 precision hint touches. It compares
integers in float32 too (measured: GreaterEqual, Greater and Equal of 33587987 and 33587988 answer as if equal;
Maximum and Minimum are exact), so a comparison of values that may pass 2^24 is written as the sign of their
exact difference against 0.
"""

from __future__ import annotations

import numpy as np

from ...semantics.nearest_index import Linear, NearestIndex
from ..index_form import Verdicts, version_of
from ...semantics.messages import plugin_sentence
from .graph import F32, ops, tag

VERDICTS = Verdicts(version_of("openvino"))  # grid verdicts of the nearest index forms, by subgraph structure


JOINT = -1  # the axis number of the tags on several axes' joint lengths and scales (``scale_nearest``)


def tag_of(name: str, axis: int, what: str) -> str:
    return f"{name}/index_{axis}/{what}"


def linear(f, in_len, out_len):
    """c_in*in + c_out*out + c_one as ops on i64 scalars (no op for a zero term)."""
    o = ops()
    terms = []
    for c, v in ((f.c_in, in_len), (f.c_out, out_len)):
        if c == 1:
            terms.append(v)
        elif c:
            terms.append(o.multiply(v, o.constant(np.int64(c))).output(0))
    if f.c_one or not terms:
        terms.append(o.constant(np.int64(f.c_one)).output(0))
    acc = terms[0]
    for t in terms[1:]:
        acc = o.add(acc, t).output(0)
    return acc


def pow2(s):
    """2^s as an i64 (``s`` in [0, 30]: a Python int, or an i64 tensor, whose power is gathered from a table)."""
    o = ops()
    if isinstance(s, int):
        return o.constant(np.int64(1 << s)).output(0)
    table = o.constant(np.array([1 << e for e in range(31)], np.int64))
    return o.gather(table, s, o.constant(np.int64(0))).output(0)


_SMALL_SHIFT = 8  # floor_pow2's remainder, shifted by _SHIFTED, stays positive and small for s up to this
_SHIFTED = 1 << 10  # > 64 + 2^8 + 2^8 (rem >= -(2^s + 64)), a multiple of every 2^s <= 2^8


def floor_pow2(n, s):
    """floor(n / 2^s) exactly for an i64 ``n`` (run as i32) and ``s`` in [0, 30], a Python int or an i64 tensor,
    in opset-1 ops that OpenVINO folds on constants: BitwiseRightShift is opset 15, which OpenVINO before 2024.4
    refuses to read (measured, 2023.3 and 2024.0-2024.3), and the bitwise ops have no constant folding (a Range
    fed one on a static length does not compile: "Can not create StaticMemory object").

    OpenVINO's integer Divide as the estimate q0 (in float32 on the CPU: n rounded by at most 64, the quotient
    truncated, so the remainder rem = n - q0 * 2^s, exact in int32, lies in [-2^s - 64, 2^s + 64]), fixed by
    floor(rem / 2^s): for s <= 8 a Divide of rem shifted non-negative (small: exact in float32); above, where the
    estimate is within one, by the signs of rem + 2^s, rem and rem - 2^s (a float copy keeps an integer's sign).
    Checked against numpy's >> for every s on 240,000 int32 values (random, every value below 70,000 in magnitude,
    both ends) in OpenVINO 2023.3, 2024.0, 2024.6, 2025.4.1 and 2026.4.1 under the f32 and bf16 hints
    (tests/lowering/test_index_ops.py, on this release)."""
    o = ops()
    if isinstance(s, int) and s == 0:
        return n
    i64 = lambda v: o.constant(np.asarray(v, np.int64)).output(0)  # noqa: E731
    p = pow2(s)
    q0 = o.divide(n, p).output(0)
    rem = o.subtract(n, o.multiply(q0, p)).output(0)
    zero = i64(0)

    def small(limit):
        """floor(rem / p) for p <= 2^8 (``limit``: p there, a power of two <= 2^8 elsewhere)."""
        return o.subtract(o.divide(o.add(rem, i64(_SHIFTED)), limit), o.divide(i64(_SHIFTED), limit)).output(0)

    def large():
        """floor(rem / p) for p >= 2^9, in {-2, -1, 0, 1}: ``_sign_steps``, one step lower below -p."""
        return o.subtract(_sign_steps(rem, p), o.convert(o.less(o.add(rem, p), zero), "i64")).output(0)

    if isinstance(s, int):
        fix = small(p) if s <= _SMALL_SHIFT else large()
    else:
        fix = o.select(o.less_equal(s, i64(_SMALL_SHIFT)), small(o.minimum(p, i64(1 << _SMALL_SHIFT))), large())
    return o.add(q0, fix).output(0)


# OpenVINO's CPU divides i64 (run as i32) in float32 and truncates (measured, OpenVINO 2026.4.1): exact for
# 0 <= n < 2^24, within one of n / r while the quotient stays below 2^22, and untouched by a bf16 / f16 hint (an
# integer op keeps its precision). Its estimate is therefore within [-1, 2] of floor(n / r) (2: a negative n's
# truncation toward zero on top), and the remainder n - q0*r within [-2r, 2r).
SMALL_R = 1 << 22  # 4r below 2^24: the remainder's own quotient, shifted non-negative, is an exact Divide


def _estimate(n, r):
    """An estimate of floor(n / r) (r > 0) by OpenVINO's integer Divide of a non-negative number only: n itself,
    or for n < 0 the floor -1 - floor((-1 - n) / r) (-1 - n >= 0 for every int32, -2^31 included). A Divide of a
    negative n came out truncated in one consumer and floored in another of the same op (OpenVINO 2026.4.1, CPU,
    a model compiled from memory: -7 / 28 read as -1 by the remainder's Multiply and as 0 by the Add after it, so
    the index was one off), where ``floor_div`` takes its estimate as one value; of a non-negative n truncation and
    flooring agree. (``floor_pow2`` keeps n's own Divide: its remainder's range rests on a truncated estimate at
    -2^31.)"""
    o = ops()
    zero, minus_one = o.constant(np.int64(0)), o.constant(np.int64(-1))
    negative = o.less(n, zero)
    q = o.divide(o.select(negative, o.subtract(minus_one, n), n), r)
    return o.select(negative, o.subtract(minus_one, q), q).output(0)


def floor_div(n, r, r_max: int = SMALL_R):
    """floor(n / r) exactly for a quotient below 2^22 and 0 < r <= ``r_max``. A constant power of two:
    ``floor_pow2`` (``_log2_constant``). Else OpenVINO's integer Divide as the estimate q0, fixed by its exact remainder: where
    r <= ``SMALL_R`` (n + 2r < 2^31, n - 4r >= -2^31), q1 = q0 - 2 leaves rem = n - q1*r in [0, 4r), whose own
    quotient is an exact Divide (3 nodes on the CPU plugin, which fuses each Divide with the op after it; the
    remainder of q0 shifted by 2r after cost one more); above it (n >= 0 and r <= 2^30: the estimate within one,
    rem = n - q0*r in [-r, 2r)), by the signs of rem and rem - r (a float copy keeps an integer's sign)."""
    o = ops()
    shift = _log2_constant(r)
    if shift is not None:
        return floor_pow2(n, shift)
    q0 = _estimate(n, r)
    if r_max <= SMALL_R:
        q1 = o.subtract(q0, o.constant(np.int64(2))).output(0)
        return o.add(q1, o.divide(o.subtract(n, o.multiply(q1, r)), r)).output(0)
    rem = o.subtract(n, o.multiply(q0, r)).output(0)
    return o.add(q0, _sign_steps(rem, r)).output(0)


def _sign_steps(rem, r):
    """floor(rem / r) for a remainder in [-r, 2r): [rem >= r] - [rem < 0], each the sign of an exact int32
    difference (OpenVINO's CPU compares integers in float32, where a nonzero integer keeps its sign)."""
    o = ops()
    zero = o.constant(np.int64(0))
    up = o.convert(o.greater_equal(o.subtract(rem, r), zero), "i64")
    return o.subtract(up, o.convert(o.less(rem, zero), "i64")).output(0)


def _log2_constant(r) -> int | None:
    """e where ``r`` is the constant 2^e: floor(n / 2^e) is then n's arithmetic shift right by e, one exact integer
    op (measured on the CPU plugin: every int32 under the f32 and bf16 hints, negatives floored)."""
    node = r.get_node() if hasattr(r, "get_node") else r
    if node.get_type_name() != "Constant":
        return None
    v = node.get_data().reshape(-1)
    return int(v[0]).bit_length() - 1 if v.size == 1 and v[0] > 0 and not int(v[0]) & (int(v[0]) - 1) else None


def index_graph(form: NearestIndex, in_len, out_len, scale=None, inside: bool = False):
    """The index vector [out] (i64) for i64 scalar outputs ``in_len``, ``out_len`` (and ``scale``, the common
    scale's (I, S) where ``form.by_scale``): ``form`` in integer ops whose intermediates stay below r*out (see the
    module note). A zero q (asymmetric floor) leaves out its terms: every op here runs once per inference on
    shapes known only then. ``inside``: (index, which picks lie inside the input, bool [out]) for exclude_outside."""
    o = ops()
    i64 = "i64"
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    x = o.range(zero, out_len, one, i64).output(0)
    at = scale if form.by_scale else (in_len, out_len)
    # r > 0 wherever the formula is used; the max keeps a division by zero (out == 1 in align_corners,
    # out == 0) out of the graph, where a piece or the empty range takes over.
    r = o.maximum(linear(form.r, *at), one).output(0)
    p = linear(form.p, *at)
    a = floor_div(p, r)
    b = o.subtract(p, o.multiply(a, r)).output(0)  # p mod r, in [0, r)
    n, idx = o.multiply(x, b).output(0), o.multiply(x, a).output(0)
    if form.q != Linear(0, 0, 0):
        q = linear(form.q, *at)
        c = floor_div(q, r)
        n = o.add(n, o.subtract(q, o.multiply(c, r))).output(0)  # + q mod r
        idx = o.add(idx, c).output(0)
    raw = o.add(idx, floor_div(n, r)).output(0)
    done = finish_index(form, raw, x, in_len, out_len)
    return (done, picks_inside(form, raw, in_len, out_len)) if inside else done


def finish_index(form: NearestIndex, idx, x, in_len, out_len):
    """``form``'s pieces around its formula ``idx`` (i64 [out]): out == 1, the clamp to [0, in-1], a copied
    axis of equal lengths; each side of the clamp and the copy only where the formula does not already give it
    for every length (``NearestIndex.needs_*``)."""
    o = ops()
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    if form.out1 is not None:
        idx = o.select(o.equal(out_len, one), o.constant(np.int64(max(form.out1, 0))), idx).output(0)
    if form.needs_low_clamp():
        idx = o.maximum(idx, zero).output(0)
    if form.needs_high_clamp():
        idx = o.minimum(idx, o.subtract(in_len, one)).output(0)
    if form.needs_copy():
        idx = o.select(o.equal(in_len, out_len), x, idx).output(0)
    return idx


def picks_inside(form: NearestIndex, raw, in_len, out_len):
    """Which picks of the formula ``raw`` (i64 [out], before ``finish_index``'s pieces) lie inside [0, in-1]: the
    out == 1 piece's own pick at output length 1, every pick of an axis the form copies at equal lengths."""
    o = ops()
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    if form.out1 is not None:
        raw = o.select(o.equal(out_len, one), o.constant(np.int64(form.out1)), raw).output(0)
    keep = o.logical_and(o.greater_equal(raw, zero), o.less(raw, in_len)).output(0)
    if form.copy_equal:
        keep = o.logical_or(keep, o.equal(in_len, out_len)).output(0)
    return keep


def zeroed_outside(name: str, y, keep, rank: int, axis: int):
    """``y`` times ``keep`` (bool [out] along ``axis``) in y's own type: the oracle's tap weight 0 / 1 under
    exclude_outside, whose product keeps NaN and inf NaN where it zeroes (``decompose.bind``); the Multiply
    tagged "outside" for the proofs."""
    o = ops()
    others = [a for a in range(rank) if a != axis]
    where = o.unsqueeze(keep, o.constant(np.array(others, np.int64))) if others else keep
    product = o.multiply(y, o.convert(where, y.get_element_type()))
    tag(product, tag_of(name, axis, "outside"))
    return product.output(0)


def inside_read(rec, tags: dict, axis: int):
    """Which picks lie inside, as the axis' Multiply tagged "outside" (``zeroed_outside``) reads them in the model
    copy ``tags`` maps; None without exclude_outside (``nearest_index.index_gathers`` checks the Multiply)."""
    return tags[tag_of(rec.node, axis, "outside")].input_value(1) if rec.ir.exclude_outside else None


def centred(x, in_len, out_len, sides):
    """half_pixel_symmetric's index from the two mirrored halves of its map (``semantics.nearest_scale``
    ``CentredIndex``): a = |2o+1-out| for the outputs ``x``, c = (in-1) mod 2 and B = (in-1-c)/2; ``sides(a, odd)``
    gives (the far half's pick of v = a/(2s) + c/2, the near half's by the mirrored rule), odd the boolean c.
    Returns the index (B + the far pick where 2o+1 >= out, in-1-B - the near pick elsewhere) and in-1 (>= 0)."""
    o = ops()
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    n = o.subtract(o.add(o.add(x, x), one), out_len).output(0)  # 2o + 1 - out
    a = o.maximum(n, o.multiply(n, o.constant(np.int64(-1)))).output(0)
    last = o.maximum(o.subtract(in_len, one), zero).output(0)
    base = floor_pow2(last, 1)
    odd = o.equal(o.subtract(last, o.add(base, base)), one).output(0)  # last mod 2, foldable (BitwiseAnd is not)
    far, near = sides(a, odd)
    idx = o.select(o.greater_equal(n, zero), o.add(base, far), o.subtract(o.subtract(last, base), near))
    return idx.output(0), last


def signature(model) -> tuple:
    """The structure of a compiled-alone index subgraph: op types, attributes, constants, wiring."""
    order = {op.get_friendly_name(): k for k, op in enumerate(model.get_ordered_ops())}
    sig = []
    for op in model.get_ordered_ops():
        t = op.get_type_name()
        data = op.get_data().tobytes() if t == "Constant" else None
        ins = tuple(order[v.get_node().get_friendly_name()] for v in op.input_values())
        attrs = tuple(sorted((k, str(v)) for k, v in op.get_attributes().items())) if t != "Constant" else ()
        sig.append((t, attrs, data, ins))
    return tuple(sig)


def cut(value, replacement) -> None:
    """Every reader of the run-time ``value`` (a tagged length or scale in a copy of the produced model) reads
    ``replacement`` instead (a proof's parameter or a recorded static value), converted to ``value``'s type."""
    same = value.get_element_type() == replacement.get_element_type()
    value.replace(replacement if same else ops().convert(replacement, value.get_element_type()).output(0))


def upstream_names(op) -> set:
    """The unique names of the ops ``op`` depends on (itself included)."""
    seen, todo = set(), [op]
    while todo:
        n = todo.pop()
        if n.get_name() not in seen:
            seen.add(n.get_name())
            todo += [v.get_node() for v in n.input_values()]
    return seen


def cached_verdict(cache, key, model, what: str, check) -> str | None:
    """A run-time form's grid verdict: ``check(infer_request)`` on ``model`` compiled alone on CPU (None where it
    computes the oracle's numbers, else where not), cached under ``key`` (the subgraph's structure and form); a
    subgraph the plugin cannot compile is its own verdict, in the plugin's words."""
    found, verdict = cache.get(key)
    if found:
        return verdict
    import openvino as ov

    try:
        run = ov.Core().compile_model(model, "CPU", F32).create_infer_request()
    except Exception as e:  # noqa: BLE001 -- the plugin's words
        verdict = f"the {what} subgraph does not compile: {plugin_sentence(e)}"
    else:
        verdict = check(run)
    cache.put(key, verdict)
    return verdict
