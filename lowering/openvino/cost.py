"""The default policy's cost model (``--prefer fastest``): where a Resize node has an exact rung that needs
nothing beside the model, the extension is taken instead only where this model estimates it at least ``MARGIN``
times faster. The model is a rate (ns per output element) per rung class and sampler, timed on single-node
models on OpenVINO CPU, plus the reorders a custom op costs in a real model (measured between Conv layers, at
least a copy).

Where the rates come from (``calibration()``), first that applies:
* ``using(Calibration(...))``: a table given in code (the tests' fixed tables);
* ``RESAMPLE_BRIDGE_COST_TABLE``: a JSON file of rates (the cache file of the machine that will run the model:
  convert anywhere for it; the tests name the shipped reference table, so their choices do not depend on the
  machine);
* this machine, once the extension library is built here: each rate timed the first time a conversion needs it
  (measured on 2 busy cores: 0.6-1.7 s a rate, 2.5-6 s the reorders) and cached per machine (CPU, OpenVINO
  version, kernel sources);
* otherwise the reference table shipped with the package (``cost_reference.json``, measured on the machine it
  names): a first conversion neither builds the extension nor times anything just to decide.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..passes import CUSTOM
from .graph import F32

log = logging.getLogger("resample_bridge")

MARGIN = 1.25  # the extension must be estimated this many times faster than the rung the ladder chose
SHAPE = (1, 16, 96, 96)  # the calibration input: big enough to time, small enough to calibrate in seconds
# A rate is the time per output element beyond what an inference of nothing costs (measured beside it): the fixed
# cost of a call would otherwise weigh on whichever rung is fast (measured: the extension's linear antialias
# 96x96 -> 48x48 rate came out 3.4 ns, 2.4 ns on 600x800 -> 300x400).
SAMPLERS = (("nearest", False), ("linear", False), ("cubic", False), ("linear", True), ("cubic", True))
# Coordinate modes that land a sampler on different rungs (half_pixel_symmetric has no Interpolate-11
# spelling: the decomposition takes it); each timing is filed under the rung it actually took.
COORDS = ("half_pixel", "half_pixel_symmetric")
_RUNG_CLASS = {1: "builtin", 2: "builtin", 3: "decomposition"}
REFERENCE = Path(__file__).with_name("cost_reference.json")
ENV = "RESAMPLE_BRIDGE_COST_TABLE"
_convert = None  # target.convert, registered by target.py (``use_converter``)


@dataclass
class Calibration:
    """Rates {"class/kind/antialias/direction": ns per output element, "copy" / "layout": ns per element in
    and out; None: a class this machine cannot produce for that sampler} and where they were measured
    (``where``: the words the records print). ``timer``: times a missing rate on this machine and returns it
    (None: a fixed table, where a missing rate stays missing)."""

    rates: dict
    where: str
    timer: object = None

    def rate(self, key: str) -> float | None:
        if key not in self.rates and self.timer is not None:
            self.rates[key] = self.timer(key)
        return self.rates.get(key)


_given: list = []  # ``using`` stack
_machine: Calibration | None = None


@contextlib.contextmanager
def using(table: Calibration):
    """Estimate with ``table`` inside the block (tests: fixed numbers, the same on every machine)."""
    _given.append(table)
    try:
        yield table
    finally:
        _given.pop()


def table_file(path) -> Calibration:
    """A rate table saved as JSON: {"where": ..., "rates": {...}}, or a machine's cache file (the rates alone)."""
    data = json.loads(Path(path).read_text())
    if "rates" in data:
        return Calibration(dict(data["rates"]), data.get("where", str(path)))
    return Calibration(dict(data), f"the rates of {path}")


def calibration() -> Calibration:
    """The rates in force (module docstring)."""
    global _machine
    if _given:
        return _given[-1]
    if os.environ.get(ENV):
        return table_file(os.environ[ENV])
    from .. import compiled

    if compiled.openvino_extension_built() is None:
        return table_file(REFERENCE)
    if _machine is None:
        path = cache_file()
        try:
            rates = json.loads(path.read_text())
        except (OSError, ValueError):
            rates = {}
        _machine = Calibration(rates, "this machine", timer=_timed_and_cached)
    return _machine


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


def _timed_and_cached(key: str) -> float | None:
    """Time ``key`` on this machine (with what its models show on the way) and add it to the cache file."""
    t0 = time.perf_counter()
    found = {key: None, **_time(key)}  # None, cached too: not asked again
    log.info(f"cost model: timed {key} on this machine in {time.perf_counter() - t0:.1f} s (cached)")
    path = cache_file()
    try:
        rates = json.loads(path.read_text())
    except (OSError, ValueError):
        rates = {}
    rates.update(found)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(rates, indent=1, sort_keys=True))
    os.replace(tmp, path)
    if _machine is not None:
        _machine.rates.update(found)
    return found.get(key)


def _key(cls: str, kind: str, antialias: bool, up: bool) -> str:
    return f"{cls}/{kind}/{'aa' if antialias else 'plain'}/{'up' if up else 'down'}"


def _shape(up: bool) -> tuple:
    """The calibration input: ``SHAPE``, twice as large per resized axis for a downscale (as many outputs)."""
    return SHAPE if up else SHAPE[:2] + tuple(d * 2 for d in SHAPE[2:])


def _model(kind: str, antialias: bool, up: bool, coord: str):
    from onnx import TensorProto, helper, numpy_helper

    shape = _shape(up)
    out = [shape[0], shape[1]] + [d * 2 if up else d // 2 for d in shape[2:]]
    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="r", mode=kind, antialias=int(antialias),
                            coordinate_transformation_mode=coord)
    g = helper.make_graph([node], "cost", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array(out, np.int64), "sz")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), int(np.prod(out))


def _median_ms(compiled: list, x, repeats: int = 15) -> list:
    """Median ms of each compiled model on ``x`` (or its own input: a (model, input) pair), run in turns (one
    warm-up each)."""
    runs = [c if isinstance(c, tuple) else (c, x) for c in compiled]
    ts: list = [[] for _ in runs]
    for c, v in runs:
        c([v])
    for _ in range(repeats):
        for i, (c, v) in enumerate(runs):
            t0 = time.perf_counter()
            c([v])
            ts[i].append(time.perf_counter() - t0)
    return [statistics.median(t) * 1e3 for t in ts]


def _nothing(core):
    """(an inference of next to nothing, its input): the fixed cost of a call."""
    import openvino as ov
    import openvino.opset13 as ops

    p = ops.parameter([1], np.float32)
    return core.compile_model(ov.Model([ops.relu(p)], [p]), "CPU", F32), np.ones(1, np.float32)


def _time(key: str) -> dict:
    """{key: ns per element, ...}: ``key`` timed on this machine (``_shape``), with the other classes its models
    landed on (a sampler with no built-in spelling lands on the decomposition); {} where the class cannot be
    produced (no C++ compiler for the extension, no built-in op of that sampler)."""
    import onnx
    import openvino as ov

    if key == "copy":
        big = np.ones(1 << 22, np.float32)
        return {"copy": min(_timed(big.copy) for _ in range(5)) * 1e9 / big.size}
    core = ov.Core()
    if key == "layout" or key.startswith("extension/"):
        from .. import compiled

        try:
            core.add_extension(compiled.openvino_extension())
        except Exception as e:  # noqa: BLE001 -- no extension here: the class is left out
            log.debug(f"cost model: {key} not timed: {e}")
            return {}
    found: dict = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        if key == "layout":
            x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
            got = _layout_rate(core, path, x, _convert)
            return {} if got is None else {"layout": got}
        cls, kind, aa, direction = key.split("/")
        aa, up = aa == "aa", direction == "up"
        tries = [(COORDS[0], "extension")] if cls == "extension" else [(c, "decompose") for c in COORDS]
        for coord, fallback in tries:
            model, n_out = _model(kind, aa, up, coord)
            onnx.save(model, path)
            try:
                ov_model, (rec,) = _convert(path, fallback=fallback, prefer="builtin")
                got = _key("extension" if rec.rung == CUSTOM else _RUNG_CLASS[rec.rung], kind, aa, up)
                if got in found:
                    continue
                x = np.random.default_rng(0).standard_normal(_shape(up)).astype(np.float32)
                ms, fixed = _median_ms([core.compile_model(ov_model, "CPU", F32), _nothing(core)], x)
                found[got] = max(ms - fixed, 0.0) * 1e6 / n_out
            except Exception as e:  # noqa: BLE001 -- a class this machine cannot run is left out
                log.debug(f"cost model: {coord} {kind} antialias={aa} up={up} not timed: {e}")
                continue
            if got == key:
                break
    return found


def calibrate(samplers=SAMPLERS) -> dict:
    """Every rate on this machine at once (the reference table: ``tools/dev/cost_reference.py``)."""
    keys = [_key(cls, kind, aa, up) for kind, aa in samplers for up in (True, False)
            for cls in ("builtin", "decomposition", "extension")]
    out: dict = {}
    for key in keys + ["layout", "copy"]:
        if key not in out:
            out.update(_time(key))
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
    compiled = {}
    for name, nodes, inp, outp in (("alone", alone, "a", "b"), ("between", between, "X", "Y")):
        g = helper.make_graph(nodes, "layout", [helper.make_tensor_value_info(inp, TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info(outp, TensorProto.FLOAT, None)], [w, sz])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)
        for fallback in ("decompose", "extension"):
            try:
                ov_model, _ = convert(path, fallback=fallback, prefer="builtin")
                compiled[name, fallback] = core.compile_model(ov_model, "CPU", F32)
            except Exception as e:  # noqa: BLE001 -- no extension here: the copy rate stands in
                log.debug(f"cost model: layout not timed: {e}")
                return None
    # A difference of differences: the four run interleaved, so that other load falls on all alike.
    times = dict(zip(compiled, _median_ms(list(compiled.values()), x, repeats=25)))
    extra = (times["between", "extension"] - times["between", "decompose"]) - \
        (times["alone", "extension"] - times["alone", "decompose"])
    return max(0.0, extra) * 1e6 / (int(np.prod(SHAPE)) + int(np.prod(out)))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def estimate(ir, rung: int, input_shape, table: Calibration | None = None) -> tuple[float, float] | None:
    """(ms of the rung the ladder chose, ms of the extension with its reorders) for a static ``ir``, None where
    the model has no rate for either (dynamic shapes, a class not calibrated); ``table``: the rates (default:
    ``calibration()``)."""
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
    table = table or calibration()
    cls = _RUNG_CLASS.get(rung)
    cur = table.rate(_key(cls, kind, aa, up)) if cls else None
    ext = table.rate(_key("extension", kind, aa, up)) if cur is not None else None
    if ext is None:
        return None
    # The reorders measured around the extension are its extra over a built-in op, which keeps the plugin's
    # blocked layouts; a decomposition's Gather/Multiply/Add chain does not, so against it a copy is charged.
    layout = table.rate("copy") or 0.0
    if cls == "builtin":
        layout = max(layout, table.rate("layout") or 0.0)
    return cur * n_out / 1e6, (ext * n_out + layout * (n_in + n_out)) / 1e6


def faster_extension(node, record) -> str | None:
    """The reason to take the extension instead of the chosen rung (the estimate, in words), or None."""
    table = calibration()
    est = estimate(node.ir, record.rung, getattr(node.ir, "input_shape", None), table)
    if est is None:
        return None
    cur, ext = est
    record.extra["cost"] = {"chosen_ms": cur, "extension_ms": ext, "margin": MARGIN, "rates": table.where}
    if cur < MARGIN * ext * (1 - 1e-12):  # at least MARGIN times faster (up to the ms conversion's rounding)
        return None
    return (f"cost model: {cur / ext:.2g}x faster than {chosen_name(record)} on {table.where} (estimated "
            f"{ext:.3g} ms against {cur:.3g} ms, reorders included)")


def chosen_name(record) -> str:
    """The rung the ladder chose, as the reason names it: "Interpolate-11 (rung 1)", "the decomposition (rung
    3)"."""
    op = record.reason.split(" ", 1)[0].rstrip(",;:")
    if record.rung in (1, 2) and "-" in op and op.rsplit("-", 1)[1].isdigit():
        return f"{op} (rung {record.rung})"
    return f"the {record.rung_name} (rung {record.rung})"
