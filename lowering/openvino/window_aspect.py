"""Rung 3 for a linear / cubic Resize (antialias or not) whose sizes are kept to the input's aspect
(keep_aspect_ratio_policy not_larger / not_smaller) and whose lengths are known only at run time: an image of any
size fitted into a box (a letterbox's resize, constant sizes on a dynamic input), or sizes fed at run time. The
common scale S / I and every output length round_half_up(in * S / I) as ``nearest_aspect`` computes them, then
each axis' tap window as ``antialias_taps`` computes it, its map and filter stretch read at (I, S)
(``semantics.window_form.aspect_window``), its taps gathered and summed by their weights. Without it the node
took the extension.

An 8- or 16-bit integer tensor (a camera frame letterboxed in the model) takes ``integer_window``'s exact
integer window instead, its distances read at (I, S) the same way, its taps summed exactly in int32 and rounded
once (linear without antialias: the den 2S of each axis bounds its sums, said in the reason; cubic and antialias
are refused, their den grows with the lengths).

Precision as ``antialias_taps``: every decision (the pick of the common scale, the lengths, each tap's position
and support) is integer arithmetic; only the weights are float32, pinned, so no precision hint moves a tap.
int32: the window's numerators stay below (2R + 4) * I * S, so lengths, sizes and output lengths are bounded by
``MAX_LEN`` (said in the reason).

Proof by numbers: each axis' window subgraph reads every resized axis' (in, size) (the common scale reads them
all); cut out with parameters in their place (at the rung on the subgraph it builds, at the proof on the one
re-read from the produced model, a length OpenVINO folded kept at its value), it is run over
``nearest_aspect.grid`` against the oracle's own taps of the policy (``window_form.oracle_aspect_table``, within
the error bound's allowance per weight); verdicts are cached by the subgraph's structure.
"""

from __future__ import annotations

import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np

from ...semantics.ir import ResizeIR
from ...semantics.nearest_index import NoNearestIndex
from ...semantics.taps import axis_taps
from ...semantics.window_form import WindowForm, aspect_bound, aspect_window, oracle_aspect_table
from ..compiled.build import cache_root, project_hash
from ..index_form import Verdicts, version_of
from ..passes import Candidate, Refusal
from .antialias_proof import taps_read
from .antialias_taps import MAX_LEN, as_f32, as_input, summed_taps, tap_layout, taps_mismatch, window_graph, \
    window_refusal
from .graph import dims, ops, tag
from .index_ops import cached_verdict, signature, tag_of
from .integer_taps import taps
from .integer_taps import refusal as too_wide
from .integer_window import FORM as INTEGER_FORM
from .integer_window import exact_sum, integer, integer_weights, rational
from .integer_window import refusal as integer_refusal
from .interpolate import inexact_spellings
from .nearest_aspect import aspect_cut, aspect_length, common_scale, grid, standalone, static_pairs
from .nearest_index import _lengths, applies as run_time_lengths, tags_in_copy

FORM = "window_aspect"
INTEGER_REASON = "aspect window decomposition in integers: the common scale of keep_aspect_ratio_policy picked, " \
    "the output lengths and each tap's position and weight numerator computed from the run-time lengths, the taps " \
    f"summed exactly in int32 and rounded once, half to even (no float op), exact for lengths and sizes up to " \
    f"{MAX_LEN}"
# Each axis' den is at most 2 * MAX_LEN (``nearest_index._BASE``'s r: 2S, S or out - 1): two axes' product stays
# within the exact sum's ``integer_taps.MAX_DEN`` and each below its ``max_den`` for 8- and 16-bit types
# (tests/lowering/test_window_aspect.py).
REASON = "aspect window decomposition: the common scale of keep_aspect_ratio_policy picked, the output lengths " \
         "and each tap's position and weight computed from the run-time lengths (integer window, float32 " \
         f"weights), the taps gathered and summed per axis, exact for lengths and sizes up to {MAX_LEN}"
# Pairs far apart for the grid (``antialias_taps.GRID``'s): the oracle's exact tables of lengths near ``MAX_LEN``
# take minutes, as ``antialias_taps`` finds too; the int32 bound rests on the numerators' bound (module note).
_LARGE = [(200, 3), (3, 200), (401, 1), (1, 401), (97, 100)]
# Three or more resized axes: a seeded sample of their small tuples, as many as two axes' whole grid gives in runs
# (each axis' window is run on every tuple, at the rung and on the written model: 3,000 made a 4-axis conversion
# 45 s, and its check past a minute)
_SAMPLE = 700


def applies(node) -> bool:
    """A linear / cubic Resize under a keep-aspect policy on lengths known only at run time (the ladder asks)."""
    ir = node.ir
    return ir.sampler.kind in ("linear", "cubic") and ir.aspect_policy != "stretch" and run_time_lengths(node)


def axis_window(form: WindowForm, policy: str, pairs, k: int, taps_axis: int, exact: bool = False):
    """(index, weight) of the k-th resized axis' window from every axis' (in, size); ``exact``: the integer
    window's (index, numerators, den) (``integer_window.integer_weights``)."""
    I, S = common_scale(policy, pairs)
    in_len = pairs[k][0]
    out_len = aspect_length(in_len, I, S)
    if exact:
        return integer_weights(form, in_len, out_len, (I, S))
    return window_graph(form, in_len, out_len, taps_axis, (I, S))


class _Verdicts(Verdicts):
    """The window grid's verdicts (memory, and disk per machine), in a file of their own hashed from the sources
    they rest on."""

    def _file(self):
        if self.sources is None:
            here = Path(__file__).resolve().parent
            self.sources = project_hash(here.parents[1] / "semantics", *(here / f for f in _SOURCES),
                                        extra=f"aspect window grid {self.runtime()}")
        return cache_root() / f"aspect-window-grid-{self.sources}.json"


_SOURCES = ("window_aspect.py", "nearest_aspect.py", "antialias_taps.py", "pinned.py", "nearest_index.py")
VERDICTS = _Verdicts(version_of("openvino"))
_TABLES: dict = {}  # the oracle's tables, by what decides one: (ir, axis, its length, the common scale)


def _oracle(ir: ResizeIR, k: int, ins: tuple, sizes: tuple, exact: bool):
    """The oracle's taps of the k-th axis at (in, size) tuples ``ins``, ``sizes``: ``oracle_aspect_table``'s
    (dense weights, allowance, output length), or (exact: {(output, input): weight}, output length); decided by the
    axis' own length and the common scale alone, so computed once for each."""
    ratios = [Fraction(s, i) for i, s in zip(ins, sizes)]
    key = (ir, k, ins[k], min(ratios) if ir.aspect_policy == "not_larger" else max(ratios), exact)
    if key not in _TABLES:
        if exact:
            bound, axis, out = aspect_bound(ir, ins, sizes, k)
            t = axis_taps(axis, bound.sampler, bound.exclude_outside, exact=True) if axis is not None else None
            _TABLES[key] = (rational(t.index, t.weight) if t else {(o, o): Fraction(1) for o in range(out)}), out
        else:
            _TABLES[key] = oracle_aspect_table(ir, ins, sizes, k)
    return _TABLES[key]


def _float_mismatch(outputs, want, in_len: int, taps_axis: int, at: str) -> str | None:
    index, weight = outputs
    index, weight = (index.T, weight.T) if taps_axis == 0 else (index, weight)  # [out, K]
    if index.shape != weight.shape:
        return f"the window's index and weights differ in shape at {at}"
    return taps_mismatch(index, weight, in_len, want[0], want[1], at)


def _exact_mismatch(outputs, want, in_len: int, taps_axis: int, at: str) -> str | None:
    index, num, den = outputs
    out = index.shape[1]
    den = np.broadcast_to(np.reshape(den, -1), (out,)) if np.size(den) in (1, out) else None
    if den is None or np.any(den <= 0):
        return f"the integer window's denominator is not one positive value (or one per output) at {at}"
    got = rational(index.T, [[Fraction(int(n), int(d)) for n in row] for row, d in zip(num.T, den)])
    return None if got == want[0] else f"the integer window differs from the oracle's taps at {at}"


def grid_verdict(model, ir: ResizeIR, form: WindowForm, k: int, fixed: tuple, taps_axis: int,
                 exact: bool = False) -> str | None:
    """None when ``model`` (parameters: the free slots of (in_0, size_0, ...), in that order; outputs: the k-th
    axis' index and weight, [K, out] or [out, K] where ``taps_axis`` is 1; ``exact``: index, numerators [K, out]
    and den) gives the oracle's taps over ``nearest_aspect.grid``, else where it first does not."""
    free = [j for j, f in enumerate(fixed) if f is None]
    tuples = grid(len(ir.axes), fixed, ir.aspect_policy, MAX_LEN, _LARGE, _SAMPLE)
    if not tuples:
        return f"the lengths {fixed} pass the bound of the window's arithmetic ({MAX_LEN})"
    mismatch = _exact_mismatch if exact else _float_mismatch

    def check(run):
        for flat in tuples:
            ins, sizes = flat[0::2], flat[1::2]
            want = _oracle(ir, k, ins, sizes, exact)
            run.infer([np.array(flat[j], np.int64) for j in free])
            outputs = [run.get_output_tensor(j).data for j in range(3 if exact else 2)]
            index = outputs[0].T if taps_axis == 0 else outputs[0]  # [out, K]
            at = f"(in, size) {flat} on axis {ir.axes[k]}"
            if index.shape[0] != want[-1]:
                return f"the window has {index.shape[0]} outputs at {at}, the oracle {want[-1]}"
            if want[-1] == 0:
                continue
            if index.min() < 0 or index.max() >= ins[k]:
                return f"the window reads outside the input at {at}"
            why = mismatch(outputs, want, ins[k], taps_axis, at)
            if why is not None:
                return why
        return None
    key = (signature(model), form, ir.aspect_policy, k, tuple(fixed), taps_axis, exact, "aspect window grid")
    return cached_verdict(VERDICTS, key, model, "window", check)


def _standalone(form: WindowForm, policy: str, n: int, k: int, taps_axis: int, exact: bool):
    return standalone(n, lambda pairs: axis_window(form, policy, pairs, k, taps_axis, exact), FORM)


def _refusal(ir: ResizeIR, form, exact: bool) -> Refusal | None:
    """Why neither window takes ``ir``: the float one's refusal, or the integer one's (its dtype, its axes, its
    sums' bound)."""
    if not exact:
        return window_refusal(ir, form)
    if isinstance(form, NoNearestIndex):
        return Refusal(f"no run-time window form: {form.reason}", form.field)
    refused = integer_refusal(ir)
    wide = None if refused else too_wide([form] * len(ir.axes), str(ir.dtype))
    return refused or (Refusal(*wide) if wide else None)


def _layout(rank: int, axis: int, exact: bool) -> int:
    """Where an axis' window keeps its taps: the integer window's [K, out] always (``exact_sum`` reads rows)."""
    return 0 if exact else tap_layout(rank, axis)


def rung(node, not_native=()):
    """The form where it applies and its standalone subgraphs compute the oracle's taps, else a Refusal."""
    ir = node.ir
    form, exact = aspect_window(ir), integer(ir)
    refused = _refusal(ir, form, exact)
    if refused is not None:
        return refused
    n, rank, policy = len(ir.axes), ir.rank, ir.aspect_policy
    fixed = static_pairs(ir, dims(node.inputs[0]))
    if not grid(n, tuple(fixed), policy, MAX_LEN, _LARGE, _SAMPLE):  # the written model's proof: nothing to run
        return Refusal(f"the static lengths and sizes {fixed} pass the bound of the window's arithmetic "
                       f"({MAX_LEN})", "sizes")
    for k, axis in enumerate(ir.axes):
        along = _layout(rank, axis, exact)
        verdict = grid_verdict(_standalone(form, policy, n, k, along, exact), ir, form, k, (None,) * (2 * n), along,
                               exact)
        if verdict is not None:
            return Refusal(verdict, "rung")
    x = node.inputs[0]
    shape_of = ops().shape_of(x, "i64").output(0)
    floor = -1 - zlib.crc32(node.name.encode()) % (1 << 20)  # the node's own: no merge with another's lengths
    pairs = [_lengths(node, shape_of, i, axis, floor) for i, axis in enumerate(ir.axes)]
    proof = {"form": FORM, "axes": list(ir.axes), "fixed": fixed}
    if exact:
        axes = []
        for k, axis in enumerate(ir.axes):
            index, num, den = axis_window(form, policy, pairs, k, 0, exact)
            for role, v in (("index", index), ("num", num), ("den", den)):
                tag(v.get_node(), tag_of(node.name, axis, role))
            axes.append((axis, index, num, den, taps(form)))
        y = exact_sum(node.name, x, axes, rank, str(ir.dtype), signed=ir.sampler.kind == "cubic")
        return Candidate([y], INTEGER_REASON + inexact_spellings(not_native), proof=proof)
    y = as_f32(x, ir)
    for k, axis in enumerate(ir.axes):
        index, weight = axis_window(form, policy, pairs, k, tap_layout(rank, axis))
        y = summed_taps(node.name, y, index, weight, rank, axis)
    return Candidate([as_input(y, x, ir)], REASON + inexact_spellings(not_native), proof=proof)


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather and its sum over the taps (``antialias_proof.taps_read``; the integer
    window: its tagged index, numerators and den, and the exact sum), and its window subgraph, cut out of a copy of
    the produced model at every axis' tagged (in, size), computes the oracle's taps over the grid."""
    form, exact = aspect_window(rec.ir), integer(rec.ir)
    if isinstance(form, NoNearestIndex):
        return [f"{rec.node}: the source IR has no keep-aspect window form ({form.reason})"]
    if exact and f"{rec.node}/{INTEGER_FORM}" not in by_tag:
        return [f"{rec.node}: the exact integer sum is not in the produced model"]
    out = []
    for k, axis in enumerate(rec.ir.axes):
        # each axis cut out of a copy of its own: a cut replaces the lengths every axis' subgraph reads
        tags = tags_in_copy(rec, by_tag, ov_model)
        prev = tags.get(tag_of(rec.node, rec.ir.axes[k - 1], "sum")) if k else None
        out += [f"{rec.node}: axis {axis}: {m}" for m in _prove_axis(tags, rec, form, k, axis, prev, exact)]
    return out


def _prove_axis(tags, rec, form: WindowForm, k: int, axis: int, prev, exact: bool) -> list[str]:
    if exact:
        parts = [tags.get(tag_of(rec.node, axis, role)) for role in ("index", "num", "den")]
        read = "the integer window is not in the produced model" if None in parts else [p.output(0) for p in parts]
    else:
        read = taps_read(tags, rec, axis, prev)
    if isinstance(read, str):
        return [read]
    got = aspect_cut(list(read), tags, rec)
    if isinstance(got, str):
        return [got]
    model, fixed = got
    verdict = grid_verdict(model, rec.ir, form, k, fixed, _layout(rec.ir.rank, axis, exact), exact)
    return [] if verdict is None else [verdict]
