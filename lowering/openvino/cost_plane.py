"""The in-graph forms' rates by the size of the plane they resample (``cost.py`` weighs Interpolate, the
convolution form and the matrix form with them). OpenVINO's CPU plugin runs Interpolate over blocks of channels,
plane by plane, and its time per output grows with the plane, not with the channel count (measured, linear x2,
AMD EPYC Zen 4, AVX-512, f32, 2 busy cores: 64x48x48 14.1 ns per output, 16x24x24 1.07, 256x24x24 0.79, 256x12x12
0.62): one rate timed at ``cost_timing.SHAPE`` (16 channels, 96x96) overestimated it fourfold on a 256x20x20
map, where the matrix form was then taken at 1.3x Interpolate's time. The matrix form's time per
multiply-accumulate moves the other way (0.009 ns at 96x96, 0.018 at 24x24: its rows are short).

So each in-graph class is also timed at ``PLANES``: as many outputs at each, the channels making up for the
smaller plane (the issue's channel grid 16 / 64 / 256; at most ``cost_timing.FEW`` channels keep their own
rates), all forms of one plane and sampler in one interleaved run (their order is what decides). A node's rate
is interpolated in log plane size between the timed planes (``rate``), clamped at the ends; its fixed cost per
call stays the class's (``cost_timing``: a few microseconds, next to the 0.1-5 ms these planes take)."""

from __future__ import annotations

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
FORMS = ("builtin", "conv", "matmul", "matmul+guard")
MATMUL_KEY = "matmul/mac"  # cost_matmul.KEY (that module imports this one)
GUARD = "matmul/guard"  # cost_matmul.GUARD: its plane rates per element in and out (``_timed``)
LAYOUT = "layout/matmul"  # ns per element in and out: the matrix form between Conv layers, beyond its time alone


def plane_key(key: str, side: int) -> str:
    """The key of ``key``'s rate timed on a ``side`` x ``side`` plane (``PLANES``)."""
    return f"{key}/plane{side}"


def rate(table, key: str, plane: int | None) -> float | None:
    """``key``'s rate at ``plane`` elements (the smaller of a node's input and output planes: the calibration's
    upscale input and downscale output are ``side`` x ``side``): interpolated in log plane size between the planes
    the table has it at, clamped at the ends; the key's own rate (timed at ``SHAPE`` apart from the other forms)
    where ``plane`` is None or the table has it at no plane."""
    points = [] if plane is None else \
        sorted((s * s, r) for s in PLANES if (r := table.rate(plane_key(key, s))) is not None)
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
    for side in PLANES:
        for kind, aa in cost_timing.SAMPLERS:
            for up in (True, False):
                out += [plane_key(key_of("builtin", kind, aa, up), side)]
                out += [plane_key(key_of("conv", kind, aa, up), side)] if not (aa and up) else []
        out.append(plane_key(MATMUL_KEY, side))
    return out


def time_rates(key: str, convert) -> dict:
    """{plane keys: ns per output element (the matrix form's per multiply-accumulate)} on this machine: the
    forms of ``key``'s plane and sampler (the matrix form's: linear x2 half_pixel) timed together, their models
    converted by ``convert`` (the target's); ``LAYOUT``: the matrix form's reorders (``cost_timing._layout_rate``,
    against Interpolate)."""
    if key == LAYOUT:
        return _layout(convert)
    side = int(key.rsplit("/plane", 1)[1])
    base = key.rsplit("/plane", 1)[0]
    if base in (MATMUL_KEY, GUARD):
        kind, aa, up = "linear", False, True
    else:
        _, kind, rest = base.split("/", 2)
        aa, up = rest.startswith("aa/"), rest.endswith("/up")
    return _timed(kind, aa, up, side, convert)


def _timed(kind: str, aa: bool, up: bool, side: int, convert) -> dict:
    import onnx
    import openvino as ov

    core = ov.Core()
    made, feeds, n_out = cost_timing._model(kind, aa, up, "half_pixel", base=PLANES[side])
    (_, ir), = parse_model(made)
    in_shape = feeds[0].shape
    runs, names = [], []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(made, path)
        for form in FORMS if (kind, aa, up) == ("linear", False, True) else FORMS[:2]:
            # "matmul": alone; "matmul+guard": as the default policy takes it
            with conv_rewrite.forcing(form.split("+")[0]):
                model, (rec,) = convert(path, prefer="builtin", allow_conditional=form == "matmul")
            if (rec.proof.get("form") or ("builtin" if rec.rung in (1, 2) else None)) != form.split("+")[0]:
                continue  # no such form for this sampler and ratio
            runs.append((core.compile_model(model, "CPU", cost_timing.F32), feeds))
            names.append(form)
    # An inference's own cost stays in (about 0.05 ms over 590 k outputs: under 0.1 ns each): a difference with
    # an inference of nothing came out 0 on a busy machine (the convolution form's nearest x2, 2 of 3 timings).
    t = {form: ms * 1e6 for form, ms in zip(names, cost_timing._median_ms(runs))}
    out = {plane_key(key_of(form, kind, aa, up), side): t[form] / n_out for form in FORMS[:2] if form in t}
    if "matmul" in t:
        out[plane_key(MATMUL_KEY, side)] = t["matmul"] / matmul_rewrite.macs(matmul_rewrite.plan(ir, in_shape),
                                                                          in_shape)
        # The If copies X in and Y out of its branch: a rate per element in and out, not per input alone.
        out[plane_key(GUARD, side)] = max(t["matmul+guard"] - t["matmul"], 0.0) / (feeds[0].size + n_out)
    return out


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
