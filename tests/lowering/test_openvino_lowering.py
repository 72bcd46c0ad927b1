"""OpenVINO lowering: conformance through `convert`, real-shaped models verified, proof and refusals."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering import openvino as low  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from resample_bridge.tools.verify_openvino import verify_openvino  # noqa: E402
from resample_bridge.tools.convert import convert_to_openvino  # noqa: E402
from tests.helpers.conformance import conformance_cases, frozen_case  # noqa: E402
from tests.helpers.models import (EXTENSION_ONLY, EXTENSION_ROI, chain_model, const, real_models,  # noqa: E402
                                  resize_model)

CASES = conformance_cases()
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
# Volumetric GridSample has no native OpenVINO op: rung 3, the in-graph sampler (no extension).
# Nearest with a grid fed at run time: GridSample-9 rounds the unnormalised coordinate to float32 once
# (arith fp32_fused), so a grid point next to a .5 tie can read another element than the source's arithmetic:
# the in-graph sampler too (rung 3; the extension before the default became portable, issue 42).
IN_GRAPH_SAMPLER = {c.name for c in CASES if c.name.startswith("test_gridsample_nearest")}


def _run_converted(xml, feeds):
    core = ov.Core()
    lib = os.path.join(os.path.dirname(xml), "libresample_bridge_openvino.so")
    if os.path.exists(lib):
        core.add_extension(lib)
    return core.compile_model(core.read_model(xml), "CPU", F32)(feeds)[0]


def _assert_expected(case, got, expected):
    assert got.shape == expected.shape
    atol = 5e-5 if case.name == "test_gridsample_bicubic" else 1e-5  # data typed with 4 decimals
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=atol)
frozen = frozen_case


@pytest.mark.slow
@pytest.mark.usefixtures("reference_convention")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance_through_convert(case, tmp_path):
    model, feeds, expected = frozen(case)
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    out = tmp_path / "m.xml"
    (rec,) = convert_to_openvino(str(src), str(out), prefer="builtin")  # the rungs the cases need
    assert rec.rung != low.EXTENSION
    assert (rec.rung == low.DECOMPOSE) >= (case.name in IN_GRAPH_SAMPLER)
    _assert_expected(case, _run_converted(str(out), feeds), expected)


@pytest.mark.slow
@pytest.mark.compiled
@pytest.mark.usefixtures("reference_convention")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance_with_runtime_inputs(case, tmp_path):
    """The original graphs: roi / scales / sizes are graph inputs fed at run time. --strict: exact whatever
    the run-time values (the default may take a native op that is exact only under a stated condition,
    which e.g. align_corners with 4 * 0.6 = 2.4 breaks)."""
    src = tmp_path / "m.onnx"
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    model.ir_version = min(model.ir_version, 10)
    onnx.save(model, src)
    ins, outs = case.data_sets[0]
    feeds = {vi.name: arr for vi, arr in zip(model.graph.input, ins)}
    out = tmp_path / "m.xml"
    records = convert_to_openvino(str(src), str(out), strict=True)
    assert len(records) == 1 and records[0].condition is None
    _assert_expected(case, _run_converted(str(out), feeds), outs[0])


@pytest.mark.slow
@pytest.mark.parametrize("name,model", list(real_models()), ids=[n for n, _ in real_models()])
def test_real_shaped_models_verify_exact(name, model, tmp_path):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    report = verify_openvino(str(path))
    assert report["ok"], report
    assert report["nodes"] and all(n["max_abs"] < 1e-4 for n in report["nodes"])
    judged = [o for o in report["outputs"] if o["ok"] is not None]
    assert judged and all(o["max_abs"] < 1e-4 for o in judged)


def test_proof_catches_a_table_that_is_not_the_source_ir(tmp_path):
    import dataclasses

    path = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 20, 20), sizes=[1, 1, 6, 6], mode="nearest", nearest_mode="round_prefer_ceil"), path)
    model, records = low.convert(str(path))
    assert low.prove(model, records) == []
    (rec,) = records
    records = [dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, sampler=dataclasses.replace(
        rec.ir.sampler, nearest="round_prefer_floor")))]  # a record claiming another source IR
    assert any("indices differ" in f for f in low.prove(model, records))


def test_cli_refusals_leave_nothing_behind(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), src)
    out = tmp_path / "o.xml"
    assert main(["convert", str(src), "--target", "openvino", "-o", str(out)]) == 0
    before = sorted(os.listdir(tmp_path))
    assert main(["convert", str(src), "--target", "openvino", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["convert", str(src), "--target", "openvino", "-o", str(out), "--force"]) == 0
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # running as root: permissions are not enforced
            pytest.skip("directory permissions are not enforced for this user")
        assert main(["convert", str(src), "--target", "openvino", "-o", str(ro / "o.xml")]) == 2
        assert "not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)
    assert sorted(os.listdir(tmp_path)) == before + ["ro"] or sorted(os.listdir(tmp_path)) == sorted(before + ["ro"])


@pytest.mark.compiled
def test_dynamic_shape_goes_to_the_extension_and_is_exact_at_two_shapes(tmp_path):
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    # tf_crop_and_resize's crop box: no in-graph form on a run-time length (``EXTENSION_ONLY``)
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 1.5, 0.6], roi=EXTENSION_ROI, **EXTENSION_ONLY)
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "h"
    src = tmp_path / "dyn.onnx"
    onnx.save(m, src)
    (rec,) = convert_to_openvino(str(src), str(tmp_path / "o.xml"))
    assert rec.rung == low.EXTENSION and "not static" in rec.reason
    (_, ir), = parse_model(m)
    for h in (4, 7):
        x = np.random.default_rng(h).standard_normal((1, 1, h, 4)).astype(np.float32)
        np.testing.assert_allclose(_run_converted(str(tmp_path / "o.xml"), [x]), run(ir, x, None, None, None),
                                   rtol=1e-5, atol=1e-6)


def test_without_the_extension_a_dynamic_shape_is_refused_with_the_reason(tmp_path, capsys, monkeypatch):
    from resample_bridge.lowering import compiled

    def unavailable(ir, inputs):
        raise BridgeError("cmake was not found (needed to build the extension)")

    monkeypatch.setattr(compiled, "openvino_node", unavailable)  # a machine without a C++ toolchain
    # a non-integer scale on a dynamic axis under a crop box: no built-in op or in-graph form is proven for every
    # value of it (``EXTENSION_ONLY``)
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 1.5, 1], roi=EXTENSION_ROI, **EXTENSION_ONLY)
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "h"
    src = tmp_path / "dyn.onnx"
    onnx.save(m, src)
    assert main(["convert", str(src), "--target", "openvino", "-o", str(tmp_path / "o.xml")]) == 2
    err = capsys.readouterr().err
    assert "not static" in err and "cmake was not found" in err and len(err.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["dyn.onnx"]


def test_unwritable_output_directory(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), src)
    assert main(["convert", str(src), "--target", "openvino", "-o", "/proc/nope/o.xml"]) == 2
    assert "does not exist" in capsys.readouterr().err


def _runtime_scales_model(mode="linear", coord="half_pixel", axes=None):
    kw = dict(axes=axes) if axes else {}
    n = helper.make_node("Resize", ["x", "", "s"], ["y"], mode=mode, coordinate_transformation_mode=coord, name="rt",
                         **kw)
    g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8]),
                                     helper.make_tensor_value_info("s", TensorProto.FLOAT, [len(axes or "NCHW")])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.mark.compiled
def test_runtime_scales_native_with_its_condition(tmp_path, capsys):
    """Linear align_corners on H, W with its scales fed at run time, under the reference convention (the formula
    divides by the fractional L*s - 1): no form computes it from the run-time scale (the run-time scale forms take
    the integer output length), so the default takes the extension; --allow-conditional takes Interpolate with
    its conditions, which are real; --strict the extension again, exact where Interpolate is not."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import onnx_convention, parse_model

    model = _runtime_scales_model(mode="linear", coord="align_corners", axes=[2, 3])
    src = tmp_path / "rt.onnx"
    onnx.save(model, src)
    with onnx_convention("reference"):
        (rec,) = convert_to_openvino(str(src), str(tmp_path / "d.xml"))
        assert rec.rung == 4 and "--allow-conditional" in rec.reason
        (rec,) = convert_to_openvino(str(src), str(tmp_path / "rt.xml"), allow_conditional=True)
        assert rec.rung == 1 and "L*s is an integer" in rec.condition
        (_, ir), = parse_model(model)
    compiled = ov.Core().compile_model(ov.Core().read_model(str(tmp_path / "rt.xml")), "CPU", F32)
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    holds = np.array([2, 0.75], dtype=np.float32)  # 16 and 6: L*s integers
    np.testing.assert_allclose(compiled([x, holds])[0], run(ir, x, None, holds, None), atol=1e-5)
    broken = np.array([1.3, 1.3], dtype=np.float32)  # 8*1.3 = 10.4: the reference divides by 9.4, OpenVINO by 9
    assert np.abs(compiled([x, broken])[0] - run(ir, x, None, broken, None)).max() > 1e-2
    assert main(["convert", str(src), "--target", "openvino", "-o", str(tmp_path / "s.xml"), "--strict",
                 "--onnx-convention", "reference"]) == 0
    assert "rung 4" in capsys.readouterr().out
    np.testing.assert_allclose(_run_converted(str(tmp_path / "s.xml"), [x, broken]), run(ir, x, None, broken, None),
                               atol=1e-5)


def test_runtime_scales_nearest_is_exact_in_the_graph_under_every_policy(tmp_path):
    """Nearest with its scales fed at run time: the default, --allow-conditional and --strict all take the index
    form computed in integers from the run-time scale (``scale_nearest``): where Interpolate fed the scales copies
    an axis that keeps its length at a scale other than 1, it does not, and it decides the float32 ties exactly."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    model = _runtime_scales_model(mode="nearest", axes=[2, 3])
    src = tmp_path / "rt.onnx"
    onnx.save(model, src)
    (_, ir), = parse_model(model)
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    broken = np.array([1.12, 1.12], dtype=np.float32)  # 8*1.12 = 8.96 -> 8: OpenVINO's Interpolate copies the axis
    for name, kw in (("d", {}), ("c", {"allow_conditional": True}), ("s", {"strict": True})):
        (rec,) = convert_to_openvino(str(src), str(tmp_path / f"{name}.xml"), **kw)
        assert rec.rung == 3 and rec.proof["form"] == "scale_nearest" and not rec.condition, rec.summary()
        got = _run_converted(str(tmp_path / f"{name}.xml"), [x, broken])
        np.testing.assert_array_equal(got, run(ir, x, None, broken, None))


def test_runtime_scales_linear_is_exact_in_the_graph_under_every_policy(tmp_path):
    """Linear with its scales fed at run time: the default, --allow-conditional and --strict all take the form
    computed from the run-time scale (``scale_taps``), exact for every value: where Interpolate fed the scales
    copies an axis that keeps its length at a scale other than 1, it does not."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    model = _runtime_scales_model()
    src = tmp_path / "rt.onnx"
    onnx.save(model, src)
    (_, ir), = parse_model(model)
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    broken = np.array([1, 1, 1.05, 1.05], dtype=np.float32)  # 8*1.05 = 8.4 -> 8: Interpolate copies the axis
    for name, kw in (("d", {}), ("c", {"allow_conditional": True}), ("s", {"strict": True})):
        (rec,) = convert_to_openvino(str(src), str(tmp_path / f"{name}.xml"), **kw)
        assert rec.rung == 3 and rec.proof["form"] == "scale_taps" and rec.condition is None
        np.testing.assert_allclose(_run_converted(str(tmp_path / f"{name}.xml"), [x, broken]),
                                   run(ir, x, None, broken, None), rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("reference_convention")
def test_align_corners_runtime_condition_is_the_fractional_length(tmp_path):
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    model = _runtime_scales_model(coord="align_corners", axes=[2, 3])  # N, C: OpenVINO resizes spatial axes only
    src = tmp_path / "ac.onnx"
    onnx.save(model, src)
    ov_model, (rec,) = low.convert(str(src), allow_conditional=True)
    assert "L*s is an integer" in rec.condition
    compiled = ov.Core().compile_model(ov_model, "CPU", F32)
    (_, ir), = parse_model(model)
    x = np.random.default_rng(2).standard_normal((1, 2, 8, 8)).astype(np.float32)
    holds = np.array([1.5, 0.5], dtype=np.float32)
    np.testing.assert_allclose(compiled([x, holds])[0], run(ir, x, None, holds, None), rtol=1e-5, atol=1e-6)
    broken = np.array([0.6, 1.5], dtype=np.float32)  # 8*0.6 = 4.8: ONNX divides by 3.8, OpenVINO by 3
    assert np.abs(compiled([x, broken])[0] - run(ir, x, None, broken, None)).max() > 1e-2


def test_conversion_extensions_with_openvinos_own_importer_for_the_rest(tmp_path):
    """The public hook: openvino.convert_model(path, extension=conversion_extensions()) — Relu and Concat go
    through OpenVINO's importer, the Resize through resample-bridge (here: a tf_crop_and_resize, which
    OpenVINO's importer refuses)."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Resize", ["r", "roi", "", "sz"], ["c"], mode="linear", name="crop",
                              coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.0),
             helper.make_node("Concat", ["c", "c"], ["y"], axis=1)]
    m = chain_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 9, 9])],
                    [const("roi", [0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3]), const("sz", [1, 2, 5, 7], np.int64)], "y")
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    with pytest.raises(Exception):
        ov.convert_model(str(src))  # OpenVINO alone refuses tf_crop_and_resize
    converted = ov.convert_model(str(src), extension=low.conversion_extensions())
    x = np.random.default_rng(3).standard_normal((1, 2, 9, 9)).astype(np.float32)
    got = ov.Core().compile_model(converted, "CPU", F32)([x])[0]
    (_, ir), = parse_model(m)
    want = run(ir, np.maximum(x, 0), None, None, None)
    np.testing.assert_allclose(got, np.concatenate([want, want], axis=1), rtol=1e-5, atol=1e-6)
    assert (want == -3.0).any()  # the crop reaches outside: extrapolation is exercised


def test_verify_cli_with_npz_inputs_and_json(tmp_path, capsys):
    import json

    model = dict(real_models())["segmentation_head_linear_align_corners_x4"]
    src = tmp_path / "seg.onnx"
    onnx.save(model, src)
    x = np.random.default_rng(5).standard_normal((1, 32, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    assert main(["verify", str(src), "--target", "openvino", "--inputs", str(tmp_path / "in.npz"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["nodes"][0]["max_abs"] < 1e-5
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    assert main(["verify", str(src), "--target", "openvino", "--inputs", str(tmp_path / "bad.npz")]) == 2
    assert "inputs" in capsys.readouterr().err
