"""The cost model's choice among the in-graph forms, which all need nothing beside the model: rung 2's
convolution form (``conv_rewrite``) instead of Interpolate, and the matrix form (``matmul_rewrite``) instead of the
rung the ladder chose, each where estimated ``CONV_MARGIN`` (the matrix form: ``MATMUL_MARGIN``) times faster at
f32 and no slower (``REDUCED_PAR``) at the CPU's own lower default precision (bf16 here; ``faster_conv``). Their
rates are read at the node's plane (``cost_plane``: Interpolate's time per output grows with the plane, the matrix
form's per multiply-accumulate shrinks with it) and in its context (``cost_plane.context``: fed by the model's
input or by another op, its output the model's or another op's: OpenVINO's CPU plugin hands each form other
layouts), and the matrix form, a planar op as the decomposition is, pays the reorders the plugin puts between it
and the blocked layouts of the Conv layers around it where its rates were not timed there (``boundary``), as the
extension does (``cost.estimate``)."""

from __future__ import annotations

import numpy as np

from . import cost_matmul, cost_plane
from .boundary import NOT_AT_BOUNDARY
from .cost import REFERENCE_OUTPUTS, Calibration, _keys, _static_elements, chosen_name
from .cost_timing import FEW, few_key, fixed_key, int_key, rung_class

__all__ = ["CONV_MARGIN", "MATMUL_MARGIN", "REDUCED_PAR", "faster_conv"]

CONV_MARGIN = 1.1  # the in-graph forms against the chosen rung at f32: both need nothing beside the model
# The matrix form's estimate reads two more rates (per multiply-accumulate by plane, its guard's per element): on
# 1x256x20x20 and 1x64x40x40, linear x2, estimated 1.1-1.2x faster than Interpolate or the convolution form, it
# was measured 0.7-1.2x their speed from one run to the next on a busy 2-core machine (AMD EPYC Zen 4).
MATMUL_MARGIN = 1.3
# At the CPU's lower default precision a form may be estimated this much slower and still be "no slower": the
# rates' resolution there (the matrix form on 1x64x40x40 linear x2 alone, bf16: estimated 0.93x Interpolate's
# speed, measured 1.03x); the forms the plane rates timed alone had taken ran 2.5-9x slower.
REDUCED_PAR = 0.9
PLANAR = ("decomposition", "matmul")  # run in the plain layout: reordered from and to a Conv's blocked one


def faster_conv(node, record, table: Calibration, form: str = "conv") -> tuple[str | None, dict | None]:
    """(why the convolution form (``conv_rewrite``; "matmul": ``matmul_rewrite``) instead of the rung the ladder
    chose, or None; the estimate, None without rates). Rates that would send the node to it are timed again first."""
    chosen = rung_class(record) if form == "matmul" else "builtin"
    sides = node.sides
    with table.reading() as read:
        got = _conv_estimate(node.ir, table, chosen, form, sides)
    if got[0] is not None and table.confirm(read):
        got = _conv_estimate(node.ir, table, chosen, form, sides)
    faster, est = got
    if faster is None:
        return None, est
    # And not slower at the lower precision the CPU runs a model at by default (bf16 here), where the table has
    # its rates: a form faster at f32 alone would make the model slower where it is deployed as it comes.
    for view in cost_plane.reduced(table):
        low_est = _conv_estimate(node.ir, view, chosen, form, sides)[1]
        u = "ms" if low_est and f"{form}_ms" in low_est else "ns"
        if low_est is None or f"{form}_{u}" not in low_est:
            continue
        est[view.precision] = low_est
        low = low_est[f"chosen_{u}"] / low_est[f"{form}_{u}"]
        if low < REDUCED_PAR:
            return None, est
        faster = min(faster, low)
    u = "ms" if f"{form}_ms" in est else "ns"
    beside = "".join(f", {p}: {est[p][f'{form}_{u}']:.3g} against {est[p]['chosen_' + u]:.3g}"
                     for p in cost_plane.REDUCED if p in est)
    per = " per output" * (u == "ns")
    return (f"cost model: {faster:.2g}x faster than {chosen_name(record)} on {table.where} (estimated "
            f"{est[f'{form}_{u}']:.3g} {u} against {est['chosen_' + u]:.3g} {u}{per}{beside})"), est


def _conv_estimate(ir, table: Calibration, chosen: str = "builtin", form: str = "conv",
                   sides: tuple = NOT_AT_BOUNDARY) -> tuple:
    """(how many times faster the form is estimated where taken at its margin, else None; the estimate). As
    against the extension, a saving below a call's own cost is not taken; with a length known only at run time the
    form's rate must be the lower too. The matrix form (``cost_matmul``) is weighed at static sizes only, and not
    against static nearest's decomposition (a Gather per axis: no rate, as ``cost.estimate``). ``sides``: (input,
    output) at the model's own inputs / outputs, where no reorder is charged."""
    sizes = _static_elements(ir, shape := getattr(ir, "input_shape", None))
    if sizes is not None and sizes[1] == 0 or (form == "matmul" and (sizes is None or sizes[2] or (
            chosen == "decomposition" and ir.sampler.kind == "nearest"))):
        return None, None
    if form == "conv" and sizes is None and chosen == "builtin":
        # Resized lengths known only at run time: the per-output rates have no plane to read, and the form was
        # never faster there. Measured in two corpus runs (Zen 4, f32 hint), our default / the importer where the
        # convolution form replaced Interpolate on run-time H / W: ppocrv4 1.16 / 1.30, dbnet head 1.11 / 1.19,
        # the VAE decoders 1.04-1.20, yolov8 dynamic 1.05 / 1.05; Interpolate stays.
        return None, None
    # Resized lengths known only at run time: per output element, fixed costs spread over REFERENCE_OUTPUTS.
    n_out, unit = (sizes[1], 1e6) if sizes else (REFERENCE_OUTPUTS, REFERENCE_OUTPUTS)
    plane = _plane(ir, shape, sizes)
    fed = cost_plane.context(sides)  # its input another op's, not the model's: the rates timed fed by a Conv
    narrow = plane is not None and cost_plane.is_narrow(shape[1])
    t, rates = {}, {}
    for side, cls in (("chosen", chosen), (form, form)):  # the matrix form: its time (ms) for a rate
        key = None if cls == "matmul" else _keys(ir, cls, sizes is None or sizes[0] <= sizes[1], shape, table)[0]
        rates[side] = cost_matmul.time_ms(ir, shape, table, plane, n_out, fed, narrow) if key is None else \
            cost_plane.rate(table, key, None if key.endswith((few_key(""), int_key(""))) else plane, fed, narrow)
        if rates[side] is None:
            return None, None
        t[side] = rates[side] if key is None else ((table.rate(fixed_key(key)) or 0.0) + rates[side] * n_out) / unit
    per = "ms" if sizes else "ns"
    margin = MATMUL_MARGIN if form == "matmul" else CONV_MARGIN
    est = {f"chosen_{per}": t["chosen"], f"{form}_{per}": t[form], "margin": margin, "rates": table.where}
    # The rates timed in the node's context (``cost_plane.fed_key``: between Conv layers, or fed by one into the
    # model's output) hold its reorders.
    if sizes and (form in PLANAR) != (chosen in PLANAR) and not all(sides) and not (
            fed and plane is not None and cost_plane.has_planes(table, cost_plane.MATMUL_KEY, narrow, fed)):
        planar = form if form in PLANAR else "chosen"
        reorders = (table.rate(cost_plane.LAYOUT) or table.rate("layout") or 0.0) * \
            (sizes[0] * (not sides[0]) + sizes[1] * (not sides[1])) / 1e6
        t[planar] += reorders
        est[f"{planar}_{per}"], est["reorders_ms"] = t[planar], reorders
    if sizes is None or sizes[2]:
        est["assumed"] = "1 for each length known only at run time" if sizes else "sizes known only at run time"
    if t["chosen"] < margin * t[form] * (1 - 1e-12) or (sizes and t["chosen"] - t[form] < (
            table.rate("call") or 0.0) / 1e6) or ((sizes is None or sizes[2]) and
                                                 rates["chosen"] < margin * rates[form]):
        return None, est
    return t["chosen"] / t[form], est


def _plane(ir, shape, sizes) -> int | None:
    """The node's plane (``cost_plane``: the smaller of its input's and output's spatial elements, as calibrated), None
    where its sizes are known only at run time, it resamples the batch or channel axis, or it has no more channels
    than ``cost_timing.FEW`` (its class's own rates, or those at few); fewer than ``cost_plane.LEAST_CHANNELS`` read
    the narrow planes (``cost_plane.is_narrow``) where the table has them."""
    axes = getattr(ir, "axes", None)  # the resized axes: a Resize's; GridSample and DeformConv have no plane rates
    if sizes is None or axes is None or {0, 1} & set(axes) or (shape[1] or 0) <= FEW:
        return None
    per_plane = int(np.prod([1 if d is None else d for d in shape[:2]]))
    return min(sizes[0], sizes[1]) // per_plane
