"""Rung 3 for a linear / cubic Resize (antialias or not) whose sizes are kept to the input's aspect
(keep_aspect_ratio_policy not_larger / not_smaller) and whose lengths are known only at run time: an image of any
size fitted into a box (a letterbox's resize, constant sizes on a dynamic input), or sizes fed at run time. The
common scale S / I and every output length round_half_up(in * S / I) as ``nearest_aspect`` computes them, then
each axis' tap window as ``antialias_taps`` computes it, its map and filter stretch read at (I, S)
(``semantics.window_form.aspect_window``), its taps gathered and summed by their weights. Without it the node
took the extension.

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
from ...semantics.window_form import WindowForm, aspect_window, oracle_aspect_table
from ..compiled.build import cache_root, project_hash
from ..index_form import Verdicts, version_of
from ..passes import Candidate, Refusal
from .antialias_proof import taps_read
from .antialias_taps import MAX_LEN, as_f32, as_input, summed_taps, tap_layout, taps_mismatch, window_graph, \
    window_refusal
from .graph import dims, ops
from .index_ops import cached_verdict, signature, tag_of
from .interpolate import inexact_spellings
from .nearest_aspect import aspect_cut, aspect_length, common_scale, grid, static_pairs
from .nearest_index import _lengths, applies as run_time_lengths, tags_in_copy

FORM = "window_aspect"
REASON = "aspect window decomposition: the common scale of keep_aspect_ratio_policy picked, the output lengths " \
         "and each tap's position and weight computed from the run-time lengths (integer window, float32 " \
         f"weights), the taps gathered and summed per axis, exact for lengths and sizes up to {MAX_LEN}"
# Pairs far apart for the grid (``antialias_taps.GRID``'s): the oracle's exact tables of lengths near ``MAX_LEN``
# take minutes, as ``antialias_taps`` finds too; the int32 bound rests on the numerators' bound (module note).
_LARGE = [(200, 3), (3, 200), (401, 1), (1, 401), (97, 100)]


def applies(node) -> bool:
    """A linear / cubic Resize under a keep-aspect policy on lengths known only at run time (the ladder asks)."""
    ir = node.ir
    return ir.sampler.kind in ("linear", "cubic") and ir.aspect_policy != "stretch" and run_time_lengths(node)


def axis_window(form: WindowForm, policy: str, pairs, k: int, taps_axis: int):
    """(index, weight) of the k-th resized axis' window from every axis' (in, size)."""
    I, S = common_scale(policy, pairs)
    in_len = pairs[k][0]
    return window_graph(form, in_len, aspect_length(in_len, I, S), taps_axis, (I, S))


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


def _oracle(ir: ResizeIR, k: int, ins: tuple, sizes: tuple):
    """``oracle_aspect_table`` of the k-th axis at (in, size) tuples ``ins``, ``sizes``: decided by the axis' own
    length and the common scale alone, so computed once for each."""
    ratios = [Fraction(s, i) for i, s in zip(ins, sizes)]
    key = (ir, k, ins[k], min(ratios) if ir.aspect_policy == "not_larger" else max(ratios))
    if key not in _TABLES:
        _TABLES[key] = oracle_aspect_table(ir, ins, sizes, k)
    return _TABLES[key]


def grid_verdict(model, ir: ResizeIR, form: WindowForm, k: int, fixed: tuple, taps_axis: int) -> str | None:
    """None when ``model`` (parameters: the free slots of (in_0, size_0, ...), in that order; outputs: the k-th
    axis' index and weight, [K, out] or [out, K] where ``taps_axis`` is 1) gives the oracle's taps over
    ``nearest_aspect.grid``, else where it first does not."""
    free = [j for j, f in enumerate(fixed) if f is None]
    tuples = grid(len(ir.axes), fixed, ir.aspect_policy, MAX_LEN, _LARGE)
    if not tuples:
        return f"the lengths {fixed} pass the bound of the window's arithmetic ({MAX_LEN})"

    def check(run):
        for flat in tuples:
            ins, sizes = flat[0::2], flat[1::2]
            want, allow, out = _oracle(ir, k, ins, sizes)
            run.infer([np.array(flat[j], np.int64) for j in free])
            index, weight = (run.get_output_tensor(j).data for j in (0, 1))
            index, weight = (index.T, weight.T) if taps_axis == 0 else (index, weight)  # [out, K]
            if index.shape[0] != out or index.shape != weight.shape:
                return f"the window has {index.shape[0]} outputs at (in, size) {flat}, the oracle {out}"
            if out == 0:
                continue
            if index.min() < 0 or index.max() >= ins[k]:
                return f"the window reads outside the input at (in, size) {flat}"
            why = taps_mismatch(index, weight, ins[k], want, allow, f"(in, size) {flat} on axis {ir.axes[k]}")
            if why is not None:
                return why
        return None
    key = (signature(model), form, ir.aspect_policy, k, tuple(fixed), taps_axis, "aspect window grid")
    return cached_verdict(VERDICTS, key, model, "window", check)


def _standalone(form: WindowForm, policy: str, n: int, k: int, taps_axis: int):
    import openvino as ov

    o = ops()
    params = [o.parameter([], np.int64, name=f"{r}{j}") for j in range(n) for r in ("in", "size")]
    pairs = [(params[2 * j].output(0), params[2 * j + 1].output(0)) for j in range(n)]
    return ov.Model(list(axis_window(form, policy, pairs, k, taps_axis)), params, "window_aspect")


def rung(node, not_native=()):
    """The form where it applies and its standalone subgraphs compute the oracle's taps, else a Refusal."""
    ir = node.ir
    form = aspect_window(ir)
    refused = window_refusal(ir, form)
    if refused is not None:
        return refused
    n, rank, policy = len(ir.axes), ir.rank, ir.aspect_policy
    fixed = static_pairs(ir, dims(node.inputs[0]))
    if not grid(n, tuple(fixed), policy, MAX_LEN, _LARGE):  # the written model's proof would have nothing to run
        return Refusal(f"the static lengths and sizes {fixed} pass the bound of the window's arithmetic "
                       f"({MAX_LEN})", "sizes")
    for k, axis in enumerate(ir.axes):
        along = tap_layout(rank, axis)
        verdict = grid_verdict(_standalone(form, policy, n, k, along), ir, form, k, (None,) * (2 * n), along)
        if verdict is not None:
            return Refusal(verdict, "rung")
    x = node.inputs[0]
    y, shape_of = as_f32(x, ir), ops().shape_of(x, "i64").output(0)
    floor = -1 - zlib.crc32(node.name.encode()) % (1 << 20)  # the node's own: no merge with another's lengths
    pairs = [_lengths(node, shape_of, i, axis, floor) for i, axis in enumerate(ir.axes)]
    for k, axis in enumerate(ir.axes):
        index, weight = axis_window(form, policy, pairs, k, tap_layout(rank, axis))
        y = summed_taps(node.name, y, index, weight, rank, axis)
    return Candidate([as_input(y, x, ir)], REASON + inexact_spellings(not_native),
                     proof={"form": FORM, "axes": list(ir.axes), "fixed": fixed})


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather and its sum over the taps (``antialias_proof.taps_read``), and its
    window subgraph, cut out of a copy of the produced model at every axis' tagged (in, size), computes the
    oracle's taps over the grid."""
    form = aspect_window(rec.ir)
    if isinstance(form, NoNearestIndex):
        return [f"{rec.node}: the source IR has no keep-aspect window form ({form.reason})"]
    out = []
    for k, axis in enumerate(rec.ir.axes):
        # each axis cut out of a copy of its own: a cut replaces the lengths every axis' subgraph reads
        tags = tags_in_copy(rec, by_tag, ov_model)
        prev = tags.get(tag_of(rec.node, rec.ir.axes[k - 1], "sum")) if k else None
        out += [f"{rec.node}: axis {axis}: {m}" for m in _prove_axis(tags, rec, form, k, axis, prev)]
    return out


def _prove_axis(tags, rec, form: WindowForm, k: int, axis: int, prev) -> list[str]:
    read = taps_read(tags, rec, axis, prev)
    if isinstance(read, str):
        return [read]
    got = aspect_cut(list(read), tags, rec)
    if isinstance(got, str):
        return [got]
    model, fixed = got
    verdict = grid_verdict(model, rec.ir, form, k, fixed, tap_layout(rec.ir.rank, axis))
    return [] if verdict is None else [verdict]
