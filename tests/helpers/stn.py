"""Spatial transformers in ONNX whose grid the model generates, followed by a Conv (a classifier's first layer, so
the sampler is not the graph's tail): for ``grid_pin``'s tests and ``tools/dev/bench_grid_pin.py``."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper as nh


def _graph(nodes, inits, hw, out_channels=4, theta_shape=(1, 2, 3), theta="theta"):
    """x [1, 3, hw, hw] and theta -> nodes (ending in ``grid``) -> GridSample -> Conv -> y."""
    rng = np.random.default_rng(1)
    nodes = nodes + [h.make_node("GridSample", ["x", "grid"], ["sampled"], mode="linear", align_corners=0),
                     h.make_node("Conv", ["sampled", "conv_w"], ["y"], pads=[1, 1, 1, 1])]
    inits = inits + [nh.from_array((rng.standard_normal((out_channels, 3, 3, 3)) * 0.2).astype(np.float32),
                                   "conv_w")]
    g = h.make_graph(nodes, "stn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, hw, hw]),
                                     h.make_tensor_value_info(theta, T.FLOAT, list(theta_shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, out_channels, hw, hw])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 20)], ir_version=9)


def affine_grid(hw=24):
    """ONNX AffineGrid-20 (the importer's MatMul of the base grid by theta, K = 3)."""
    return _graph([h.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0)],
                  [nh.from_array(np.array([1, 3, hw, hw], np.int64), "size")], hw)


def decomposed(hw=24):
    """The dynamo export's affine_grid: a constant base grid times theta, summed over the last axis."""
    xs = (np.arange(hw) * 2 + 1) / hw - 1
    base = np.stack(np.broadcast_arrays(xs[None, :], xs[:, None], np.ones((hw, hw))), -1)
    return _graph([h.make_node("Unsqueeze", ["theta", "axes"], ["theta5"]),
                   h.make_node("Mul", ["base", "theta5"], ["terms"]),
                   h.make_node("ReduceSum", ["terms", "last"], ["grid"], keepdims=0)],
                  [nh.from_array(base.reshape(1, hw, hw, 1, 3).astype(np.float32), "base"),
                   nh.from_array(np.array([1, 2], np.int64), "axes"),
                   nh.from_array(np.array([-1], np.int64), "last")], hw)


def learned_theta(hw=24):
    """A localisation head: theta from a MatMul over 64 features (a learned layer, K = 64), then AffineGrid."""
    w = (np.random.default_rng(2).standard_normal((64, 6)) * 0.05).astype(np.float32)
    return _graph([h.make_node("MatMul", ["features", "fc_w"], ["fc"]),
                   h.make_node("Reshape", ["fc", "theta_shape"], ["theta"]),
                   h.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0)],
                  [nh.from_array(w, "fc_w"), nh.from_array(np.array([1, 2, 3], np.int64), "theta_shape"),
                   nh.from_array(np.array([1, 3, hw, hw], np.int64), "size")], hw, theta_shape=(1, 64),
                  theta="features")


def feeds(hw=24, theta_name="theta", theta_shape=(1, 2, 3)):
    """Seeded inputs: x standard normal; theta a rotation by 0.3 rad with a little scale and shift."""
    rng = np.random.default_rng(0)
    theta = np.array([[[0.86, -0.3, 0.1], [0.3, 1.05, -0.05]]], np.float32)
    if theta_shape != (1, 2, 3):
        theta = rng.standard_normal(theta_shape).astype(np.float32)
    return {"x": rng.standard_normal((1, 3, hw, hw)).astype(np.float32), theta_name: theta}


