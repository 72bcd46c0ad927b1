"""Running a TensorRT-ready model without TensorRT, node by node: ordinary nodes on onnxruntime (one-node
sessions), plugin nodes by the oracle on the IR their attributes carry, so a rewrite can be checked to change no
number."""

from __future__ import annotations

import numpy as np

from ..lowering.tensorrt.plugin import ir_from_plugin, is_plugin_node
from ..lowering.tensorrt.spell import with_opset_spelling
from ..semantics.errors import BridgeError
from ..semantics.opspec import PerOp, spec
from ..semantics.reference import run
from ..semantics.vocab import ONNX_DOMAINS
from ..translate.onnx import Graph, NodeView, default_opset, is_resampling, parse_view
from ..lowering.model_check import import_onnxruntime
from ..translate.onnx_tensorrt import import_node


def _ort_node(node, values: dict, opset_imports, ir_version: int):
    """Run one ordinary node on onnxruntime (a one-node model of its inputs' shapes and types)."""
    import onnx

    ort = import_onnxruntime()
    from onnx import helper

    inputs, feeds = [], {}
    for name in node.input:
        if not name or name in feeds:
            continue
        arr = values[name]
        inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
        feeds[name] = arr
    outs = [onnx.ValueInfoProto(name=o) for o in node.output if o]
    default = [o for o in opset_imports if o.domain in ("", "ai.onnx")]
    model = helper.make_model(helper.make_graph([node], "one", inputs, outs, []), opset_imports=default,
                              ir_version=min(ir_version, 10))
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return list(sess.run(None, feeds))


def _run_ir(ir, ins: list):
    """The oracle on a node's inputs as the ONNX op lists them (None for omitted ones): a Resize's IR holds its
    parameters, the other ops' trailing optional inputs are None."""
    return run(ir, *IMPORTED_ARGS.of(ir)(ir, list(ins)))


def _run_plugin(node, values: dict):
    import onnx

    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    ins = [values[n] if n else None for n in node.input]
    ir = ir_from_plugin(node.op_type, attrs, ins[0].shape, ins[0].dtype.name,
                        sizes_source=node.input[1] if len(node.input) > 1 else None)
    return run(ir, *PLUGIN_ARGS.of(ir)(ir, ins))


def _padded(ir, ins: list) -> list:
    return ins + [None] * (len(spec(ir).inputs) - len(ins))


def _plugin_resize_args(ir, ins: list) -> list:
    """[X] (+ sizes fed at run time) as the oracle's (X, roi, scales, sizes)."""
    return [ins[0], None, None, ins[1]] if len(ins) > 1 else [ins[0]]


def _plugin_deformconv_args(ir, ins: list) -> list:
    """Compacted inputs, [X, W, offset] (+ B) (+ mask), as the oracle's (X, W, offset, B, mask)."""
    rest = list(ins[3:])
    b = rest.pop(0) if ir.has_bias else None
    mask = rest.pop(0) if ir.has_mask else None
    return [ins[0], ins[1], ins[2], b, mask]


# The oracle's inputs from a node's: as onnx-tensorrt imports it (a Resize's IR holds its parameters), and as the
# plugin node lists them.
IMPORTED_ARGS = PerOp("oracle inputs of an imported node", resize=lambda ir, ins: ins[:1], gridsample=_padded,
                      deformconv=_padded)
PLUGIN_ARGS = PerOp("oracle inputs of a plugin node", resize=_plugin_resize_args, gridsample=lambda ir, ins: ins,
                    deformconv=_plugin_deformconv_args)


def _run_resampling(node, values: dict, g, opset: int, resampling: str):
    view = NodeView.from_proto(node, g, node.name)
    view = view.replace(shapes={**view.shapes, **{n: values[n].shape for n in node.input if n and n in values}})
    ins = [values[n] if n else None for n in node.input]
    if resampling == "oracle":
        return run(parse_view(view, opset), *ins)
    imp = import_node(view, opset)
    if imp.rejected or imp.ir is None:
        raise BridgeError(f"onnx-tensorrt would not build node {node.name!r}: {imp.message or imp.fields}",
                          node.name)
    return _run_ir(imp.ir, ins)


def run_tensorrt_ready(model, feeds: dict, *, resampling: str = "onnxruntime") -> dict:
    """Execute a TensorRT-ready ONNX model node by node; returns every tensor by name.

    Plugin nodes run on the oracle (``semantics.reference``) with the IR their attributes carry. Ordinary
    nodes run on onnxruntime, a GridSample in TensorRT's parser spelling given back the opset's own name first.
    ``resampling="tensorrt"`` instead runs every ordinary resampling node as onnx-tensorrt would build it
    (``translate.onnx_tensorrt.import_node``, then the oracle): what TensorRT computes per the encoded rules;
    ``resampling="oracle"`` runs them as the ONNX specification says (``translate.onnx``, then the oracle): the
    reference for a source model."""
    import onnx
    from onnx import numpy_helper

    if resampling not in ("onnxruntime", "tensorrt", "oracle"):
        raise BridgeError(f"resampling={resampling!r}: expected onnxruntime, tensorrt or oracle", field="resampling")
    model = onnx.load_from_string(model.SerializeToString()) if not isinstance(model, onnx.ModelProto) else model
    g = Graph(model) if resampling != "onnxruntime" else None
    opset = default_opset(model)
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values.update({k: np.asarray(v) for k, v in feeds.items()})
    for node in model.graph.node:
        if is_plugin_node(node):
            values[node.output[0]] = _run_plugin(node, values)
        elif node.domain not in ONNX_DOMAINS:
            raise BridgeError(f"node {node.name!r} is in domain {node.domain!r}, which neither onnxruntime nor the "
                              "oracle runs", node.name)
        elif resampling != "onnxruntime" and is_resampling(node):
            values[node.output[0]] = _run_resampling(node, values, g, opset, resampling)
        else:
            outs = _ort_node(with_opset_spelling(node, opset), values, model.opset_import, model.ir_version)
            for name, v in zip([o for o in node.output if o], outs):
                values[name] = v
    return values


__all__ = ["run_tensorrt_ready"]
