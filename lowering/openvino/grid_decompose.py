"""Rung 3 for GridSample on OpenVINO: the ONNX target's in-graph sampler (``lowering.onnx.gridsample_decompose``,
written once, in standard ONNX ops) read by OpenVINO's own ONNX frontend and spliced onto the node's inputs, so
a 5-D (or 3-D) GridSample, which GridSample-9 cannot run, needs no extension library. The ladder proves it by
numbers on OpenVINO CPU like every rung (``probe.proven``).

Taken below the extension wherever GridSample-9 cannot compute the node exactly: its rank (5-D, 3-D), or a 4-D
node GridSample-9 refuses (nearest next to a .5 tie), so the default writes nothing beside the model (issue 42);
under ``--prefer fastest`` the extension takes a 4-D node instead.
Nearest survives OpenVINO's linear-op fusions on static shapes because the decomposition multiplies the length
by a tensor of ones drawn from the grid (``gridsample_decompose._axis_taps``); the ladder's tie probes check it
on every node. X is read element by element
(``gather="elements"``, faster on OpenVINO) with int32 indices: an X of 2^31 elements or more is refused where its
shape is known (with lengths known only at run time, the indices would wrap there).

DeformConv likewise (``deformconv_rung``): the ONNX target's decomposition (``lowering.onnx.deformconv_decompose``:
the same linear taps, zero outside, then one MatMul with the weights) for the ranks DeformableConvolution-8 cannot
take (1-D, 3-D), so those need no library either. Every op of either form is pinned to f32 (``grid_pin.pin_form``):
under the bf16 default, behind a Conv, the GridSample decomposition's nearest picks moved before (4.0 off on
values 0..4, measured).
"""

from __future__ import annotations

import math

from ...semantics.errors import BridgeError
from ...semantics.opspec import PerOp
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from ..onnx.deformconv_decompose import FORM as DEFORM_FORM, REASON as DEFORM_REASON, check_deformconv, \
    decomposition_model as deformconv_model
from ..onnx.gridsample_decompose import FORM, REASON, check_gridsample, decomposition_model
from ..passes import Candidate, Refusal
from .graph import np_dtype, tag
from .grid_pin import pin_form

COMPUTE = OPENVINO_DTYPES["decompose"]  # float32 in float32, float16 in float32 (cast back)
PICKS = OPENVINO_DTYPES["picks"]  # integer types a nearest GridSample gathers in their own type
FORMS = (FORM, DEFORM_FORM)  # the records' proof["form"] this module proves


def rung(node, earlier=()):
    ir = node.ir
    if ir.spatial_rank == 2 and node.weigh:
        # --prefer fastest: the extension for a 4-D node GridSample-9 refuses (faster than the decomposition).
        # Quiet: the extension's reason stays GridSample-9's own refusal.
        return Refusal("4-D: GridSample-9's rank; the extension, until a cost model compares the two",
                       facts={"quiet": True})
    try:
        check_gridsample(ir, None, COMPUTE, PICKS)
    except BridgeError as e:
        return Refusal(e.message, e.field)
    x, grid = node.inputs[:2]
    shape = x.get_partial_shape()
    if shape.is_static and math.prod(shape.to_shape()) >= 2**31:
        return Refusal("X has 2^31 elements or more: the decomposition's element indices are int32", "X")
    onnx_model = decomposition_model(ir, grid.get_element_type().to_dtype().name, compute=COMPUTE,
                                     gather="elements", picks=PICKS)  # OpenVINO's faster form (gridsample_decompose)
    out = _spliced(node, onnx_model, FORM)
    why = "GridSample-9 is 4-D only" if ir.spatial_rank != 2 else "GridSample-9 is not exact here"
    return Candidate([out], f"{REASON}, read by OpenVINO's ONNX frontend ({why}; no extension library)",
                     proof={"form": FORM})


def deformconv_rung(node):
    """Rung 3 for a DeformConv DeformableConvolution-8 cannot take (1-D, 3-D): the ONNX target's decomposition
    (bilinear taps, zero outside, one MatMul with the weights) read by OpenVINO's ONNX frontend."""
    ir = node.ir
    try:
        check_deformconv(ir, None, COMPUTE)
    except BridgeError as e:
        return Refusal(e.message, e.field)
    dtypes = [None if v is None else np_dtype(v.get_element_type()).name for v in node.inputs]
    out = _spliced(node, deformconv_model(ir, dtypes, compute=COMPUTE), DEFORM_FORM)
    return Candidate([out], f"{DEFORM_REASON}, read by OpenVINO's ONNX frontend (no extension library)",
                     proof={"form": DEFORM_FORM})


# The decomposition models' input names, in the node's (ONNX) input order.
_INPUTS = PerOp("decomposition inputs", resize=None, gridsample=("x", "grid"),
                deformconv=("x", "w", "offset", "b", "mask"))


def _spliced(node, onnx_model, form: str):
    """``onnx_model`` (one output) read by OpenVINO's ONNX frontend, its inputs replaced by the node's own; its
    output op tagged ``{node}/{form}``."""
    import openvino as ov

    sub = ov.Core().read_model(onnx_model.SerializeToString(), b"")
    by_name = dict(zip(_INPUTS.of(node.ir), node.inputs))
    sources = {p.get_friendly_name(): by_name[p.get_friendly_name()] for p in sub.get_parameters()}
    # The subgraph's shapes are inferred for the node's own input shapes before it is spliced on: with every
    # length dynamic, a constant grid (folded by the frontend) met stale dynamic shapes downstream and the whole
    # conversion failed ("same_scheme" check in Gather, issue 42).
    for p in sub.get_parameters():
        p.set_partial_shape(sources[p.get_friendly_name()].get_partial_shape())
    sub.validate_nodes_and_infer_types()
    # Its tensors' names are the decomposition's own: where OpenVINO removes a no-op Convert (the float32 Cast of a
    # float32 grid) it moved "gridsample/grid_f32:0" onto the model's own input, whose any_name it then was.
    for op in sub.get_ordered_ops():
        if op.get_type_name() != "Parameter":
            for v in op.outputs():
                v.get_tensor().set_names(set())
    for p in sub.get_parameters():
        for target in list(p.output(0).get_target_inputs()):
            target.replace_source_output(sources[p.get_friendly_name()])
    out = sub.get_results()[0].input_value(0)
    tag(out.get_node(), f"{node.name}/{form}")
    pin_form([out], [v for v in node.inputs if v is not None])
    return out


def prove(rec, by_tag) -> list[str]:
    """The written model's part: the decomposition's output op is there (its numbers were proven on the probes
    when the ladder took it, ``probe.proven``; the model written is the graph probed)."""
    if f"{rec.node}/{rec.proof['form']}" not in by_tag:
        return [f"{rec.node}: the decomposition's output is not in the written model"]
    if not (rec.proof.get("probes") or {}).get("count"):
        return [f"{rec.node}: the decomposition was not probed against the oracle"]
    return []


__all__ = ["DEFORM_FORM", "FORMS", "deformconv_rung", "prove", "rung"]
