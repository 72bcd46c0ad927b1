"""``--prefer fastest``: among the exact rungs of a Resize node, the one a cost model says runs fastest on this
machine. The model is a rate (ns per output element) per rung class and sampler, calibrated once by a benchmark
run of single-node models on OpenVINO CPU and cached per machine (CPU, OpenVINO version, kernel sources). The
extension is charged the reorders of its input and output on top (a custom op makes the plugin convert blocked
layouts around it in a real model: measured between Conv layers at calibration, at least a copy), and it must
win by ``MARGIN`` to be chosen: a close call keeps the built-in op, which needs no library beside the model.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import tempfile
import time

import numpy as np

from ..passes import CUSTOM
from .graph import F32

log = logging.getLogger("resample_bridge")

MARGIN = 1.25  # the extension must be estimated this many times faster than the rung the ladder chose
SHAPE = (1, 16, 96, 96)  # the calibration input: big enough to time, small enough to calibrate in seconds
SAMPLERS = (("nearest", False), ("linear", False), ("cubic", False), ("linear", True), ("cubic", True))
# Coordinate modes that land a sampler on different rungs (half_pixel_symmetric has no Interpolate-11
# spelling: the decomposition takes it); each timing is filed under the rung it actually took.
COORDS = ("half_pixel", "half_pixel_symmetric")
_RUNG_CLASS = {1: "builtin", 2: "builtin", 3: "decomposition"}
_rates: dict | None = None
_convert = None  # target.convert, registered by target.py (``use_converter``)


def use_converter(convert) -> None:
    """Calibration converts its timing models as a user's model is converted (``target.convert``). The cost model
    sits below the target on the import path (the ladder consults it), so the target hands its convert in."""
    global _convert
    _convert = convert


def cache_file():
    from ..compiled.build import cache_root, project_hash, KERNELS_DIR

    import openvino

    key = project_hash(KERNELS_DIR, extra=f"cost layout openvino {openvino.__version__}")
    return cache_root() / f"cost-{key}.json"


def rates() -> dict:
    """{"class/kind/antialias/direction": ns per output element, "copy": ns per element copied}, calibrated on
    first use and cached."""
    global _rates
    if _rates is None:
        path = cache_file()
        try:
            _rates = json.loads(path.read_text())
        except (OSError, ValueError):
            _rates = calibrate()
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(_rates, indent=1))
            os.replace(tmp, path)
    return _rates


def _key(cls: str, kind: str, antialias: bool, up: bool) -> str:
    return f"{cls}/{kind}/{'aa' if antialias else 'plain'}/{'up' if up else 'down'}"


def _model(kind: str, antialias: bool, up: bool, coord: str):
    from onnx import TensorProto, helper, numpy_helper

    out = [SHAPE[0], SHAPE[1]] + [d * 2 if up else d // 2 for d in SHAPE[2:]]
    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="r", mode=kind, antialias=int(antialias),
                            coordinate_transformation_mode=coord)
    g = helper.make_graph([node], "cost", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(SHAPE))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array(out, np.int64), "sz")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), int(np.prod(out))


def _median_ms(compiled, x, repeats: int = 15) -> float:
    compiled([x])
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        compiled([x])
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def calibrate(samplers=SAMPLERS) -> dict:
    """Time every (rung class, sampler, direction) on ``SHAPE`` once; classes a machine cannot run (no C++
    compiler for the extension) are left out, and the model then never prefers them."""
    import onnx
    import openvino as ov

    convert = _convert
    log.info("calibrating the cost model of --prefer fastest (once per machine) ...")
    t0 = time.perf_counter()
    core = ov.Core()
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    out: dict = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        for kind, aa in samplers:
            for up in (True, False):
                for coord, fallback in [(c, "decompose") for c in COORDS] + [(COORDS[0], "extension")]:
                    model, n_out = _model(kind, aa, up, coord)
                    onnx.save(model, path)
                    try:
                        ov_model, (rec,) = convert(path, fallback=fallback)
                        cls = "extension" if rec.rung == CUSTOM else _RUNG_CLASS[rec.rung]
                        if _key(cls, kind, aa, up) in out:
                            continue
                        if cls == "extension":
                            from .. import compiled as cpp

                            core.add_extension(cpp.openvino_extension())
                        ms = _median_ms(core.compile_model(ov_model, "CPU", F32), x)
                    except Exception as e:  # noqa: BLE001 -- a class this machine cannot run is left out
                        log.debug(f"cost model: {coord} {kind} antialias={aa} up={up} not timed: {e}")
                        continue
                    out[_key(cls, kind, aa, up)] = ms * 1e6 / n_out
        layout = _layout_rate(core, path, x, convert)
        if layout is not None:
            out["layout"] = layout
    big = np.ones(1 << 22, np.float32)
    t = min(_timed(lambda: big.copy()) for _ in range(5))
    out["copy"] = t * 1e9 / big.size
    log.info(f"calibrated the cost model in {time.perf_counter() - t0:.1f} s")
    return out


def _layout_rate(core, path: str, x, convert) -> float | None:
    """ns per element (input + output) that a custom op costs in a real model beyond its own time: the plugin
    reorders blocked layouts around it. Measured as the extension's extra time between Conv layers (1x1 Conv ->
    bilinear x2 -> 1x1 Conv) minus its extra time alone; None where the extension cannot run here."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c = SHAPE[1]
    w = numpy_helper.from_array(np.eye(c, dtype=np.float32).reshape(c, c, 1, 1), "w")
    out = [SHAPE[0], c] + [d * 2 for d in SHAPE[2:]]
    sz = numpy_helper.from_array(np.array(out, np.int64), "sz")
    resize = helper.make_node("Resize", ["a", "", "", "sz"], ["b"], name="r", mode="linear")
    alone = [resize]
    between = [helper.make_node("Conv", ["X", "w"], ["a"]), resize, helper.make_node("Conv", ["b", "w"], ["Y"])]
    times = {}
    for name, nodes, inp, outp in (("alone", alone, "a", "b"), ("between", between, "X", "Y")):
        g = helper.make_graph(nodes, "layout", [helper.make_tensor_value_info(inp, TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info(outp, TensorProto.FLOAT, None)], [w, sz])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)
        for fallback in ("decompose", "extension"):
            try:
                ov_model, _ = convert(path, fallback=fallback)
                times[name, fallback] = _median_ms(core.compile_model(ov_model, "CPU", F32), x, repeats=25)
            except Exception as e:  # noqa: BLE001 -- no extension here: the copy rate stands in
                log.debug(f"cost model: layout not timed: {e}")
                return None
    extra = (times["between", "extension"] - times["between", "decompose"]) - \
        (times["alone", "extension"] - times["alone", "decompose"])
    return max(0.0, extra) * 1e6 / (int(np.prod(SHAPE)) + int(np.prod(out)))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def estimate(ir, rung: int, input_shape) -> tuple[float, float] | None:
    """(ms of the rung the ladder chose, ms of the extension with its reorders) for a static ``ir``, None where
    the model has no rate for either (dynamic shapes, a class not calibrated)."""
    from ...semantics.coords import bind_resize
    from ...semantics.errors import BridgeError

    if input_shape is None or any(d is None for d in input_shape):
        return None
    try:
        bound = bind_resize(ir, input_shape)
    except BridgeError:  # run-time scales / sizes: no static size to estimate with
        return None
    n_in, n_out = int(np.prod(bound.in_shape)), int(np.prod(bound.out_shape))
    up = n_out >= n_in
    kind, aa = ir.sampler.kind, bool(ir.sampler.antialias and ir.sampler.kind != "nearest")
    r = rates()
    cur, ext = r.get(_key(_RUNG_CLASS.get(rung, ""), kind, aa, up)), r.get(_key("extension", kind, aa, up))
    if cur is None or ext is None:
        return None
    # The reorders measured around the extension are its extra over a built-in op, which keeps the plugin's
    # blocked layouts; a decomposition's Gather/Multiply/Add chain does not, so against it a copy is charged.
    layout = r.get("copy", 0.0)
    if _RUNG_CLASS.get(rung) == "builtin":
        layout = max(layout, r.get("layout", 0.0))
    return cur * n_out / 1e6, (ext * n_out + layout * (n_in + n_out)) / 1e6


def faster_extension(node, record) -> str | None:
    """The reason to take the extension instead of the chosen rung (the estimate, in words), or None."""
    est = estimate(node.ir, record.rung, getattr(node.ir, "input_shape", None))
    if est is None:
        return None
    cur, ext = est
    record.extra["cost"] = {"chosen_ms": cur, "extension_ms": ext, "margin": MARGIN}
    if ext * MARGIN > cur:
        return None
    return (f"--prefer fastest: estimated {ext:.3g} ms against {cur:.3g} ms for rung {record.rung} "
            f"({record.rung_name}), reorders included (cost model calibrated on this machine)")
