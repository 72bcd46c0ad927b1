"""Issue 45's single-node table: rung 2's convolution form (``lowering/openvino/conv_rewrite.py``) against
OpenVINO's Interpolate (the same node converted with the form held back) and onnxruntime, f32, at 1 thread and at
the default thread count; and which of the two the default conversion takes (the cost model in force). Medians of
interleaved runs (``bench._time_interleaved``), ms.

    python tools/dev/bench_conv.py [--repeats 15] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench import _time_interleaved, ms, ratio  # noqa: E402

SHAPES = ((1, 16, 160, 200), (1, 64, 80, 80))
FORMS = (("linear", {}), ("cubic", {"cubic_coeff_a": -0.75}), ("nearest", {"nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}))


def cases(only: str = ""):
    for shape in SHAPES:
        for kind, extra in FORMS:
            for r in (2, 4):
                name = f"{kind} x{r} {'x'.join(map(str, shape))}"
                if only in name:
                    yield name, shape, kind, r, extra


def _converted(path: str, choice: str | None):
    from resample_bridge.lowering.openvino import conv_rewrite
    from resample_bridge.lowering.openvino.target import convert

    if choice is None:
        return convert(path)
    with conv_rewrite.forcing(choice):
        return convert(path)


def measure(name, shape, kind, r, extra, repeats: int) -> list:
    import onnx
    import onnxruntime as ort
    import openvino as ov
    from onnx import TensorProto, helper, numpy_helper

    sc = numpy_helper.from_array(np.array([1, 1, r, r], np.float32), "sc")
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], name="r", mode=kind, **extra)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [sc])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(model, path)
        conv, (crec,) = _converted(path, "conv")
        interp, _ = _converted(path, "builtin")
        _, (drec,) = _converted(path, None)
        taken = "conv" if drec.proof.get("form") == "conv" else f"rung {drec.rung}"
        if crec.proof.get("form") != "conv":
            taken += " (no conv form)"
        core = ov.Core()
        for threads in (1, 0):
            cfg = {"INFERENCE_PRECISION_HINT": "f32", **({"INFERENCE_NUM_THREADS": threads} if threads else {})}
            cc, ci = (core.compile_model(m, "CPU", cfg) for m in (conv, interp))
            so = ort.SessionOptions()
            if threads:
                so.intra_op_num_threads = threads
            s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            t_conv, t_int, t_ort = _time_interleaved([lambda: cc([x]), lambda: ci([x]),
                                                      lambda: s.run(None, {"X": x})], repeats)
            rows.append((name, threads or "all", t_conv, t_int, t_ort, taken))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    print(f"{'case':<26} {'thr':>3} {'conv':>7} {'Interp':>7} {'ORT':>7} {'conv/Int':>8} {'conv/ORT':>8}  default")
    for c in cases(args.only):
        for name, threads, t_conv, t_int, t_ort, taken in measure(*c, args.repeats):
            print(f"{name:<26} {threads:>3} {ms(t_conv):>7} {ms(t_int):>7} {ms(t_ort):>7} "
                  f"{ratio(t_conv, t_int):>8} {ratio(t_conv, t_ort):>8}  {taken}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
