"""The OpenVINO extension (lowering/openvino_ext) against the oracle and the ONNX conformance data.

One-node models of the custom-domain ONNX ops (resample_bridge::Resize / GridSample / DeformConv) go through
``openvino.convert_model(path, extension=lib)`` and run on CPU in f32; a saved IR is re-read in a fresh process
with ``Core.add_extension``; a standard-domain GridSample-22 (5-D, no native OpenVINO op) converts through a
Python ConversionExtension that builds the extension op, as lowering rung 4 would.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from resample_bridge.lowering import compiled as cpp
from resample_bridge.semantics import reference, schema
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import ResizeIR, RuntimeValue
from tests.helpers.conformance import conformance_cases
from tests.helpers.kernel_cases import deformconv_case, gridsample_case, int_input, resize_case

ov = pytest.importorskip("openvino")
pytestmark = pytest.mark.compiled
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@functools.cache
def _extension():
    """(library, Core holding it, None) or (None, None, why not): built on first use, not at collection.
    One Core for the sweep: Core.read_model of an ONNX file goes through the same ONNX-frontend mapping as
    convert_model(extension=lib), at a fraction of the cost; every fourth case still goes through convert_model."""
    try:
        lib = cpp.openvino_extension()
    except BridgeError as e:
        if cpp.missing_tools() is None:
            return None, None, e  # the tools are there and the build failed: that is a failure, not a skip
        return None, None, f"OpenVINO extension unavailable: {e}"
    core = ov.Core()
    core.add_extension(lib)
    return lib, core, None


@pytest.fixture(autouse=True)
def _needs_extension():
    why = _extension()[2]
    if isinstance(why, BridgeError):
        raise why
    if why is not None:
        pytest.skip(why)


def extension_lib() -> str:
    return _extension()[0]


def sweep_core():
    return _extension()[1]


TOL = dict(rtol=1e-4, atol=1e-5)
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}


def _model(nodes, feeds: dict, dynamic: bool, outputs=("Y",), out_type=TensorProto.FLOAT) -> onnx.ModelProto:
    """Graph inputs for every fed array; with ``dynamic`` their shapes are unknown to OpenVINO until run time."""
    inputs = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                            [None] * v.ndim if dynamic else list(v.shape))
              for k, v in feeds.items()]
    graph = helper.make_graph(list(nodes), "g", inputs,
                              [helper.make_tensor_value_info(o, out_type, None) for o in outputs])
    return helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 22), helper.make_opsetid(schema.DOMAIN, schema.DOMAIN_VERSION)])


def _run(model: onnx.ModelProto, feeds: dict, tmp_path, name="m", convert=True):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    m = ov.convert_model(str(path), extension=extension_lib()) if convert else sweep_core().read_model(str(path))
    compiled = sweep_core().compile_model(m, "CPU", F32)
    res = compiled({k: v for k, v in feeds.items()})
    return m, [res[o] for o in compiled.outputs]


def resize_model(ir: ResizeIR, x, inputs):
    """X plus the roi / scales / sizes the IR takes at run time, as graph inputs."""
    feeds, names = {"X": x}, ["X"]
    for key, val in zip(("roi", "scales", "sizes"), inputs):
        if isinstance(getattr(ir, key), RuntimeValue) and val is not None:
            feeds[key] = val.astype(np.int64 if key == "sizes" else np.float32)
            names.append(key)
        else:
            names.append("")
    return cpp.onnx_node(ir, names, ["Y"]), feeds


@pytest.mark.parametrize("seed", range(0, 320, 6))
def test_resize_through_convert_model(seed, tmp_path):
    ir, inputs, shape = resize_case(seed)
    x = (np.random.default_rng(1000 + seed).standard_normal(shape) * 3).astype(np.float32)
    node, feeds = resize_model(ir, x, inputs)
    _, (y,) = _run(_model([node], feeds, dynamic=seed % 12 == 0), feeds, tmp_path, convert=seed % 24 == 0)
    want = reference.run(ir, x, *inputs)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, err_msg=f"seed {seed}: {ir}", **TOL)


@pytest.mark.parametrize("seed", range(0, 320, 6))
def test_gridsample_through_convert_model(seed, tmp_path):
    ir, x, grid = gridsample_case(seed, np.float32)
    grid = grid.astype(np.float32)
    feeds = {"X": x, "G": grid}
    _, (y,) = _run(_model([cpp.onnx_node(ir, ["X", "G"], ["Y"])], feeds, dynamic=seed % 12 == 0), feeds,
                   tmp_path, convert=seed % 24 == 0)
    np.testing.assert_allclose(y, reference.run(ir, x, grid), err_msg=f"seed {seed}: {ir}", **TOL)


@pytest.mark.parametrize("seed", range(0, 320, 8))
def test_deformconv_through_convert_model(seed, tmp_path):
    ir, (x, w, off, b, m) = deformconv_case(seed, np.float32)
    feeds = {k: v for k, v in zip("XWOBM", (x, w, off, b, m)) if v is not None}
    names = [k if k in feeds else "" for k in "XWOBM"]
    while names[-1] == "":
        names.pop()
    _, (y,) = _run(_model([cpp.onnx_node(ir, names, ["Y"])], feeds, dynamic=seed % 16 == 0), feeds, tmp_path,
                   convert=seed % 32 == 0)
    np.testing.assert_allclose(y, reference.run(ir, x, w, off, b, m), err_msg=f"seed {seed}: {ir}", **TOL)


VOLUMETRIC = [c for c in conformance_cases() if "gridsample_volumetric" in c.name]


@pytest.mark.parametrize("case", VOLUMETRIC, ids=[c.name for c in VOLUMETRIC])
def test_volumetric_conformance(case, tmp_path):
    """The ONNX conformance data for 5-D GridSample (no native OpenVINO op): as a custom-domain node, and as the
    standard node converted through a Python ConversionExtension that emits the extension op (rung 4)."""
    from openvino.frontend.onnx import ConversionExtension

    from resample_bridge.translate.onnx import parse_model

    assert len(VOLUMETRIC) == 4
    ((_, ir),) = parse_model(case.model)
    (x, grid), (expected,) = case.data_sets[0]
    feeds = {"X": x, "G": grid}
    _, (y,) = _run(_model([cpp.onnx_node(ir, ["X", "G"], ["Y"])], feeds, dynamic=False), feeds, tmp_path)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)

    path = tmp_path / "standard.onnx"
    onnx.save(case.model, path)
    ext = ConversionExtension("GridSample", lambda ctx: [
        cpp.openvino_node(ir, [ctx.get_input(0), ctx.get_input(1)]).output(0)])
    m = ov.convert_model(str(path), extension=[ext])
    assert any(op.get_type_name() == "ResampleBridgeGridSample" for op in m.get_ops())
    compiled = sweep_core().compile_model(m, "CPU", F32)
    np.testing.assert_allclose(compiled([x, grid])[0], expected, rtol=1e-5, atol=1e-6)


def test_saved_ir_reads_back_in_a_fresh_process(tmp_path):
    """All three ops in one model: convert, save the IR, re-read it in a new process with add_extension (and
    dynamic shapes), same bits."""
    r_ir, r_inputs, r_shape = resize_case(7)
    g_ir, gx, grid = gridsample_case(11, np.float32)
    d_ir, (dx, w, off, b, m) = deformconv_case(5, np.float32)
    rx = np.random.default_rng(0).standard_normal(r_shape).astype(np.float32)
    r_node, feeds = resize_model(r_ir, rx, r_inputs)
    r_node.output[0] = "Y0"
    feeds.update(GX=gx, G=grid.astype(np.float32), DX=dx, W=w, OFF=off)
    d_names = ["DX", "W", "OFF"]
    for k, v in (("DB", b), ("DM", m)):
        if v is not None:
            feeds[k] = v
        d_names.append(k if v is not None else "")
    while d_names[-1] == "":
        d_names.pop()
    nodes = [r_node, cpp.onnx_node(g_ir, ["GX", "G"], ["Y1"]), cpp.onnx_node(d_ir, d_names, ["Y2"])]
    model, outs = _run(_model(nodes, feeds, dynamic=True, outputs=("Y0", "Y1", "Y2")), feeds, tmp_path)
    for got, want in zip(outs, (reference.run(r_ir, rx, *r_inputs), reference.run(g_ir, gx, grid),
                                reference.run(d_ir, dx, w, off, b, m))):
        np.testing.assert_allclose(got, want, **TOL)
    xml = tmp_path / "saved.xml"
    ov.save_model(model, str(xml))
    np.savez(tmp_path / "feeds.npz", **feeds)
    script = textwrap.dedent(f"""
        import numpy as np, openvino as ov
        core = ov.Core()
        core.add_extension({extension_lib()!r})
        model = core.read_model({str(xml)!r})
        compiled = core.compile_model(model, "CPU", {F32!r})
        feeds = dict(np.load({str(tmp_path / 'feeds.npz')!r}))
        res = compiled(feeds)
        np.savez({str(tmp_path / 'out.npz')!r}, *[res[o] for o in compiled.outputs])
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    again = np.load(tmp_path / "out.npz")
    for i, got in enumerate(outs):
        assert np.array_equal(again[f"arr_{i}"], got)


def test_nodefactory_node_and_refusals(tmp_path):
    """openvino_node builds the op from Python (what a ConversionExtension does); bad attributes are refused
    by the op with the field named."""
    ir, x, grid = gridsample_case(3, np.float32)
    grid = grid.astype(np.float32)
    px, pg = ov.opset13.parameter(x.shape, ov.Type.f32), ov.opset13.parameter(grid.shape, ov.Type.f32)
    node = cpp.openvino_node(ir, [px.output(0), pg.output(0)])
    # What a proof of the lowered node reads back: the op's attributes spell the IR.
    assert schema.from_attributes(node.get_type_name(), node.get_attributes()) == ir
    model = ov.Model([node.output(0)], [px, pg])
    y = sweep_core().compile_model(model, "CPU", F32)([x, grid])[0]
    np.testing.assert_allclose(y, reference.run(ir, x, grid), **TOL)

    bad = cpp.onnx_node(ir, ["X", "G"], ["Y"])
    for a in bad.attribute:
        if a.name == "padding":
            a.s = b"mirror"
    path = tmp_path / "bad.onnx"
    onnx.save(_model([bad], {"X": x, "G": grid}, dynamic=False), path)
    with pytest.raises(Exception, match="padding 'mirror' is not one of zeros, border, reflection"):
        ov.convert_model(str(path), extension=extension_lib())


def _int_resize_sweep(dtype, tmp_path, step=20):
    """Seeds of the kernel sweep through OpenVINO CPU; the first one differing from the oracle, or None."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    for seed in range(0, 320, step):
        ir, inputs, shape = resize_case(seed)
        x = int_input(np.random.default_rng(seed), shape, dtype)
        node, feeds = resize_model(ir, x, inputs)
        _, (y,) = _run(_model([node], feeds, dynamic=seed % 40 == 0, out_type=elem), feeds, tmp_path,
                       convert=False)
        if not np.array_equal(y, reference.run(ir, x, *inputs)):
            return seed
    return None


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32], ids=["u8", "i8", "i32"])
def test_integer_dtypes_are_bit_exact(dtype, tmp_path):
    """Integer X through the extension ops on OpenVINO CPU: the oracle's bits (Resize linear / cubic exactly,
    the rest float64 then round half to even and saturate). Once refused with a source path (issue 10)."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    assert cpp.extension_dtype_refusal(resize_case(0)[0], dtype) is None
    for seed in range(0, 320, 20):
        ir, inputs, shape = resize_case(seed)
        x = int_input(np.random.default_rng(seed), shape, dtype)
        node, feeds = resize_model(ir, x, inputs)
        _, (y,) = _run(_model([node], feeds, dynamic=seed % 40 == 0, out_type=elem), feeds, tmp_path,
                       convert=False)
        want = reference.run(ir, x, *inputs)
        assert y.dtype == want.dtype and np.array_equal(y, want), f"seed {seed}: {ir}"
    for seed in range(0, 320, 40):
        ir, x, grid = gridsample_case(seed, np.float32)
        x = int_input(np.random.default_rng(seed), x.shape, dtype)
        feeds = {"X": x, "G": grid.astype(np.float32)}
        _, (y,) = _run(_model([cpp.onnx_node(ir, ["X", "G"], ["Y"])], feeds, dynamic=False, out_type=elem), feeds,
                       tmp_path, convert=False)
        assert np.array_equal(y, reference.run(ir, x, feeds["G"])), f"seed {seed}: {ir}"


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.int64], ids=["u16", "i16", "i64"])
def test_dtypes_openvino_cpu_runs_as_int32_are_refused(dtype, tmp_path):
    """The kernels compute these exactly (test_kernels.py), but the CPU plugin feeds the op int32 and wraps the
    result back: the refusal is real (this sweep finds a difference; if it stops finding one, the refusal can
    go), and it is a clean sentence for the ladder."""
    ir = resize_case(0)[0]
    why = cpp.extension_dtype_refusal(ir, dtype)
    assert why and "int32" in why and np.dtype(dtype).name in why
    assert _int_resize_sweep(dtype, tmp_path, step=10) is not None


def test_unsupported_dtype_is_a_clean_refusal():
    ir = resize_case(0)[0]
    why = cpp.extension_dtype_refusal(ir, np.uint32)
    assert why and "uint32" in why and "int32" in why
    assert cpp.extension_dtype_refusal(ir, "bool") is not None


def test_resize_plan_memo_follows_shapes_and_runtime_values(tmp_path):
    """The op memoises its output shape (shared with the clones OpenVINO's CPU plugin validates at every call where
    a length is known only at run time) and its bound plan: one compiled model fed other shapes and other run-time
    scales in turn recomputes both each time (every result has the oracle's shape and values for its own inputs)."""
    from fractions import Fraction as F

    from resample_bridge.semantics.ir import Sampler

    ir = ResizeIR(rank=4, axes=(2, 3), scales=RuntimeValue("scales"), sizes=None, roi=None, coord="half_pixel",
                  sampler=Sampler("cubic", cubic_a=F(-3, 4)))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 6, 7)).astype(np.float32)
    node, feeds = resize_model(ir, x, [None, np.array([2, 2], np.float32), None])
    path = tmp_path / "memo.onnx"
    onnx.save(_model([node], feeds, dynamic=True), path)
    compiled = sweep_core().compile_model(sweep_core().read_model(str(path)), "CPU", F32)
    request = compiled.create_infer_request()
    for shape, scales in [((1, 2, 6, 7), (2, 2)), ((1, 2, 6, 7), (0.5, 1.5)), ((2, 1, 5, 9), (0.5, 1.5)),
                          ((1, 2, 6, 7), (2, 2))]:
        xi = rng.standard_normal(shape).astype(np.float32)
        s = np.array(scales, np.float32)
        y = request.infer({"X": xi, "scales": s})[compiled.outputs[0]]
        want = reference.run(ir, xi, None, s)
        assert y.shape == want.shape, (shape, scales)
        np.testing.assert_allclose(y, want, **TOL, err_msg=f"{shape} {scales}")


@pytest.mark.parametrize("form", ["sizes", "scales"])
def test_an_identity_resize_on_the_extension_is_a_copy(form, tmp_path):
    """A Resize that resizes no axis (sizes equal to the input's, or scales of 1: axes=()) under --fallback
    extension: the kernels bind it (no "neither scales nor sizes") and copy X bit for bit, NaN and -0 included."""
    from resample_bridge.lowering.openvino.target import convert
    from tests.helpers.models import resize_model

    shape = (1, 2, 3, 4)
    m = resize_model(shape, **({"sizes": list(shape)} if form == "sizes" else {"scales": [1, 1, 1, 1]}),
                     mode="linear")
    onnx.save(m, tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"), fallback="extension")
    assert rec.rung == 4 and rec.ir.axes == (), rec.summary()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x.flat[:3] = [np.nan, -0.0, np.inf]
    core = ov.Core()
    core.add_extension(cpp.openvino_extension())
    got = core.compile_model(ov_model, "CPU", F32)([x])[0]
    assert np.array_equal(got.view(np.int32), x.view(np.int32))
