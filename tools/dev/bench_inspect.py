"""Benchmark: ``inspect`` on a generated 2,000-node model with 500 resampling nodes.

Prints one table: median of repeated runs per phase (load + shape inference, parse to IR, text + ties).
Aim: the whole inspect under 2 s. Run with ``make bench``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import numpy as np


def big_model(n_nodes: int = 2000, n_resampling: int = 500):
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, outputs = [], [], []
    x = "x"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64]),
              helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 32, 32, 2])]
    filler_per_resample = (n_nodes - n_resampling) // n_resampling
    modes = [dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             dict(mode="linear", coordinate_transformation_mode="half_pixel"),
             dict(mode="cubic", coordinate_transformation_mode="align_corners"),
             dict(mode="linear", antialias=1, coordinate_transformation_mode="half_pixel")]
    count = 0
    for i in range(n_resampling):
        for _ in range(filler_per_resample):
            nodes.append(helper.make_node("Relu", [x], [f"t{count}"]))
            x = f"t{count}"
            count += 1
        kind = i % 10
        out = f"r{i}"
        if kind == 8:
            nodes.append(helper.make_node("GridSample", [x, "grid"], [out], name=out))
        elif kind == 9:
            w = f"w{i}"
            inits.append(numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32), w))
            nodes.append(helper.make_node("DeformConv", [x, w, f"off{i}"], [out], name=out, pads=[1, 1, 1, 1]))
            inputs.append(helper.make_tensor_value_info(f"off{i}", TensorProto.FLOAT, [1, 18, 64, 64]))
        else:
            s = f"s{i}"
            size = [1, 8, int(rng.integers(20, 200)), int(rng.integers(20, 200))]
            inits.append(numpy_helper.from_array(np.array(size, dtype=np.int64), s))
            nodes.append(helper.make_node("Resize", [x, "", "", s], [out], name=out, **modes[kind % 4]))
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    while len(nodes) < n_nodes:
        nodes.append(helper.make_node("Relu", [x], [f"t{count}"]))
        x = f"t{count}"
        count += 1
    outputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "bench", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def main(repeats: int = 5) -> int:
    import onnx

    from resample_bridge.semantics import text
    from resample_bridge.tools.cli import inspect_rows
    from resample_bridge.translate import onnx as tonnx

    model = big_model()
    n_res = sum(n.op_type in tonnx.RESAMPLING_OPS for n in model.graph.node)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.onnx")
        onnx.save(model, path)
        times = {"parse_model (load, shapes, IR)": [], "text + ties": [], "inspect total (CLI path)": []}
        for _ in range(repeats):
            t0 = time.perf_counter()
            irs = tonnx.parse_model(path)
            t1 = time.perf_counter()
            for _, ir in irs:
                text.describe(ir)
                text.ties(ir)
            t2 = time.perf_counter()
            inspect_rows(path)
            t3 = time.perf_counter()
            times["parse_model (load, shapes, IR)"].append(t1 - t0)
            times["text + ties"].append(t2 - t1)
            times["inspect total (CLI path)"].append(t3 - t2)
    print(f"inspect on {len(model.graph.node)} nodes, {n_res} resampling; median of {repeats} runs")
    print(f"{'phase':<32} {'median s':>9} {'min s':>8}")
    for k, v in times.items():
        print(f"{k:<32} {statistics.median(v):>9.3f} {min(v):>8.3f}")
    total = statistics.median(times["inspect total (CLI path)"])
    print(f"target < 2 s: {'met' if total < 2 else 'NOT met'} ({total:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
