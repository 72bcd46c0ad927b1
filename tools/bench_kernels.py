"""Benchmark: the shared C++ kernels (through the resample-bridge OpenVINO extension, one-node models) vs
OpenVINO's native op vs onnxruntime vs a memory-bandwidth bound (a numpy copy of the same bytes: input read +
output written). One table, one run, interleaved medians.

    python tools/bench_kernels.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

from bench_openvino import _time_interleaved  # noqa: E402  (same directory; one timing loop)


def _cases():
    """(name, ONNX model, feeds): the issue's rows."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    f = TensorProto.FLOAT

    def model(node, inputs, inits=()):
        g = helper.make_graph([node], "b", [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", f, None)],
                              [numpy_helper.from_array(np.asarray(v, dtype=dt), k) for k, v, dt in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
        feeds = {n: (rng.uniform(-1.1, 1.1, s) if n == "grid" else rng.standard_normal(s)).astype(np.float32)
                 for n, s in inputs}
        return m, feeds

    yield ("resize linear 1x3x224x224->448x448",
           *model(helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear"), [("x", [1, 3, 224, 224])],
                  [("sz", [1, 3, 448, 448], np.int64)]))
    yield ("resize nearest x2 1x64x160x160",
           *model(helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", nearest_mode="floor",
                                   coordinate_transformation_mode="asymmetric"), [("x", [1, 64, 160, 160])],
                  [("s", [1, 1, 2, 2], np.float32)]))
    yield ("resize linear AA 1x3x1080x1920->540x960",
           *model(helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", antialias=1,
                                   exclude_outside=1), [("x", [1, 3, 1080, 1920])], [("sz", [1, 3, 540, 960], np.int64)]))
    yield ("GridSample 1x32x128x128, grid 128x128",
           *model(helper.make_node("GridSample", ["x", "grid"], ["y"]), [("x", [1, 32, 128, 128]),
                                                                       ("grid", [1, 128, 128, 2])]))
    yield ("GridSample 5-D 1x8x32x32x32",
           *model(helper.make_node("GridSample", ["x", "grid"], ["y"]), [("x", [1, 8, 32, 32, 32]),
                                                                       ("grid", [1, 32, 32, 32, 3])]))
    yield ("DeformConv 1x64x56x56 3x3 + mask",
           *model(helper.make_node("DeformConv", ["x", "w", "off", "", "mask"], ["y"], pads=[1, 1, 1, 1]),
                  [("x", [1, 64, 56, 56]), ("off", [1, 18, 56, 56]), ("mask", [1, 9, 56, 56])],
                  [("w", rng.standard_normal((64, 64, 3, 3)) * 0.05, np.float32)]))


def main(argv=None) -> int:
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering import openvino as low
    from resample_bridge.lowering.openvino import F32

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args(argv)
    core = ov.Core()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, model, feeds in _cases():
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            ours_model, (rec,) = low.convert(path, fallback="extension")
            ours = core.compile_model(ours_model, "CPU", F32)
            native_model, (nrec,) = low.convert(path)  # the ladder's own choice without --fallback extension
            try:
                native = core.compile_model(native_model, "CPU", F32) if nrec.rung in (1, 2) else None
            except Exception:
                native = None
            try:
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            except Exception:
                sess = None
            y = ours(feeds)[0]
            nbytes = sum(v.nbytes for v in feeds.values()) + y.nbytes
            src = np.ones(nbytes // 4, dtype=np.float32)
            dst = np.empty_like(src)
            fns = [lambda: ours(feeds), (lambda: native(feeds)) if native else None,
                   (lambda: sess.run(None, feeds)) if sess else None, lambda: np.copyto(dst, src)]
            t = _time_interleaved(fns, args.repeats)
            rows.append((name, nrec.rung, *t))
    print(f"OpenVINO {ov.__version__} CPU f32 ({os.cpu_count()} cores), onnxruntime {ort.__version__}; "
          f"median of {args.repeats} interleaved runs, ms")
    head = (f"{'case':<40} {'ours (ext)':>10} {'OV native':>10} {'ORT':>8} {'copy bound':>10} "
            f"{'ours/OV':>8} {'ours/ORT':>8} {'ours/copy':>9}")
    print(head)
    print("-" * len(head))
    f = lambda v: f"{v:.2f}" if v is not None else "-"  # noqa: E731
    r = lambda a, b: f"{a / b:.2f}" if a is not None and b else "-"  # noqa: E731
    for name, rung, t_ours, t_ov, t_ort, t_copy in rows:
        print(f"{name:<40} {f(t_ours):>10} {f(t_ov):>10} {f(t_ort):>8} {f(t_copy):>10} {r(t_ours, t_ov):>8} "
              f"{r(t_ours, t_ort):>8} {r(t_ours, t_copy):>9}")
    print("OV native = the native op resample-bridge's ladder picks when it is exact (rung 1-2); '-' where none is")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
