"""Rung 3: a static-shape Resize as per-axis K-tap Gather / Multiply / sum with constant tables from
``semantics.taps`` (exact: the tables are the oracle's own), and its proof (the tables re-read from the model).

Arithmetic per dtype. OpenVINO's CPU plugin runs float64 as float32 and int64 as int32 (measured: an f64
round trip turns 16777217 into 16777216, an i64 multiply wraps at 2^31), so the portable target's float64
policy is not available here:
* nearest reads one tap of weight 1: a pure Gather in the input's own type (no float round trip: int32
  16777217 stays 16777217), every dtype the CPU keeps (64-bit integers are refused); under exclude_outside a pick
  outside the input weighs 0: a Multiply by 0 / 1 weights in float32, for the types it holds exactly;
* float32 / float16 / bfloat16: float32 weights, a Gather, Multiply and Add per tap (float16 and bfloat16 cast
  back once); float64 likewise, in float32 as the CPU runs every float64 op (the float32 evaluation the
  policy's bound describes: what the extension computed for it too);
* 8- and 16-bit integers, linear / cubic: exact integer arithmetic in int32 (``semantics.taps.integer_taps``:
  weights as numerators over one denominator D per axis, inputs centred on the middle of their range so the
  sum stays below 2^31), then the exact quotient by the product of the D's, rounded half to even with an
  integer remainder and saturated: the oracle's exact value, bit for bit. Refused where the bound exceeds
  2^31; 32- and 64-bit integers' linear / cubic are refused (no exact arithmetic wide enough on the CPU);
* uint8 antialias (``integer_rounding`` q22_per_axis): onnxruntime's fixed point (``semantics.fixed_point``), its
  integer weight tables constants, each axis from the last a Gather, Multiply and Add per tap in int32, the
  rounding offset added, an exact arithmetic shift by 22 (``index_ops.floor_pow2``) and a clip to [0, 255]: the
  oracle's integers, bit for bit, with no float op (no inference precision can move a value).
"""

from __future__ import annotations

import numpy as np

from ...semantics import fixed_point
from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR, has_runtime_params, is_static
from ...semantics.reference import cast_like
from ...semantics.taps import axis_taps, integer_taps
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from ..onnx.decompose import check_decomposable
from ..passes import Candidate, Refusal
from .extension import needs_extension
from .graph import dims, ops, tag
from .fixed_point_form import fixed_point_rounding, fixed_tables, last_two_swapped
from .index_ops import floor_pow2
from .interpolate import inexact_spellings
from .round_bf16 import convert_to

# input dtype -> the type the arithmetic runs in on OpenVINO CPU (nearest: the input's own, see bind)
POLICY = OPENVINO_DTYPES["decompose"]
_I32 = 2**31 - 1
_WIDE = OPENVINO_DTYPES["wide"]
_IN_FLOAT32 = ("float32", "float16", "bfloat16", "uint8", "int8", "uint16", "int16")  # every value exact in float32


def bind(ir: ResizeIR, in_shape):
    """(bound resize, compute dtype), or BridgeError naming the field where the decomposition cannot be
    built: zero-length tensors (a Gather with no indices kills OpenVINO's CPU plugin with SIGFPE), a dtype
    without exact arithmetic on the CPU, an integer sum that could leave int32."""
    policy = dict(POLICY)
    if ir.sampler.kind == "nearest" and str(ir.dtype) not in _WIDE:
        # A pure gather in the input's own type; under exclude_outside a pick outside the input weighs 0, a
        # Multiply by float32 0 / 1 weights: in float32 for the types it holds every value of (exact, and x * 0
        # is NaN for NaN and inf, as the oracle's product), else in the input's own type (whose build fails on
        # the float32 weights: the extension)
        exact = ir.exclude_outside and str(ir.dtype) in _IN_FLOAT32
        policy[str(ir.dtype)] = "float32" if exact else str(ir.dtype)
    if str(ir.dtype) in _WIDE:
        raise BridgeError(f"OpenVINO's CPU plugin runs {ir.dtype} as a 32-bit type (measured: an int64 "
                          f"multiply wraps at 2^31), so no decomposition of it is exact", field="dtype")
    bound, work = check_decomposable(ir, in_shape, None, policy)
    if _integer_path(ir, work) and bound.axes and not fixed_point_rounding(ir):
        integer_plan(bound, np.dtype(str(ir.dtype)))
    return bound, work


def _integer_path(ir: ResizeIR, work: str) -> bool:
    """Linear / cubic of an 8- or 16-bit integer: the exact int32 path (nearest is a gather in any type)."""
    return work == "int32" and ir.sampler.kind != "nearest"


def integer_plan(bound, dtype: np.dtype):
    """(per-axis [(index, numerators int32 [O, K], D)], centre, total D) for the exact int32 path, or
    BridgeError where a sum could leave int32."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    tables = [integer_taps(ax, bound.sampler, bound.exclude_outside) for ax in bound.axes]
    # Weights sum to 1 (numerators to D) on every row: then centring the input shifts every sum by
    # centre * D and the magnitude halves.
    sums_to_one = all(all(sum(row) == D for row in num) for _, num, D in tables)
    mid = (lo + hi + 1) // 2 if sums_to_one else 0
    v = bound.extrapolation_value
    if any(ax.valid is not None for ax in bound.axes) and not float(v).is_integer():
        raise BridgeError(f"an integer resize with the fractional extrapolation value {v} has no exact "
                          f"integer decomposition", field="extrapolation_value")
    reach = max(hi - mid, mid - lo, abs(int(v) - mid))
    total = 1
    for _, num, D in tables:
        reach *= max(sum(abs(int(n)) for n in row) for row in num)
        total *= D
    if reach + total > _I32 or 2 * total > _I32:
        # In bits: the integers themselves run to dozens of digits (antialias at 0.37: 10^76), past a line.
        raise BridgeError(f"exact integer sums reach 2^{(reach + total).bit_length()} (tap denominators "
                          f"{_magnitude(total)}), beyond int32, the widest exact arithmetic of OpenVINO's CPU plugin",
                          field="dtype")
    return [(index, num.astype(np.int64).astype(np.int32), D) for index, num, D in tables], mid, total


def _magnitude(n: int) -> str:
    """``n`` as it is where short, else its power of two."""
    return str(n) if n < 10**6 else f"about 2^{n.bit_length()}"


def _ov_type(dtype: str):
    import openvino as ov

    if str(dtype) == "bfloat16":  # numpy's (ml_dtypes') bfloat16 is not in the binding's dtype map
        return ov.Type.bf16
    return ov.Type(np.dtype(dtype))


def _decompose_fixed(bound, x, name: str):
    """``fixed_point``'s resampler in int32 (run as i64 in the graph, as the CPU runs it): per axis the taps'
    fixed-point sum, the offset 2^21, floor(/ 2^22) and the clip; then the extrapolated outputs. Between axes the
    values are uint8 (clipped: exact), and the last axis is resampled as rows of the tensor transposed: its taps
    gathered as whole rows, not element by element, which was most of the time."""
    o = ops()
    i64 = lambda v: o.constant(np.int64(v)).output(0)  # noqa: E731
    rank = len(bound.in_shape)
    y = x
    masks = []
    for ax, t in fixed_tables(bound):
        axis, swap = ax.axis, ax.axis == rank - 1 and rank >= 2
        if swap:
            y, axis = last_two_swapped(y, rank), rank - 2
        acc = _tap_sum(y, t.index(ax.in_len), t.weight.astype(np.int64), rank, axis, ax.in_len, name, "i64", ax.axis)
        acc = floor_pow2(o.add(acc, i64(fixed_point.ONE_HALF)).output(0), fixed_point.SHIFT)
        y = o.convert(o.minimum(o.maximum(acc, i64(fixed_point.LOW)), i64(fixed_point.HIGH)), "u8").output(0)
        if swap:
            y = last_two_swapped(y, rank)
        if t.outside is not None and t.outside.any():
            masks.append((ax.axis, t.outside))
    fill = o.constant(np.uint8(fixed_point.static_cast(float(bound.extrapolation_value), "uint8")))
    for axis, outside in masks:
        y = o.select(o.constant(outside.reshape((-1,) + (1,) * (rank - axis - 1))), fill, y).output(0)
    return y


def _gather_tag(name: str, axis: int, k: int | None = None) -> str:
    return f"{name}/taps_{axis}/gather" + ("" if k is None else str(k))


def _is_gather(t) -> bool:
    """One tap of weight 1 per output (nearest): the Gather is the whole axis."""
    return t.index.shape[1] == 1 and bool(np.all(t.weight == 1.0))


def _is_identity(index: np.ndarray, in_len: int) -> bool:
    return index.size == in_len and np.array_equal(index, np.arange(in_len))


def _gather(y, index: np.ndarray, axis: int, key: str, in_len: int):
    """Gather ``index`` along ``axis``; none where it reads every element in order (OpenVINO removes such a
    Gather and its tag with it, so the proof expects none). The index constant carries the tag the proof
    reads it by: constants keep their rt_info through the frontend, ops it rewrites may not."""
    if _is_identity(index, in_len):
        return y
    o = ops()
    c = o.constant(index.astype(np.int64))
    tag(c, key + "/index")
    return o.gather(y, c, o.constant(np.int64(axis))).output(0)


def _tap_sum(y, index: np.ndarray, weight: np.ndarray, rank: int, axis: int, in_len: int, name: str,
             as_type: str | None = None, tagged: int | None = None):
    """sum_k Gather(y, index[:, k]) * weight[:, k] along ``axis``: one output-sized Gather per tap, then the
    products added (OpenVINO fuses the Multiply/Add chain into one kernel). ``weight``: float32 weights, or
    int32 numerators (int32 Multiply/Add are exact on the CPU; ReduceSum is not relied on). Faster than one
    Gather of all K taps into [.., O*K, ..] and a ReduceSum over K, the slow op there (measured 1.4-1.8x,
    linear antialias 1x3x600x800 -> 300x400 and cubic antialias 800x800 -> 100x100, K = 4 and 32). ``as_type``:
    each gathered tap converted to it first (uint8 values gathered as they are, summed in int32); ``tagged``: the
    source axis the tables' tags name, where ``axis`` is another (a transposed tensor's)."""
    o = ops()
    tail = (1,) * (rank - axis - 1)
    acc = None
    for k in range(index.shape[1]):
        key = _gather_tag(name, axis if tagged is None else tagged, k)
        term = _gather(y, index[:, k], axis, key, in_len)
        term = o.convert(term, as_type).output(0) if as_type else term
        if not _unit(weight[:, k]):
            w = o.constant(weight[:, k].reshape((-1,) + tail))
            tag(w, key + "/weights")
            term = o.multiply(term, w).output(0)
        acc = term if acc is None else o.add(acc, term).output(0)
    return acc


def _unit(weight: np.ndarray) -> bool:
    """Every weight of a tap is 1 (x * 1 == x for every x, inf and NaN included): no Multiply, since OpenVINO
    removes one by a constant 1 and its table with it."""
    return bool(np.all(weight == 1))


def _round_quotient(y, total: int, mid: int, dtype: np.dtype):
    """round_half_even(y / total) + mid, saturated, as ``dtype``; y int32. The quotient is estimated in
    float32 (off by at most one: |y / total| < 2^17), then fixed with the exact int32 remainder; every
    comparison is of a float32 copy of an int32 difference, whose sign and zero survive the conversion."""
    o = ops()
    f32, i32 = _ov_type("float32"), _ov_type("int32")
    D = o.constant(np.int32(total))
    Df = o.constant(np.float32(total))
    zero = o.constant(np.float32(0))
    k = o.convert(o.floor(o.divide(o.convert(y, f32), Df)), i32).output(0)
    r = o.subtract(y, o.multiply(k, D)).output(0)
    neg = o.convert(o.less(o.convert(r, f32), zero), i32)
    k = o.subtract(k, neg).output(0)
    r = o.add(r, o.multiply(neg, D)).output(0)
    over = o.convert(o.greater_equal(o.convert(o.subtract(r, D), f32), zero), i32)
    k = o.add(k, over).output(0)
    r = o.subtract(r, o.multiply(over, D)).output(0)
    d2 = o.convert(o.subtract(o.add(r, r), D), f32)   # 2r - D: > 0 rounds up, 0 is the exact half
    kf = o.convert(k, f32)
    odd = o.not_equal(o.subtract(kf, o.multiply(o.floor(o.multiply(kf, o.constant(np.float32(0.5)))),
                                                o.constant(np.float32(2)))), zero)
    up = o.logical_or(o.greater(d2, zero), o.logical_and(o.equal(d2, zero), odd))
    res = o.add(o.add(k, o.convert(up, i32)), o.constant(np.int32(mid)))
    info = np.iinfo(dtype)
    res = o.clamp(res, float(info.min), float(info.max))
    return o.convert(res, _ov_type(dtype.name)).output(0)


def decompose_resize(ir: ResizeIR, x, in_shape, name: str = ""):
    """Exact K-tap decomposition for a static input shape (the proof re-reads the tables from the model)."""
    o = ops()
    bound, work = bind(ir, in_shape)
    dtype = np.dtype(str(ir.dtype))
    if not bound.axes:
        # Every axis is the identity: still one op of our own, or the converted node's output would be the
        # graph input itself.
        y = o.convert(x, _ov_type(dtype.name)).output(0)
        tag(y.get_node(), f"{name}/copy")
        return y
    if fixed_point_rounding(ir):
        return _decompose_fixed(bound, x, name)
    if _integer_path(ir, work):
        return _decompose_integer(bound, x, dtype, name)
    y = x if work == dtype.name else o.convert(x, _ov_type(work)).output(0)
    shape = list(bound.in_shape)
    for ax in bound.axes:
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        O, K = t.index.shape
        if _is_gather(t):
            y = _gather(y, t.index[:, 0], ax.axis, _gather_tag(name, ax.axis), ax.in_len)
        else:
            y = _tap_sum(y, t.index, t.weight.astype(np.float32), len(shape), ax.axis, ax.in_len, name)
        shape[ax.axis] = O
        if t.extrapolate is not None and t.extrapolate.any():
            mask = o.constant(t.extrapolate.reshape((O,) + (1,) * (len(shape) - ax.axis - 1)))
            fill = cast_like(np.float64(bound.extrapolation_value), dtype) if work == dtype.name else \
                np.asarray(bound.extrapolation_value, dtype=dtype).astype(work)  # as the oracle: input type
            y = o.select(mask, o.constant(np.asarray(fill)), y).output(0)
    if work != dtype.name:
        y = convert_to(y, _ov_type(dtype.name))
    if y is x:  # nearest whose every gather reads in order
        y = o.convert(x, _ov_type(dtype.name)).output(0)
        tag(y.get_node(), f"{name}/copy")
    return y


def _decompose_integer(bound, x, dtype: np.dtype, name: str):
    o = ops()
    plan, mid, total = integer_plan(bound, dtype)
    y = o.subtract(o.convert(x, _ov_type("int32")), o.constant(np.int32(mid))).output(0)
    rank, scale = len(bound.in_shape), 1
    for ax, (index, num, D) in zip(bound.axes, plan):
        y = _tap_sum(y, index, num, rank, ax.axis, ax.in_len, name)
        scale *= D
        valid = axis_taps(ax, bound.sampler, bound.exclude_outside).extrapolate if ax.valid else None
        if valid is not None and valid.any():
            mask = o.constant(valid.reshape((-1,) + (1,) * (rank - ax.axis - 1)))
            fill = np.int32((int(bound.extrapolation_value) - mid) * scale)
            y = o.select(mask, o.constant(fill), y).output(0)
    return _round_quotient(y, total, mid, dtype)


def rung(node, not_native=()):
    """Rung 3 for a Resize with static scales/sizes/roi on a static input shape (``not_native``: why each
    Interpolate spelling the lower rungs tried is not exact, for the reason)."""
    if has_runtime_params(node.ir):
        return Refusal("the tap tables need the values of scales / sizes / roi")
    x = node.inputs[0]
    shape = dims(x)
    if not is_static(shape):
        return needs_extension(f"input shape {shape} is not static (decomposition needs static shapes; where the "
                               "model runs at fixed lengths, convert --input gives them)")
    empty = _empty_output(node.ir, shape, node.name)
    if empty is not None:
        return Candidate([empty], "a zero-length output: an empty tensor of its shape and type (nothing to compute)"
                         + inexact_spellings(not_native), proof={"shape": shape})
    try:
        _, work = bind(node.ir, shape)
    except BridgeError as e:
        return Refusal(e.message, e.field)
    out = decompose_resize(node.ir, x, shape, node.name)
    reason = "per-axis tap tables from the oracle's tap module (" + (
        "a pure Gather)" if node.ir.sampler.kind == "nearest" and not node.ir.exclude_outside else
        "a Gather, Multiply and Add per tap)"
        if work == "float32" else "Gather/Multiply/Add in exact int32, rounded half to even and saturated)"
        if not fixed_point_rounding(node.ir) else "onnxruntime's 8-bit fixed point: Gather/Multiply/Add in int32 per "
        "axis, shifted by 22 and clipped, no float op)")
    return Candidate([out], reason + inexact_spellings(not_native), proof={"shape": shape})


def _empty_output(ir: ResizeIR, in_shape, name: str):
    """A Resize whose output has no element (a length or scale that gives 0 on some axis): the output is an empty
    Constant of the oracle's shape, in the input's type; None where the output has elements. The gather forms
    cannot write it (a Gather with no indices kills OpenVINO's CPU plugin with SIGFPE), and nothing is lost:
    the probes find every output equal to the oracle's (empty) one and the proof reads it by value
    (``prove._folded``). Where the lengths themselves are refused (a negative size), the gather forms refuse."""
    try:
        bound = bind_resize(ir, in_shape)
    except BridgeError:
        return None
    if 0 not in bound.out_shape:
        return None
    c = ops().constant(np.zeros(bound.out_shape, np.float32), dtype=_ov_type(str(ir.dtype)))
    tag(c, f"{name}/empty")
    return c.output(0)


def _merged_table(by_tag: dict, suffix: str, want: np.ndarray, dtype):
    """The Constant another node's table of the same role became: OpenVINO merges equal Constants and keeps one
    tag, so a table shared with another node (the same axis mapping there) carries that node's tag."""
    role = suffix.rsplit("/", 1)[-1]
    for t, op in by_tag.items():
        if t.endswith("/" + role) and op.get_type_name() == "Constant":
            got = op.get_data()
            if got.size == want.size and (dtype is None or got.dtype == dtype) and \
                    np.array_equal(got.reshape(-1), want.astype(dtype or np.int64).reshape(-1)):
                return op
    return None


def prove(rec, by_tag) -> list[str]:
    """The tables in the produced model must be the source IR's own (recomputed here from the IR, not taken
    from the lowering): every Gather's index constant and every weight constant, found by their tags, in the
    compute type (per tap: float32 weights, or int32 numerators); a nearest axis is one Gather, and an index
    that reads every element in order has none. How they are wired is what the probe runs prove by numbers."""
    bound, work = bind(rec.ir, rec.proof["shape"])
    out = []
    expected = []  # (what, tag, want array, dtype or None for an index)
    if fixed_point_rounding(rec.ir):
        tables = [(ax, t.index(ax.in_len), t.weight, np.int64, False) for ax, t in fixed_tables(bound)]
    elif _integer_path(rec.ir, work) and bound.axes:
        plan, _, _ = integer_plan(bound, np.dtype(str(rec.ir.dtype)))
        tables = [(ax, index, num, np.int32, False) for ax, (index, num, _) in zip(bound.axes, plan)]
    else:
        tables = [(ax, t.index, t.weight, np.float32, _is_gather(t))
                  for ax in bound.axes for t in [axis_taps(ax, bound.sampler, bound.exclude_outside)]]
    for ax, index, weight, wtype, gather_only in tables:
        if gather_only:
            if not _is_identity(index[:, 0], ax.in_len):
                key = _gather_tag(rec.node, ax.axis)
                expected.append((f"axis {ax.axis} indices", key + "/index", index[:, 0], None))
            continue
        for k in range(index.shape[1]):
            key = _gather_tag(rec.node, ax.axis, k)
            if not _is_identity(index[:, k], ax.in_len):
                expected.append((f"axis {ax.axis} tap {k} indices", key + "/index", index[:, k], None))
            if not _unit(weight[:, k]):
                expected.append((f"axis {ax.axis} tap {k} weights", key + "/weights", weight[:, k], wtype))
    if not expected and by_tag.get(f"{rec.node}/copy") is None:
        out.append(f"{rec.node}: the identity copy is missing from the produced model")
    for what, key, want, dtype in expected:
        op = by_tag.get(key)
        if op is None:
            op = _merged_table(by_tag, key[len(rec.node):], want, dtype)
        got = op.get_data() if op is not None and op.get_type_name() == "Constant" else None
        if got is None:
            out.append(f"{rec.node}: {what}: not found in the produced model")
        elif got.size != want.size or (dtype is not None and got.dtype != dtype) or \
                not np.array_equal(got.reshape(-1), want.astype(dtype or np.int64).reshape(-1)):
            out.append(f"{rec.node}: {what} differ from the source IR's taps")
    return out
