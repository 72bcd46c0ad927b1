"""``check --target openvino``: the model's own index arithmetic, where OpenVINO's importer computes other indices
than onnxruntime at some input shapes the model admits.

Exporters write some resampling as arithmetic on shapes, no Resize node (the dynamo exporter's nearest-exact:
trunc((i + 0.5) * (n / 1.5 n)) and a GatherND), so check's per-node rows never see it, and OpenVINO's CPU computes
a float Divide as a * (1 / b) (``lowering/openvino/exact_division.py``). Here every integer Cast of floats computed
from shapes and constants only, through a float Div, is cut out with its cone into a model whose inputs are the
shapes (each Shape reads a graph input holding the shape); the importer's model and onnxruntime run it at every
length 1 .. ``SWEEP`` of each dynamic dimension (the others at their probe length) and a few hundred random shapes
up to ``FAR``. A shape where the integers differ makes a row: ``silently different`` on that shape, naming the Div
and the Cast. Otherwise no row (nothing moved on the shapes tried). ``convert`` respells such arithmetic
(``lowering/openvino/index_arithmetic.py``): the row's resample-bridge side says so.
"""

from __future__ import annotations

import io

import numpy as np

from ..lowering.rungs import REWRITE, RUNG_NAMES
from .gate import INDEX_ROW_OP as ROW_OP

SWEEP, FAR, RANDOM = 512, 2048, 256
PROBE_LENGTH = 64  # the other dynamic dimensions' length while one is swept
_FLOAT = {1, 10, 11, 16}  # FLOAT, FLOAT16, DOUBLE, BFLOAT16
_SOURCES = {"Shape", "Size", "Constant"}
_ARITHMETIC = {
    "Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Clip", "Max",
    "Min", "Mod", "Sign", "Cast", "CastLike", "Identity", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Concat",
    "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Range", "Where", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Not", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd",
    "ConstantOfShape",
}


def index_rows(model) -> list[dict]:
    """check rows (``check_openvino``'s form) for the main graph's index arithmetic that OpenVINO's importer
    computes otherwise at some shape; [] where none was found or the graph cannot be read so."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 -- a model shape inference cannot read: nothing judged here
        return []
    graph = inferred.graph
    producer = {o: n for n in graph.node for o in n.output}
    types = _elem_types(graph)
    inits = {t.name for t in graph.initializer}
    derived: dict = {}

    def from_shapes(name) -> bool:
        if name in inits or name == "":
            return True
        node = producer.get(name)
        if node is None:
            return False  # a graph input's values
        if name not in derived:
            derived[name] = False
            derived[name] = node.op_type in _SOURCES or (node.op_type in _ARITHMETIC and all(
                from_shapes(i) for i in node.input))
        return derived[name]
    roots = [n for n in graph.node if n.op_type == "Cast" and types.get(n.input[0]) in _FLOAT
             and _attr(n, "to") not in _FLOAT and from_shapes(n.input[0])]
    divisions = {r.output[0]: _divisions(r, producer, types) for r in roots}
    roots = [r for r in roots if divisions[r.output[0]]]
    if not roots:
        return []
    found = _sweep(model.opset_import, graph, producer, roots)
    if found is None:
        return []
    shape, root = found
    div = divisions[root][0]
    return [{"name": div, "op": ROW_OP, "openvino": {
        "verdict": "silently different", "shape": shape, "fields": [
            f"Div {div!r} computed as a * (1 / b), not IEEE a / b (OpenVINO's CPU): the integer Cast {root!r} "
            f"differs from onnxruntime's at this shape"]},
        "resample_bridge": {"rung": REWRITE, "rung_name": RUNG_NAMES[REWRITE], "condition": None,
                            "reason": "convert computes the Div as IEEE division in standard ops and keeps the "
                                      "index arithmetic in f32 (index_arithmetic)"}}]


def _attr(node, name):
    import onnx

    return next((onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


def _elem_types(graph) -> dict:
    types = {v.name: v.type.tensor_type.elem_type for v in [*graph.input, *graph.value_info, *graph.output]}
    types.update({t.name: t.data_type for t in graph.initializer})
    return types


def _divisions(root, producer, types) -> list:
    """The names of the float Div nodes in ``root``'s cone."""
    found, seen, stack = [], set(), [root.input[0]]
    while stack:
        name = stack.pop()
        node = producer.get(name)
        if node is None or name in seen or node.op_type in _SOURCES:
            continue
        seen.add(name)
        if node.op_type == "Div" and types.get(node.output[0]) in _FLOAT:
            found.append(node.name or node.output[0])
        stack += list(node.input)
    return found


def _sweep(opsets, graph, producer, roots):
    """(the first input shape where the importer's integers differ from onnxruntime's, the Cast's output name),
    or None."""
    cone, shapes = _cone_model(opsets, graph, producer, roots)
    if cone is None:
        return None
    import onnxruntime as ort
    import openvino as ov

    try:
        sess = ort.InferenceSession(cone.SerializeToString(), providers=["CPUExecutionProvider"])
        compiled = ov.Core().compile_model(ov.convert_model(io.BytesIO(cone.SerializeToString())), "CPU",
                                           {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception:  # noqa: BLE001 -- either runtime refusing the cut-out cone: nothing judged here
        return None
    names = [r.output[0] for r in roots]
    for shape_of in _shape_feeds(shapes):
        feeds = {k + "__shape": np.asarray(v, np.int64) for k, v in shape_of.items()}
        try:
            want = sess.run(names, feeds)
            got = compiled(feeds)
            got = [got[compiled.output(name)] for name in names]
        except Exception:  # noqa: BLE001 -- a shape one of them cannot compute (a Range of negative length)
            continue
        for name, w, g in zip(names, want, got):
            if g.shape != w.shape or not np.array_equal(g, w):
                return next(iter(shape_of.values())), name
    return None


def _cone_model(model_opsets, graph, producer, roots):
    """(a model computing the roots from the shapes of the graph inputs their Shape / Size nodes read, fed as
    int64 vectors "NAME__shape", {input name: dims}), or (None, None) where one reads anything else."""
    from onnx import TensorProto, helper

    inputs = {v.name: v for v in graph.input}
    cone, stack = set(), [r.output[0] for r in roots]
    while stack:
        node = producer.get(stack.pop())
        if node is not None and id(node) not in cone:
            cone.add(id(node))
            stack += [] if node.op_type in ("Shape", "Size") else list(node.input)
    shapes, nodes, extra = {}, [], []
    for node in graph.node:  # the graph's own (topological) order
        if id(node) not in cone:
            continue
        if node.op_type not in ("Shape", "Size"):
            nodes.append(node)
            continue
        src = inputs.get(node.input[0])
        if src is None or not src.type.tensor_type.HasField("shape"):
            return None, None
        shapes[src.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param or (src.name, i)
                            for i, d in enumerate(src.type.tensor_type.shape.dim)]
        fed, (out,) = src.name + "__shape", node.output
        if node.op_type == "Size":
            nodes.append(helper.make_node("ReduceProd", [fed], [out], keepdims=0))
            continue
        start, end = _attr(node, "start"), _attr(node, "end")
        bounds = [out + "__start", out + "__end"]
        extra += [helper.make_tensor(bounds[0], TensorProto.INT64, [1], [start or 0]),
                  helper.make_tensor(bounds[1], TensorProto.INT64, [1], [end if end is not None else 2 ** 62])]
        nodes.append(helper.make_node("Slice", [fed, *bounds], [out]))
    used = {i for n in nodes for i in n.input}
    feeds = [helper.make_tensor_value_info(n + "__shape", TensorProto.INT64, [len(d)]) for n, d in shapes.items()]
    outputs = [helper.make_tensor_value_info(r.output[0], _attr(r, "to"), None) for r in roots]
    inits = [t for t in graph.initializer if t.name in used] + extra
    return helper.make_model(helper.make_graph(nodes, "index_arithmetic", feeds, outputs, inits),
                             opset_imports=list(model_opsets)), shapes


def _shape_feeds(shapes: dict):
    """{input: its shape} assignments: every dynamic dimension (a name shared by several is one) swept over
    1 .. SWEEP (the others at PROBE_LENGTH), then RANDOM shapes up to FAR; a static dimension keeps its length."""
    dynamic = list(dict.fromkeys(d for dims in shapes.values() for d in dims if not isinstance(d, int)))

    def assign(values: dict):
        return {n: [d if isinstance(d, int) else values.get(d, PROBE_LENGTH) for d in dims]
                for n, dims in shapes.items()}
    yield assign({})
    for axis in dynamic:
        for length in range(1, SWEEP + 1):
            yield assign({axis: length})
    rng = np.random.default_rng(0)
    for _ in range(RANDOM if dynamic else 0):
        yield assign({axis: int(rng.integers(1, FAR + 1)) for axis in dynamic})
