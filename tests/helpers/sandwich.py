"""A model's one Resize moved between two 1x1 Conv layers with identity weights: where OpenVINO's CPU runs float
ops in bf16 under the bf16 hint unless they are pinned (integer data below 256 stays exact in bf16, so what
changes is what the Resize's own arithmetic does)."""

import numpy as np
import onnx
from onnx import helper


def between_identity_convs(model, channels: int = 2):
    """``model`` (input X, output Y, one Resize reading X, its sizes from Shape(X) if any), in place, with
    Conv(X) -> Resize -> Conv -> Y."""
    g = model.graph
    g.initializer.append(onnx.numpy_helper.from_array(
        np.eye(channels, dtype=np.float32).reshape(channels, channels, 1, 1), "wt"))
    resize = [n for n in g.node if n.op_type == "Resize"][0]
    resize.input[0], resize.output[0] = "A", "B"
    for n in g.node:
        if n.op_type == "Shape" and n.input[0] == "X":
            n.input[0] = "A"
    g.node.insert(0, helper.make_node("Conv", ["X", "wt"], ["A"]))
    g.node.append(helper.make_node("Conv", ["B", "wt"], ["Y"]))
    return model
