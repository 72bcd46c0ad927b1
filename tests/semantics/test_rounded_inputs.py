"""The policy's allowance for a node judged on a float16 model's own tensors (``tolerance.rounded_input_bound``):
a runtime computed it from float32 values the model holds rounded, so it may be off the oracle on the held
values by what half a float16 step of each input moves the result, a grid's coordinates included; nothing more.

Each case plays the runtime with the oracle itself: the exact result on the float32 values, rounded to float16,
against the oracle on the float16 values the model holds."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from resample_bridge.semantics.compare import against_oracle, within_bound
from resample_bridge.semantics.ir import GridSampleIR, ResizeIR, Sampler
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.semantics.tolerance import float_bound, rounded_input_bound


def _resize(kind="linear", coord="half_pixel"):
    return ResizeIR(rank=4, axes=(2, 3), scales=None, sizes=(11, 13), roi=None, coord=coord,
                    sampler=Sampler(kind=kind, nearest="round_prefer_floor" if kind == "nearest" else None,
                                    cubic_a=-0.75 if kind == "cubic" else None, antialias=False),
                    input_shape=(1, 2, 7, 9), dtype="float16", origin="Resize-13")


def _grid_sample(kind="linear", align_corners=False):
    return GridSampleIR(spatial_rank=2, sampler=Sampler(kind=kind, cubic_a=-0.75 if kind == "cubic" else None),
                        padding="border", align_corners=align_corners, padding_on="taps", input_shape=(1, 2, 7, 9),
                        grid_shape=(1, 5, 6, 2), dtype="float16", origin="GridSample-16")


def _data(rng, shape):
    """float32 values, a quarter of them tiny (float16 subnormals) and some exactly 0, as after a ReLU."""
    x = rng.uniform(0, 2, shape) * np.where(rng.uniform(size=shape) < 0.25, 1e-4, 1.0)
    return np.where(rng.uniform(size=shape) < 0.1, 0.0, x).astype(np.float32)


def _runtime(ir, *inputs32):
    """What a runtime computing in float32 writes: the exact result on the float32 values, rounded."""
    return np.asarray(oracle(ir, *[np.asarray(a, np.float64) for a in inputs32])).astype(np.float16)


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_a_resize_on_rounded_inputs_is_within_the_allowance(kind):
    """(Subnormal outputs included: their steps are absolute, ``error_bound._output_rounding``.)"""
    ir = _resize(kind)
    for seed in range(12):
        x32 = _data(np.random.default_rng(seed), (1, 2, 7, 9))
        held = (x32.astype(np.float16), None, None, np.array([1, 2, 11, 13]))
        got, want = _runtime(ir, x32, None, None, held[3]), oracle(ir, *held)
        assert within_bound(got, want, rounded_input_bound(ir, float_bound(ir, *held), held)).ok


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_a_grid_sample_on_a_rounded_grid_is_within_the_allowance(kind):
    ir = _grid_sample(kind)
    worst = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x32 = _data(rng, (1, 2, 7, 9))
        g32 = rng.uniform(-1.1, 1.1, (1, 5, 6, 2)).astype(np.float32)
        held = (x32.astype(np.float16), g32.astype(np.float16))
        got, want = _runtime(ir, x32, g32), oracle(ir, *held)
        assert within_bound(got, want, rounded_input_bound(ir, float_bound(ir, *held), held)).ok
        worst.append(against_oracle(ir, got, want, held).ok)
    assert not all(worst)  # the float32 bound alone refuses the grid's rounding somewhere


def test_another_coordinate_map_is_still_refused():
    """half a float16 step of each input does not cover a map that is not the IR's: align_corners read as
    half_pixel (Resize), a grid unnormalised the other way (GridSample)."""
    rng = np.random.default_rng(0)
    x32 = _data(rng, (1, 2, 7, 9))
    ir = _resize()
    held = (x32.astype(np.float16), None, None, np.array([1, 2, 11, 13]))
    got = _runtime(dataclasses.replace(ir, coord="align_corners"), x32, None, None, held[3])
    assert not within_bound(got, oracle(ir, *held), rounded_input_bound(ir, float_bound(ir, *held), held)).ok
    gs = _grid_sample()
    g32 = rng.uniform(-1, 1, (1, 5, 6, 2)).astype(np.float32)
    held = (x32.astype(np.float16), g32.astype(np.float16))
    got = _runtime(dataclasses.replace(gs, align_corners=True), x32, g32)
    assert not within_bound(got, oracle(gs, *held), rounded_input_bound(gs, float_bound(gs, *held), held)).ok


def test_nearest_and_float32_get_no_allowance():
    x = _data(np.random.default_rng(1), (1, 2, 7, 9))
    ir = _resize("nearest")
    held = (x.astype(np.float16), None, None, np.array([1, 2, 11, 13]))
    assert not rounded_input_bound(ir, float_bound(ir, *held), held).any()
    ir = dataclasses.replace(_resize(), dtype="float32")
    held = (x, None, None, np.array([1, 2, 11, 13]))
    b = float_bound(ir, *held)
    assert rounded_input_bound(ir, b, held) is b
