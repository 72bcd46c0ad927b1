"""The in-graph forms' rates by the size of the plane they resample (``cost.py`` weighs Interpolate, the
convolution form and the matrix form with them). OpenVINO's CPU plugin runs Interpolate over blocks of channels,
plane by plane, and its time per output grows with the plane, not with the channel count (measured, linear x2,
AMD EPYC Zen 4, AVX-512, f32, 2 busy cores: 64x48x48 14.1 ns per output, 16x24x24 1.07, 256x24x24 0.79, 256x12x12
0.62): one rate timed at ``cost_timing.SHAPE`` (16 channels, 96x96) overestimated it fourfold on a 256x20x20
map, where the matrix form was then taken at 1.3x Interpolate's time. The matrix form's time per
multiply-accumulate moves the other way (0.009 ns at 96x96, 0.018 at 24x24: its rows are short).

So each in-graph class is also timed at ``PLANES``: as many outputs at each, the channels making up for the
smaller plane (the issue's channel grid 16 / 64 / 256), and 5-15 channels at ``NARROW_PLANES`` (at most
``cost_timing.FEW`` keep their class's own rates), all forms of one plane and sampler in one interleaved run
(their order is what decides). A node's rate is interpolated in log plane size between the timed planes
(``rate``), clamped at the ends; its fixed cost per call stays the class's (``cost_timing``: a few microseconds,
next to the 0.1-5 ms these planes take).

Each form is timed in three contexts (``context``): alone, fed by the model's input (a wall-clock median); fed by
a Conv, its output the model's ("fed-out"); between two Conv layers ("fed": a model's neck), the last two by the
plugin's count of the node's own ops and reorders (``_profiled_ms``); each at f32 and at this CPU's own default
precision where that is lower (``REDUCED``: bf16 here). Fed by a model's input, Interpolate runs another layout
than after a Conv: linear x2 1x64x48x48 alone 2.07 ms at f32, 0.52 at bf16, against the convolution form's 0.48;
between Conv layers, 1x32x60x80 x2, Interpolate 0.62 / 0.41 ms (f32 / bf16), the convolution form 0.63 / 1.35
(under bf16 the plugin runs that depthwise ConvTranspose in its general kernel). The rates timed alone had
sent such nodes to the convolution form: models under the bf16 default 1.5-6x slower than the importer's (AMD
EPYC Zen 4, AVX-512, 2 cores)."""

from __future__ import annotations

import functools
import math
import os
import tempfile

import numpy as np

from ...translate.onnx import parse_model
from . import conv_rewrite, cost_timing, matmul_rewrite
from .cost_timing import SHAPE, key_of

# {input side at the calibration: input shape}: as many outputs at each as at SHAPE, channels 16 / 64 / 256; and
# 192 x 192 at 16 channels (4x the outputs), where the matrix form's long rows cost more per multiply-accumulate
# (linear x2 align_corners 1x16x160x200: estimated 1.5x faster than Interpolate by the rate at 96 x 96, measured
# 0.94x).
PLANES = {192: (1, 16, 192, 192), SHAPE[-1]: SHAPE, 48: (1, 64, 48, 48), 24: (1, 256, 24, 24)}
# A node of fewer channels keeps its class's own rates: with 8 channels (a U-Net decoder's 1x8x24x32 nearest x2,
# between Conv layers) the plane rates sent it to the convolution form and the whole model ran 1.1-1.5x slower.
LEAST_CHANNELS = min(shape[1] for shape in PLANES.values())
# Fewer channels (above ``cost_timing.FEW``: a U-Net decoder's 8, a head's 12) read planes of their own, timed at
# NARROW channels: the plugin's blocks are half empty there and Interpolate's time per output is not the planes'
# (8 channels between Conv layers, nearest x2 96x96 at bf16: the convolution form 2.3x Interpolate's time, which
# the class's own rates, timed alone at 16 channels, had estimated faster).
NARROW = 8
NARROW_PLANES = {side: (1, NARROW, side, side) for side in (48, SHAPE[-1], 192)}
FORMS = ("builtin", "conv", "matmul", "matmul+guard")
MATMUL_KEY = "matmul/mac"  # cost_matmul.KEY (that module imports this one)
GUARD = "matmul/guard"  # cost_matmul.GUARD: its plane rates per element in and out (``_timed``)
LAYOUT = "layout/matmul"  # ns per element in and out: the matrix form between Conv layers, beyond its time alone
# Lower precisions a CPU may run a model at by default (OpenVINO's INFERENCE_PRECISION_HINT): the plane rates are
# also timed at the one this CPU defaults to, filed under ``at(key, precision)``.
REDUCED = ("bf16", "f16")
FEEDER, DRAIN = "feeder", "drain"  # the Conv layers that feed and read a calibration's node (``_after_conv``)


def plane_key(key: str, side: int, narrow: bool = False) -> str:
    """The key of ``key``'s rate timed on a ``side`` x ``side`` plane (``PLANES``; ``narrow``: ``NARROW_PLANES``)."""
    return f"{key}/plane{side}" + (f"c{NARROW}" if narrow else "")


def planes(narrow: bool) -> dict:
    """{side: calibration input shape} of the wide or the ``narrow`` planes."""
    return NARROW_PLANES if narrow else PLANES


def is_narrow(channels: int | None) -> bool:
    """Whether a node of ``channels`` reads the narrow planes (``NARROW``)."""
    return channels is not None and cost_timing.FEW < channels < LEAST_CHANNELS


def at(key: str, precision: str) -> str:
    """The key of a plane rate timed under the ``precision`` hint (one of ``REDUCED``)."""
    return f"{key}@{precision}"


@functools.cache
def default_precision() -> str:
    """This CPU's own default inference precision (OpenVINO's: bf16 where the CPU has it), "f32" otherwise."""
    import openvino as ov

    got = ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    got = got.get_type_name() if hasattr(got, "get_type_name") else str(got).lower()
    return got if got in REDUCED else "f32"


class Reduced:
    """A table's view at a reduced precision: each plane rate read as timed under that hint (``at``), every other
    rate (fixed costs, reorders, the classes' own) as the table has it."""

    def __init__(self, table, precision: str):
        self.table, self.precision, self.where = table, precision, table.where

    def rate(self, key: str) -> float | None:
        return self.table.rate(at(key, self.precision) if "/plane" in key else key)


def reduced(table) -> list:
    """The views (``Reduced``) of ``table`` at each lower precision it has plane rates for; a table timed on
    this machine: at this CPU's default where that is lower."""
    found = {k.rsplit("@", 1)[1] for k in table.rates if "/plane" in k and "@" in k}
    if getattr(table, "timer", None) is not None and (mine := default_precision()) != "f32":
        found.add(mine)
    return [Reduced(table, p) for p in REDUCED if p in found]


def fed_key(key: str, to_output: bool = False) -> str:
    """The key of a plane rate timed with the node fed by a Conv (``_after_conv``), not by the model's input:
    read by another Conv ("fed"), or ``to_output``: its output the model's ("fed-out"), the reorder to it counted."""
    return f"{key}/fed{'-out' if to_output else ''}"


def context(sides: tuple) -> str | None:
    """The rates a node's ``sides`` (input, output at the model's boundary: ``boundary``) read: None (alone: fed
    by the model's input), "fed" (between other ops), "fed-out" (fed by another op, its output the model's)."""
    return None if sides[0] else "fed-out" if sides[1] else "fed"


def has_planes(table, key: str, narrow: bool = False, fed: str | None = None) -> bool:
    """Whether ``table`` has ``key`` timed at any of the (``narrow``) planes, in the context ``fed``."""
    return any(table.rate(fed_key(plane_key(key, s, narrow), fed == "fed-out") if fed else plane_key(key, s, narrow))
               is not None for s in planes(narrow))


def rate(table, key: str, plane: int | None, fed: str | None = None, narrow: bool = False) -> float | None:
    """``key``'s rate at ``plane`` elements (the smaller of a node's input and output planes: the calibration's
    upscale input and downscale output are ``side`` x ``side``): interpolated in log plane size between the planes
    the table has it at, clamped at the ends; the key's own rate (timed at ``SHAPE`` apart from the other forms)
    where ``plane`` is None or the table has it at no plane. ``fed`` (``context``): the node's input is not the
    model's (a Conv's, as a model's resize is mostly): the rates timed so, where the table has them. ``narrow``
    (``is_narrow``): the narrow planes' rates, where the table has them."""
    def at_planes(name):
        return [] if plane is None else \
            sorted((s * s, r) for s in planes(narrow) if (r := table.rate(name(s))) is not None)

    points = (fed and at_planes(lambda s: fed_key(plane_key(key, s, narrow), fed == "fed-out"))) or \
        at_planes(lambda s: plane_key(key, s, narrow))
    if not points:
        return table.rate(key)
    if plane <= points[0][0]:
        return points[0][1]
    for (p0, r0), (p1, r1) in zip(points, points[1:]):
        if plane <= p1:
            return r0 + math.log(plane / p0) / math.log(p1 / p0) * (r1 - r0)
    return points[-1][1]


def keys() -> list:
    """The keys ``calibrate`` times: per plane, each sampler and direction a built-in op or the convolution form
    takes, and the matrix form's."""
    out = []
    for narrow in (False, True):
        for side in planes(narrow):
            for kind, aa in cost_timing.SAMPLERS:
                for up in (True, False):
                    out += [plane_key(key_of("builtin", kind, aa, up), side, narrow)]
                    out += [plane_key(key_of("conv", kind, aa, up), side, narrow)] if not (aa and up) else []
            out.append(plane_key(MATMUL_KEY, side, narrow))
    return out


def time_rates(key: str, convert) -> dict:
    """{plane keys: ns per output element (the matrix form's per multiply-accumulate)} on this machine: the
    forms of ``key``'s plane and sampler (the matrix form's: linear x2 half_pixel) timed together, their models
    converted by ``convert`` (the target's); ``LAYOUT``: the matrix form's reorders (``cost_timing._layout_rate``,
    against Interpolate)."""
    if key == LAYOUT:
        return _layout(convert)
    key = key.split("@", 1)[0].removesuffix("/fed").removesuffix("/fed-out")  # one run times every context
    base, tail = key.rsplit("/plane", 1)
    narrow = tail.endswith(f"c{NARROW}")
    side = int(tail.removesuffix(f"c{NARROW}"))
    if base in (MATMUL_KEY, GUARD):
        kind, aa, up = "linear", False, True
    else:
        _, kind, rest = base.split("/", 2)
        aa, up = rest.startswith("aa/"), rest.endswith("/up")
    return _timed(kind, aa, up, side, convert, narrow)


def _timed(kind: str, aa: bool, up: bool, side: int, convert, narrow: bool = False) -> dict:
    """The forms' rates at ``side``, alone (fed by the model's input) and fed by a Conv (``fed_key``), each at
    f32 and at this CPU's lower default precision (``at``)."""
    import openvino as ov

    core = ov.Core()
    made, feeds, n_out = cost_timing._model(kind, aa, up, "half_pixel", base=planes(narrow)[side])
    (_, ir), = parse_model(made)
    in_shape = feeds[0].shape
    out = {}
    # Alone; fed by a Conv, its output the model's ("fed-out"); between two Conv layers ("fed").
    for where in (None, "fed-out", "fed"):
        models, names = _forms(_after_conv(made, in_shape[1], drain=where == "fed") if where else made, kind, aa,
                               up, convert)
        for precision in ("f32",) + ((default_precision(),) if default_precision() != "f32" else ()):
            hint = {"INFERENCE_PRECISION_HINT": precision, "PERF_COUNT": bool(where)}
            runs = [(core.compile_model(m, "CPU", hint), feeds) for m in models]
            # Alone: an inference's own cost stays in (about 0.05 ms over 590 k outputs: under 0.1 ns each).
            got = _profiled_ms(runs, made.graph.output[0].name if where == "fed" else None) if where else \
                cost_timing._median_ms(runs)
            t = {form: ms * 1e6 for form, ms in zip(names, got)}
            out.update(_rates(t, kind, aa, up, (side, narrow), ir, in_shape, feeds[0].size, n_out,
                              lambda k, w=where, p=precision: _named(k, w, p)))
    return out


def _named(key: str, where: str | None, precision: str) -> str:
    """``key`` as timed in the context ``where`` (``context``) at ``precision``."""
    key = fed_key(key, where == "fed-out") if where else key
    return key if precision == "f32" else at(key, precision)


def _rates(t: dict, kind, aa, up, plane: tuple, ir, in_shape, n_in: int, n_out: int, name) -> dict:
    """{rate key (``name``d): ns per output element, the matrix form's per multiply-accumulate} of the forms'
    times ``t`` (ns) on ``plane`` (side, narrow)."""
    out = {name(plane_key(key_of(form, kind, aa, up), *plane)): t[form] / n_out for form in FORMS[:2] if form in t}
    if "matmul" in t:
        out[name(plane_key(MATMUL_KEY, *plane))] = t["matmul"] / matmul_rewrite.macs(
            matmul_rewrite.plan(ir, in_shape), in_shape)
        # The If copies X in and Y out of its branch: a rate per element in and out, not per input alone.
        out[name(plane_key(GUARD, *plane))] = max(t["matmul+guard"] - t["matmul"], 0.0) / (n_in + n_out)
    return out


def _forms(made, kind: str, aa: bool, up: bool, convert) -> tuple[list, list]:
    """([OpenVINO model], [form]): ``made`` converted by ``convert`` with each of ``FORMS`` it has forced."""
    import onnx

    models, names = [], []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(made, path)
        for form in FORMS if (kind, aa, up) == ("linear", False, True) else FORMS[:2]:
            # "matmul": alone; "matmul+guard": as the default policy takes it
            with conv_rewrite.forcing(form.split("+")[0]):
                model, (rec,) = convert(path, prefer="builtin", allow_conditional=form == "matmul")
            if (rec.proof.get("form") or ("builtin" if rec.rung in (1, 2) else None)) != form.split("+")[0]:
                continue  # no such form for this sampler and ratio
            models.append(model)
            names.append(form)
    return models, names


def _after_conv(made, channels: int, drain: bool = False):
    """``made`` with its input fed through a 3x3 Conv (``FEEDER``) of ``channels``, as a model's resize is:
    OpenVINO's CPU plugin then hands it the layout and precision a model's Conv does; ``drain``: its output read by
    another (``DRAIN``), whose layout and precision the plugin then fits the node's output to."""
    from onnx import helper, numpy_helper

    g = made.graph
    rng = np.random.default_rng(0)
    w = [numpy_helper.from_array((rng.standard_normal((channels, channels, 3, 3)) * 0.1).astype(np.float32),
                                 f"{name}_w") for name in (FEEDER, DRAIN)]
    x, y = g.input[0].name, g.output[0].name
    feeder = helper.make_node("Conv", [x, w[0].name], [f"{FEEDER}_y"], name=FEEDER, pads=[1] * 4)
    nodes = [feeder] + [helper.make_node(n.op_type, [f"{FEEDER}_y" if i == x else i for i in n.input],
                                         [f"{y}_drained" if drain and o == y else o for o in n.output], name=n.name,
                                         **{a.name: helper.get_attribute_value(a) for a in n.attribute})
                        for n in g.node]
    inits = list(g.initializer) + w[:1 + drain]
    if drain:
        nodes.append(helper.make_node("Conv", [f"{y}_drained", w[1].name], [y], name=DRAIN, pads=[1] * 4))
    graph = helper.make_graph(nodes, g.name, list(g.input), list(g.output), inits)
    return helper.make_model(graph, opset_imports=made.opset_import, ir_version=made.ir_version)


def _profiled_ms(runs: list, drained: str | None = None, repeats: int = 15) -> list:
    """Median ms of each (compiled model, its inputs) by the plugin's own count of its ops (PERF_COUNT), run in
    turns: the Conv layers around the node (``FEEDER``; ``drained``: the drain, which the plugin names after the
    model's output it gives) and the reorders into the feeder and to the model's output after the drain are not
    the node's; without a drain the reorder to the model's output is (Interpolate's in the layout a Conv hands it,
    1x19x32x32 cubic x4: the plugin's reference reorder, 0.7 ms of a 1.05 ms model), and with one the reorders into
    it are."""
    def own(request) -> float:
        return sum(p.real_time.total_seconds() for p in request.profiling_info
                   if p.node_name not in (FEEDER, DRAIN, drained) and not p.node_name.endswith("_" + FEEDER)
                   and not (drained and "/sink_port_" in p.node_name)) * 1e3

    requests = [(c.create_infer_request(), v) for c, v in runs]
    ts: list = [[] for _ in runs]
    for r, v in requests:
        r.infer(v)
    order = np.random.default_rng(0)
    for _ in range(repeats):
        for i in order.permutation(len(requests)):
            r, v = requests[i]
            r.infer(v)
            ts[i].append(own(r))
    return [float(np.median(t)) for t in ts]


def _layout(convert) -> dict:
    import openvino as ov

    def forced(form):
        def forced_convert(path):
            with conv_rewrite.forcing(form):  # the matrix form guarded, as the default policy takes it
                return convert(path, prefer="builtin")
        return forced_convert

    with tempfile.TemporaryDirectory() as d:
        got = cost_timing._layout_rate(ov.Core(), os.path.join(d, "m.onnx"),
                                       {form: forced(form) for form in ("builtin", "matmul")})
    return {} if got is None else {LAYOUT: got}


def calibrate(convert, only: str = "") -> dict:
    """Every plane rate whose key contains ``only``, on this machine (with what their runs show on the way)."""
    out: dict = {}
    for key in keys() + [LAYOUT]:
        if key not in out and only in key:
            out.update(time_rates(key, convert))
    return out
