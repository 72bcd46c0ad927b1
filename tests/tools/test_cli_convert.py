"""`convert` like ovc, through the real CLI entry point: -o optional / a folder / missing folders created,
--target onnx, --json (strict, stdout only JSON), closing [ SUCCESS ] lines, --version, --input, and
--compress_to_fp16 keeping the tap weights in f32 (checked against onnxruntime and the oracle, and against
what OpenVINO's own compression does to them)."""

import os
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("openvino")

import openvino as ov  # noqa: E402

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import resize_model, strict_json  # noqa: E402

F = TensorProto.FLOAT



@pytest.fixture
def model_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), p)
    return p


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    from importlib.metadata import version
    assert capsys.readouterr().out.strip() == f"resample-bridge {version('resample-bridge')}"


def test_default_output_is_the_model_stem_in_the_current_folder(model_path, tmp_path, capsys):
    assert main(["convert", str(model_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [f"[ SUCCESS ] XML file: {tmp_path / 'm.xml'}", f"[ SUCCESS ] BIN file: {tmp_path / 'm.bin'}"]
    assert out[0].startswith("ONNX convention: spec")
    assert (tmp_path / "m.xml").exists() and (tmp_path / "m.bin").exists()


def test_missing_folders_are_created_and_a_folder_is_accepted(model_path, tmp_path, capsys):
    assert main(["convert", str(model_path), "--target", "openvino", "-o", "new/dir/out.xml"]) == 0
    assert (tmp_path / "new" / "dir" / "out.xml").exists() and (tmp_path / "new" / "dir" / "out.bin").exists()
    (tmp_path / "existing").mkdir()
    assert main(["convert", str(model_path), "-o", "existing"]) == 0
    assert sorted(os.listdir(tmp_path / "existing")) == ["m.bin", "m.xml"]
    assert main(["convert", str(model_path), "-o", "other/"]) == 0
    assert sorted(os.listdir(tmp_path / "other")) == ["m.bin", "m.xml"]
    capsys.readouterr()


def test_a_refused_conversion_leaves_no_created_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="bogus"), bad)
    assert main(["convert", str(bad), "-o", "a/b/out.xml"]) == 2
    assert "field 'mode'" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx"]


def test_target_onnx_and_json_only_on_stdout(model_path, tmp_path, capsys):
    assert main(["convert", str(model_path), "--target", "onnx", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["target"] == "onnx" and doc["output"] == str(tmp_path / "m.portable.onnx")
    assert doc["convention"] == "spec"
    assert os.path.exists(doc["output"])
    assert main(["convert", str(model_path), "--json", "-o", "j.xml"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["files"] == {"xml": str(tmp_path / "j.xml"), "bin": str(tmp_path / "j.bin")}
    assert doc["nodes"][0]["rung"] == 1


def test_json_error_is_json_too(model_path, tmp_path, capsys):
    (tmp_path / "taken.xml").mkdir()
    assert main(["convert", str(model_path), "-o", "taken.xml", "--json"]) == 2
    cap = capsys.readouterr()
    doc = strict_json(cap.out)
    assert doc["ok"] is False and doc["error"]["field"] == "output"
    assert len(cap.err.strip().splitlines()) == 1


def test_a_name_without_suffix_gets_it_as_with_ovc(model_path, tmp_path, capsys):
    assert main(["convert", str(model_path), "-o", "plain"]) == 0
    assert capsys.readouterr().out.splitlines()[-2] == f"[ SUCCESS ] XML file: {tmp_path / 'plain.xml'}"
    assert (tmp_path / "plain.bin").exists()


@pytest.mark.parametrize("target, out", [("openvino", "m.onnx"), ("openvino", "sub/m.bin"), ("onnx", "m.xml"),
                                         ("tensorrt", "m.engine")])
def test_another_formats_suffix_is_refused_not_appended_to(model_path, tmp_path, capsys, target, out):
    """``-o m.onnx`` for OpenVINO would write m.onnx.xml; it is a mistake, named in one line, nothing written."""
    assert main(["convert", str(model_path), "--target", target, "-o", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "field 'output'" in err[0] and "ends in" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [model_path.name]


@pytest.mark.compiled
def test_input_fixes_a_dynamic_shape_before_anything_else(tmp_path, monkeypatch, capsys):
    """With H/W dynamic, linear x1.5 has no built-in form exact for every length here (the JSON says which
    rung); --input X[1,3,5,7] makes the shapes static before lowering, and the written model has them."""
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "dyn.onnx"
    onnx.save(resize_model((1, 3, "H", "W"), scales=[1, 1, 1.5, 1.5], mode="cubic", name="dyn"), p)
    assert main(["convert", str(p), "--input", "X[1,3,5,7]", "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    m = ov.Core().read_model(doc["files"]["xml"])
    assert list(m.inputs[0].get_partial_shape().to_shape()) == [1, 3, 5, 7]
    assert main(["convert", str(p), "--input", "X[1,3,?,7]", "-o", "q.xml", "--force"]) in (0, 2)
    capsys.readouterr()
    for bad, field in (("X[1,3,5]", "input"), ("Y[1,3,5,7]", "input"), ("X[1,3,0,7]", "input"), ("X(1,3)", "input")):
        assert main(["convert", str(p), "--input", bad, "-o", "b.xml"]) == 2
        err = capsys.readouterr().err
        assert f"field '{field}'" in err and len(err.strip().splitlines()) == 1, err


def test_stale_staging_folders_are_reaped(model_path, tmp_path, capsys):
    old, fresh = tmp_path / ".rb-convert-old", tmp_path / ".rb-convert-fresh"
    old.mkdir()
    fresh.mkdir()
    t = time.time() - 7200
    os.utime(old, (t, t))
    assert main(["convert", str(model_path), "-o", "r.xml"]) == 0
    assert not old.exists() and fresh.exists()   # a fresh one may belong to a run still going
    capsys.readouterr()


def _decomposed_model_after_a_conv():
    """Conv (the user's weights) -> Resize cubic antialias downscale, which only the tap-table decomposition
    computes exactly on OpenVINO (rung 3): its weights are the constants f16 would round."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["X", "W"], ["C"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["C", "", "", "sz"], ["Y"], name="aa", mode="cubic", antialias=1)]
    inits = [numpy_helper.from_array((rng.standard_normal((2, 2, 3, 3)) * 0.3).astype(np.float32), "W"),
             numpy_helper.from_array(np.array([1, 2, 5, 3], np.int64), "sz")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [1, 2, 11, 7])],
                          [helper.make_tensor_value_info("Y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def test_compress_to_fp16_keeps_the_tap_weights_exact(tmp_path, monkeypatch, capsys):
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    monkeypatch.chdir(tmp_path)
    model = _decomposed_model_after_a_conv()
    p = tmp_path / "c.onnx"
    onnx.save(model, p)
    assert main(["convert", str(p), "--compress_to_fp16", "--prefer", "builtin", "--json", "-o", "f16/c.xml"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert [n["rung"] for n in doc["nodes"]] == [3]
    assert doc["kept_f32"], "the tap weights must be kept in f32"
    xml = (tmp_path / "f16" / "c.xml").read_text()
    assert 'element_type="f16"' in xml   # the user's conv weights were compressed, as ovc would
    # The resize, fed what OpenVINO's conv computed, equals the oracle: its tables were not rounded.
    core = ov.Core()
    m = core.read_model(str(tmp_path / "f16" / "c.xml"))
    m.add_outputs(["C"])
    x = np.random.default_rng(1).standard_normal((1, 2, 11, 7)).astype(np.float32)
    res = core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({"X": x})
    outs = {n: v for port, v in res.items() for n in port.get_names()}
    (_, ir), = parse_model(model)
    want = run(ir, outs["C"], None, None, np.array([1, 2, 5, 3], np.int64))
    np.testing.assert_allclose(outs["Y"], want, rtol=1e-5, atol=1e-6)
    # What OpenVINO's own compression would have done to the same model: the tables round, the proof
    # (and this comparison) fails; so the check above can fail.
    f32 = tmp_path / "f32"
    assert main(["convert", str(p), "--prefer", "builtin", "-o", str(f32 / "c.xml")]) == 0
    capsys.readouterr()
    plain = core.read_model(str(f32 / "c.xml"))
    ov.save_model(plain, str(tmp_path / "ovc16.xml"), compress_to_fp16=True)
    m = core.read_model(str(tmp_path / "ovc16.xml"))
    m.add_outputs(["C"])
    res = core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({"X": x})
    outs = {n: v for port, v in res.items() for n in port.get_names()}
    want = run(ir, outs["C"], None, None, np.array([1, 2, 5, 3], np.int64))
    assert np.abs(outs["Y"] - want).max() > 1e-5


@pytest.mark.compiled
def test_extension_libraries_are_loaded_or_refused_in_one_line(model_path, tmp_path, capsys):
    from resample_bridge.lowering.compiled import openvino_extension

    lib = openvino_extension()   # an OpenVINO extension library that exists here: resample-bridge's own
    assert main(["convert", str(model_path), "--extension", lib, "-o", "x/m.xml"]) == 0
    assert main(["verify", str(model_path), "--converted", "x/m.xml", "--extension", lib]) == 0
    capsys.readouterr()
    (tmp_path / "not_a_library.so").write_bytes(b"\x7fELF but not really")
    for bad in ("missing.so", "not_a_library.so"):
        assert main(["convert", str(model_path), "--extension", bad, "-o", "y/m.xml"]) == 2
        err = capsys.readouterr().err
        assert "field 'extension'" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "y").exists()


def test_allow_conditional_and_strict(model_path, capsys):
    assert main(["convert", str(model_path), "--allow-conditional", "-o", "a.xml"]) == 0
    capsys.readouterr()
    assert main(["convert", str(model_path), "--allow-conditional", "--strict", "-o", "b.xml"]) == 2
    assert "field 'allow-conditional'" in capsys.readouterr().err
