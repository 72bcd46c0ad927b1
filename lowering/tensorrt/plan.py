"""The rung of every resampling node of a model for TensorRT-ready ONNX, on the pass interface (``lowering.passes``).

Rungs, each proven by parsing what onnx-tensorrt's importer would build back into IR and comparing with the
source IR (``translate.onnx_tensorrt.import_node``):

1. native: the node as it is (the importer's IR equals the source IR);
2. native after an exact rewrite: another ONNX spelling that the importer maps right (``spell``) — GridSample-20+
   ``linear`` without the ``mode`` attribute and ``cubic`` as ``bicubic``, tf_half_pixel_for_nn + floor as
   half_pixel + round_prefer_ceil, scales as sizes, a keep-aspect policy as its stretch sizes,
   half_pixel_symmetric as half_pixel where the lengths allow; or a resize over more axes than IResizeLayer takes
   split into per-axis passes (the separable filter's taps per axis proven equal to the source's);
3. decomposition: a static-shape Resize as the portable ONNX target's tap-table Gather/Mul/Add ops
   (``lowering.onnx.decompose_resize``) in float32 (TensorRT has no float64, so integer dtypes go to the plugin),
   proven like the ONNX target (the tables re-read and probed on onnxruntime against the oracle); a nearest
   Resize whose lengths are known only at run time as the ONNX target's integer index form
   (``lowering.onnx.nearest_index``), resting on TensorRT's int64 arithmetic (``INDEX_ASSUMPTION``); a
   GridSample as the ONNX target's in-graph sampler (``lowering.onnx.gridsample_decompose``, run-time grids and
   shapes, ``GRID_ASSUMPTION``) where the importer rejects it (5-D), and before the native rungs for cubic with
   border / reflection (TensorRT's per-tap padding is unverified) or for every GridSample under
   ``--decompose-gridsample``;
4. plugin: a ``ResampleBridge*`` node whose attributes carry the IR (``plugin``).

Native rungs may rest on what TensorRT does not document (``translate.tensorrt.assumptions``): such a candidate
carries them as ``assumptions`` and ``passes.climb`` takes it only when nothing on rungs 1-2 is exact without
one, and never under ``strict``. The decomposition and the plugin are the fallbacks, climbed in that order only
when no native rung was taken, so an exact native spelling that rests on an assumption beats them unless
``strict``; among the fallbacks, a decomposition that rests on an assumption beats the plugin (a library to
ship) unless ``strict``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import GridSampleIR, ResizeIR, has_runtime_params, is_static
from ...semantics.opspec import PerOp
from ...translate.dtypes import TENSORRT as TENSORRT_DTYPES
from ...translate.onnx_tensorrt import import_node
from ...translate.tensorrt.settings import UNVERIFIED
from ..onnx.decompose import check_decomposable
from ..onnx.deformconv_decompose import FORM as DEFORM_FORM
from ..onnx.deformconv_decompose import REASON as DEFORM_REASON
from ..onnx.deformconv_decompose import check_deformconv
from ..onnx.fold import fold_constant_nodes, in_model_order
from ..onnx.gridsample_decompose import FORM as GRID_FORM
from ..onnx.gridsample_decompose import REASON as GRID_REASON
from ..onnx.gridsample_decompose import check_gridsample
from ..onnx.nearest_index import INT32_MAX_OUT
from ..onnx.nearest_index import REASON as INDEX_REASON
from ..onnx.nearest_index import candidate as index_candidate
from ..passes import DECOMPOSE, REWRITE, Candidate, NodeRecord, Policy, Refusal, Rung, climb, facts
from . import spell
from .compare import compare, imported_assumptions, importer_verdict
from .plugin import plugin_attributes
from .rewrite import named_copy
from .rungs import NATIVE, PLUGIN, RUNG_NAMES, TENSORRT_COMPUTE
from ...translate.onnx import Graph, NodeView, default_opset, is_resampling, load, parse_view

TARGET = "tensorrt"
# The index form moves elements with a Gather: the types onnx-tensorrt 10.x's Gather takes.
INDEX_DTYPES = TENSORRT_DTYPES["gather"]
GRID_ASSUMPTION = (
    "TensorRT computes the GridSample decomposition's layers as ONNX defines them: float32 Add/Sub/Mul/Div each "
    "rounded (no contraction into FMA; nearest's .5 ties depend on it), Round half to even, int64 Mod fmod=0 "
    f"(floor), Where, and Gather on int64 indices below 2^31 ({UNVERIFIED})")
INDEX_ASSUMPTION = (
    "TensorRT computes the index arithmetic (Shape, Range, Mul, Add, Sub, Mod fmod=0, Div, Equal/Less/Greater, "
    "Where, Gather on int64 scalars) exactly: onnx-tensorrt 10.x lists INT64 for each and its importer keeps INT64 "
    f"(Range as an INT64 fill, Mod as kFLOOR_DIV); computed in int32 instead (TensorRT 9 and earlier cast INT64 "
    f"down) the indices stay exact for output lengths up to {INT32_MAX_OUT} ({UNVERIFIED})")


@dataclass
class Node:
    """One node as the rungs see it. What a rung found for the plugin's reason (spellings evaluated, a spelling
    exact only under assumptions) travels in its answer's ``facts``."""

    view: Any
    opset: int
    src: Any
    strict: bool
    importer: dict

    def why_not_rewritable(self) -> str | None:
        """Why a Resize has nothing to rewrite with proof, or None."""
        src = self.src
        if not is_static(src.input_shape) or has_runtime_params(src) or self.opset < 11 or \
                self.view.op_type != "Resize":
            # Upsample and Resize-10 have no attributes to respell; run-time parameters leave nothing to rewrite
            # with proof beyond the node itself.
            return "no rewrite is proven for run-time parameters, Upsample or Resize-10"
        if src.sampler.antialias and src.sampler.kind != "nearest":
            return "IResizeLayer has no antialias filter"
        return None

    def needs_split(self) -> bool:
        rank, win = self.src.rank, spell.window(self.src.sampler.kind)
        return any(ax.axis < rank - win for ax in bind_resize(self.src, self.src.input_shape).axes)

    @cached_property
    def passes(self) -> list | None:
        """The split into per-axis passes (``spell.split``), computed once."""
        return spell.split(self.view, self.opset, self.src, bind_resize(self.src, self.src.input_shape))


_IMPORTED = "the importer's IR equals the source IR"
NATIVE_REASON = PerOp("TensorRT rung 1's reason", resize=_IMPORTED, gridsample=_IMPORTED,
                      deformconv="the importer's ModulatedDeformConv2d plugin computes the same numbers")


def _importer_why(imp: dict) -> str:
    if imp["verdict"] == "rejected":
        return f"onnx-tensorrt rejects it ({imp['message']})"
    if imp["verdict"] == "silently different":
        return "onnx-tensorrt computes something else (" + "; ".join(imp["fields"]) + ")"
    return "onnx-tensorrt is exact only under undocumented behaviour"


def _native(n: Node) -> Candidate | Refusal:
    imp = n.importer
    if imp["verdict"] != "exact":
        return Refusal(_importer_why(imp))
    if imp["assumptions"]:
        # A split inside the window both TensorRT documents promise is preferred, even under assumptions.
        if SPLIT.get_for(n.src) is not None and n.why_not_rewritable() is None and n.needs_split() and \
                n.passes is not None:
            return Refusal("exact only under undocumented behaviour; an exact split into passes is preferred",
                           facts={"assumed": True})
    return Candidate(None, NATIVE_REASON.of(n.src), assumptions=tuple(imp["assumptions"]))


def _evaluate(n: Node, spellings) -> Candidate | Refusal:
    """The first spelling the importer maps exactly without assumptions, else the first exact one (``facts``:
    how many spellings were evaluated)."""
    held, count = None, 0
    for sp in spellings:
        count += 1
        imp = import_node(spell.spelled_view(n.view, sp), n.opset)
        if imp.rejected or imp.ir is None or not compare(n.src, imp.ir, getattr(n.src, "input_shape", None))[0]:
            continue
        reason = spell.describe(sp, n.view.attrs) + ": the importer's IR equals the source IR"
        if sp["op_type"] == "GridSample" and sp["attrs"].get("mode") == "bicubic":
            reason += " (a TensorRT-parser spelling: ONNX-20+ validators and onnxruntime refuse 'bicubic')"
        c = Candidate(None, reason, assumptions=tuple(imported_assumptions(imp)), proof={"spelling": sp},
                      facts={"respelled": count})
        if c.unconditional:
            return c
        held = held or c
    return held or Refusal("no other spelling is exact", facts={"respelled": count})


def _respell(n: Node) -> Candidate | Refusal:
    respell = RESPELL.get_for(n.src)
    return Refusal("no other spelling") if respell is None else respell(n)


def _respell_gridsample(n: Node) -> Candidate | Refusal:
    src = n.src
    sp = spell.gridsample_spelling(n.view, src) if n.opset >= 20 and src.spatial_rank == 2 else None
    return _evaluate(n, [sp]) if sp else Refusal("no other GridSample spelling")


def _respell_resize(n: Node) -> Candidate | Refusal:
    src = n.src
    why = n.why_not_rewritable() or ("needs a split into passes" if n.needs_split() else None)
    if why:
        return Refusal(why)
    return _evaluate(n, spell.resize_spellings(src, src.rank, bind_resize(src, src.input_shape).out_shape))


def _split(n: Node) -> Candidate | Refusal:
    split = SPLIT.get_for(n.src)
    return Refusal("only a Resize splits") if split is None else split(n)


def _split_resize(n: Node) -> Candidate | Refusal:
    why = n.why_not_rewritable() or (None if n.needs_split() else "within the window as it is")
    if why:
        return Refusal(why)
    passes = n.passes
    if passes is None:
        return Refusal("no split into passes is exact")
    return Candidate(None, f"split into {len(passes)} passes over at most the innermost "
                           f"{spell.window(n.src.sampler.kind)} axes (Transposes bring each pass's axes innermost); "
                           "every pass's taps equal the source's",
                     assumptions=tuple(sorted({a for ps in passes for a in ps["assumptions"]})),
                     proof={"passes": passes})


def _decompose(n: Node) -> Candidate | Refusal:
    return DECOMPOSE_RUNG.of(n.src)(n)


def _decompose_gridsample(n: Node) -> Candidate | Refusal:
    work = check_gridsample(n.src, n.opset, TENSORRT_COMPUTE)
    return Candidate(None, f"{GRID_REASON} in {work} (layers TensorRT maps as they are; no plugin; build the "
                           "engine in FP32, without --fp16/--best)", assumptions=(GRID_ASSUMPTION,),
                     proof={"decomposed": True, "form": GRID_FORM})


def _decompose_deformconv(n: Node) -> Candidate | Refusal:
    work, _, _ = check_deformconv(n.src, n.opset, TENSORRT_COMPUTE)
    return Candidate(None, f"{DEFORM_REASON} in {work} (layers TensorRT maps as they are; no plugin)",
                     assumptions=(GRID_ASSUMPTION,), proof={"decomposed": True, "form": DEFORM_FORM})


def _decompose_resize(n: Node) -> Candidate | Refusal:
    src = n.src
    static = _static_refusal(src)
    if static is not None:
        index = _index_form(n)
        return index if isinstance(index, Candidate) else Refusal(f"{static.reason}; {index.reason}", static.field)
    bound, work = check_decomposable(src, src.input_shape, n.opset, TENSORRT_COMPUTE)
    return Candidate(None, f"per-axis tap tables from semantics.taps as Gather/Mul/Add in {work} (layers "
                           "TensorRT maps as they are; build the engine in FP32, without --fp16/--best)",
                     proof={"decomposed": True, "shape": list(src.input_shape),
                            "axes": [ax.axis for ax in bound.axes]})


def _static_refusal(src: ResizeIR) -> Refusal | None:
    """Why the tap tables cannot be built (a length or parameter known only at run time), or None."""
    if not is_static(src.input_shape):
        return Refusal(f"input shape {src.input_shape} is not static: the tap tables need every length",
                       "input_shape")
    if has_runtime_params(src):
        return Refusal("scales/sizes/roi fed at run time: the tap tables need their values", "scales")
    return None


def _index_form(n: Node) -> Candidate | Refusal:
    """The ONNX target's nearest index form, for run-time lengths: exact on TensorRT if its int64 arithmetic is."""
    return index_candidate(n.src, n.opset, dtypes=INDEX_DTYPES, assumptions=(INDEX_ASSUMPTION,),
                           reason=INDEX_REASON + "; layers TensorRT maps as they are; exact in int64, and in int32 "
                           f"too for output lengths up to {INT32_MAX_OUT} (input lengths below 2^28)")


def _plugin(n: Node, earlier=()) -> Candidate | Refusal:
    why = _importer_why(n.importer)
    assumed = any(facts(earlier, "assumed")) or any(isinstance(a.outcome, Candidate) and a.outcome.assumptions
                                                     for a in earlier)
    if n.strict and assumed:
        why += "; every exact spelling rests on undocumented behaviour (strict)"
    elif any(facts(earlier, "respelled")):
        why += "; no other spelling is exact"
    try:
        plugin_attributes(n.src)
    except BridgeError as e:
        return Refusal(f"{why}; the plugin cannot take it either: {e.message}", e.field, final=True)
    return Candidate(None, why)


# Each op's rungs 2 and 3 on TensorRT (None: the op has no such rung here).
RESPELL = PerOp("TensorRT respelling", resize=_respell_resize, gridsample=_respell_gridsample, deformconv=None)
SPLIT = PerOp("TensorRT split into passes", resize=_split_resize, gridsample=None, deformconv=None)
DECOMPOSE_RUNG = PerOp("TensorRT decomposition", resize=_decompose_resize, gridsample=_decompose_gridsample,
                       deformconv=_decompose_deformconv)
RUNGS = (Rung(NATIVE, RUNG_NAMES[NATIVE], _native), Rung(REWRITE, RUNG_NAMES[REWRITE], _respell),
         Rung(REWRITE, RUNG_NAMES[REWRITE], _split), Rung(DECOMPOSE, RUNG_NAMES[DECOMPOSE], _decompose),
         Rung(PLUGIN, RUNG_NAMES[PLUGIN], _plugin, sees_earlier=True))


def _grid_decomposition_first(src: GridSampleIR, policy: Policy) -> bool:
    """Where the user asks for the decomposition everywhere, or where TensorRT's layer is exact only if it pads
    cubic taps as PyTorch does (unverified): the decomposition's assumptions are arithmetic only."""
    return src.kind in policy.decompose or (src.sampler.kind == "cubic" and src.padding != "zeros")


# Whether an op's decomposition is tried before every other rung (None: never).
DECOMPOSITION_FIRST = PerOp("TensorRT decomposition first", resize=None, gridsample=_grid_decomposition_first,
                            deformconv=None)


def _decomposition_first(src, policy: Policy) -> bool:
    return DECOMPOSITION_FIRST.get_for(src, lambda src, policy: False)(src, policy)


def plan_node(view, opset: int, src, strict: bool = False, policy: Policy | None = None) -> NodeRecord:
    """The rung for one node, proven; ``rung`` None with the reason when nothing works."""
    policy = policy or Policy(allow_conditional=not strict)
    importer = importer_verdict(view, opset, src)
    n = Node(view, opset, src, not policy.allow_conditional, importer)
    record = NodeRecord(view.name, src.origin, src, TARGET, extra={"importer": importer})
    if _decomposition_first(src, policy):
        first = climb([r for r in RUNGS if r.number == DECOMPOSE], n, record, policy)
        if first.candidate is not None:
            return first.record
    native = climb([r for r in RUNGS if r.number < DECOMPOSE], n, record, policy)
    if native.candidate is not None:
        return native.record
    # last_resort: a decomposition that rests on an assumption (the index form) beats the plugin unless strict.
    rest = climb([r for r in RUNGS if r.number >= DECOMPOSE], n, native.record, policy, last_resort=PLUGIN,
                 earlier=native.attempts)
    record = rest.record
    if rest.candidate is None and record.field is None:
        # Nothing took it and the plugin was not the last word: the last rung's refusal says why.
        record = record.refuse(record.tried[-1][2] if record.tried else "no rung applies", None)
    return record


def plan_model(model, *, strict: bool = False, policy: Policy | None = None) -> tuple[Any, list[NodeRecord]]:
    """(named copy of the model, one NodeRecord per resampling node). A node that cannot be parsed or lowered
    gets ``rung`` None with the reason."""

    source = named_copy(load(model))
    model, records = fold_constant_nodes(source, TARGET, policy)  # rung 0: nothing left for TensorRT to fold
    if records:  # what onnx-tensorrt would have made of them, for check
        g, opset = Graph(source), default_opset(source)
        protos = {n.name: n for n in source.graph.node}
        records = [replace(r, extra={"importer": importer_verdict(NodeView.from_proto(protos[r.node], g, r.node),
                                                                  opset, r.ir)}) for r in records]
    opset = default_opset(model)
    g = Graph(model)
    for node in model.graph.node:
        if not is_resampling(node):
            continue
        view = NodeView.from_proto(node, g, node.name)
        try:
            src = parse_view(view, opset)
        except BridgeError as e:
            records.append(NodeRecord(node.name, view.op_type, None, TARGET, reason=f"cannot be parsed: {e.message}",
                                      extra={"field": e.field}))
            continue
        try:
            records.append(plan_node(view, opset, src, strict, policy))
        except BridgeError as e:
            records.append(NodeRecord(node.name, src.origin, src, TARGET, reason=e.message, extra={"field": e.field}))
    return model, in_model_order(source, records)


__all__ = ["plan_model", "plan_node", "RUNGS", "RUNG_NAMES", "NATIVE", "REWRITE", "DECOMPOSE", "PLUGIN", "Node",
           "TENSORRT_COMPUTE", "INDEX_DTYPES", "INDEX_ASSUMPTION"]
