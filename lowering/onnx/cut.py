"""A part of an ONNX model as a model of its own: what the proof runs a lowered node with, and what rung 0
evaluates a node's constant inputs with."""

from __future__ import annotations

from ...semantics.errors import BridgeError


def submodel(model, inputs: dict, outputs):
    """The nodes of ``model`` that compute ``outputs`` (a name or a list) from ``inputs`` (name -> dtype) and
    constants, as a model of their own; BridgeError naming a graph input it would need beside ``inputs``."""
    import onnx

    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    producers = {o: (i, n) for i, n in enumerate(model.graph.node) for o in n.output}
    inits = {i.name: i for i in model.graph.initializer}
    picked, used, stack, seen = {}, [], list(outputs), set(inputs)  # picked: position in the graph -> node
    while stack:
        t = stack.pop()
        if not t or t in seen:
            continue
        seen.add(t)
        if t in inits:
            used.append(inits[t])
        elif t in producers:
            i, n = producers[t]
            picked[i] = n
            stack.extend(n.input)
        else:
            raise BridgeError(f"{t} is a graph input the probe does not feed")
    graph = onnx.helper.make_graph([picked[i] for i in sorted(picked)], "probe",
                                   [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(d), None)
                                    for n, d in inputs.items()], [onnx.ValueInfoProto(name=o) for o in outputs], used)
    sub = onnx.helper.make_model(graph, opset_imports=list(model.opset_import))
    sub.ir_version = model.ir_version
    return sub
