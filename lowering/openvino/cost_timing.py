"""The cost model's timings on this machine (``cost.py`` decides with them): each rate is a single-node model
converted as a user's model is (the target's ``convert``) and run on OpenVINO CPU beside an inference of nothing.
Resize: by sampler, antialias and direction, at ``SHAPE``; GridSample: by sampler and spatial rank, at
``GRID_SHAPE`` with as many points as X has elements; DeformConv: per multiply-accumulate, by group and offset
group (``DEFORM_VARIANTS``), at ``DEFORM_SHAPE``. Each is also timed at a tiny input (``TINY``, ``GRID_TINY``,
``DEFORM_TINY``): the two sizes give a rung's time per unit and its fixed cost per call (``fixed_key``)."""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time

import numpy as np

from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE
from .conv_rewrite import forcing
from .graph import F32
from .. import compiled

log = logging.getLogger("resample_bridge")

SHAPE = (1, 16, 96, 96)  # the calibration input: big enough to time, small enough to calibrate in seconds
# A rate is the time per output element between the tiny input and SHAPE, and a rung's fixed cost its time at the
# tiny input beyond that and an inference of nothing. One rate at SHAPE alone spread the fixed cost over SHAPE's
# outputs, hiding the built-in op's larger fixed cost on small tensors (Interpolate linear 3x64x64 -> 96x96 0.105
# ms, the extension 0.050, estimated a third of that apart; the extension's antialias rate 3.4 ns, 2.4 on 600x800).
TINY = (1, 2, 8, 8)
# Few channels: OpenVINO's CPU plugin runs Interpolate over blocks of 8 or 16 channels, mostly padding with 1-4
# (an image's RGB, a flow's 2): per output, 3 channels against 16 (96x96 x2; bicubic_pillow 64x64 -> 32x32): cubic
# 11.9 ns against 3.5, bicubic_pillow 44.5 against 10.4, linear 2.8 against 2.4, the extension's cubic 1.1 against
# 0.8. A node of at most FEW channels reads rates timed at FEW_SHAPE (3 channels; ``few_key``).
FEW = 4
FEW_SHAPE = (1, 3, 224, 224)
# Integer linear / cubic: no built-in op computes them exactly (translate/dtypes.py), the decomposition runs in
# int32 and the extension's sums in the narrowest integer type they fit, at other speeds than float32's (uint8
# 480x640 -> 224x224 linear: the decomposition 1.1 ms, the extension 0.4). Timed on uint8 (``int_key``).
INTEGER = np.uint8
SAMPLERS = (("nearest", False), ("linear", False), ("cubic", False), ("linear", True), ("cubic", True))
# Coordinate modes that land a sampler on different rungs (half_pixel_symmetric has no Interpolate-11
# spelling: the decomposition takes it); each timing is filed under the rung it actually took.
COORDS = ("half_pixel", "half_pixel_symmetric")
# GridSample's calibration X: 8 channels share each point's coordinate work (a 5-D flow warp has 2-16).
GRID_SHAPE = (1, 8, 12, 16, 16)
GRID_TINY = (1, 2, 4, 4, 4)
# The extension's extra fixed cost where its shapes are known only at run time: OpenVINO's CPU plugin infers a
# custom op's output shape by cloning and validating it at every call, its own ops do not (8-9 us a call, 3 static,
# against Interpolate's 2; binding the output shape afresh was 1.3-4 us of that, openvino_ext/ops.hpp Memos).
DYNAMIC = "fixed/extension/dynamic"
GRID_SAMPLERS = ("nearest", "linear", "cubic")
# DeformConv: rates per multiply-accumulate of its convolution, by what sends OpenVINO's DeformableConvolution to
# another kernel. Its CPU plugin runs a group other than 1 on its scalar reference path (read in its source;
# measured 1x64x20x20 3x3, AVX-512: group 4 5.5 ms, the extension 0.19; group 1 0.26 against 0.31), and its JIT
# is slower with fewer than 16 channels per offset group (32 channels, 4 offset groups: 0.64 ms against 0.27;
# 16 or more per group: 0.89-1.24x the extension's time, as with one).
DEFORM_VARIANTS = {"plain": {}, "grouped": {"group": 4}, "offset-groups": {"offset_group": 4}}
FEW_PER_OFFSET_GROUP = 16
DEFORM_SHAPE = (1, 32, 24, 24)
DEFORM_TINY = (1, 8, 4, 4)
RUNG_CLASS = {BUILTIN: "builtin", REWRITE: "builtin", DECOMPOSE: "decomposition"}


def rung_class(record) -> str | None:
    """The rates' class of a node's record: the extension, the convolution form, else by rung."""
    return "extension" if record.rung == CUSTOM else "conv" if record.proof.get("form") == "conv" else \
        RUNG_CLASS.get(record.rung)


def key_of(cls: str, kind: str, antialias: bool, up: bool) -> str:
    return f"{cls}/{kind}/{'aa' if antialias else 'plain'}/{'up' if up else 'down'}"


def grid_key(cls: str, kind: str, rank: int) -> str:
    return f"{cls}/gridsample-{kind}/{rank}d"


def deform_key(cls: str, variant: str) -> str:
    return f"{cls}/deformconv/{variant}"


def deform_variant(ir) -> str:
    """The ``DEFORM_VARIANTS`` class of a DeformConv node (its input channels from W's shape: C/group each)."""
    if ir.group > 1:
        return "grouped"
    channels = ir.weight_shape[1] * ir.group
    return "offset-groups" if ir.offset_group > 1 and channels // ir.offset_group < FEW_PER_OFFSET_GROUP else "plain"


def few_key(key: str) -> str:
    """The key of ``key``'s rate at few channels (``FEW``)."""
    return f"{key}/few"


def int_key(key: str) -> str:
    """The key of ``key``'s rate on integer X (``INTEGER``)."""
    return f"{key}/int"


def fixed_key(key: str) -> str:
    """The key of the fixed cost per call (ns) of the rung whose rate ``key`` names."""
    return f"fixed/{key}"


def _shape(up: bool, base: tuple = SHAPE) -> tuple:
    """The calibration input: ``base``, twice as large per resized axis for a downscale (as many outputs)."""
    return base if up else base[:2] + tuple(d * 2 for d in base[2:])


def _model(kind: str, antialias: bool, up: bool, coord: str, dynamic: bool = False, pillow: bool = False,
           base: tuple = SHAPE, integer: bool = False):
    """(model, its input, output elements) of a Resize at ``_shape(up, base)``; ``dynamic``: H and W named, not fixed
    (lengths known only at run time: nearest's index form); ``pillow``: antialias as PyTorch exports it
    (exclude_outside, cubic a = -0.5: Interpolate's pillow modes, rung 2); ``integer``: X of type ``INTEGER``."""
    from onnx import helper, numpy_helper

    shape = _shape(up, base)
    out = [shape[0], shape[1]] + [d * 2 if up else d // 2 for d in shape[2:]]
    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="r", mode=kind, antialias=int(antialias),
                            coordinate_transformation_mode=coord, exclude_outside=int(pillow),
                            cubic_coeff_a=-0.5 if pillow else -0.75)
    dims = list(shape[:2]) + (["h", "w"] if dynamic else list(shape[2:]))
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(INTEGER if integer else np.float32))
    g = helper.make_graph([node], "cost", [helper.make_tensor_value_info("X", elem, dims)],
                          [helper.make_tensor_value_info("Y", elem, None)],
                          [numpy_helper.from_array(np.array(out, np.int64), "sz")])
    rng = np.random.default_rng(0)
    info = np.iinfo(INTEGER)
    x = rng.integers(info.min, int(info.max) + 1, shape).astype(INTEGER) if integer else \
        rng.standard_normal(shape).astype(np.float32)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), [x], int(np.prod(out))


def _grid_model(kind: str, rank: int, base: tuple = GRID_SHAPE):
    """(model, its inputs, output elements) of a GridSample over ``rank`` spatial axes: X ``base`` (its last
    ``rank`` axes), as many points as X has, uniform over [-1.1, 1.1] (some outside, as a warp's are)."""
    from onnx import TensorProto, helper

    xs = base[:2] + base[2:][-rank:]
    gs = (xs[0],) + xs[2:] + (rank,)
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], name="g", mode=kind, padding_mode="zeros")
    g = helper.make_graph([node], "cost", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(xs)),
                                           helper.make_tensor_value_info("G", TensorProto.FLOAT, list(gs))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(xs).astype(np.float32), rng.uniform(-1.1, 1.1, gs).astype(np.float32)]
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=10), feeds, int(np.prod(xs))


def _deform_model(variant: str, base: tuple = DEFORM_SHAPE):
    """(model, its inputs, multiply-accumulates) of a 3x3 DeformConv with a mask, as many output channels as
    input ones, at ``base``; ``variant`` one of ``DEFORM_VARIANTS``."""
    from onnx import TensorProto, helper, numpy_helper

    attrs = DEFORM_VARIANTS[variant]
    n, c, h, w = base
    taps = 9 * attrs.get("offset_group", 1)
    shapes = {"X": [n, c, h, w], "O": [n, 2 * taps, h, w], "M": [n, taps, h, w]}
    node = helper.make_node("DeformConv", ["X", "W", "O", "", "M"], ["Y"], name="d", pads=[1] * 4, **attrs)
    rng = np.random.default_rng(0)
    cg = c // attrs.get("group", 1)
    wt = numpy_helper.from_array((rng.standard_normal((c, cg, 3, 3)) / np.sqrt(9 * cg)).astype(np.float32), "W")
    g = helper.make_graph([node], "cost", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                                           for k, v in shapes.items()],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [wt])
    feeds = [rng.standard_normal(shapes["X"]), 2 * rng.standard_normal(shapes["O"]), rng.uniform(0, 1, shapes["M"])]
    return (helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10),
            [f.astype(np.float32) for f in feeds], n * c * cg * 9 * h * w)


def _median_ms(runs: list, repeats: int = 15) -> list:
    """Median ms of each (compiled model, its inputs), run in turns (one warm-up each)."""
    ts: list = [[] for _ in runs]
    for c, v in runs:
        c(v)
    # In a seeded random order each turn: in a fixed one, the run after a large multi-threaded one paid for it
    # (measured: the extension timed after the built-in op 1.3-1.9x its rate alone).
    order = np.random.default_rng(0)
    for _ in range(repeats):
        for i in order.permutation(len(runs)):
            c, v = runs[i]
            t0 = time.perf_counter()
            c(v)
            ts[i].append(time.perf_counter() - t0)
    return [statistics.median(t) * 1e3 for t in ts]


def _nothing(core):
    """(an inference of next to nothing, its inputs): the fixed cost of a call."""
    import openvino as ov
    import openvino.opset13 as ops

    p = ops.parameter([1], np.float32)
    return core.compile_model(ov.Model([ops.relu(p)], [p]), "CPU", F32), [np.ones(1, np.float32)]


def _landed(path: str, made, fallback: str, convert):
    """(the rung class a calibration model lands on, its converted model, inputs, output elements); ``convert``:
    the target's (the calibration models are converted as a user's model is)."""
    import onnx

    model, feeds, n_out = made
    onnx.save(model, path)
    ov_model, (rec,) = convert(path, fallback=fallback, prefer="builtin")
    return rung_class(rec), ov_model, feeds, n_out


def _rates(core, models: dict, big: tuple, tiny: tuple) -> dict:
    """{name: ns per output element, fixed_key(name): ns per call} of the converted models of one calibration model,
    ``models`` {name: (model at the calibration size, model at the tiny size or None)}, ``big`` / ``tiny`` (inputs,
    output elements). Each size's models are timed in turns in one run beside an inference of nothing: a busy
    machine then weighs on each alike (timed apart, one rate came out 1.8x another's on this machine, which flipped
    a choice). The sizes apart: a tiny model timed right after a large one took 85 us more than alone (the
    plugin's threads waking), against 13 us in a run of its own kind."""
    t = {}
    for size, (feeds, _), k, repeats in (("big", big, 0, 15), ("tiny", tiny, 1, 41)):
        names = [name for name, pair in models.items() if pair[k] is not None]
        if names:
            *ms, nothing = _median_ms([(core.compile_model(models[n][k], "CPU", F32), feeds) for n in names] +
                                      [_nothing(core)], repeats)
            t.update({(n, size): max(m - nothing, 0.0) * 1e6 for n, m in zip(names, ms)})  # ns beyond a call
    out = {}
    for name in models:
        if (name, "tiny") not in t:
            out[name] = t[name, "big"] / big[1]
            continue
        out[name] = max(t[name, "big"] - t[name, "tiny"], 0.0) / (big[1] - tiny[1])
        out[fixed_key(name)] = max(t[name, "tiny"] - out[name] * tiny[1], 0.0)
    return out


def _dynamic_extra(core, path: str, convert) -> dict:
    """{DYNAMIC: ns}: the extension on the tiny linear model with H and W named, against the same with them fixed."""
    made = {dynamic: _model("linear", False, True, COORDS[0], dynamic=dynamic, base=TINY) for dynamic in (False, True)}
    landed = {dynamic: _landed(path, m, "extension", convert) for dynamic, m in made.items()}
    if any(got[0] != "extension" for got in landed.values()):
        return {}
    feeds = made[False][1]
    static, dynamic = _median_ms([(core.compile_model(landed[d][1], "CPU", F32), feeds) for d in (False, True)],
                                 repeats=51)
    return {DYNAMIC: max(dynamic - static, 0.0) * 1e6}


def _with_extension(core) -> bool:
    try:
        core.add_extension(compiled.openvino_extension())
        return True
    except Exception as e:  # noqa: BLE001 -- no extension here: its classes are left out
        log.debug(f"cost model: no extension to time: {e}")
        return False


def time_rates(key: str, convert) -> dict:
    """{key: ns per element, ...}: ``key`` timed on this machine, with the other classes its models landed on (a
    sampler with no built-in spelling lands on the decomposition) and, beside each, the extension on the same
    model (the two sides of the choice timed together); {} where the class cannot be produced (no C++ compiler
    for the extension, no built-in op of that sampler). The convolution form is forced for its own keys and held
    back for the others (``conv_rewrite.forcing``: no estimate asks for a rate while one is timed)."""
    with forcing("conv" if key.split("/")[key.startswith("fixed/")] == "conv" else "builtin"):
        return _time_rates(key, convert)


def _time_rates(key: str, convert) -> dict:
    import openvino as ov

    if key == "copy":
        big = np.ones(1 << 22, np.float32)
        return {"copy": min(_timed(big.copy) for _ in range(5)) * 1e9 / big.size}
    core = ov.Core()
    if key == "call":
        return {"call": _median_ms([_nothing(core)], repeats=201)[0] * 1e6}
    if key.startswith("fixed/") and key != DYNAMIC:
        return time_rates(key[len("fixed/"):], convert)  # timed with its rate
    extension = _with_extension(core)
    if not extension and (key in ("layout", DYNAMIC) or key.startswith("extension/")):
        return {}
    found: dict = {}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        if key == DYNAMIC:
            return _dynamic_extra(core, path, convert)
        if key == "layout":
            got = _layout_rate(core, path, {f: lambda p, f=f: convert(p, fallback=f, prefer="builtin")
                                            for f in ("decompose", "extension")})
            return {} if got is None else {"layout": got}
        few, integer = key.endswith(few_key("")), key.endswith(int_key(""))
        suffix = few_key if few else int_key if integer else str  # the class's rates apart
        cls, what, rest = (key[:-len(suffix(""))] if few or integer else key).split("/", 2)
        fallback = "extension" if cls == "extension" else "decompose"
        if what == "deformconv":
            tries = [(lambda base: _deform_model(rest, base), lambda c: deform_key(c, rest), False)]
            sizes = (DEFORM_SHAPE, DEFORM_TINY)
        elif what.startswith("gridsample-"):
            kind, rank = what[len("gridsample-"):], int(rest.rstrip("d"))
            tries = [(lambda base: _grid_model(kind, rank, base), lambda c: grid_key(c, kind, rank), False)]
            sizes = (GRID_SHAPE, GRID_TINY)
        else:
            aa, up = rest.split("/")[0] == "aa", rest.endswith("/up")
            # The static coordinate spellings, antialias as PyTorch exports it (the built-in pillow modes), then
            # run-time lengths (where nearest takes its index form; not at few channels: only a built-in op's
            # rate reads them).
            forms = [dict(coord=c) for c in COORDS] + ([dict(coord=COORDS[0], pillow=True)] if aa else []) + \
                ([dict(coord=COORDS[0], dynamic=True)] if cls == "decomposition" and not few else [])
            tries = [(lambda base, f=f: _model(what, aa, up, base=base, integer=integer, **f),
                      lambda c: suffix(key_of(c, what, aa, up)),
                      f.get("dynamic", False)) for f in (forms if cls != "extension" else forms[:1])]
            sizes = (FEW_SHAPE if few else SHAPE, TINY)
        for made, name, dynamic in tries:
            try:
                m, t = made(sizes[0]), made(sizes[1])
                landed, ov_model, feeds, n_out = _landed(path, m, fallback, convert)
                if name(landed) in found:
                    continue
                tiny = _landed(path, t, fallback, convert)
                # The tiny model only where it lands on the same rung (else that rung's rate alone, fixed cost in it).
                models = {name(landed): (ov_model, tiny[1] if tiny[0] == landed else None)}
                if landed != "extension" and extension:
                    beside, ext_model = _landed(path, m, "extension", convert)[:2]
                    # Not filed from a model of run-time lengths where a static one gave it (the extension's
                    # shape inference at each call is DYNAMIC's, weighed apart).
                    if beside == "extension" and not (dynamic and name(beside) in found):
                        ext_tiny = _landed(path, t, "extension", convert)
                        models[name(beside)] = (ext_model, ext_tiny[1] if ext_tiny[0] == "extension" else None)
                for k, v in _rates(core, models, (feeds, n_out), tiny[2:]).items():
                    if k not in found or name(landed) == key:  # the extension beside ``key`` wins
                        found[k] = v
            except Exception as e:  # noqa: BLE001 -- a class this machine cannot run is left out
                log.debug(f"cost model: {key} not timed: {e}")
                continue
            if name(landed) == key:
                break
    return found


def calibrate(convert, samplers=SAMPLERS, only: str = "") -> dict:
    """Every rate on this machine at once, its models converted by ``convert`` (the target's; the reference table:
    ``tools/dev/cost_reference.py``); ``only``: those whose key contains it (with what their models show on the
    way). The convolution form: up, down, antialias down."""
    keys = [key_of(cls, kind, aa, up) for kind, aa in samplers for up in (True, False)
            for cls in ("builtin", "decomposition", "extension")]
    keys += [few_key(key_of("builtin", kind, aa, up)) for kind, aa in samplers for up in (True, False)]
    keys += [k(key_of("conv", kind, aa, up)) for kind, aa in samplers for up in {not aa, False} for k in (str, few_key)]
    keys += [int_key(key_of(cls, kind, aa, up)) for kind, aa in samplers if kind != "nearest" for up in (True, False)
             for cls in ("decomposition", "extension")]
    keys += [grid_key(cls, kind, 3) for kind in GRID_SAMPLERS for cls in ("decomposition", "extension")]
    keys += [deform_key(cls, v) for v in DEFORM_VARIANTS for cls in ("builtin", "extension")]
    out: dict = {}
    for key in keys + ["layout", "copy", "call", DYNAMIC]:
        if key not in out and only in key:
            out.update(time_rates(key, convert))
    return out


def _layout_rate(core, path: str, converts: dict) -> float | None:
    """ns per element (input + output) that a planar op costs in a real model beyond its own time: the plugin
    reorders blocked layouts around it. Measured as its extra time between Conv layers (1x1 Conv -> bilinear x2
    -> 1x1 Conv) minus its extra time alone, against a blocked op; ``converts`` {name: path -> converted model}:
    the blocked op's, then the planar op's (the extension's: None where it cannot run here)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c = SHAPE[1]
    w = numpy_helper.from_array(np.eye(c, dtype=np.float32).reshape(c, c, 1, 1), "w")
    out = [SHAPE[0], c] + [d * 2 for d in SHAPE[2:]]
    sz = numpy_helper.from_array(np.array(out, np.int64), "sz")
    resize = helper.make_node("Resize", ["a", "", "", "sz"], ["b"], name="r", mode="linear")
    between = [helper.make_node("Conv", ["X", "w"], ["a"]), resize, helper.make_node("Conv", ["b", "w"], ["Y"])]
    compiled = {}
    for name, nodes, inp, outp in (("alone", [resize], "a", "b"), ("between", between, "X", "Y")):
        g = helper.make_graph(nodes, "layout", [helper.make_tensor_value_info(inp, TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info(outp, TensorProto.FLOAT, None)], [w, sz])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)
        for form, convert in converts.items():
            try:
                compiled[name, form] = core.compile_model(convert(path)[0], "CPU", F32)
            except Exception as e:  # noqa: BLE001 -- no extension here: the copy rate stands in
                log.debug(f"cost model: layout not timed: {e}")
                return None
    # A difference of differences: the four run interleaved, so that other load falls on all alike.
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    times = dict(zip(compiled, _median_ms([(c, [x]) for c in compiled.values()], repeats=25)))
    blocked, planar = converts
    extra = (times["between", planar] - times["between", blocked]) - (times["alone", planar] - times["alone", blocked])
    return max(0.0, extra) * 1e6 / (int(np.prod(SHAPE)) + int(np.prod(out)))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


