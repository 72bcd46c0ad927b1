"""Values of roi / scales / sizes that exporters compute in the graph instead of writing as constants.

PyTorch and friends write ``sizes`` as Shape -> Gather/Slice -> Concat (-> Cast, Mul, Div, Floor...), and
empty roi/scales through Identity or Cast. When every leaf of such a chain is a constant or the Shape of a
tensor whose shape is static, the chain is evaluated here (with ONNX's own reference evaluator, so every op
means what the spec says) and the value joins the graph's constants. Anything else stays a run-time value.
"""

from __future__ import annotations

from .onnx_shape_eval import chain, evaluate, partial_value
from ..semantics.vocab import ONNX_RESIZE_OPS


def fold_parameters(nodes, producers: dict, consts: dict, shapes: dict, opset: int,
                    dim_params: dict | None = None, inputs=None) -> tuple[dict, dict]:
    """({tensor: value}, {tensor: partial}) for the parameter inputs (roi / scales / sizes) of ``nodes``:
    values that fold completely, and, for the rest, a partial value where the chain reads dynamic dims or the
    small tensors ``inputs`` names (``onnx_shape_eval.runtime_values``). ``producers`` maps a tensor name to the
    NodeProto that outputs it."""
    folded, partial = {}, {}
    for node in nodes:
        params = range(1, len(node.input)) if node.op_type in ONNX_RESIZE_OPS else ()
        for i in params:
            name = node.input[i]
            if not name or name in consts or name in folded or name in partial:
                continue
            value = _evaluate(name, producers, consts, shapes, opset)
            if value is not None:
                folded[name] = value
            elif dim_params is not None:
                p = partial_value(name, producers, consts, shapes, opset, dim_params, node.input[0], inputs)
                if p is not None:
                    partial[name] = p
    return folded, partial


def _evaluate(name: str, producers: dict, consts: dict, shapes: dict, opset: int):
    found = chain(name, producers, consts, shapes)
    if found is None:
        return None
    order, leaves, _, _ = found
    values = evaluate(order, leaves, opset, [name])
    return None if values is None else values.get(name)
