"""The matrix form's rates (``matmul_rewrite``): per multiply-accumulate, not per output element, since a row
multiplies every input of its axis (linear x2 1x16x160x200 is 573 M of them, 1x64x40x40 25 M: the form's time
grows with the lengths, the per-output rates of the other rungs do not). Timed like every class
(``cost_timing._rates``: between ``cost_timing.TINY`` and ``SHAPE``, linear x2 half_pixel, beside an inference of
nothing); its fixed cost per call under ``cost_timing.fixed_key``."""

from __future__ import annotations

import numpy as np

from . import cost_plane, cost_timing
from .cost_timing import SHAPE, TINY, fixed_key
from ...translate.onnx import parse_model
from . import matmul_rewrite
from .graph import ops

KEY = cost_plane.MATMUL_KEY  # ns per multiply-accumulate
GUARD = cost_plane.GUARD  # the default policy's finite-input guard (``matmul_rewrite.guarded``)


def time_ms(ir, shape, table, plane: int | None = None, n_out: int = 0, fed: str | None = None,
            narrow: bool = False) -> float | None:
    """The form's estimated ms on ``shape`` (``n_out`` output elements) with its guard (``--allow-conditional``
    drops it: estimated a little slower there than it runs), its rates read at ``plane`` (``cost_plane.rate``,
    ``fed``: ``cost_plane.context``; ``narrow``: ``cost_plane.is_narrow``); None where it has no plan there or the
    table no rate."""
    axes = matmul_rewrite.plan(ir, shape)
    rate = None if isinstance(axes, str) else cost_plane.rate(table, KEY, plane, fed, narrow)
    if rate is None:
        return None
    # The If copies X in and Y out of its branch: timed by plane, a rate per element in and out (``cost_plane``);
    # else the identity If's, per input element.
    by_plane = plane is not None and cost_plane.has_planes(table, GUARD, narrow)
    elements = int(np.prod(shape)) + n_out * by_plane
    guard = (table.rate(fixed_key(GUARD)) or 0.0) + (cost_plane.rate(table, GUARD, plane, fed, narrow) or 0.0) * \
        elements
    return ((table.rate(fixed_key(KEY)) or 0.0) + rate * matmul_rewrite.macs(axes, shape) + guard) / 1e6


def time_rates() -> dict:
    """{KEY: ns per multiply-accumulate, GUARD: ns per input element, and their fixed_key: ns per call} on this
    machine: the form built on linear x2 half_pixel at ``SHAPE`` and ``TINY``, and the guard alone (an If whose
    branches pass X through)."""
    import openvino as ov

    core = ov.Core()
    models, guards, sizes, elements = [], [], [], []
    for base in (SHAPE, TINY):
        model, feeds, _ = cost_timing._model("linear", False, True, "half_pixel", base=base)
        (_, ir), = parse_model(model)
        axes = matmul_rewrite.plan(ir, base)
        p = ops().parameter(list(base), np.float32)
        models.append(ov.Model([matmul_rewrite.build(p.output(0), axes, base, "cost")], [p]))
        p = ops().parameter(list(base), np.float32)
        guards.append(ov.Model([matmul_rewrite.guarded(p.output(0), [], base, "cost", lambda x: x)], [p]))
        sizes.append((feeds, matmul_rewrite.macs(axes, base)))
        elements.append((feeds, int(np.prod(base))))
    return {**cost_timing._rates(core, {KEY: tuple(models)}, *sizes),
            **cost_timing._rates(core, {GUARD: tuple(guards)}, *elements)}


def calibrate(convert, only: str = "", **kw) -> dict:
    """``cost_timing.calibrate`` and, where ``only`` allows, the matrix form's rates and the in-graph forms' by
    plane (``cost_plane``): the reference table (models converted by ``convert``)."""
    out = {**cost_timing.calibrate(convert, only=only, **kw), **cost_plane.calibrate(convert, only)}
    return {**out, **time_rates()} if only in fixed_key(KEY) else out
