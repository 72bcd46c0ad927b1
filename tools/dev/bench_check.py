"""Benchmark of ``check --target openvino`` on 50-node models: the batched importer run (one model for all
distinct node configurations) against one model per node (the way check worked before), same code otherwise;
then the ``convert`` curve: the command, as a user runs it, on fan models of 50 to 500 Resize nodes.

    python -m resample_bridge.tools.dev.bench_check [--repeats 3]

Models: "chain" (40 Resize nodes of 8 configurations in a chain over 1x8x32x32, 5 GridSample, 5 DeformConv)
and "fan" (N Resize nodes reading one 1x3x16x16 input, 32 distinct configurations).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

MODES = [dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
         dict(mode="linear", coordinate_transformation_mode="half_pixel"),
         dict(mode="linear", coordinate_transformation_mode="align_corners"),
         dict(mode="cubic", coordinate_transformation_mode="half_pixel", exclude_outside=1),
         dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
         dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
         dict(mode="cubic", coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.5),
         dict(mode="linear", coordinate_transformation_mode="half_pixel", antialias=1)]


def chain_model():
    from onnx import TensorProto, helper, numpy_helper

    F = TensorProto.FLOAT
    rng = np.random.default_rng(0)
    nodes, inits, outs, x, size = [], [], [], "X", 32
    for i in range(40):
        tgt = 48 if size == 32 else 32
        inits.append(numpy_helper.from_array(np.array([1, 8, tgt, tgt], np.int64), f"sz{i}"))
        nodes.append(helper.make_node("Resize", [x, "", "", f"sz{i}"], [f"Y{i}"], name=f"r{i}", **MODES[i % 8]))
        x, size = f"Y{i}", tgt
    outs.append(helper.make_tensor_value_info(x, F, None))
    for i in range(5):
        inits.append(numpy_helper.from_array(rng.uniform(-1.1, 1.1, (1, 16, 16, 2)).astype(np.float32), f"grid{i}"))
        nodes.append(helper.make_node("GridSample", ["X", f"grid{i}"], [f"G{i}"], name=f"gs{i}",
                                      mode=["linear", "nearest", "cubic"][i % 3],
                                      padding_mode=["zeros", "border", "reflection"][i % 3], align_corners=i % 2))
        outs.append(helper.make_tensor_value_info(f"G{i}", F, None))
    for i in range(5):
        inits.append(numpy_helper.from_array((rng.standard_normal((8, 8, 3, 3)) * 0.1).astype(np.float32), f"w{i}"))
        inits.append(numpy_helper.from_array(rng.normal(0, 2, (1, 18, 30, 30)).astype(np.float32), f"off{i}"))
        nodes.append(helper.make_node("DeformConv", ["X", f"w{i}", f"off{i}"], [f"D{i}"], name=f"dc{i}",
                                      kernel_shape=[3, 3]))
        outs.append(helper.make_tensor_value_info(f"D{i}", F, None))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", F, [1, 8, 32, 32])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def fan_model(n: int = 50):
    from onnx import TensorProto, helper, numpy_helper

    F = TensorProto.FLOAT
    scales = [[1, 1, 2, 2], [1, 1, 0.5, 0.5], [1, 1, 1.5, 1.5], [1, 1, 3, 3]]
    nodes, inits, outs = [], [], []
    for i in range(n):
        inits.append(numpy_helper.from_array(np.array(scales[(i // 8) % 4], np.float32), f"s{i}"))
        nodes.append(helper.make_node("Resize", ["X", "", f"s{i}"], [f"Y{i}"], name=f"r{i}", **MODES[i % 8]))
        outs.append(helper.make_tensor_value_info(f"Y{i}", F, None))
    g = helper.make_graph(nodes, "fan", [helper.make_tensor_value_info("X", F, [1, 3, 16, 16])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def per_node(path: str) -> list[dict]:
    """check as it was: one importer model, one compile and one resample-bridge conversion per node."""
    import onnx

    from ..check_openvino_node import _ours, single_node_models
    from ..check_openvino_verdict import _native_verdict
    from ...translate.onnx import load

    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, ir, one, feeds in single_node_models(load(path)):
            p = os.path.join(d, f"node{len(rows)}.onnx")
            onnx.save(one, p)
            rows.append({"name": name, "openvino": _native_verdict(p, ir, one, feeds), "resample_bridge": _ours(p)})
    return rows


def main(argv=None) -> int:
    import onnx
    import openvino as ov

    from ..check_openvino import check_openvino

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:  # first, before this process holds OpenVINO's threads
        convert_curve(d, args.repeats)
    print(f"\nOpenVINO {ov.__version__}, {os.cpu_count()} cores; median of {args.repeats} runs (seconds, in-process)")
    print(f"{'model':<8} {'nodes':>5} {'one model per node':>20} {'batched':>9} {'same verdicts':>14}")
    with tempfile.TemporaryDirectory() as d:
        for name, build in (("chain", chain_model), ("fan", fan_model)):
            path = os.path.join(d, f"{name}.onnx")
            onnx.save(build(), path)
            times = {"per": [], "batch": []}
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                a = per_node(path)
                times["per"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                b = check_openvino(path)
                times["batch"].append(time.perf_counter() - t0)
            same = [x["openvino"]["verdict"] for x in a] == [y["openvino"]["verdict"] for y in b] and \
                [x["resample_bridge"]["rung"] for x in a] == [y["resample_bridge"]["rung"] for y in b]
            print(f"{name:<8} {len(b):>5} {statistics.median(times['per']):>20.2f} "
                  f"{statistics.median(times['batch']):>9.2f} {str(same):>14}")
    return 0


def convert_curve(folder: str, repeats: int, sizes=(50, 125, 250, 500)) -> None:
    """``resample-bridge convert`` (a fresh process, as a user runs it) on fan models of growing size: median
    seconds, and the least-squares line through them (fixed cost + per node)."""
    import subprocess
    import sys

    import onnx

    print(f"convert --target openvino, fan models; median of {repeats} runs (seconds, whole command)")
    print(f"{'nodes':>5} {'seconds':>8} {'ms/node':>8}")
    xs, ys = [], []
    for n in sizes:
        path = os.path.join(folder, f"fan{n}.onnx")
        onnx.save(fan_model(n), path)
        cmd = [sys.executable, "-m", "resample_bridge.tools.cli", "convert", path, "-o",
               os.path.join(folder, f"fan{n}.xml"), "--force", "-q"]
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            runs.append(time.perf_counter() - t0)
        xs.append(n)
        ys.append(statistics.median(runs))
        print(f"{n:>5} {ys[-1]:>8.2f} {1000 * ys[-1] / n:>8.1f}")
    slope, icept = np.polyfit(xs, ys, 1)
    print(f"fit: {icept:.2f} s + {1000 * slope:.1f} ms per node")


if __name__ == "__main__":
    raise SystemExit(main())
