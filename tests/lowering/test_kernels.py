"""The shared C++ kernels (lowering/kernels, through lowering/compiled) against the numpy oracle.

Seeded random IR values, more than 300 per op kind, float32 and float16. Resize runs twice: applying the
oracle's own tap tables (semantics.taps) and tables built by the C++ port of the tap rules; the tables
themselves are compared too, which is what proves the port. Skipped, with the reason, where no C++ toolchain
can build the library.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction as F

import numpy as np
import pytest

from resample_bridge.lowering import compiled
from resample_bridge.semantics import reference, schema
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.coords import bind_resize
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import (ARITH, GRID_PADDINGS, NEAREST_MODES, PADDING_ON, SAMPLER_KINDS, DeformConvIR,
                                          GridSampleIR, ResizeIR, Sampler)
from resample_bridge.semantics.reference import deformconv_out_shape
from resample_bridge.semantics.taps import axis_taps
from resample_bridge.semantics.vocab import DEFORM_BORDERS
from tests.helpers.kernel_cases import deformconv_case, f32, gridsample_case, int_input, kind_sampler, resize_case

N_CASES = 320
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3)}
DTYPES = [np.float32, np.float16]


def test_missing_toolchain_is_a_clear_bridge_error(tmp_path, monkeypatch):
    """Runs everywhere: without CMake (on PATH or as the cmake wheel) a fresh cache gets a BridgeError naming
    what to install."""
    monkeypatch.setenv("RESAMPLE_BRIDGE_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "cmake", None)  # import cmake -> ImportError: the wheel is not installed
    with pytest.raises(BridgeError, match=r"CMake 3.18 or newer is needed: pip install 'cmake>=3.18'"):
        compiled.build_library(compiled.KERNELS_DIR, "rb_kernels", key="probe")


@pytest.mark.compiled
def test_a_killed_builders_leftovers_are_reaped(tmp_path, monkeypatch):
    """A builder killed mid-build leaves build-* and a half-copied library behind; the next build (holding the
    lock, so the only builder) removes them (issue 10 item 5)."""
    if compiled.missing_tools() is not None:
        pytest.skip(compiled.missing_tools())
    monkeypatch.setenv("RESAMPLE_BRIDGE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(p CXX)\n"
                                        "add_library(probe SHARED p.cpp)\n")
    (src / "p.cpp").write_text("int probe() { return 1; }\n")
    out = tmp_path / "cache" / "probe-k"
    (out / "build-dead1234" / "CMakeFiles").mkdir(parents=True)
    (out / ".libprobe.so.99999").write_bytes(b"half")
    lib = compiled.build_library(src, "probe", key="k")
    assert lib.exists() and lib.parent == out
    assert sorted(p.name for p in out.iterdir()) == [".lock", "build.log", "libprobe.so"]


@functools.cache
def _unavailable() -> str | None:
    """Why the kernels cannot be built here (no CMake / compiler), or None. A build that fails is not a reason
    to skip: the tests then fail with the compiler's message."""
    if os.environ.get("RESAMPLE_BRIDGE_KERNELS_LIB") or compiled.missing_tools() is None:
        return None
    return compiled.available()


@pytest.fixture
def kernel_library():
    """Skips, with the reason, where the kernels cannot be built: asked on first use, not at collection (the
    first build takes minutes)."""
    why = _unavailable()
    if why is not None:
        pytest.skip(f"kernel library unavailable: {why}")


def needs_library(test):
    """A test that runs the compiled kernels."""
    return pytest.mark.compiled(pytest.mark.usefixtures("kernel_library")(test))


def _round_trips(ir):
    """The attribute schema spells every IR field: attributes -> IR gives the value back."""
    import dataclasses

    back = schema.from_attributes(schema.OP_TYPES[ir.kind], compiled.openvino_attributes(ir))
    assert back == dataclasses.replace(ir, input_shape=None, dtype=None, **(
        {"grid_shape": None} if ir.kind == "gridsample" else {"weight_shape": None} if ir.kind == "deformconv"
        else {})), f"{ir}\n{back}"


def _close(got, want, dtype, what):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), err_msg=what, **TOL[dtype])


@needs_library
def test_vocabulary_is_the_irs():
    """The C ABI passes IR fields as indices into the IR's own tuples: the compiled names must be those."""
    assert compiled.vocabulary(0) == SAMPLER_KINDS
    assert compiled.vocabulary(1) == NEAREST_MODES
    assert compiled.vocabulary(2) == GRID_PADDINGS
    assert compiled.vocabulary(3) == PADDING_ON
    assert compiled.vocabulary(4) == ARITH
    assert compiled.vocabulary(5) == DEFORM_BORDERS



@needs_library
def test_attribute_schema_is_the_compiled_one():
    """semantics/schema.py FIELDS and rb/attrs.hpp visit() are one schema: op names, attribute names, types and
    order, read back through the C ABI (the TensorRT plugin lists its fields from the same entry points)."""
    for kind in schema.KINDS:
        assert compiled.op_type(kind) == schema.OP_TYPES[kind]
        assert compiled.attribute_fields(kind) == tuple((f.name, f.type) for f in schema.FIELDS[kind]), kind


def _text(value) -> str:
    """A Python schema default in the C ABI's text form (lists space-separated, bools 0/1)."""
    return " ".join(str(int(v)) for v in value) if isinstance(value, (list, tuple)) else str(value)


@needs_library
def test_attribute_defaults_are_the_compiled_ones():
    """An absent attribute reads the same value in Python (schema.py Field.default) and C++ (attrs.hpp's
    initialisers; the ONNX-frontend mapping and the C ABI's text form keep them): REQUIRED ones aside."""
    for kind in schema.KINDS:
        names = (name for name, _ in compiled.attribute_fields(kind))
        compiled_defaults = dict(zip(names, compiled.attribute_defaults(kind)))
        python_defaults = {f.name: _text(f.default) for f in schema.FIELDS[kind]
                           if f.default is not schema.REQUIRED}
        assert {n: compiled_defaults[n] for n in python_defaults} == python_defaults, kind


@needs_library
def test_attribute_text_numbers_are_read_exactly_or_refused():
    """The C ABI's text form: numbers through from_chars (no iostream, no locale); a malformed one is a
    one-line error naming the attribute, not a silently shortened list."""
    lib = compiled.library()
    shape = np.array([1, 1, 4, 6], dtype=np.int64)
    out, n = np.zeros(4, dtype=np.int64), ctypes.c_int32(0)
    axes = (compiled.abi.Axis * 5)()
    runtime = compiled.abi.runtime_struct({})

    def bind(text: str):
        compiled.abi.call(lib.rb_resize_bind, text.encode(), 4, compiled.abi.ptr(shape), ctypes.byref(runtime),
                          compiled.abi.ptr(out), ctypes.byref(n), axes)
        return tuple(out)

    base = "rank=4\naxes=2 3\nsizes=\nscales=3/2  2\nextrapolation_value=0.25\n"
    assert bind(base) == (1, 1, 6, 12)
    for field, bad in (("axes", "axes=2 x3"), ("axes", "axes=2.5 3"), ("rank", "rank=4x"),
                       ("extrapolation_value", "extrapolation_value=1,5")):
        with pytest.raises(BridgeError, match=f"attribute {field} = "):
            bind(base + bad + "\n")


@needs_library
def test_libraries_do_not_use_iostreams():
    """The CPU library and the CUDA launchers import no iostream or locale symbol: built against a static
    libstdc++ (a GPU host's toolchain), istream's locale facets crashed beside the process's own libstdc++."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    libs = [compiled.library_path()]
    if compiled.nvcc() is not None and not os.environ.get("RESAMPLE_BRIDGE_SKIP_CUDA_BUILD"):
        libs.append(compiled.cuda_library()._name)
    for lib in libs:
        symbols = subprocess.run([nm, "-DC", str(lib)], capture_output=True, text=True, check=True).stdout
        assert not re.findall(r".*(?:basic_[io]stream|std::istream|std::ostream|std::locale).*", symbols), lib

# ----------------------------------------------------------------------------------------------------------
# Resize

@needs_library
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(N_CASES))
def test_resize_matches_oracle(seed, dtype):
    ir, inputs, shape = resize_case(seed)
    x = (np.random.default_rng(1000 + seed).standard_normal(shape) * 3).astype(dtype)
    want = reference.run(ir, x, *inputs)
    what = f"seed {seed}: {ir}"
    _close(compiled.resize(ir, x, *inputs, tables="python"), want, dtype, what + " (oracle's tables)")
    _close(compiled.resize(ir, x, *inputs, tables="native"), want, dtype, what + " (C++ tables)")
    _close(compiled.resize(ir, x, *inputs, tables="ir"), want, dtype, what + " (C++ binding and tables)")
    if dtype is np.float32:
        _round_trips(ir)
        runtime = reference.runtime_values(ir, (x, *inputs))
        bound = bind_resize(ir, shape, runtime)
        # The binding port: same output shape, same axes with the same exact maps.
        out_shape, axes = compiled.bind_native(ir, shape, runtime)
        assert out_shape == bound.out_shape, what
        assert [a["axis"] for a in axes] == [ax.axis for ax in bound.axes], what
        for got, ax in zip(axes, bound.axes):
            assert (got["in_len"], got["out_len"], got["a"], got["b"], got["filter_scale"], got["stretch_clamp"],
                    got["has_valid"]) == (ax.in_len, ax.out_len, ax.a, ax.b, ax.filter_scale, ax.stretch_clamp,
                                          ax.valid is not None), f"{what}: axis {ax.axis}"
            if ir.sampler.kind == "nearest":
                assert got["nearest"] == ax.nearest, f"{what}: axis {ax.axis}"
        # The tap port: same windows, same clamped indices, same extrapolated rows, same weights.
        for ax in bound.axes:
            py = axis_taps(ax, bound.sampler, bound.exclude_outside)
            cc = compiled.tap_table(ax, bound.sampler, bound.exclude_outside)
            assert np.array_equal(cc.index, py.index), f"{what}: axis {ax.axis} indices"
            np.testing.assert_allclose(cc.weight, py.weight, rtol=0, atol=1e-12, err_msg=f"{what}: axis {ax.axis}")
            assert (cc.extrapolate is None) == (py.extrapolate is None)
            if py.extrapolate is not None:
                assert np.array_equal(cc.extrapolate, py.extrapolate), f"{what}: axis {ax.axis} extrapolation"


@needs_library
def test_tap_ties_are_decided_exactly():
    """Source coordinates exactly on a rounding boundary (x.5) or a window edge (integers): the C++ decides them
    with exact rationals, as the oracle's Fractions do; a float evaluation of a*o+b would not always."""
    from resample_bridge.semantics.coords import BoundAxis

    a, b = f32(1 / 3), F(0)  # 0.3333333432674408 exactly: 3*a is just above 1
    for rule in NEAREST_MODES[:5]:
        ax = BoundAxis(0, 40, 60, a * 3 / 2, F(-1, 2) + F(1, 4), F(1), rule, None)
        s = Sampler("nearest", nearest=rule)
        assert np.array_equal(compiled.tap_table(ax, s, False).index, axis_taps(ax, s, False).index), rule
    ax = BoundAxis(0, 9, 30, a, b, F(3), None, None)
    for s in (Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4)), Sampler("linear", antialias=True)):
        py, cc = axis_taps(ax, s, True), compiled.tap_table(ax, s, True)
        assert np.array_equal(cc.index, py.index) and np.allclose(cc.weight, py.weight, rtol=0, atol=1e-15)


@needs_library
@pytest.mark.parametrize("order", [(2, 3), (3, 2)], ids=["HW", "WH"])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic", "linear_aa", "crop"])
def test_fused_last_two_axes(order, mode):
    """The fused 2-D pass over the last two axes (both table orders, extrapolated rows and columns, the
    copy-only nearest gather) computes the separable passes' float64 values: float64 within 1e-12 of the
    oracle, nearest bit for bit, and float16 rounded once from them (the oracle's astype)."""
    sampler = {"nearest": Sampler("nearest", nearest="round_prefer_floor"), "linear": Sampler("linear"),
               "cubic": Sampler("cubic", cubic_a=F(-3, 4)), "linear_aa": Sampler("linear", antialias=True),
               "crop": Sampler("linear")}[mode]
    kw = dict(scales=(F(7, 3), F(3, 5)), sizes=None, roi=None, coord="half_pixel")
    if mode == "crop":
        kw.update(coord="tf_crop_and_resize", roi=(F(-1, 4), F(1, 8), F(5, 4), F(3, 4)), extrapolation_value=0.5)
    ir = ResizeIR(rank=4, axes=order, sampler=sampler, **kw)
    x = np.random.default_rng(7).standard_normal((2, 3, 9, 11)) * 3
    want = reference.run(ir, x)
    got = compiled.resize(ir, x, tables="ir")
    if mode == "nearest":
        assert np.array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    h = x.astype(np.float16)
    assert np.array_equal(compiled.resize(ir, h, tables="ir"), reference.run(ir, h))


@needs_library
def test_resize_threads_do_not_change_the_result():
    ir, inputs, shape = resize_case(3)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert np.array_equal(compiled.resize(ir, x, *inputs, threads=1), compiled.resize(ir, x, *inputs, threads=0))


# ----------------------------------------------------------------------------------------------------------
# GridSample


@needs_library
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(N_CASES))
def test_gridsample_matches_oracle(seed, dtype):
    ir, x, grid = gridsample_case(seed, dtype)
    want = reference.run(ir, x, grid)
    _close(compiled.gridsample(ir, x, grid), want, dtype, f"seed {seed}: {ir} x{x.shape} grid{grid.shape}")
    _round_trips(ir)


@needs_library
def test_gridsample_padding_on_is_honoured():
    """cubic + border: the ONNX reference (coordinate_and_taps) and PyTorch (taps) differ; the kernel follows
    the field, so the comparison above is able to fail on it."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.6, 1.6, (1, 4, 4, 2)).astype(np.float32)
    a, b = (GridSampleIR(2, Sampler("cubic", cubic_a=F(-3, 4)), "border", False, padding_on=p) for p in PADDING_ON)
    ya, yb = compiled.gridsample(a, x, grid), compiled.gridsample(b, x, grid)
    assert np.abs(ya - yb).max() > 1e-2
    np.testing.assert_allclose(ya, reference.run(a, x, grid), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yb, reference.run(b, x, grid), rtol=1e-5, atol=1e-6)


# Non-finite and huge grid values over more than two 64-point blocks (the float32 kernel computes a block's taps
# at once, block_taps.hpp): NaN and inf propagate as the oracle's, coordinates beyond int64 saturate.
EXTREME = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 1.0, -1.0, 0.0, -0.0, 0.5, -0.5, 1 / 3, -1 / 3,
                    1.2, -1.2, 7.0, -7.0], np.float32)


@needs_library
@pytest.mark.parametrize("D", [1, 2, 3])
@pytest.mark.parametrize("kind", SAMPLER_KINDS)
def test_gridsample_extreme_grid_values(D, kind):
    n = 0
    for padding, padding_on, arith, align in itertools.product(GRID_PADDINGS, PADDING_ON, ("fp32", "fp64",
                                                                                           "fp32_fused"), (0, 1)):
        rng = np.random.default_rng(n)
        n += 1
        ir = GridSampleIR(D, kind_sampler(kind), padding, bool(align), padding_on=padding_on, arith=arith)
        x = rng.standard_normal((2, 3) + (5, 6, 4)[:D]).astype(np.float32)
        grid = rng.uniform(-1.3, 1.3, (2,) + (11, 13, 3)[:D] + (D,)).astype(np.float32)
        pick = rng.random(grid.shape) < 0.3
        grid[pick] = rng.choice(EXTREME, size=int(pick.sum()))
        with np.errstate(invalid="ignore"):
            want = reference.run(ir, x, grid)
        np.testing.assert_allclose(compiled.gridsample(ir, x, grid), want, rtol=1e-4, atol=1e-5, err_msg=str(ir))


def test_oracle_saturates_coordinates_beyond_int64():
    """A coordinate of +1e30 reads the last element under border padding (numpy's own cast would give INT64_MIN
    on x86, the first element); a NaN grid value samples NaN under cubic as under linear."""
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    grid = np.array([1e30, -1e30, np.nan], np.float32).reshape(1, 3, 1)
    for kind in ("linear", "cubic"):
        ir = GridSampleIR(1, kind_sampler(kind), "border", True, padding_on="taps")
        with np.errstate(invalid="ignore"):
            y = reference.run(ir, x, grid).ravel()
        assert y[0] == 5 and y[1] == 1 and np.isnan(y[2]), (kind, y)


# ----------------------------------------------------------------------------------------------------------
# DeformConv


@needs_library
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(N_CASES))
def test_deformconv_matches_oracle(seed, dtype):
    ir, inputs = deformconv_case(seed, dtype)
    want = reference.run(ir, *inputs)
    _close(compiled.deformconv(ir, *inputs), want, dtype, f"seed {seed}: {ir}")
    _round_trips(ir)


@needs_library
@pytest.mark.parametrize("D", [1, 2, 3])
@pytest.mark.parametrize("kind", SAMPLER_KINDS)
def test_deformconv_extreme_offsets_and_masks(D, kind):
    """The float32 path over more than one tile: NaN, inf and huge offsets; masks of inf and NaN (the mask then
    multiplies the sampled value, not each tap: the oracle's +-inf, not NaN from a tap weighing 0)."""
    for n, (border, has_m) in enumerate(itertools.product(DEFORM_BORDERS, (False, True))):
        rng = np.random.default_rng(n)
        kernel, spatial = (3, 2, 2)[:D], (11, 9, 5)[:D]
        ir = DeformConvIR(D, kernel, (1,) * D, (1,) * (2 * D), (1,) * D, 1, 1, True, has_m, sampler=kind_sampler(kind),
                          border=border)
        out, K = deformconv_out_shape(ir, spatial, kernel), math.prod(kernel)
        x = rng.standard_normal((1, 4) + spatial).astype(np.float32)
        w = rng.standard_normal((5, 4) + kernel).astype(np.float32)
        off = (rng.standard_normal((1, K * D) + out) * 2).astype(np.float32)
        pick = rng.random(off.shape) < 0.2
        off[pick] = rng.choice(EXTREME, size=int(pick.sum()))
        b = rng.standard_normal(5).astype(np.float32)
        m = None
        if has_m:
            m = rng.uniform(0, 1, (1, K) + out).astype(np.float32)
            pick = rng.random(m.shape) < 0.1
            m[pick] = rng.choice(np.array([np.nan, np.inf, 0.0], np.float32), size=int(pick.sum()))
        with np.errstate(invalid="ignore"):
            want = reference.run(ir, x, w, off, b, m)
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(want), 0, want)))))
        np.testing.assert_allclose(compiled.deformconv(ir, x, w, off, b, m), want, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=str(ir))


# ----------------------------------------------------------------------------------------------------------
# float32 accumulation: float32 X sums in float32 (fused 2-D Resize up to 8 taps per axis, GridSample, DeformConv's
# columns and GEMM). The proof compares with the float64 oracle within atol 1e-5 * max(1, max|want|) + rtol 1e-4
# (semantics/compare.compare); measured here on random, large, sign-alternating and mixed-magnitude data,
# the error stays below F32_BOUND (relative to max(1, max|want|)), a tenth of that atol. GridSample, whose taps
# are float32 too, is held to the policy itself (semantics/error_bound.py).

F32_BOUND = 1e-6


def _f32_data(shape, rng):
    a = np.arange(math.prod(shape)).reshape(shape)
    yield "normal", rng.standard_normal(shape)
    yield "large", rng.uniform(-1e6, 1e6, shape)
    yield "alternating", np.where((a + a // shape[-1]) % 2 == 0, 1e6, -1e6)
    yield "alternating columns", np.where(a % 2 == 0, 1e6, -1e6 + 1)
    yield "mixed magnitudes", rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 7, shape)


def _f32_error(got, want64):
    assert got.dtype == np.float32
    return float(np.abs(got.astype(np.float64) - want64).max() / max(1.0, np.abs(want64).max()))


@needs_library
@pytest.mark.parametrize("sampler,scale", [
    (Sampler("linear"), F(2)), (Sampler("linear"), F(1, 2)), (Sampler("cubic", cubic_a=F(-3, 4)), F(3, 2)),
    (Sampler("linear", antialias=True), F(1, 2)), (Sampler("linear", antialias=True), F(1, 4)),
    (Sampler("cubic", cubic_a=F(-3, 4), antialias=True), F(1, 2)),
    (Sampler("linear", antialias=True), F(1, 8))], ids=str)
@pytest.mark.parametrize("order", [(2, 3), (3, 2)], ids=["HW", "WH"])
def test_float32_accumulation_resize_bound(sampler, scale, order):
    ir = ResizeIR(rank=4, axes=order, scales=(scale, scale), sizes=None, roi=None, coord="half_pixel",
                  sampler=sampler)
    for what, x in _f32_data((1, 3, 48, 64), np.random.default_rng(1)):
        x = x.astype(np.float32)
        err = _f32_error(compiled.resize(ir, x), reference.run(ir, x.astype(np.float64)))
        assert err < F32_BOUND, (what, err)


@needs_library
@pytest.mark.parametrize("mode", ["linear", "cubic", "linear_aa", "crop", "one_axis_copied"])
@pytest.mark.parametrize("order", [(2, 3, 4), (3, 2, 4), (2, 4, 3)], ids=["DHW", "HDW", "DWH"])
def test_float32_volumes(mode, order):
    """Float32 volumes: D, H, W in that order take the fused pass (the D taps into a float32 plane, then the fused
    2-D pass); the other orders the separate passes. Within the policy's bound of the float64 oracle on every
    data kind, and below F32_BOUND; ``crop`` extrapolates whole output planes along D (and rows, columns)."""
    sampler = {"cubic": Sampler("cubic", cubic_a=F(-3, 4)), "linear_aa": Sampler("linear", antialias=True)}.get(
        mode, Sampler("linear"))
    scales = {"linear_aa": (F(1, 2), F(2, 3), F(1, 2)), "one_axis_copied": (F(1), F(2), F(3, 2))}.get(
        mode, (F(5, 2), F(3, 2), F(7, 4)))
    kw = dict(scales=scales, sizes=None, roi=None, coord="half_pixel")
    if mode == "crop":
        kw.update(coord="tf_crop_and_resize", roi=(F(-1, 4), F(1, 8), F(0), F(5, 4), F(3, 4), F(1)),
                  extrapolation_value=0.5)
    ir = ResizeIR(rank=5, axes=order, sampler=sampler, **kw)
    rng = np.random.default_rng(5)
    for what, x in _f32_data((2, 2, 6, 7, 8), rng):
        x = x.astype(np.float32)
        want = reference.run(ir, x.astype(np.float64))
        got = compiled.resize(ir, x)
        c = against_oracle(ir, got, want.astype(np.float32), [x])
        assert c.ok, (what, c.to_dict())
        assert _f32_error(got, want) < F32_BOUND, what


@needs_library
@pytest.mark.parametrize("kind", SAMPLER_KINDS)
@pytest.mark.parametrize("D", [1, 2, 3])
def test_float32_accumulation_gridsample_bound(kind, D):
    rng = np.random.default_rng(D)
    ir = GridSampleIR(spatial_rank=D, sampler=kind_sampler(kind), padding="border", align_corners=False)
    spatial = (9, 7, 5)[3 - D:]
    grid = rng.uniform(-1.1, 1.1, (1,) + (6, 5, 4)[3 - D:] + (D,)).astype(np.float32)
    for what, x in _f32_data((1, 5) + spatial, rng):
        x = x.astype(np.float32)
        # GridSample's taps are float32 where the policy allows (block_taps.hpp): the policy's bound is the test.
        c = against_oracle(ir, compiled.gridsample(ir, x, grid), reference.run(ir, x, grid), [x, grid])
        assert c.ok, (what, c.to_dict())


@needs_library
@pytest.mark.parametrize("kind", ["linear", "cubic", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_gridsample_vector_taps_are_the_general_codes_bits(kind, padding, align_corners):
    """2-D linear and cubic GridSample take whole vectors of points through block_taps_vec.hpp (float32 grid)
    and the rest through the general code (reflection: the block code for linear and nearest, per point for
    cubic), which takes every point of a float64 grid holding the same float32 values: the same point gives the
    same bits on either path (and on the shifted grid, which moves the block tails), on edge grids (NaN,
    infinities, huge values, exact pixel centres, one-pixel axes) and with infinities in X beside the edges (a tap
    of weight 0 still reads its element, 0 * inf is NaN, so which element a tap past the end reads shows:
    reflection's mirror of it is the last but one with align_corners); the policy holds against the oracle."""
    rng = np.random.default_rng(7)
    special = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 0.5,
                        -0.5, 2.0, -2.0, 3e-39], dtype=np.float32)
    for H, W in [(1, 1), (1, 7), (2, 5), (9, 13)]:
        ir = GridSampleIR(spatial_rank=2, sampler=kind_sampler(kind), padding=padding, align_corners=align_corners,
                          padding_on="taps", arith="fp32")
        x = rng.standard_normal((2, 3, H, W)).astype(np.float32)
        xi = x.copy()
        xi[:, 1, :, -min(W, 2)] = np.inf  # the last but one column (the last where W is 1)
        xi[:, 2, -min(H, 2), :] = -np.inf
        # Pixel centres and edges of each axis in grid units, random points, and the special values.
        centres = [(2 * np.arange(-1, L + 1) + 1) / L - 1 if not align_corners else
                   (2 * np.arange(-1, L + 1) / max(L - 1, 1) - 1) for L in (W, H)]
        pts = np.concatenate([np.stack(np.meshgrid(*centres), -1).reshape(-1, 2),
                              rng.uniform(-1.3, 1.3, (150, 2)),
                              np.stack([special, rng.permutation(special)], -1)]).astype(np.float32)
        grid = np.broadcast_to(pts, (2,) + pts.shape).reshape(2, 1, -1, 2).copy()
        shifted = np.concatenate([np.zeros((2, 1, 1, 2), np.float32), grid], axis=2)
        for data in (x, xi):
            a = compiled.gridsample(ir, data, grid)
            for b in (compiled.gridsample(ir, data, grid.astype(np.float64)),
                      compiled.gridsample(ir, data, shifted)[..., 1:]):
                assert np.array_equal(a.view(np.int32), b.view(np.int32)), (kind, H, W, data is xi)
        finite = np.isfinite(pts).all(-1) & (np.abs(pts) < 1e3).all(-1)
        g = grid[:, :, finite[:], :]
        c = against_oracle(ir, compiled.gridsample(ir, x, g), reference.run(ir, x, g), [x, g])
        assert c.ok, (kind, H, W, c.to_dict())


@needs_library
@pytest.mark.parametrize("group,offset_group,stride,dilation,has_b,has_m,border", [
    (1, 1, (1, 1), (1, 1), False, True, "zero_taps"),
    (2, 3, (2, 1), (1, 2), True, True, "zero_taps"),
    (3, 1, (1, 2), (2, 1), True, False, "clamp_in_range"),
    (1, 2, (1, 1), (1, 1), True, True, "clamp_in_range")])
def test_float32_deformconv_groups_mask_stride_dilation(group, offset_group, stride, dilation, has_b, has_m, border):
    """The float32 path (columns + blocked GEMM): more points than one tile, output channels that are not a
    multiple of the GEMM's 4-row block, groups and offset groups, against the float64 oracle; the error bound on
    extreme data too."""
    rng = np.random.default_rng(group * 10 + offset_group)
    C, OC, kernel, spatial = 6 * group * offset_group // math.gcd(group, offset_group), 7 * group, (3, 3), (13, 11)
    ir = DeformConvIR(2, kernel, stride, (1, 1, 1, 1), dilation, group, offset_group, has_b, has_m,
                      sampler=Sampler("linear"), border=border)
    out = deformconv_out_shape(ir, spatial, kernel)
    K = math.prod(kernel)
    off = (rng.standard_normal((1, offset_group * K * 2) + out) * 2).astype(np.float32)
    w = (rng.standard_normal((OC, C // group) + kernel) / math.sqrt(C * K)).astype(np.float32)
    b = rng.standard_normal(OC).astype(np.float32) if has_b else None
    m = rng.uniform(0, 1, (1, offset_group * K) + out).astype(np.float32) if has_m else None
    for what, x in _f32_data((1, C) + spatial, rng):
        x = x.astype(np.float32)
        got = compiled.deformconv(ir, x, w, off, b, m)
        want = reference.run(ir, *(None if a is None else a.astype(np.float64) for a in (x, w, off, b, m)))
        err = _f32_error(got, want)
        assert err < F32_BOUND, (what, err)
        if what == "normal":
            _close(got, want.astype(np.float32), np.float32, what)


@needs_library
def test_kernel_refusals_are_bridge_errors():
    ir = DeformConvIR(4, None, (1,) * 4, (0,) * 8, (1,) * 4, 1, 1, False, False)
    x = np.zeros((1, 1, 2, 2, 2, 2), np.float32)
    w = np.zeros((1, 1, 1, 1, 1, 1), np.float32)
    off = np.zeros((1, 4, 2, 2, 2, 2), np.float32)
    with pytest.raises(BridgeError, match="1 to 3 spatial axes"):
        compiled.deformconv(ir, x, w, off)
    with pytest.raises(BridgeError, match="dtype uint32"):
        compiled.gridsample(GridSampleIR(1, Sampler("linear"), "zeros", False), np.zeros((1, 1, 3), np.uint32),
                          np.zeros((1, 2, 1), np.float32))
    with pytest.raises(BridgeError, match="grid has dtype int32"):
        compiled.gridsample(GridSampleIR(1, Sampler("linear"), "zeros", False), np.zeros((1, 1, 3), np.int32),
                          np.zeros((1, 2, 1), np.int32))


# ----------------------------------------------------------------------------------------------------------
# Integer dtypes: bit-exact with the oracle (Resize linear/cubic exactly over integer tap numerators; every
# other path float64, then round half to even and saturate, as ONNX's cast).

INT_DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64]
INT_IDS = ["u8", "i8", "u16", "i16", "i32", "i64"]


@needs_library
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=INT_IDS)
def test_integer_resize_is_bit_exact(dtype):
    refused = 0
    for seed in range(0, N_CASES, 2):
        ir, inputs, shape = resize_case(seed)
        x = int_input(np.random.default_rng(seed), shape, dtype)
        want = reference.run(ir, x, *inputs)
        for tables in ("native", "ir"):
            try:
                got = compiled.resize(ir, x, *inputs, tables=tables)
            except BridgeError as e:  # weights whose common denominator leaves 62 bits: a clean refusal
                assert "exact tap weights" in str(e) or "128 bits" in str(e), e
                refused += 1
                continue
            assert got.dtype == want.dtype and np.array_equal(got, want), f"seed {seed} {tables}: {ir}"
    assert refused <= N_CASES // 10, refused


@needs_library
def test_integer_resize_ties_round_half_to_even():
    """Scales whose tap weights put results exactly on .5 (checked below on the float64 result): one rounding
    of the exact value, half to even, decides them as in the oracle."""
    ties = 0
    for sampler in (Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4)), Sampler("cubic", cubic_a=F(-1, 2))):
        for scale in (F(2), F(4), F(7, 2), F(2, 7)):
            ir = ResizeIR(rank=4, axes=(2, 3), scales=(scale, scale), sizes=None, roi=None, coord="half_pixel",
                          sampler=sampler)
            x = np.arange(2 * 3 * 7 * 5, dtype=np.int64).reshape(2, 3, 7, 5) % 251
            real = reference.run(ir, x.astype(np.float64))
            ties += int(np.count_nonzero(np.abs(real - np.floor(real) - 0.5) < 1e-9))
            for dt in (np.uint8, np.int32):
                want = reference.run(ir, x.astype(dt))
                assert np.array_equal(compiled.resize(ir, x.astype(dt), tables="ir"), want), (sampler, scale, dt)
    assert ties > 100, ties


@needs_library
@pytest.mark.parametrize("dtype,scale,x_range", [
    (np.uint8, F(15, 7), None),  # int32 sums, a denominator of 30 per axis
    (np.uint16, F(64), None),  # 65535 * 128^2: just under int32's 2^30 bound, the largest int32 case
    (np.uint16, F(128), None),  # just over: float64 (exact below 2^52)
    (np.int32, F(2), None),  # the full int32 range: float64
    (np.int64, F(2), 2**50),  # past 2^52: int64
    (np.int64, F(1003, 997), 2**45),  # 2^45 values over denominators of 2006 per axis (cubic: cubed): 128 bits
], ids=["u8-int32", "u16-int32-edge", "u16-float64", "i32-float64", "i64-int64", "i64-int128"])
def test_integer_resize_every_accumulator_width(dtype, scale, x_range):
    """The kernel sums in the narrowest type that holds the worst case's integers (cpu_resize_int.hpp): each one,
    and the edge between int32 and the next, gives the oracle's bits, extremes (saturation) and .5 ties included."""
    for sampler in (Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4))):
        ir = ResizeIR(rank=4, axes=(2, 3), scales=(scale, scale), sizes=None, roi=None, coord="half_pixel",
                      sampler=sampler)
        shape = (1, 2, 5, 4) if scale > 8 else (2, 3, 9, 7)
        rng = np.random.default_rng(int(scale.numerator))
        x = int_input(rng, shape, dtype)
        if x_range:
            x = rng.integers(-x_range, x_range, shape, endpoint=True).astype(dtype)
        want = reference.run(ir, x)
        assert np.array_equal(compiled.resize(ir, x, tables="ir"), want), (dtype, scale, sampler)


@needs_library
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=INT_IDS)
def test_integer_gridsample_and_deformconv_match_oracle(dtype):
    for seed in range(0, N_CASES, 8):
        ir, x, grid = gridsample_case(seed, np.float32)
        x = int_input(np.random.default_rng(seed), x.shape, dtype)
        want = reference.run(ir, x, grid)
        assert np.array_equal(compiled.gridsample(ir, x, grid), want), f"seed {seed}: {ir}"
        ir, (x, w, off, b, m) = deformconv_case(seed, np.float64)
        rng = np.random.default_rng(seed)
        args = (int_input(rng, x.shape, dtype), np.round(w * 4), np.round(off * 2) / 2, b, None)
        args = tuple(None if a is None else np.asarray(a).astype(dtype) for a in args[:4]) + (None,)
        ir = DeformConvIR(**{**ir.__dict__, "has_mask": False})
        want = reference.run(ir, *args)
        assert np.array_equal(compiled.deformconv(ir, *args), want), f"seed {seed}: {ir}"


# ----------------------------------------------------------------------------------------------------------
# CUDA launchers: built wherever nvcc is (about 40 s the first time, then cached; RESAMPLE_BRIDGE_SKIP_CUDA_BUILD=1
# skips it), run only where a device is.

def _cuda_or_skip(need_device: bool):
    if os.environ.get("RESAMPLE_BRIDGE_SKIP_CUDA_BUILD"):
        pytest.skip("RESAMPLE_BRIDGE_SKIP_CUDA_BUILD is set")
    if compiled.nvcc() is None:
        pytest.skip("nvcc not found: the CUDA launchers are not built here")
    compiled.cuda_library()  # raises (fails the test) if the launchers do not compile
    if need_device and compiled.cuda_device_count() == 0:
        pytest.skip("no CUDA device")


@pytest.mark.cuda
@pytest.mark.compiled
def test_cuda_launchers_compile():
    _cuda_or_skip(need_device=False)
    assert compiled.cuda_library().rb_cuda_device_count() >= 0


@pytest.mark.cuda
@pytest.mark.compiled
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(0, N_CASES, 4))
def test_cuda_matches_oracle(seed, dtype):
    """The CUDA launchers (float accumulation, float64 coordinates and weights) held to the one policy: every
    element within the forward error bound of a float32 evaluation of the spec's formula, nearest exact."""
    _cuda_or_skip(need_device=True)
    ir, inputs, shape = resize_case(seed)
    x = (np.random.default_rng(1000 + seed).standard_normal(shape) * 3).astype(dtype)
    cases = [(ir, (x, *inputs))]
    ir, x, grid = gridsample_case(seed, dtype)
    cases.append((ir, (x, grid)))
    ir, args = deformconv_case(seed, dtype)
    cases.append((ir, tuple(args)))
    for ir, args in cases:
        c = against_oracle(ir, compiled.cuda_run(ir, *args), reference.run(ir, *args), list(args))
        assert c.ok, (ir, c.to_dict())

@pytest.mark.cuda
@pytest.mark.compiled
@pytest.mark.parametrize("seed", range(1, N_CASES, 4))
def test_cuda_resize_plan_is_reused(seed):
    """A Resize bound once (tables and scratch in device memory, as the TensorRT plugin holds it) and queued three
    times on different data computes each output within the policy: no table or scratch is consumed by a call."""
    _cuda_or_skip(need_device=True)
    ir, inputs, shape = resize_case(seed)
    rng = np.random.default_rng(2000 + seed)
    xs = [(rng.standard_normal(shape) * 3).astype(np.float32) for _ in range(3)]
    with compiled.CudaLaunch(ir, xs[0], inputs) as launch, compiled.DeviceArrays(compiled.cuda_library()) as dev:
        for x in xs:
            y, dy = launch(x, inputs, dev.put)
            got = y if dy is None else dev.get(dy, y)
            c = against_oracle(ir, got, reference.run(ir, x, *inputs), [x, *inputs])
            assert c.ok, (ir, c.to_dict())
        with pytest.raises(BridgeError, match="not the plan's"):
            launch(xs[0][..., :-1] if xs[0].shape[-1] > 1 else xs[0].astype(np.float16), inputs, dev.put)
    with pytest.raises(BridgeError, match="closed"):
        launch(xs[0], inputs, dev.put)
