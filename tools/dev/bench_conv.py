"""Issue 45's single-node table: rung 2's convolution form (``lowering/openvino/conv_rewrite.py``) and matrix form
(``matmul_rewrite.py``, converted with --allow-conditional) against OpenVINO's Interpolate (the same node converted
with the forms held back) and onnxruntime, f32, at 1 thread and at the default thread count; and what the default
conversion takes, and with --allow-conditional (the cost model in force). Medians of interleaved runs
(``bench._time_interleaved``), ms; "-": the form does not apply.

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

SHAPES = ((1, 16, 160, 200), (1, 64, 80, 80), (1, 64, 40, 40), (1, 256, 20, 20), (1, 32, 24, 24))
FORMS = (("linear", {}), ("cubic", {"cubic_coeff_a": -0.75}), ("nearest", {"nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}))
# Maps and ratios only the matrix form takes (align_corners, a non-integer ratio, antialias downsampling).
OTHERS = (("linear", 2, {"coordinate_transformation_mode": "align_corners"}),
          ("cubic", 2, {"coordinate_transformation_mode": "align_corners", "cubic_coeff_a": -0.75}),
          ("linear", 1.5, {}), ("linear", 0.5, {"antialias": 1}))


def cases(only: str = ""):
    for shape in SHAPES:
        for kind, r, extra in [(k, r, e) for k, e in FORMS for r in (2, 4)] + list(OTHERS):
            tail = "".join(f" {v}" for k, v in extra.items() if k in ("coordinate_transformation_mode", "antialias"))
            name = f"{kind} x{r}{tail.replace(' 1', ' aa')} {'x'.join(map(str, shape))}"
            if only in name:
                yield name, shape, kind, r, extra


def _converted(path: str, choice: str | None, allow_conditional: bool = False):
    from resample_bridge.lowering.openvino import conv_rewrite
    from resample_bridge.lowering.openvino.target import convert

    if choice is None:
        return convert(path, allow_conditional=allow_conditional)
    with conv_rewrite.forcing(choice):
        return convert(path, allow_conditional=allow_conditional)


def _taken(rec) -> str:
    return rec.proof.get("form") or f"rung {rec.rung}"


def measure(name, shape, kind, r, extra, repeats: int) -> list:
    import onnx
    import onnxruntime as ort
    import openvino as ov
    from onnx import TensorProto, helper, numpy_helper

    sc = numpy_helper.from_array(np.array([1, 1] + [r] * (len(shape) - 2), np.float32), "sc")
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], name="r", mode=kind, **extra)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [sc])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(model, path)
        forms = [_converted(path, form, allow_conditional=True) for form in ("conv", "matmul")]
        forms = [m if rec.proof.get("form") == form else None for (m, (rec,)), form in zip(forms, ("conv", "matmul"))]
        interp, _ = _converted(path, "builtin")
        taken = "/".join(_taken(_converted(path, None, allow)[1][0]) for allow in (False, True))
        core = ov.Core()
        for threads in (1, 0):
            cfg = {"INFERENCE_PRECISION_HINT": "f32", **({"INFERENCE_NUM_THREADS": threads} if threads else {})}
            cc, cm, ci = (m and core.compile_model(m, "CPU", cfg) for m in (*forms, interp))
            so = ort.SessionOptions()
            if threads:
                so.intra_op_num_threads = threads
            s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            ts = _time_interleaved([cc and (lambda: cc([x])), cm and (lambda: cm([x])), lambda: ci([x]),
                                    lambda: s.run(None, {"X": x})], repeats)
            rows.append((name, threads or "all", *ts, taken))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    print(f"{'case':<40} {'thr':>3} {'conv':>7} {'matmul':>7} {'Interp':>7} {'ORT':>7} {'conv/Int':>8} "
          f"{'mm/Int':>7} {'mm/ORT':>7}  default/conditional")
    for c in cases(args.only):
        for name, threads, t_conv, t_mm, t_int, t_ort, taken in measure(*c, args.repeats):
            print(f"{name:<40} {threads:>3} {ms(t_conv):>7} {ms(t_mm):>7} {ms(t_int):>7} {ms(t_ort):>7} "
                  f"{ratio(t_conv, t_int):>8} {ratio(t_mm, t_int):>7} {ratio(t_mm, t_ort):>7}  {taken}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
