"""Static shapes that OpenVINO's shape inference finds where ONNX's loses them, written into the ONNX model's
value_info before its resampling nodes are read, so a size computed from shapes is a constant when it is one.

A TorchScript export of ``F.interpolate(x, size=skip.shape[-2:])`` behind a Reshape whose target shape is itself
computed (DETR's mask head repeats its FPN features with Expand/Tile and flattens them) leaves every dim after the
Reshape unknown to ONNX shape inference, on a model with static inputs: the Resize's sizes read as a run-time value
and took the index decomposition (rung 3), where OpenVINO, which knows the shapes, runs its own Interpolate. Only
tensors downstream of no resampling node whose output shape ONNX does not confirm are taken: OpenVINO's importer
computes some output lengths of its own Resize differently from ONNX (``length_free``), and there the hook's own
graph knows the shapes (``frontend.with_frontend_shapes``). The written model is still checked whole against
onnxruntime."""

from __future__ import annotations

import io

import onnx

from ...semantics.ir import has_runtime_params
from ...translate.onnx import RESAMPLING_OPS
from ...translate.onnx_shapes import declared_shape, graph_inputs, with_value_info


def _downstream_of_resampling(graph, known: dict) -> set[str]:
    """The tensors of ``graph`` (its top level) that reach it from a resampling node whose output shape ONNX
    inference does not give, or gives otherwise than OpenVINO's importer (which folds a node on constants away,
    its name with it): where the two may differ."""
    inferred = {vi.name: vi for vi in graph.value_info}
    reached: set[str] = set()
    for node in graph.node:  # a graph's nodes are in topological order
        onnx_dims = {o: _known(inferred[o]) if o in inferred else None for o in node.output}
        differs = node.op_type in RESAMPLING_OPS and \
            any(d is None or known.get(o, d) != d for o, d in onnx_dims.items())
        if differs or any(i in reached for i in node.input):
            reached.update(o for o in node.output if o)
    return reached


def _importer_static_shapes(model) -> dict[str, list[int]]:
    """{tensor name: shape} of every tensor OpenVINO's own importer gives a static shape; {} where it cannot
    read the model (a node it refuses: the hook's conversion says why, not this)."""
    import openvino as ov

    try:
        ov_model = ov.convert_model(io.BytesIO(model.SerializeToString()))
    except Exception:  # noqa: BLE001 -- nothing learnt; the conversion proper reports what it meets
        return {}
    return {name: [int(d) for d in out.get_partial_shape().to_shape()]
            for op in ov_model.get_ops() for out in op.outputs() if out.get_partial_shape().is_static
            for name in out.get_names()}


def _known(vi) -> list[int] | None:
    """The dims ONNX inference gives ``vi`` where it gives every one, else None."""
    dims = declared_shape(vi)
    return dims if dims is not None and all(isinstance(d, int) for d in dims) else None


def with_importer_shapes(model, irs: dict):
    """``model`` with value_info for the tensors whose shape ONNX inference leaves unknown and OpenVINO's
    importer finds static (``_downstream_of_resampling`` aside), where every graph input is static and a node of
    ``irs`` takes a run-time scales / sizes / roi; else ``model`` itself (the importer is run only then)."""
    static = all(isinstance(d, int) and d > 0 for vi in graph_inputs(model) for d in declared_shape(vi) or [None])
    if not static or not any(has_runtime_params(ir) for ir in irs.values()):
        return model  # with a dynamic input the importer knows no more than ONNX: not run
    known = _importer_static_shapes(model)
    if not known:
        return model
    inferred = onnx.shape_inference.infer_shapes(model)
    skip = _downstream_of_resampling(inferred.graph, known)
    taken = [onnx.helper.make_tensor_value_info(vi.name, vi.type.tensor_type.elem_type, known[vi.name])
             for vi in inferred.graph.value_info
             if vi.name in known and vi.name not in skip and vi.type.HasField("tensor_type") and _known(vi) is None]
    return with_value_info(model, taken) if taken else model
