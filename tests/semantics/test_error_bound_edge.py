"""The float32 bound where a source coordinate is an exact integer: a float32 evaluation can land just above it
and blend in the next element (PyTorch's bilinear 3 -> 21: scale float32(3/21) rounds up, the source of output
3 comes out 2.98e-8 instead of 0). The bound must cover that tap, and only there."""

from __future__ import annotations

import numpy as np

from resample_bridge.semantics.compare import within_bound
from resample_bridge.semantics.ir import ResizeIR, Sampler
from resample_bridge.semantics.reference import run
from resample_bridge.semantics.tolerance import float_bound


def _pytorch_style_linear(x: np.ndarray, out_len: int) -> np.ndarray:
    """Linear half_pixel along the last axis as aten's area_pixel_compute_source_index compiled with FMA:
    scale = float32(in) / out, src = fma(scale, o + 0.5, -0.5) clamped at 0, lambda = src - floor(src)."""
    f, n = np.float32, x.shape[-1]
    scale = f(n) / f(out_len)
    fma = float(scale) * (np.arange(out_len) + 0.5) - 0.5  # exact in float64, rounded once
    src = np.maximum(fma.astype(np.float32), f(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = (src - i0).astype(np.float32)
    return (f(1) - lam) * x[..., i0] + lam * x[..., i1]


def test_integer_source_coordinate_rounded_up_is_within_the_bound():
    x = np.array([[[0.0, 1e6, -1e6]]], dtype=np.float32)
    ir = ResizeIR(rank=3, axes=(2,), scales=None, sizes=(21,), roi=None, coord="half_pixel", sampler=Sampler("linear"))
    got, want = _pytorch_style_linear(x, 21), run(ir, x)
    assert got[0, 0, 3] != want[0, 0, 3]  # the float32 source 2.98e-8 really blends element 1 in
    b = float_bound(ir, x)
    assert within_bound(got, want, b).ok
    # Only outputs on an integer source get the extra room: between them the bound stays as it was.
    assert b[0, 0, 3] > 1e-3 and b[0, 0, 2] < b[0, 0, 3] / 100


def test_magnitude_is_the_sum_of_absolute_products_where_cubic_weights_cancel():
    """``magnitude`` (what a reduced precision rounds) is sum |w| |x| over the taps, from the oracle's own tap
    table here; not sum w |x|, which cubic's negative weights bring to 0 on a step that only the outer taps see."""
    from resample_bridge.semantics.error_bound import magnitude
    from resample_bridge.semantics.coords import bind_resize
    from resample_bridge.semantics.taps import axis_taps
    from resample_bridge.translate.onnx import parse_model
    from tests.helpers.models import resize_model

    (_, ir), = parse_model(resize_model((1, 1, 1, 8), scales=[1, 1, 1, 0.75], mode="cubic"))
    x = np.array([[[[5.0, 1.0, 1.0, 5.0, 5.0, 1.0, 1.0, 5.0]]]], np.float32)
    b = bind_resize(ir, x.shape)
    t = axis_taps(b.axes[0], b.sampler, b.exclude_outside)
    want = (np.abs(t.weight) * np.abs(x[0, 0, 0][t.index])).sum(axis=1)
    got = magnitude(ir, x).reshape(-1)
    assert np.allclose(got, want, rtol=1e-12, atol=0), (got, want)
    signed = (t.weight * np.abs(x[0, 0, 0][t.index])).sum(axis=1)
    assert np.any(np.abs(signed) < 0.5 * want)  # the case the old reading missed
