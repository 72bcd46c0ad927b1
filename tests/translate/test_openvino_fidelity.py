"""OpenVINO CPU fidelity: for seeded configurations of Interpolate (1, 4, 11), GridSample-9 and
DeformableConvolution (1, 8), ``parse_node(op)`` executed by the oracle equals what OpenVINO's CPU plugin
computes (f32 inference precision), except at output indices the IR itself reports as floating-point ties.

Every quirk the parser encodes also has a test below that shows the plain (documented / ONNX) reading gives
different numbers on the same run, so each one is a measurement, not an assumption.
"""

from __future__ import annotations

import dataclasses
import math
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
import openvino.opset1 as ops1  # noqa: E402
import openvino.opset8 as ops8  # noqa: E402
import openvino.opset9 as ops9  # noqa: E402
import openvino.opset10 as ops4  # noqa: E402  (opset10.interpolate builds Interpolate-4)
import openvino.opset11 as ops11  # noqa: E402

from resample_bridge.semantics import reference  # noqa: E402
from resample_bridge.semantics.coords import bind_resize  # noqa: E402
from resample_bridge.semantics.equivalence import diff, off_ties  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.semantics.ir import (DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue,  # noqa: E402
                                          Sampler)
from resample_bridge.translate.openvino import parse_model, parse_node  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
_CORE = ov.Core()

MODES4 = ("nearest", "linear", "linear_onnx", "cubic")
PILLOW = ("bilinear_pillow", "bicubic_pillow")
COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
# Fractional float32 scales on purpose: 1/3, 0.6, 0.45 ... are not dyadic, 1.05 leaves some lengths unchanged,
# 0.29999998 sits just under 0.3 (the +1e-6 length rule).
SCALES = (0.5, 0.6, 0.75, 1.3, 1.5, 2.0, 2.5, 1 / 3, 1.05, 0.8, 1.0, 3.0, 0.45, 1.75, 0.9, 0.29999998)

N_V4, N_V11, N_V1, N_GRID, N_DEFORM8, N_DEFORM1 = 130, 110, 20, 60, 50, 12


def run_cpu(params, node, *values):
    model = ov.Model([node.output(0)], params)
    compiled = _CORE.compile_model(model, "CPU", CONFIG)
    return compiled(list(values))[compiled.output(0)]


def tie_mask(ir: ResizeIR, shape, out_shape):
    """False at output indices that lie on a floating-point tie of ``ir`` (any axis)."""
    return off_ties(diff(ir, dataclasses.replace(ir, arith="exact"), tuple(shape)), len(shape), out_shape)


def assert_matches(ir, got, expected, mask=None):
    assert got.shape == expected.shape, f"oracle shape {got.shape}, OpenVINO {expected.shape}\nIR {ir}"
    if mask is None:
        mask = np.ones(expected.shape, dtype=bool)
    np.testing.assert_allclose(got[mask], expected[mask], rtol=RTOL, atol=ATOL, err_msg=str(ir))


# ----------------------------------------------------------------------------------------------------------
# Interpolate configurations


def interp_config(seed: int, version: int) -> dict:
    """A configuration the CPU plugin accepts: every mode x coordinate mode, every nearest mode, scales and
    sizes, pads (also on N/C), axes subsets in any order, ranks 3-5 (pillow 2-4)."""
    rng = random.Random(seed * 7919 + version)
    modes = MODES4 + (PILLOW if version == 11 else ())
    mode = modes[seed % len(modes)]
    coord = COORDS[(seed // len(modes)) % len(COORDS)]
    nearest = NEAREST[(seed // (len(modes) * len(COORDS))) % len(NEAREST)]
    calc = ("scales", "sizes")[(seed // 3) % 2]
    pillow = mode in PILLOW
    rank = rng.choice((2, 3, 4)) if pillow else rng.choice((3, 4, 4, 5))
    shape = [rng.randint(1, 7) for _ in range(rank)] if pillow else \
        [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 7) for _ in range(rank - 2)]
    pads = None
    if pillow:
        kind = rng.choice(("last", "last", "nhwc")) if rank == 4 else "last"
        axes = [rank - 2, rank - 1] if kind == "last" else [1, 2]
        if rng.random() < 0.5:
            axes = axes[::-1] if kind == "last" else axes
        changes = set(axes)
        if kind == "last" and rng.random() < 0.3:
            pads = ([rng.randint(0, 2) for _ in range(rank)], [rng.randint(0, 2) for _ in range(rank)])
    else:
        spatial = list(range(2, rank))
        kinds = ["all", "spatial", "spatial", "wrapped"]
        if rank == 3 and mode != "cubic":
            kinds.append("all_change")
        kind = rng.choice(kinds)
        if kind in ("all", "all_change"):
            axes = None
            changes = set(range(rank)) if kind == "all_change" else set(spatial)
        elif kind == "spatial":
            axes = rng.sample(spatial, rng.randint(1, len(spatial)))
            changes = set(axes)
        else:  # at most rank-2 axes including N or C: the CPU moves them to the end with Transposes
            k = rng.randint(1, rank - 2)
            axes = [rng.choice((0, 1))]
            axes += rng.sample([a for a in range(rank) if a != axes[0]], k - 1)
            rng.shuffle(axes)
            changes = set(axes)
        if rng.random() < 0.3:
            nc = kind != "all" or mode != "cubic"
            pads = ([rng.randint(0, 1) if nc else 0 for _ in range(2)] + [rng.randint(0, 2) for _ in spatial],
                    [rng.randint(0, 1) if nc else 0 for _ in range(2)] + [rng.randint(0, 2) for _ in spatial])
    listed = list(range(rank)) if axes is None else axes
    # No empty output where the CPU moves the axes (refused by the parser: it returns uninitialised values).
    wrapped = not pillow and kind == "wrapped"
    usable = [s for s in SCALES if not wrapped or math.floor(min(shape) * s + 1e-6) >= 1]
    scales = [rng.choice(usable or [1.0]) if a in changes else 1.0 for a in listed]
    sizes = [rng.randint(1, 10) if a in changes else shape[a] + (sum(p[a] for p in pads) if pads else 0)
             for a in listed]
    kw = dict(coordinate_transformation_mode=coord, nearest_mode=nearest, antialias=rng.random() < 0.5,
              cube_coeff=rng.choice((-0.75, -0.5, -0.6)))
    if pads:
        kw["pads_begin"], kw["pads_end"] = pads
    return dict(version=version, mode=mode, shape=shape, axes=axes, calc=calc, scales=scales, sizes=sizes, kw=kw)


def build_interp(cfg):
    x = ops11.parameter(cfg["shape"], np.float32, name="x")
    axes = None if cfg["axes"] is None else np.array(cfg["axes"], np.int64)
    if cfg["version"] == 4:
        node = ops4.interpolate(x, np.array(cfg["sizes"], np.int64), np.array(cfg["scales"], np.float32),
                                cfg["mode"], cfg["calc"], axes=axes, **cfg["kw"])
    else:
        values = (np.array(cfg["scales"], np.float32) if cfg["calc"] == "scales" else
                  np.array(cfg["sizes"], np.int64))
        node = ops11.interpolate(x, values, cfg["mode"], cfg["calc"], axes=axes, **cfg["kw"])
    return x, node


def interp1_config(seed: int) -> dict:
    rng = random.Random(10007 * seed + 1)
    rank = rng.choice((3, 4, 5))
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 7) for _ in range(rank - 2)]
    mode = MODES4[seed % 4]
    axes = list(range(2, rank))
    if rank == 3 and mode != "cubic" and rng.random() < 0.5:
        axes = list(range(rank))
    elif rng.random() < 0.3:
        axes = [rng.choice((0, 1))] + rng.sample(range(2, rank), rng.randint(0, rank - 3))
    if rng.random() < 0.3:
        axes = axes[::-1]
    attrs = dict(axes=axes, mode=mode, align_corners=seed % 3 == 0, antialias=rng.random() < 0.5)
    if seed % 4 in (1, 2) and rng.random() < 0.5:
        attrs["pads_begin"] = [0, 0] + [rng.randint(0, 2) for _ in range(rank - 2)]
        attrs["pads_end"] = [0, 0] + [rng.randint(0, 2) for _ in range(rank - 2)]
    return dict(shape=shape, sizes=[rng.randint(1, 10) for _ in axes], attrs=attrs)


def check_interp(x_param, node, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    ir = parse_node(node)
    assert isinstance(ir, ResizeIR)
    expected = run_cpu([x_param], node, x)
    got = reference.run(ir, x, None, None, None)
    assert got.shape == expected.shape, f"oracle shape {got.shape}, OpenVINO {expected.shape}\nIR {ir}"
    assert_matches(ir, got, expected, tie_mask(ir, shape, expected.shape))


@pytest.mark.parametrize("seed", range(N_V4))
def test_interpolate4(seed):
    cfg = interp_config(seed, 4)
    x, node = build_interp(cfg)
    check_interp(x, node, cfg["shape"], seed)


@pytest.mark.parametrize("seed", range(N_V11))
def test_interpolate11(seed):
    cfg = interp_config(seed, 11)
    x, node = build_interp(cfg)
    check_interp(x, node, cfg["shape"], seed)


@pytest.mark.parametrize("seed", range(N_V1))
def test_interpolate1(seed):
    cfg = interp1_config(seed)
    x = ops11.parameter(cfg["shape"], np.float32, name="x")
    node = ops1.interpolate(x, np.array(cfg["sizes"], np.int64), cfg["attrs"])
    check_interp(x, node, cfg["shape"], seed)


def test_interpolate_configurations_cover_the_vocabulary():
    v4 = [interp_config(s, 4) for s in range(N_V4)]
    v11 = [interp_config(s, 11) for s in range(N_V11)]
    both = v4 + v11
    assert {(c["mode"], c["kw"]["coordinate_transformation_mode"]) for c in v4} >= \
        {(m, c) for m in MODES4 for c in COORDS}
    assert {c["mode"] for c in v11} == set(MODES4 + PILLOW)
    assert {c["kw"]["nearest_mode"] for c in both if c["mode"] == "nearest"} == set(NEAREST)
    assert {c["calc"] for c in v4} == {c["calc"] for c in v11} == {"scales", "sizes"}
    assert {len(c["shape"]) for c in both if c["mode"] not in PILLOW} == {3, 4, 5}
    assert {len(c["shape"]) for c in v11 if c["mode"] in PILLOW} == {2, 3, 4}
    assert any("pads_begin" in c["kw"] and any(c["kw"]["pads_begin"][:2] + c["kw"]["pads_end"][:2])
               for c in both)
    assert any(c["axes"] is not None and len(c["axes"]) < len(c["shape"]) - 2 for c in both)  # subsets
    assert any(c["axes"] is not None and {0, 1} & set(c["axes"]) for c in both)  # N/C resized
    assert any(c["kw"]["antialias"] and c["mode"] == "linear" and len(c["shape"]) == 5 for c in both)
    assert any(s not in (0.5, 1.0, 2.0, 3.0) for c in both if c["calc"] == "scales" for s in c["scales"])
    assert any(c["mode"] in PILLOW and c["axes"] == [1, 2] for c in v11)


def test_ties_are_few():
    """The tie exclusion must not hide the comparison: few outputs sit on a float32 tie. Rank-5 LINEAR with
    antialias is counted apart: up-sampling by 3 puts two thirds of its outputs where every weight of the
    narrowed triangle vanishes exactly (0 exactly, float32 keeps ~1e-7 and normalises it to a full value)."""
    total = masked = 0
    quirk = []
    for version, n in ((4, N_V4), (11, N_V11)):
        for seed in range(n):
            cfg = interp_config(seed, version)
            _, node = build_interp(cfg)
            ir = parse_node(node)
            out = bind_resize(ir, cfg["shape"]).out_shape
            m = tie_mask(ir, cfg["shape"], out)
            if ir.filter_stretch == "unclamped" and ir.sampler.antialias:
                quirk.append(float((~m).mean()) if m.size else 0.0)
                continue
            total, masked = total + m.size, masked + int((~m).sum())
    assert total > 10000 and masked / total < 0.03, (masked, total)
    assert len(quirk) >= 5 and sum(q < 0.5 for q in quirk) >= len(quirk) - 2, quirk


def test_rank6_linear_runs_the_core_reference():
    """Rank 6 falls back to the core reference: antialias stretch 'any_down', not the CPU node's 'unclamped'."""
    for seed, (sizes, scales) in enumerate((([9, 3], None), ([3, 2], None), ([9, 7], None), (None, [2.5, 0.6]))):
        x = ops11.parameter([1, 2, 1, 2, 4, 5], np.float32, name="x")
        calc = "sizes" if sizes else "scales"
        node = ops4.interpolate(x, np.array(sizes or [1, 1], np.int64), np.array(scales or [1, 1], np.float32),
                                "linear", calc, axes=np.array([4, 5]), antialias=True)
        ir = parse_node(node)
        assert ir.filter_stretch == "any_down" and ir.exclude_outside
        check_interp(x, node, [1, 2, 1, 2, 4, 5], seed)


# ----------------------------------------------------------------------------------------------------------
# GridSample-9


def grid_config(seed: int) -> dict:
    rng = random.Random(31 * seed + 5)
    combos = [(m, p, a) for m in ("bilinear", "bicubic", "nearest") for p in ("zeros", "border", "reflection")
              for a in (False, True)]
    mode, padding, align = combos[seed % len(combos)]
    return dict(x=[rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 6), rng.randint(1, 6)],
                out=[rng.randint(1, 5), rng.randint(1, 5)], spread=rng.choice((1.0, 1.3, 2.5)),
                attrs=dict(align_corners=align, mode=mode, padding_mode=padding))


def grid_inputs(cfg, seed):
    r = np.random.default_rng(seed)
    x = r.standard_normal(cfg["x"]).astype(np.float32)
    grid = r.uniform(-cfg["spread"], cfg["spread"], [cfg["x"][0]] + cfg["out"] + [2]).astype(np.float32)
    flat = grid.reshape(-1)
    k = flat.size // 4  # exact borders, centre and half-way points, inside and outside [-1, 1]
    flat[:k] = r.choice(np.array([-1, 1, 0, -0.5, 0.5, -1.5, 1.5], np.float32), k)
    return x, grid


def build_grid(cfg):
    x = ops11.parameter(cfg["x"], np.float32, name="x")
    g = ops11.parameter([cfg["x"][0]] + cfg["out"] + [2], np.float32, name="grid")
    return x, g, ops9.grid_sample(x, g, cfg["attrs"])


@pytest.mark.parametrize("seed", range(N_GRID))
def test_gridsample9(seed):
    cfg = grid_config(seed)
    px, pg, node = build_grid(cfg)
    x, grid = grid_inputs(cfg, seed)
    ir = parse_node(node)
    assert isinstance(ir, GridSampleIR) and ir.padding_on == "taps"
    assert_matches(ir, reference.run(ir, x, grid), run_cpu([px, pg], node, x, grid))


def test_gridsample_padding_is_on_taps_not_the_coordinate():
    """bicubic + border: clamping the coordinate first (ONNX reference) gives other numbers than the CPU."""
    worst = 0.0
    for seed in range(6):
        cfg = dict(x=[1, 2, 5, 6], out=[4, 4], spread=2.5,
                   attrs=dict(align_corners=bool(seed % 2), mode="bicubic", padding_mode="border"))
        px, pg, node = build_grid(cfg)
        x, grid = grid_inputs(cfg, seed)
        expected = run_cpu([px, pg], node, x, grid)
        ir = parse_node(node)
        assert_matches(ir, reference.run(ir, x, grid), expected)
        onnx_ref = dataclasses.replace(ir, padding_on="coordinate_and_taps")
        worst = max(worst, float(np.abs(reference.run(onnx_ref, x, grid) - expected).max()))
    assert worst > 0.05


# ----------------------------------------------------------------------------------------------------------
# DeformableConvolution-8 / -1


def deform_config(seed: int, version: int) -> dict:
    rng = random.Random(977 * seed + version)
    g = rng.choice((1, 1, 2, 3))
    dg = rng.choice((1, 2, 4) if g != 3 else (1, 3))
    C = math.lcm(g, dg) * rng.randint(1, 2)
    k = (rng.randint(1, 3), rng.randint(1, 3))
    st, dl = (rng.randint(1, 2), rng.randint(1, 2)), (rng.randint(1, 2), rng.randint(1, 2))
    pb, pe = (rng.randint(0, 2), rng.randint(0, 2)), (rng.randint(0, 2), rng.randint(0, 2))
    H = rng.randint(max(1, (k[0] - 1) * dl[0] + 1 - pb[0] - pe[0]), 6)
    W = rng.randint(max(1, (k[1] - 1) * dl[1] + 1 - pb[1] - pe[1]), 6)
    return dict(version=version, N=rng.randint(1, 2), C=C, H=H, W=W, OC=g * rng.randint(1, 2), k=k, st=st, dl=dl,
                pb=pb, pe=pe, g=g, dg=dg, bip=seed % 2 == 0, mask=version == 8 and (seed // 2) % 3 != 2,
                spread=rng.choice((0.5, 1.5, 4.0)), grid_offsets=seed % 5 == 4)


def deform_case(cfg, seed):
    r = np.random.default_rng(seed)
    k = cfg["k"]
    oh = (cfg["H"] + cfg["pb"][0] + cfg["pe"][0] - ((k[0] - 1) * cfg["dl"][0] + 1)) // cfg["st"][0] + 1
    ow = (cfg["W"] + cfg["pb"][1] + cfg["pe"][1] - ((k[1] - 1) * cfg["dl"][1] + 1)) // cfg["st"][1] + 1
    x = r.standard_normal((cfg["N"], cfg["C"], cfg["H"], cfg["W"])).astype(np.float32)
    w = r.standard_normal((cfg["OC"], cfg["C"] // cfg["g"]) + k).astype(np.float32)
    off = (r.standard_normal((cfg["N"], cfg["dg"] * k[0] * k[1] * 2, oh, ow)) * cfg["spread"]).astype(np.float32)
    if cfg["grid_offsets"]:
        off = np.round(off * 2) / 2  # integers and halves: samples exactly on and half-way past the border
    mask = r.random((cfg["N"], cfg["dg"] * k[0] * k[1], oh, ow)).astype(np.float32) if cfg["mask"] else None
    px = ops11.parameter(x.shape, np.float32, name="x")
    po = ops11.parameter(off.shape, np.float32, name="offsets")
    args = (list(cfg["st"]), list(cfg["pb"]), list(cfg["pe"]), list(cfg["dl"]))
    if cfg["version"] == 8:
        pm = ops11.parameter(mask.shape, np.float32, name="mask") if mask is not None else None
        node = ops8.deformable_convolution(px, po, w, *args, mask=pm, group=cfg["g"], deformable_group=cfg["dg"],
                                           bilinear_interpolation_pad=cfg["bip"])
    else:
        pm = None
        node = ops1.deformable_convolution(px, po, w, *args, group=cfg["g"], deformable_group=cfg["dg"])
    params, feeds = ([px, po, pm], [x, off, mask]) if pm is not None else ([px, po], [x, off])
    return node, params, feeds, (x, w, off, None, mask)


@pytest.mark.parametrize("seed", range(N_DEFORM8))
def test_deformconv8(seed):
    cfg = deform_config(seed, 8)
    node, params, feeds, onnx_inputs = deform_case(cfg, seed)
    ir = parse_node(node)
    assert isinstance(ir, DeformConvIR) and ir.has_mask == cfg["mask"]
    assert ir.border == ("zero_taps" if cfg["bip"] else "clamp_in_range")
    assert_matches(ir, reference.run(ir, *onnx_inputs), run_cpu(params, node, *feeds))


@pytest.mark.parametrize("seed", range(N_DEFORM1))
def test_deformconv1(seed):
    cfg = deform_config(seed, 1)
    node, params, feeds, onnx_inputs = deform_case(cfg, seed)
    ir = parse_node(node)
    assert ir.border == "clamp_in_range" and not ir.has_mask
    assert_matches(ir, reference.run(ir, *onnx_inputs), run_cpu(params, node, *feeds))


def test_deformconv_configurations_cover_the_vocabulary():
    cfgs = [deform_config(s, 8) for s in range(N_DEFORM8)]
    assert {c["bip"] for c in cfgs} == {True, False} and {c["mask"] for c in cfgs} == {True, False}
    assert {c["g"] for c in cfgs} >= {1, 2, 3} and {c["dg"] for c in cfgs} >= {1, 2, 3, 4}
    assert any(c["st"] != (1, 1) for c in cfgs) and any(c["dl"] != (1, 1) for c in cfgs)
    assert any(c["pb"] != c["pe"] for c in cfgs) and any(c["grid_offsets"] for c in cfgs)
    assert any(c["spread"] == 4.0 for c in cfgs)  # offsets far outside the input


def test_bilinear_interpolation_pad_false_is_its_own_border_rule():
    """bip=false differs from the ONNX zero-taps rule, and bip=true does not follow the clamp rule."""
    for bip in (True, False):
        cfg = dict(deform_config(3, 8), bip=bip, mask=True, spread=1.5, grid_offsets=False)
        node, params, feeds, onnx_inputs = deform_case(cfg, 3)
        expected = run_cpu(params, node, *feeds)
        ir = parse_node(node)
        assert_matches(ir, reference.run(ir, *onnx_inputs), expected)
        other = dataclasses.replace(ir, border="clamp_in_range" if bip else "zero_taps")
        assert np.abs(reference.run(other, *onnx_inputs) - expected).max() > 0.05


# ----------------------------------------------------------------------------------------------------------
# Each Interpolate quirk, measured against the reading it replaces


def _interp4(shape, mode, calc, scales=None, sizes=None, axes=None, **kw):
    x = ops11.parameter(shape, np.float32, name="x")
    n = len(axes) if axes is not None else len(shape)
    node = ops4.interpolate(x, np.array(sizes or [1] * n, np.int64),
                            np.array(scales or [1.0] * n, np.float32), mode, calc,
                            axes=None if axes is None else np.array(axes, np.int64), **kw)
    return x, node


def _run(x_param, node, shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x, run_cpu([x_param], node, x), parse_node(node)


def test_scales_length_adds_1e_6():
    x, node = _interp4([1, 100], "nearest", "scales", scales=[1.0, 0.29999998], axes=None)
    _, y, ir = _run(x, node, [1, 100])
    assert y.shape == (1, 30) == bind_resize(ir, (1, 100)).out_shape
    assert bind_resize(dataclasses.replace(ir, size_rule="floor"), (1, 100)).out_shape == (1, 29)


def test_equal_length_is_a_copy_whatever_the_scale():
    x, node = _interp4([1, 1, 10], "linear_onnx", "scales", scales=[1.05], axes=[2])
    xv, y, ir = _run(x, node, [1, 1, 10])
    np.testing.assert_array_equal(y, xv)
    assert_matches(ir, reference.run(ir, xv), y)
    shifted = reference.run(dataclasses.replace(ir, equal_length_identity=False), xv)
    assert np.abs(shifted - y).max() > 0.05


@pytest.mark.parametrize("mode", ["linear_onnx", "cubic", "linear"])
def test_antialias_is_ignored_below_rank_5(mode):
    """LINEAR_ONNX and CUBIC have no antialias; rank-4 LINEAR is run as LINEAR_ONNX by the CPU node."""
    outs = []
    for aa in (False, True):
        x, node = _interp4([1, 2, 9, 8], mode, "sizes", sizes=[3, 4], axes=[2, 3], antialias=aa)
        xv, y, ir = _run(x, node, [1, 2, 9, 8])
        assert not ir.sampler.antialias and not ir.exclude_outside
        assert_matches(ir, reference.run(ir, xv), y)
        outs.append(y)
    np.testing.assert_array_equal(outs[0], outs[1])
    documented = dataclasses.replace(ir, sampler=dataclasses.replace(ir.sampler, antialias=True))
    assert np.abs(reference.run(documented, xv) - outs[1]).max() > 0.05


def test_rank5_linear_antialias_narrows_up_sampled_axes():
    """The CPU's rank-5 LINEAR stretches every axis by its own scale under antialias, even when all axes
    up-sample (ONNX: min(scale, 1); the core reference: only when some axis down-samples)."""
    x, node = _interp4([1, 1, 2, 4, 5], "linear", "sizes", sizes=[9, 7], axes=[3, 4], antialias=True)
    xv, y, ir = _run(x, node, [1, 1, 2, 4, 5])
    assert ir.filter_stretch == "unclamped" and ir.exclude_outside
    mask = tie_mask(ir, xv.shape, y.shape)
    assert_matches(ir, reference.run(ir, xv), y, mask)
    for other in ("clamped", "any_down"):
        alt = reference.run(dataclasses.replace(ir, filter_stretch=other), xv)
        assert np.abs(alt - y)[mask].max() > 0.05


def test_bicubic_pillow_coefficient_is_fixed_on_cpu():
    x = ops11.parameter([1, 1, 6, 7], np.float32, name="x")
    node = ops11.interpolate(x, np.array([9, 4], np.int64), "bicubic_pillow", "sizes", axes=np.array([2, 3]),
                             cube_coeff=-0.75)
    xv, y, ir = _run(x, node, [1, 1, 6, 7])
    assert ir.sampler.cubic_a == Fraction(-1, 2) and ir.exclude_outside and ir.sampler.antialias
    assert_matches(ir, reference.run(ir, xv), y)
    as_written = dataclasses.replace(ir, sampler=dataclasses.replace(ir.sampler, cubic_a=Fraction(-3, 4)))
    assert np.abs(reference.run(as_written, xv) - y).max() > 0.01


def test_pillow_uses_the_length_ratio_in_scales_mode():
    x = ops11.parameter([1, 1, 7, 6], np.float32, name="x")
    node = ops11.interpolate(x, np.array([0.6, 1.3], np.float32), "bilinear_pillow", "scales",
                             axes=np.array([2, 3]), coordinate_transformation_mode="asymmetric")
    xv, y, ir = _run(x, node, [1, 1, 7, 6])
    assert ir.scale_source == "ratio" and ir.coord == "half_pixel"
    assert_matches(ir, reference.run(ir, xv), y)
    assert np.abs(reference.run(dataclasses.replace(ir, scale_source="user"), xv) - y).max() > 0.01


def test_align_corners_uses_the_integer_length():
    x, node = _interp4([1, 1, 4], "linear_onnx", "scales", scales=[0.6], axes=[2],
                       coordinate_transformation_mode="align_corners")
    xv, y, ir = _run(x, node, [1, 1, 4])
    assert ir.formula_length == "integer"
    assert_matches(ir, reference.run(ir, xv), y)
    assert np.abs(reference.run(dataclasses.replace(ir, formula_length="fractional"), xv) - y).max() > 0.1


def test_pytorch_half_pixel_length_1_reads_coordinate_0():
    x, node = _interp4([1, 1, 5], "cubic", "sizes", sizes=[1], axes=[2],
                       coordinate_transformation_mode="pytorch_half_pixel")
    xv, y, ir = _run(x, node, [1, 1, 5])
    assert ir.length1 == "zero"
    np.testing.assert_allclose(y[..., 0], xv[..., 0], rtol=RTOL, atol=ATOL)
    assert np.abs(reference.run(dataclasses.replace(ir, length1="minus_half"), xv) - y).max() > 0.01


def test_simple_nearest_is_per_axis():
    x, node = _interp4([1, 1, 7, 5], "nearest", "scales", scales=[0.6, 1.5], axes=[2, 3], nearest_mode="simple",
                       coordinate_transformation_mode="asymmetric")
    xv = np.arange(35, dtype=np.float32).reshape(1, 1, 7, 5)
    y = run_cpu([x], node, xv)
    ir = parse_node(node)
    assert_matches(ir, reference.run(ir, xv), y)  # ceil on H (down), floor on W (up)
    for rule in ("floor", "ceil"):
        fixed = dataclasses.replace(ir, sampler=Sampler("nearest", nearest=rule))
        assert not np.array_equal(reference.run(fixed, xv), y)


def test_nearest_coordinates_are_float32():
    """openvinotoolkit/openvino#36023: 20 -> 6 sizes, half_pixel, round_prefer_ceil. The exact source of output
    4 is 14.5 (a tie); float32 gives 14.4999995 and the CPU reads 14. diff() reports indices 1 and 4."""
    x, node = _interp4([1, 20], "nearest", "sizes", sizes=[6], axes=[1], nearest_mode="round_prefer_ceil")
    xv = np.arange(20, dtype=np.float32).reshape(1, 20)
    y = run_cpu([x], node, xv)
    ir = parse_node(node)
    assert y[0, 4] == 14 and reference.run(ir, xv)[0, 4] == 15
    assert diff(ir, dataclasses.replace(ir, arith="exact"), (1, 20)).ties == {"axis1": [1, 4]}
    mask = tie_mask(ir, (1, 20), y.shape)
    assert_matches(ir, reference.run(ir, xv), y, mask)


def test_near_tie_in_float32_is_reported():
    """scale 0.33333334f, tf_half_pixel_for_nn: 0.5/s is 1.49999996 exactly but 1.5 in float32, so
    round_prefer_ceil reads 2 where the exact pick is 1; fp32 reports it, fp64 (whose reach is 1e-15) does not."""
    x, node = _interp4([1, 1, 4], "nearest", "scales", scales=[1 / 3], axes=[2], nearest_mode="round_prefer_ceil",
                       coordinate_transformation_mode="tf_half_pixel_for_nn")
    xv = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    y = run_cpu([x], node, xv)
    ir = parse_node(node)
    assert y.tolist() == [[[2.0]]] and reference.run(ir, xv).tolist() == [[[1.0]]]
    assert diff(ir, dataclasses.replace(ir, arith="exact"), (1, 1, 4)).ties == {"W": [0]}
    fp64 = dataclasses.replace(ir, arith="fp64")
    assert diff(fp64, dataclasses.replace(ir, arith="exact"), (1, 1, 4)).ties == {}


def test_pads_are_zeros_added_first_and_follow_the_cpu_transposition():
    # Spatial pads: zeros first, then resize the padded tensor.
    x, node = _interp4([1, 2, 4, 5], "linear_onnx", "sizes", sizes=[7, 3], axes=[2, 3],
                       pads_begin=[0, 0, 1, 2], pads_end=[0, 1, 0, 1])
    xv, y, ir = _run(x, node, [1, 2, 4, 5])
    assert ir.pads == (0, 0, 1, 2, 0, 1, 0, 1) and y.shape == (1, 3, 7, 3)
    assert_matches(ir, reference.run(ir, xv), y)
    # Axes [0] of rank 3: the CPU wraps the op in Transposes but keeps the pads, so the W pads land on N.
    x, node = _interp4([2, 3, 7], "nearest", "scales", scales=[1.0], axes=[0], pads_begin=[0, 0, 2],
                       pads_end=[0, 0, 1])
    assert tuple(node.get_output_partial_shape(0).to_shape()) == (2, 3, 10)  # the op's own shape inference
    xv, y, ir = _run(x, node, [2, 3, 7])
    assert y.shape == (5, 3, 7) and ir.pads == (2, 0, 0, 1, 0, 0)
    assert_matches(ir, reference.run(ir, xv), y)


def test_runtime_sizes_and_dynamic_shape():
    x = ops11.parameter([1, 2, -1, -1], np.float32, name="x")
    sizes = ops11.parameter([2], np.int64, name="sizes")
    node = ops11.interpolate(x, sizes, "cubic", "sizes", axes=np.array([2, 3]))
    ir = parse_node(node)
    assert ir.sizes == RuntimeValue("sizes") and ir.input_shape == (1, 2, None, None)
    for seed, (shape, sz) in enumerate((((1, 2, 5, 4), [7, 3]), ((1, 2, 3, 6), [3, 9]))):
        xv = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        s = np.array(sz, np.int64)
        assert_matches(ir, reference.run(ir, xv, None, None, s), run_cpu([x, sizes], node, xv, s))


# ----------------------------------------------------------------------------------------------------------
# parse_model, saved IR, errors


def _small_model():
    x = ops11.parameter([1, 2, 5, 6], np.float32, name="x")
    g = ops11.parameter([1, 3, 3, 2], np.float32, name="grid")
    off = ops11.parameter([1, 18, 3, 3], np.float32, name="offsets")
    up = ops11.interpolate(x, np.array([1.3, 0.7], np.float32), "linear_onnx", "scales", axes=np.array([2, 3]),
                           name="resize")
    act = ops11.relu(up, name="relu")
    gs = ops9.grid_sample(act, g, dict(align_corners=False, mode="bicubic", padding_mode="border"))
    gs.set_friendly_name("sample")
    w = np.random.default_rng(0).standard_normal((4, 2, 3, 3)).astype(np.float32)
    dc = ops8.deformable_convolution(gs, off, w, [1, 1], [1, 1], [1, 1], [1, 1], bilinear_interpolation_pad=True,
                                     name="deform")
    return ov.Model([dc.output(0)], [x, g, off], "small")


def test_parse_model_of_saved_xml(tmp_path):
    model = _small_model()
    path = tmp_path / "small.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    parsed = parse_model(path)
    assert [name for name, _ in parsed] == ["resize", "sample", "deform"]
    assert [type(ir) for _, ir in parsed] == [ResizeIR, GridSampleIR, DeformConvIR]
    assert parsed == parse_model(model) == parse_model(str(path))
    resize = parsed[0][1]
    assert resize.scales == (Fraction(float(np.float32(1.3))), Fraction(float(np.float32(0.7))))
    assert resize.origin == "Interpolate-11"
    assert parsed[2][1].kernel_shape == (3, 3) and parsed[2][1].border == "zero_taps"


def test_saved_xml_with_default_fp16_compression_changes_the_scales(tmp_path):
    """save_model's default compress_to_fp16 stores the scales as f16 -> Convert; the CPU folds that, so the
    saved model computes with 1.2998047 instead of 1.3 -- and its IR says so."""
    model = _small_model()
    path = tmp_path / "small16.xml"
    ov.save_model(model, str(path))
    (_, ir), = [(n, i) for n, i in parse_model(path) if n == "resize"]
    assert ir.scales == (Fraction(1331, 1024), Fraction(717, 1024))  # float16(1.3), float16(0.7)
    loaded = _CORE.read_model(str(path))
    nodes = {op.get_friendly_name(): op for op in loaded.get_ordered_ops()}
    xv = np.random.default_rng(1).standard_normal((1, 2, 5, 6)).astype(np.float32)
    y = run_cpu([nodes["x"]], nodes["resize"], xv)
    assert_matches(ir, reference.run(ir, xv), y)
    (_, ir32), = [(n, i) for n, i in parse_model(model) if n == "resize"]
    assert np.abs(reference.run(ir32, xv) - y).max() > 1e-4


def test_parse_model_errors(tmp_path):
    with pytest.raises(BridgeError, match="no such file"):
        parse_model(tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<net>not a model")
    with pytest.raises(BridgeError, match="could not be read"):
        parse_model(bad)
    with pytest.raises(BridgeError, match="openvino.Model"):
        parse_model(42)


def _error(node):
    with pytest.raises(BridgeError) as info:
        parse_node(node)
    e = info.value
    assert e.node == node.get_friendly_name() and e.node in str(e) and e.field in str(e)
    return e


def test_unsupported_attribute_values_name_node_and_field():
    x = ops11.parameter([1, 2, 5, 6], np.float32, name="x")
    area = ops1.interpolate(x, np.array([7, 8], np.int64), dict(axes=[2, 3], mode="area"), name="area_resize")
    assert _error(area).field == "mode"

    x3 = ops11.parameter([2, 3, 5], np.float32, name="x3")
    pillow = ops11.interpolate(x3, np.array([3, 4], np.int64), "bilinear_pillow", "sizes", axes=np.array([0, 1]),
                               name="pillow_nc")
    assert _error(pillow).field == "axes"

    cubic = ops4.interpolate(x, np.array([1, 3, 5, 6], np.int64), np.array([1, 1, 1, 1], np.float32), "cubic",
                             "sizes", name="cubic_channels")
    e = _error(cubic)
    assert e.field == "axes" and "axis 1" in e.message

    axes = ops11.parameter([2], np.int64, name="axes_input")
    runtime_axes = ops11.interpolate(x, np.array([7, 8], np.int64), "nearest", "sizes", axes=axes, name="rt_axes")
    e = _error(runtime_axes)
    assert e.field == "axes" and "axes_input" in e.message

    xd = ops11.parameter([1, 4, -1, -1], np.float32, name="xd")
    off = ops11.parameter([1, 18, -1, -1], np.float32, name="off")
    w = np.zeros((4, 4, 3, 3), np.float32)
    same = ops8.deformable_convolution(xd, off, w, [1, 1], [0, 0], [0, 0], [1, 1], auto_pad="same_upper",
                                       name="same_pad")
    assert _error(same).field == "auto_pad"

    x1 = ops11.parameter([1, 1, 1], np.float32, name="x1")
    empty = ops4.interpolate(x1, np.array([1], np.int64), np.array([0.45], np.float32), "nearest", "scales",
                             axes=np.array([0], np.int64), name="empty_wrapped")
    assert _error(empty).field == "scales"

    relu = ops11.relu(x, name="not_resampling")
    assert _error(relu).field == "type"


def test_module_imports_without_openvino():
    code = ("import sys; sys.modules['openvino'] = None\n"
            "import resample_bridge.translate.openvino as t\n"
            "assert t.RESAMPLING_OPS\n")
    subprocess.run([sys.executable, "-c", code], check=True)
