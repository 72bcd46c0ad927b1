"""Rung 3 for a nearest Resize whose sizes are kept to the input's aspect (keep_aspect_ratio_policy not_larger /
not_smaller) and whose lengths are known only at run time (sizes fed at run time, as the ONNX conformance models
have them, or an input of dynamic lengths): the common scale S / I picked in the graph, every output length
round_half_up(in * S / I) and every source index computed from them by exact integer arithmetic
(``semantics.nearest_index.aspect_index``: the sizes form with (in, out) read as (I, S)), one Gather per axis.
No float anywhere, so no precision hint moves a pick.

Arithmetic (``index_ops``: OpenVINO's CPU runs i64 as i32, divides and compares integers in float32): the pick
compares the cross products size_a * I and S * in_a by the sign of their exact difference; the output length is
``floor_div`` of 2*S*in + I by 2I; the index is ``index_graph``'s. Every intermediate stays inside int32 while
every length and size is at most ``MAX_OUT`` (4 * S * out < 2^31, said in the reason).

Proof by numbers: each axis' index subgraph reads every resized axis' (in, size) (the pick reads them all); cut
out with parameters in their place (at the rung on the subgraph it builds, at the proof on the one re-read from
the produced model, a length OpenVINO folded kept at its value), it is run over ``grid`` against the oracle's
own taps (``oracle_aspect_indices``); verdicts are cached by the subgraph's structure.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from fractions import Fraction

import numpy as np

from ...semantics.coords import round_half_up
from ...semantics.ir import ResizeIR
from ...semantics.nearest_index import NearestIndex, NoNearestIndex, aspect_index, oracle_aspect_taps
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from ..index_form import INT32_MAX_OUT as MAX_OUT, first_difference, index_ir
from ..passes import Candidate, Refusal
from . import index_ops
from .graph import dims, ops, tag
from .index_ops import cached_verdict, cut, floor_div, index_graph, inside_read, signature, tag_of, zeroed_outside
from .interpolate import inexact_spellings
from .nearest_index import _lengths, applies as run_time_lengths, index_gathers, tags_in_copy

FORM = "nearest_aspect"
REASON = "aspect index decomposition: the common scale of keep_aspect_ratio_policy picked, the output lengths " \
         f"and source indices computed in int64 for every run-time size (Gather), exact for lengths and sizes up " \
         f"to {MAX_OUT}"
_SMALL = list(itertools.product(range(1, 7), range(0, 9)))  # (in, size) of one axis


def applies(node) -> bool:
    """A nearest Resize under a keep-aspect policy on lengths known only at run time (the Resize ladder asks)."""
    ir = node.ir
    return ir.sampler.kind == "nearest" and ir.aspect_policy != "stretch" and run_time_lengths(node)


def common_scale(policy: str, pairs):
    """(I, S): the (in, size) of the axis whose ratio size / in bounds the others (the smallest for not_larger,
    the largest for not_smaller), from i64 scalars; a later axis replaces the pick where its ratio is strictly
    beyond it (equal ratios give the same scale)."""
    o = ops()
    zero = o.constant(np.int64(0))
    I, S = pairs[0]
    for in_len, size in pairs[1:]:
        beyond = o.subtract(o.multiply(size, I), o.multiply(S, in_len))  # the sign of size/in - S/I
        take = o.less(beyond, zero) if policy == "not_larger" else o.greater(beyond, zero)
        I, S = o.select(take, in_len, I).output(0), o.select(take, size, S).output(0)
    return I, S


def aspect_length(in_len, I, S):
    """round_half_up(in * S / I) = floor((2*S*in + I) / 2I) (``coords.bind_resize``'s output length under a
    keep-aspect policy), I at least 1."""
    o = ops()
    I = o.maximum(I, o.constant(np.int64(1))).output(0)
    num = o.add(o.multiply(o.add(S, S), in_len), I).output(0)
    return floor_div(num, o.add(I, I).output(0))


def axis_indices(form: NearestIndex, policy: str, pairs, k: int, inside: bool = False) -> list:
    """[the index vector of the k-th resized axis] from every axis' (in, size), then (``inside``, exclude_outside)
    which of its picks lie inside the input."""
    I, S = common_scale(policy, pairs)
    in_len = pairs[k][0]
    got = index_graph(form, in_len, aspect_length(in_len, I, S), (I, S), inside)
    return list(got) if inside else [got]


def large_pairs(bound: int) -> list[tuple]:
    """(in, size) pairs far apart and near the arithmetic's ``bound``."""
    return [(1000, 2000), (4097, 3), (3, 4097), (bound, 7), (7, bound), (bound, bound - 1), (12345, 12346)]


def grid(n: int, fixed: tuple, policy: str, bound: int = MAX_OUT, large: list | None = None,
         sample: int = 3000) -> list[tuple]:
    """Tuples (in_0, size_0, in_1, size_1, ...) of n axes: every small pair on each axis (two axes: all of them
    together; more: a seeded ``sample`` of them), and ``large`` pairs (default: near the ``bound`` of the form's
    integer arithmetic), each slot at its ``fixed`` value where one is given; only those whose lengths stay within
    ``bound``."""
    combos = list(itertools.product(_SMALL, repeat=n)) if n <= 2 else \
        random.Random(n).sample(list(itertools.product(_SMALL, repeat=n)), sample)
    large = large_pairs(bound) if large is None else large
    combos += [tuple(random.Random(k).choice(large) for _ in range(n)) for k in range(40)]
    out = set()
    for combo in combos:
        flat = tuple(v if f is None else f for v, f in zip(itertools.chain(*combo), fixed))
        if _within(flat, policy, bound):
            out.add(flat)
    return sorted(out)


def _within(flat: tuple, policy: str, bound: int) -> bool:
    """Every length and size at most ``bound``, the output lengths too, and the output no larger than the
    oracle binds (2^31 elements)."""
    ins, sizes = flat[0::2], flat[1::2]
    if not all(0 < i <= bound and 0 <= s <= bound for i, s in zip(ins, sizes)):
        return False
    ratios = [Fraction(s, i) for i, s in zip(ins, sizes)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    outs = [round_half_up(scale * i) for i in ins]
    return max(outs) <= bound and math.prod(outs) < 2 ** 31


def grid_verdict(model, ir: ResizeIR, k: int, fixed: tuple) -> str | None:
    """None when ``model`` (parameters: the free slots of (in_0, size_0, ...), in that order; output: the k-th
    axis' index vector, then under exclude_outside which of its picks lie inside) computes the oracle's taps over
    ``grid``, else where it first does not."""
    n = len(ir.axes)
    free = [j for j, f in enumerate(fixed) if f is None]

    tuples = grid(n, fixed, ir.aspect_policy)
    if not tuples:
        return f"the lengths {fixed} pass the bound of the index arithmetic ({MAX_OUT})"

    def check(run):
        import openvino as ov

        feeds = [ov.Tensor(np.zeros((), np.int64)) for _ in free]
        for j, t in enumerate(feeds):
            run.set_input_tensor(j, t)
        for flat in tuples:
            for j, t in zip(free, feeds):
                t.data[...] = flat[j]
            run.infer()
            got = [run.get_output_tensor(j).data for j in range(2 if ir.exclude_outside else 1)]
            differs = first_difference(got, oracle_aspect_taps(ir, flat[0::2], flat[1::2], k))
            if differs is not None:
                return f"{differs[0]} differ from the oracle's taps at (in, size) {flat} on axis {ir.axes[k]}"
        return None
    key = (signature(model), aspect_index(index_ir(ir)), ir.aspect_policy, k, tuple(fixed), ir.exclude_outside,
           "aspect grid")
    return cached_verdict(index_ops.VERDICTS, key, model, "index", check)


def standalone(n: int, build, name: str):
    """A subgraph alone: parameters (in_0, size_0, in_1, ...) of n axes, outputs ``build(pairs)`` of their
    [(in, size)] (the grid verdicts' model, in the parameters' order)."""
    import openvino as ov

    o = ops()
    params = [o.parameter([], np.int64, name=f"{r}{j}") for j in range(n) for r in ("in", "size")]
    pairs = [(params[2 * j].output(0), params[2 * j + 1].output(0)) for j in range(n)]
    return ov.Model(list(build(pairs)), params, name)


def rung(node, not_native=()):
    """The form where it applies and its standalone subgraphs compute the oracle's taps, else a Refusal."""
    ir = node.ir
    form = aspect_index(index_ir(ir))
    if isinstance(form, NoNearestIndex):
        return Refusal(f"no exact integer index form: {form.reason}", form.field)
    if str(ir.dtype) in OPENVINO_DTYPES["wide"]:
        return Refusal(f"OpenVINO's CPU plugin runs {ir.dtype} as a 32-bit type, so a Gather of it is not exact",
                       "dtype")
    n = len(ir.axes)
    fixed = static_pairs(ir, dims(node.inputs[0]))
    if not grid(n, tuple(fixed), ir.aspect_policy):  # the written model's proof would have nothing to run
        return Refusal(f"the static lengths and sizes {fixed} pass the bound of the index arithmetic ({MAX_OUT})",
                       "sizes")
    for k in range(n):
        model = standalone(n, lambda pairs: axis_indices(form, ir.aspect_policy, pairs, k, ir.exclude_outside), FORM)
        verdict = grid_verdict(model, ir, k, (None,) * (2 * n))
        if verdict is not None:
            return Refusal(verdict, "rung")
    o = ops()
    shape_of = o.shape_of(node.inputs[0], "i64").output(0)
    floor = -1 - zlib.crc32(node.name.encode()) % (1 << 20)  # the node's own: no merge with another's lengths
    pairs = [_lengths(node, shape_of, i, axis, floor) for i, axis in enumerate(ir.axes)]
    y = node.inputs[0]
    for k, axis in enumerate(ir.axes):
        idx, *keep = axis_indices(form, ir.aspect_policy, pairs, k, ir.exclude_outside)
        g = o.gather(y, idx, o.constant(np.int64(axis)))
        tag(g, tag_of(node.name, axis, "gather"))
        y = zeroed_outside(node.name, g.output(0), keep[0], ir.rank, axis) if keep else g.output(0)
    return Candidate([y], REASON + inexact_spellings(not_native), proof={"form": FORM, "axes": list(ir.axes),
                                                                         "fixed": fixed})


def static_pairs(ir: ResizeIR, shape) -> list:
    """[in_0, size_0, in_1, ...] of the resized axes where known at lowering (None where known only at run time):
    X's static lengths (``shape``), the IR's sizes."""
    sizes = list(ir.sizes) if isinstance(ir.sizes, tuple) else [None] * len(ir.axes)
    return [None if v is None else int(v) for axis, size in zip(ir.axes, sizes)
            for v in (None if shape is None else shape[axis], size)]


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather (on that axis, fed by the one before), and its index subgraph, cut out
    of a copy of the produced model at every axis' tagged (in, size) (a folded one kept at its value), computes
    the oracle's taps over the grid (under exclude_outside, with the Multiply by which picks lie inside)."""
    form = aspect_index(index_ir(rec.ir))
    if isinstance(form, NoNearestIndex):
        return [f"{rec.node}: the source IR has no integer index form ({form.reason})"]
    out, gathers = index_gathers(rec, tags_in_copy(rec, by_tag, ov_model), rec.ir.axes)
    for k, axis in enumerate(rec.ir.axes):
        if axis in gathers:
            # each axis cut out of a copy of its own: a cut replaces the lengths every axis' subgraph reads
            own = tags_in_copy(rec, by_tag, ov_model)
            keep = inside_read(rec, own, axis)
            got = _prove_axis([own[tag_of(rec.node, axis, "gather")].input_value(1)] + ([keep] if keep else []), own,
                              rec, k)
            out += [f"{rec.node}: axis {axis}: {m}" for m in got]
    return out


def _prove_axis(outputs: list, tags, rec, k: int) -> list[str]:
    got = aspect_cut(outputs, tags, rec)
    if isinstance(got, str):
        return [got]
    model, fixed = got
    verdict = grid_verdict(model, rec.ir, k, fixed)
    return [] if verdict is None else [verdict]


def aspect_cut(outputs: list, tags, rec):
    """(model, fixed): the subgraph of ``outputs`` (an axis' index, or its window) taken out of a copy of the
    produced model at every resized axis' tagged (in, size), a parameter in place of each run-time one (the
    common scale reads them all), each one OpenVINO folded fixed at its value (a static one at the value recorded
    at lowering); or why it cannot be cut."""
    import openvino as ov

    o = ops()
    fixed, params = [], []
    known = iter(rec.proof.get("fixed") or [None] * (2 * len(rec.ir.axes)))
    for axis in rec.ir.axes:
        for role in ("in", "out"):
            value = next(known)  # a static length or size, recorded at lowering: OpenVINO may fold it anywhere
            op = tags.get(tag_of(rec.node, axis, role))
            if value is None and op is not None and op.get_type_name() == "Constant":
                value = int(op.get_data().reshape(-1)[0])
            fixed.append(value)
            if op is None and value is None:
                return f"the run-time {role} length of axis {axis} is not in the produced model"
            if op is None or op.get_type_name() == "Constant":
                continue
            p = o.parameter([], np.int64, name=f"{role}{axis}") if value is None else \
                o.constant(np.int64(value))
            cut(op.output(0), p.output(0))
            if value is None:
                params.append(p)
    try:
        return ov.Model(outputs, params, "aspect_proof"), tuple(fixed)
    except RuntimeError as e:
        return f"the subgraph depends on more than its lengths ({str(e).splitlines()[-1][:120]})"
