"""Which sides of a resampling node meet the model's own inputs or outputs (``planar_sides``). OpenVINO's CPU
plugin takes and gives a model's inputs and outputs in their plain (planar) layout, and keeps blocked layouts
only between layers that choose them (Conv and what follows it). The extension is a planar op: between layers
the plugin reorders around it, at a graph boundary it does not. So the cost model (``cost.py``) charges the
reorders only on the sides that are not at the boundary (measured, linear x2 1x16x96x96 on an Intel Xeon, AVX-512:
the extension 3.8x faster than Interpolate alone, 2.0x after a Conv, 0.86x between Conv layers).

A side is at the boundary when the tensor reaches a graph input (or output) through ops that keep its layout
and read nothing else that varies (``LAYOUT_KEEPING``: element-wise ops with constant operands, casts, shape
ops): the preprocessing in front of a model's first Resize, the activation after its last one."""

from __future__ import annotations
from ...translate.onnx import is_resampling
from ...translate.onnx_walk import node_name

# Ops through which a planar tensor stays planar in the plugin when every other operand is a constant.
LAYOUT_KEEPING = frozenset({
    "Identity", "Cast", "CastLike", "Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Clip", "Neg", "Abs",
    "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "Tanh", "Exp", "Log", "Sqrt", "Erf", "Floor", "Ceil", "Round",
    "Softplus", "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten",
})
SHAPE_ONLY = frozenset({"Shape", "Size"})
NOT_AT_BOUNDARY = (False, False)


def planar_sides(model) -> dict:
    """{node name: (input side at the boundary, output side at the boundary)} for the top graph's resampling
    nodes of ``model`` (names as ``translate.onnx_walk`` gives them); a node in an If / Loop body is not in it
    (its sides are charged, as between layers)."""

    graph = model.graph
    inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    constant = {t.name for t in graph.initializer} | {""} | \
        {o for n in graph.node if n.op_type == "Constant" for o in n.output}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict = {}
    for n in graph.node:
        if n.op_type not in SHAPE_ONLY:  # reads the shape alone: any layout will do
            for i in n.input:
                consumers.setdefault(i, []).append(n)

    def varying(n) -> list:
        return [i for i in n.input if i not in constant]

    def from_input(tensor: str, depth: int = 0) -> bool:
        if tensor in inputs:
            return True
        n = producer.get(tensor)
        if n is None or n.op_type not in LAYOUT_KEEPING or depth > 32:
            return False
        ins = varying(n)
        return len(ins) == 1 and from_input(ins[0], depth + 1)

    def to_output(tensor: str, depth: int = 0) -> bool:
        users = consumers.get(tensor, [])
        if not users:
            return tensor in outputs
        if depth > 32:
            return False
        return all(n.op_type in LAYOUT_KEEPING and varying(n) == [tensor] and
                   all(to_output(o, depth + 1) for o in n.output) for n in users)

    return {node_name(n, k): (bool(n.input) and from_input(n.input[0]), all(to_output(o) for o in n.output))
            for k, n in enumerate(graph.node) if is_resampling(n)}
