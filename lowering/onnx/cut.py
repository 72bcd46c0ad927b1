"""A part of an ONNX model as a model of its own: what the proof runs a lowered node with (``cut_session``:
on onnxruntime), and what rung 0 evaluates a node's constant inputs with."""

from __future__ import annotations

from ...semantics.errors import BridgeError, first_line
from ..model_check import import_onnxruntime


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


def cut_session(rec, model, fed: dict, what: str, reads: str):
    """(an onnxruntime session of the nodes computing ``rec``'s output from ``fed`` (name -> dtype), None), or
    (None, the failure): the cut reads more than ``reads``, or onnxruntime cannot run it."""
    ort = import_onnxruntime()

    try:
        sub = submodel(model, fed, rec.proof["output"])
        return ort.InferenceSession(sub.SerializeToString(), providers=["CPUExecutionProvider"]), None
    except BridgeError as e:
        return None, [f"{rec.node}: the {what} reads more than {reads} ({e.message})"]
    except Exception as e:  # noqa: BLE001 -- onnxruntime's own words
        return None, [f"{rec.node}: onnxruntime cannot run the {what}: {first_line(e)}"]
