"""Does the cost model order the in-graph forms as they run? Per case (``CASES``): the form the default
conversion takes (``--prefer builtin``: the shipped reference table, or RESAMPLE_BRIDGE_COST_TABLE) and each
form's time, forced (``conv_rewrite.forcing``), medians of interleaved runs on OpenVINO CPU at the case's
inference precision (f32, or bf16: this CPU's own default), its default threads (as the calibration and
bench_models run). The
cases are those whose two forms were measured at least 1.5x apart (noise cannot flip them); the test
(tests/lowering/test_openvino_cost_plane.py) asserts the shipped table's order on the same cases, this script
measures it (a speed claim: never inside a test).

    python tools/dev/cost_order.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

# (name, input shape, scale, Resize attributes, between Conv layers, the faster form, the slower one, their ms
# as measured (this script or its forerunner, /tmp, on AMD EPYC Zen 4, AVX-512, 2 cores, OpenVINO 2026.4.1, load
# average 4-9 of other engineers' runs, the bf16 cases 1-1.5: the slower at least 1.5x the faster in every run but
# the fourth case's, 1.07-2.3x), the inference precision hint they were measured at. Left out as too close here to fix an order
# (0.8-1.3x apart from one run to the next): Interpolate against the matrix form on 1x256x20x20 linear x2
# (half_pixel or align_corners) and on 1x16x160x200 linear x2 align_corners.
CASES = (
    ("linear x2 16x160x200", (1, 16, 160, 200), 2, {}, False, "conv", "builtin", (4.04, 14.72), "f32"),
    ("linear x2 16x96x96", (1, 16, 96, 96), 2, {}, False, "conv", "builtin", (0.60, 4.85), "f32"),
    ("linear x2 64x96x96", (1, 64, 96, 96), 2, {}, False, "conv", "builtin", (4.64, 35.97), "f32"),
    ("linear x2 256x20x20 between Conv layers", (1, 256, 20, 20), 2, {}, True, "conv", "matmul", (2.72, 6.20),
     "f32"),
    # At bf16 (this CPU's default) between Conv layers the plugin runs the convolution form's depthwise
    # ConvTranspose in its general kernel: the rates timed alone took it (whole models 3-6x slower).
    ("nearest x2 64x40x40 between Conv layers", (1, 64, 40, 40), 2, {"mode": "nearest"}, True, "builtin", "conv",
     (0.61, 1.58), "bf16"),
    ("linear x2 32x60x80 between Conv layers", (1, 32, 60, 80), 2, {}, True, "builtin", "conv", (0.35, 1.24), "bf16"),
    ("linear x2 64x48x48 between Conv layers", (1, 64, 48, 48), 2, {}, True, "builtin", "conv", (1.99, 3.14), "bf16"),
)


def model(shape, scale, attrs: dict, between: bool):
    """A Resize of ``shape`` by ``scale`` on its spatial axes, alone or between two 1x1 Conv layers."""
    from onnx import TensorProto, helper, numpy_helper

    c = shape[1]
    inits = [numpy_helper.from_array(np.array([1, 1] + [scale] * (len(shape) - 2), np.float32), "sc"),
             numpy_helper.from_array(np.eye(c, dtype=np.float32).reshape(c, c, 1, 1), "w")]
    nodes = [helper.make_node("Resize", ["a" if between else "X", "", "sc"], ["b" if between else "Y"], name="r",
                              mode=attrs.get("mode", "linear"), **{k: v for k, v in attrs.items() if k != "mode"})]
    if between:
        nodes = [helper.make_node("Conv", ["X", "w"], ["a"]), *nodes, helper.make_node("Conv", ["b", "w"], ["Y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits[:1 + between])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def taken(rec) -> str:
    """The form a Resize's record took: "conv", "matmul", else "builtin" (rungs 1-2) or its rung."""
    return rec.proof.get("form") or ("builtin" if rec.rung in (1, 2) else f"rung {rec.rung}")


def converted(path: str, form: str | None = None):
    """(the OpenVINO model, the Resize's record): the default conversion, or ``form`` forced."""
    import contextlib

    from resample_bridge.lowering.openvino import conv_rewrite
    from resample_bridge.lowering.openvino.target import convert

    with conv_rewrite.forcing(form) if form else contextlib.nullcontext():
        ov_model, records = convert(path)
    return ov_model, next(r for r in records if r.ir.kind == "resize")


def main(argv=None) -> int:
    import onnx
    import openvino as ov

    sys.path.insert(0, os.path.dirname(__file__))
    from bench import _time_interleaved

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    core = ov.Core()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'case':<42} {'default':>8} {'faster':>8} {'ms':>7} {'slower':>8} {'ms':>7} {'ratio':>6}")
    wrong = 0  # the default took the slower form
    for name, shape, scale, attrs, between, fast, slow, _, hint in CASES:
        cfg = {"INFERENCE_PRECISION_HINT": hint}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(model(shape, scale, attrs, between), path)
            choice = taken(converted(path)[1])
            compiled = [core.compile_model(converted(path, form)[0], "CPU", cfg) for form in (fast, slow)]
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        t_fast, t_slow = _time_interleaved([lambda c=c: c([x]) for c in compiled], args.repeats)
        wrong += choice == slow
        print(f"{name:<42} {choice:>8} {fast:>8} {t_fast:>7.3f} {slow:>8} {t_slow:>7.3f} {t_slow / t_fast:>6.2f}"
              f"{'  WRONG' if choice == slow else ''}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
