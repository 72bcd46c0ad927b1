"""Benchmark: OpenVINO CPU latency of a model converted by resample-bridge vs by OpenVINO's own importer, with
onnxruntime beside them, for each rung of the ladder. One table, one run, medians of repeated runs.

    python tools/dev/bench_openvino.py [--repeats 30]

"exact?" says whether OpenVINO's importer computes the ONNX numbers (from ``check``); a ratio is the judge
only where both are exact (aim: ours/OpenVINO <= 1.05). Where OpenVINO refuses, ours is compared with
onnxruntime only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

from bench import _time_interleaved  # noqa: E402  (same directory; one timing loop)


def _models():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    f = TensorProto.FLOAT

    def model(name, nodes, inputs, inits, out="y"):
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
                              [helper.make_tensor_value_info(out, f, None)],
                              [numpy_helper.from_array(np.asarray(v, dtype=dt), k) for k, v, dt in inits])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)

    yield "linear x2 1x3x224x224 (half_pixel)", model(
        "a", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")], [("x", [1, 3, 224, 224])],
        [("s", [1, 1, 2, 2], np.float32)])
    yield "nearest x2 1x64x160x160 (asymmetric floor)", model(
        "b", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", nearest_mode="floor",
                               coordinate_transformation_mode="asymmetric")], [("x", [1, 64, 160, 160])],
        [("s", [1, 1, 2, 2], np.float32)])
    yield "linear AA 1x3x1080x1920->540x960", model(
        "c", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", antialias=1)],
        [("x", [1, 3, 1080, 1920])], [("sz", [1, 3, 540, 960], np.int64)])
    yield "linear AA+excl 1x3x512x512->224 (torchvision)", model(
        "d", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", antialias=1, exclude_outside=1)],
        [("x", [1, 3, 512, 512])], [("sz", [1, 3, 224, 224], np.int64)])
    yield "cubic align_corners x0.6 1x3x224x224", model(
        "e", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic",
                               coordinate_transformation_mode="align_corners")], [("x", [1, 3, 224, 224])],
        [("s", [1, 1, 0.6, 0.6], np.float32)])
    yield "tf_crop_and_resize 1x3x224x224->112", model(
        "f", [helper.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="linear",
                               coordinate_transformation_mode="tf_crop_and_resize")], [("x", [1, 3, 224, 224])],
        [("roi", [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.8], np.float32), ("sz", [1, 3, 112, 112], np.int64)])
    yield "GridSample 1x32x128x128, grid 128x128", model(
        "g", [helper.make_node("GridSample", ["x", "grid"], ["y"])], [("x", [1, 32, 128, 128]),
                                                                      ("grid", [1, 128, 128, 2])], [])
    yield "DeformConv 1x64x56x56 3x3 + mask", model(
        "h", [helper.make_node("DeformConv", ["x", "w", "off", "", "mask"], ["y"], pads=[1, 1, 1, 1])],
        [("x", [1, 64, 56, 56]), ("off", [1, 18, 56, 56]), ("mask", [1, 9, 56, 56])],
        [("w", rng.standard_normal((64, 64, 3, 3)) * 0.05, np.float32)])
    del onnx


def main(argv=None) -> int:
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering import openvino as low
    from resample_bridge.lowering.openvino import F32
    from resample_bridge.tools.check_openvino import check_openvino
    from resample_bridge.tools.verify_inputs import make_inputs

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args(argv)
    core = ov.Core()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, model in _models():
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            feeds = make_inputs(model)
            ours, records = low.convert(path)
            rung = records[0].rung if records else "-"
            compiled = core.compile_model(ours, "CPU", F32)
            run_ours = lambda c=compiled: c(feeds)  # noqa: E731
            verdict = check_openvino(path)[0]["openvino"]["verdict"]
            try:
                native = core.compile_model(ov.convert_model(path), "CPU", F32)
                run_ov = lambda: native(feeds)  # noqa: E731
            except Exception:
                run_ov = None  # OpenVINO's importer refuses this model
            try:
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                run_ort = lambda: sess.run(None, feeds)  # noqa: E731
            except Exception:
                run_ort = None
            t_ours, t_ov, t_ort = _time_interleaved([run_ours, run_ov, run_ort], args.repeats)
            rows.append((name, rung, t_ours, t_ov, verdict, t_ort))
    print(f"OpenVINO {ov.__version__} CPU (f32 hint), onnxruntime {ort.__version__}; median of {args.repeats} "
          f"runs, ms")
    head = f"{'case':<46} {'rung':>4} {'ours':>8} {'OV importer':>11} {'OV exact?':>18} {'ORT':>8} " \
           f"{'ours/OV':>8} {'ours/ORT':>8}"
    print(head)
    print("-" * len(head))
    fmt = lambda v: f"{v:8.2f}" if v is not None else f"{'-':>8}"  # noqa: E731
    for name, rung, t, tov, verdict, tort in rows:
        r_ov = f"{t / tov:8.2f}" if tov else f"{'-':>8}"
        r_ort = f"{t / tort:8.2f}" if tort else f"{'-':>8}"
        print(f"{name:<46} {rung:>4} {fmt(t)} {fmt(tov):>11} {verdict:>18} {fmt(tort)} {r_ov} {r_ort}")
    both = [t / tov for _, _, t, tov, v, _ in rows if tov and v == "exact"]
    if both:
        print(f"where both are exact: ours/OV median {statistics.median(both):.3f}, max {max(both):.3f} "
              f"(aim <= 1.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
