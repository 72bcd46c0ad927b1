"""Run-time Resize parameters of an export at static input shapes (issue 44, ``check --source``): a TorchScript
export computes an FPN's ``sizes`` by Shape ops on a tensor whose lengths ONNX shape inference cannot know (it
lies below another Resize whose sizes are computed too), so the node cannot be bound and the check refused it.
Where every path of such a parameter's chain ends in a constant or a Shape op (it reads lengths, never values),
its value at the export shape is what onnxruntime computes there: run on two seeded inputs, bound as a constant
only where both agree. onnxruntime is imported inside; without it nothing is bound.
"""

from __future__ import annotations

import numpy as np

from ..semantics.vocab import ONNX_RESIZE_OPS
_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
          "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": bool}


def bind_runtime_parameters(model):
    """A copy of ``model`` (static input shapes) with each shape-only run-time parameter of a Resize as a
    constant, or ``model`` itself where there is none (or onnxruntime is missing or refuses the model)."""
    import onnx

    producers = {o: n for n in model.graph.node for o in n.output}
    known = {i.name for i in model.graph.initializer}
    wanted = [name for node in model.graph.node if node.op_type in ONNX_RESIZE_OPS
              for name in node.input[1:] if name and name not in known and _shape_only(name, producers, known)]
    wanted = list(dict.fromkeys(wanted))
    values = _values(model, wanted) if wanted else {}
    if not values:
        return model
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    for name, value in values.items():
        bound.graph.initializer.append(onnx.numpy_helper.from_array(value, f"{name}__bound"))
    for node in bound.graph.node:
        if node.op_type in ONNX_RESIZE_OPS:
            for i, name in enumerate(node.input):
                if i and name in values:
                    node.input[i] = f"{name}__bound"
    return bound


def _shape_only(name: str, producers: dict, known: set) -> bool:
    """Whether every path up from ``name`` ends in an initializer, a Constant or a Shape op (lengths only)."""
    stack, seen = [name], set()
    while stack:
        t = stack.pop()
        if t in seen or not t or t in known:
            continue
        seen.add(t)
        node = producers.get(t)
        if node is None:
            return False  # a graph input read for its values
        if node.op_type in ("Shape", "Size", "Constant"):
            continue
        if node.op_type in ("If", "Loop", "Scan", "RandomNormal", "RandomUniform", "RandomNormalLike",
                            "RandomUniformLike", "Multinomial") or len(seen) > 200:
            return False
        stack.extend(node.input)
    return True


def _values(model, names: list[str]) -> dict:
    """{name: value} of ``names`` computed by onnxruntime on two seeded inputs, where both runs agree."""
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        return {}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in have)
    try:
        session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        runs = []
        for seed in (0, 1):
            rng = np.random.default_rng(seed)
            feeds = {i.name: rng.uniform(0, 1, i.shape).astype(_TYPES.get(i.type, np.float32))
                     for i in session.get_inputs()}
            runs.append(dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds))))
    except Exception:  # noqa: BLE001 -- a model onnxruntime refuses (or a dynamic shape): nothing bound
        return {}
    return {n: runs[0][n] for n in names if n in runs[0] and np.array_equal(runs[0][n], runs[1][n])}


__all__ = ["bind_runtime_parameters"]
