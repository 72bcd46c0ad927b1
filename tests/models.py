"""Small ONNX models built in tests (no files checked in)."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def resize_model(x_shape, *, scales=None, sizes=None, roi=None, opset=19, name="r", dtype=TensorProto.FLOAT,
                 **attrs) -> onnx.ModelProto:
    """One Resize node with its roi/scales/sizes as initializers (None = omitted)."""
    inits, ins = [], ["X"]
    for key, val, dt in (("roi", roi, np.float32), ("scales", scales, np.float32), ("sizes", sizes, np.int64)):
        if val is None:
            ins.append("")
        else:
            inits.append(numpy_helper.from_array(np.asarray(val, dtype=dt), key))
            ins.append(key)
    while ins[-1] == "":
        ins.pop()
    node = helper.make_node("Resize", ins, ["Y"], name=name, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", dtype, list(x_shape))],
                              [helper.make_tensor_value_info("Y", dtype, None)], inits)
    # IR 10: onnxruntime 1.31 refuses the IR 14 that onnx 1.23 writes by default.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def strict_json(text: str):
    """``json.loads`` that refuses NaN / Infinity (which strict JSON has no spelling for)."""
    def no_constant(c):
        raise ValueError(f"non-strict JSON constant {c}")
    return json.loads(text, parse_constant=no_constant)


def saved(model, folder, name: str = "m.onnx") -> str:
    """``model`` written as ``folder/name``; the path as a string."""
    p = folder / name
    onnx.save(model, p)
    return str(p)
