"""The TensorRT hand-off through the CLI (issue 11 item 8): ``check --target tensorrt`` and ``convert --target
tensorrt`` agree on every model (the real-model corpus, the ONNX conformance cases as shipped and frozen, the
builders of tests/helpers/models.py); a refusal is one line naming the first node with a count, the full list in
--json; ``convert`` names a plugin library that exists or the one command that builds it, and a polygraphy
command comparing TensorRT with onnxruntime; ``build-plugin`` without TensorRT says what is missing.

TensorRT is not installable here: what needs it (building the plugin, running engines) is skipped cleanly where
it is absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.lowering.tensorrt import plugin_build as engine
from resample_bridge.tools.cli import main
from tests.helpers.conformance import conformance_cases, frozen_case
from tests.helpers.models import resize_model

F = TensorProto.FLOAT
CORPUS = Path(__file__).resolve().parents[1] / "models"
REAL = sorted(p.name for p in CORPUS.iterdir() if (p / "model.onnx").is_file()) if CORPUS.is_dir() else []
CASES = conformance_cases()


def _model(nodes, inputs, inits=(), opset=19):
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("Y", F, None)], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _const(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(values, dtype), name)


def antialias_then_nearest():
    """The model of issue 11: Resize(antialias) -> Resize(nearest x2); check said fine, convert refused."""
    nodes = [helper.make_node("Resize", ["X", "", "s1"], ["Z"], name="aa", mode="linear", antialias=1),
             helper.make_node("Resize", ["Z", "", "s2"], ["Y"], name="nn", mode="nearest")]
    return _model(nodes, [helper.make_tensor_value_info("X", F, [1, 1, 8, 8])],
                  [_const("s1", [1, 1, 0.5, 0.5]), _const("s2", [1, 1, 2, 2])])


def plugin_then_nearest():
    """The same with a dynamic batch: the antialias node takes the plugin, whose output has no shape inference."""
    nodes = [helper.make_node("Resize", ["X", "", "s1"], ["Z"], name="aa", mode="linear", antialias=1),
             helper.make_node("Resize", ["Z", "", "s2"], ["Y"], name="nn", mode="nearest")]
    return _model(nodes, [helper.make_tensor_value_info("X", F, ["n", 1, 8, 8])],
                  [_const("s1", [1, 1, 0.5, 0.5]), _const("s2", [1, 1, 2, 2])])


def runtime_scales(count):
    """``count`` Resize nodes fed scales at run time: none can be made TensorRT-ready."""
    nodes, cur = [], "X"
    for i in range(count):
        out = "Y" if i == count - 1 else f"t{i}"
        nodes.append(helper.make_node("Resize", [cur, "", "sc"], [out], name=f"resize_{i:02d}", mode="linear"))
        cur = out
    return _model(nodes, [helper.make_tensor_value_info("X", F, [1, 1, 4, 5]),
                          helper.make_tensor_value_info("sc", F, [4])])


BUILT = {
    "antialias_then_nearest": antialias_then_nearest,
    "plugin_then_nearest": plugin_then_nearest,
    "runtime_scales": lambda: runtime_scales(2),
    "u8_antialias": lambda: resize_model((1, 1, 8, 8), sizes=[1, 1, 3, 5], mode="linear", antialias=1,
                                         dtype=TensorProto.UINT8),
    "cubic_dynamic_hw": lambda: resize_model((1, 1, "h", "w"), scales=[1, 1, 2, 2], mode="cubic"),
    "nearest_dynamic_hw": lambda: resize_model(("n", 3, "h", "w"), scales=[1, 1, 2, 2], mode="nearest"),
    "tf_crop_and_resize": lambda: resize_model((1, 1, 5, 5), roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 0.7],
                                               sizes=[1, 1, 3, 4], mode="linear",
                                               coordinate_transformation_mode="tf_crop_and_resize"),
    "split_5d": lambda: resize_model((2, 3, 4, 5, 6), sizes=[4, 6, 8, 10, 12], mode="nearest",
                                     nearest_mode="floor", coordinate_transformation_mode="asymmetric"),
    "sizes_of_the_wrong_length": lambda: resize_model((1, 1, 4, 4), sizes=[1, 1, 8], name="short"),
}


def _cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def check_and_convert(capsys, tmp_path, model, convention="spec"):
    """(check's rows or its error, convert's report or its error), both through the CLI with --json."""
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    conv = ("--onnx-convention", convention)
    rc, out, err = _cli(capsys, "check", src, "--target", "tensorrt", "--json", "--fail-on", "none", *conv)
    assert rc in (0, 2), err
    check = json.loads(out)
    if rc == 2:
        assert check["ok"] is False and len(err.strip().splitlines()) == 1
    rc, out, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", tmp_path / "out.onnx", "--json",
                        *conv)
    assert rc in (0, 2), err
    convert = json.loads(out)
    if rc == 2:
        assert convert["ok"] is False and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "out.onnx").exists()
    return check, convert


def assert_agree(check, convert):
    if "error" in check:  # check refuses the input itself: so must convert, for the same reason
        assert "error" in convert, f"check refused ({check['error']}) but convert wrote a model"
        assert (check["error"]["node"], check["error"]["field"]) == (convert["error"]["node"],
                                                                     convert["error"]["field"])
        return
    rows = check["nodes"]
    refused = [r for r in rows if r["resample_bridge"]["rung"] is None]
    if refused:
        assert "error" in convert, f"check says {refused[0]['name']} is refused; convert wrote a model"
        err = convert["error"]
        assert err["node"] == refused[0]["name"]
        assert [r["node"] for r in err.get("refused", [])] == [r["name"] for r in refused]
        return
    assert "error" not in convert, f"check says every node has a rung; convert refuses: {convert['error']}"
    assert [(r["name"], r["resample_bridge"]["rung"]) for r in rows] == \
        [(n["node"], n["rung"]) for n in convert["nodes"]]


@pytest.mark.parametrize("name", REAL)
def test_check_and_convert_agree_on_the_real_models(capsys, tmp_path, name):
    assert_agree(*check_and_convert(capsys, tmp_path, onnx.load(str(CORPUS / name / "model.onnx"))))


@pytest.mark.parametrize("frozen", [False, True], ids=["as_shipped", "frozen"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_and_convert_agree_on_the_conformance_cases(capsys, tmp_path, case, frozen):
    model = frozen_case(case)[0] if frozen else case.model
    assert_agree(*check_and_convert(capsys, tmp_path, model, "reference"))


@pytest.mark.parametrize("name", list(BUILT))
def test_check_and_convert_agree_on_built_models(capsys, tmp_path, name):
    assert_agree(*check_and_convert(capsys, tmp_path, BUILT[name]()))


def test_the_issue_model_converts_and_computes_the_source(capsys, tmp_path):
    from resample_bridge.tools.tensorrt import run_tensorrt_ready

    for build, rungs in ((antialias_then_nearest, [3, 1]), (plugin_then_nearest, [4, 1])):
        check, convert = check_and_convert(capsys, tmp_path, build())
        assert [n["rung"] for n in convert["nodes"]] == rungs
        x = np.random.default_rng(0).standard_normal((1, 1, 8, 8)).astype(np.float32)
        want = run_tensorrt_ready(build(), {"X": x}, resampling="oracle")["Y"]
        for mode in ("onnxruntime", "tensorrt"):  # plugin nodes on the oracle; the rest as each would run it
            got = run_tensorrt_ready(onnx.load(str(tmp_path / "out.onnx")), {"X": x}, resampling=mode)["Y"]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        os.remove(tmp_path / "out.onnx")


def test_fifty_refused_nodes_make_one_short_line_and_the_rest_is_in_json(capsys, tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(runtime_scales(50), src)
    rc, out, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", tmp_path / "o.onnx")
    assert rc == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert len(line) <= 400, len(line)
    assert "node 'resize_00'" in line and "field 'scales'" in line and "49 more of 50 resampling nodes refused" in line
    rc, out, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", tmp_path / "o.onnx", "--json")
    refused = json.loads(out)["error"]["refused"]
    assert [r["node"] for r in refused] == [f"resize_{i:02d}" for i in range(50)]
    assert all("make them initializers" in r["reason"] and r["field"] == "scales" for r in refused)
    assert not (tmp_path / "o.onnx").exists()


def test_convert_names_the_library_or_the_command_that_builds_it_and_a_polygraphy_comparison(capsys, tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(plugin_then_nearest(), src)
    out = tmp_path / "o.onnx"
    rc, text, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", out)
    assert rc == 0, err
    lib = engine.plugin_library_path()
    if os.path.isfile(lib):
        assert f"{lib} (built)" in text
    else:
        assert "not built yet" in text and "resample-bridge build-plugin --tensorrt-include " in text
    assert f"polygraphy run {src} --onnxrt --save-inputs" in text
    assert f"polygraphy run {out} --trt --plugins {lib} --load-inputs" in text
    # No plugin node: no library, and polygraphy still compares TensorRT with onnxruntime.
    onnx.save(resize_model((1, 1, 4, 4), sizes=[1, 1, 8, 8], mode="linear"), src)
    rc, out_json, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", out, "--force", "--json")
    rep = json.loads(out_json)
    assert rc == 0 and rep["plugin_library"] is None and rep["build_command"] is None
    assert "--plugins" not in rep["polygraphy_command"] and "--onnxrt" in rep["polygraphy_command"]


def test_cubic_gridsample_respelled_beside_a_decomposition(capsys, tmp_path):
    """A GridSample-20 cubic respelled 'bicubic' (onnx-tensorrt's name, which the ONNX parser refuses) in the
    same model as a decomposed Resize: the decomposition's proof reads the model as the ONNX parser does, so
    both nodes convert (the respelling once broke the other node's proof)."""
    nodes = [helper.make_node("Resize", ["X", "", "", "sz"], ["Z"], name="aa", mode="cubic", antialias=1),
             # zeros: cubic with border / reflection takes the GridSample decomposition instead (TensorRT's
             # per-tap padding is unverified)
             helper.make_node("GridSample", ["Z", "grid"], ["Y"], name="gs", mode="cubic", padding_mode="zeros")]
    m = _model(nodes, [helper.make_tensor_value_info("X", F, [1, 2, 12, 12]),
                       helper.make_tensor_value_info("grid", F, [1, 5, 5, 2])],
               [_const("sz", [1, 2, 7, 7], np.int64)], opset=22)
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    rc, out_json, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", tmp_path / "o.onnx", "--json")
    assert rc == 0, err
    rungs = {n["node"]: n["rung"] for n in json.loads(out_json)["nodes"]}
    assert rungs == {"aa": 3, "gs": 2}, rungs


def test_polygraphy_command_names_the_users_model_when_input_fixes_shapes(capsys, tmp_path):
    """--input converts a temporary copy with the shapes fixed; the printed comparison must still name the
    user's file (the copy is gone when the command is run)."""
    m = resize_model((1, 1, 4, 4), sizes=[1, 1, 8, 8], mode="linear")
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    src = tmp_path / "dyn.onnx"
    onnx.save(m, src)
    rc, out_json, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", tmp_path / "o.onnx",
                             "--input", "X[1,1,4,4]", "--json")
    assert rc == 0, err
    rep = json.loads(out_json)
    # Issue 22: the dynamic source is fed the shapes --input fixed (Polygraphy would feed [1,1,1,1]); TensorRT
    # builds the written model, static now, so no profile is needed.
    assert (f"polygraphy run {src} --onnxrt --input-shapes 'X:[1,1,4,4]' --save-inputs" in rep["polygraphy_command"]
            and f"polygraphy run {tmp_path / 'o.onnx'} --trt --load-inputs" in rep["polygraphy_command"]), rep
    assert "Shapes" not in rep["command"] and rep["profile_missing"] is None


def test_dynamic_model_commands_carry_the_optimization_profile(capsys, tmp_path):
    """Issue 22: for a dynamic model trtexec gets --minShapes/--optShapes/--maxShapes and polygraphy
    --trt-*-shapes, from ovc's --input (a range 1..4: min 1, opt = max 4) or Polygraphy's --trt-*-shapes; the
    onnxruntime run of the source is fed the opt shapes (never Polygraphy's 1 per dynamic dimension); without
    lengths, one line says what to add."""
    src = tmp_path / "dyn.onnx"
    onnx.save(resize_model(("N", 3, "H", "W"), scales=[1, 1, 2, 2], mode="nearest"), src)
    out = tmp_path / "o.onnx"

    def commands(*extra):
        rc, text, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", out, "--force", "--json", *extra)
        assert rc == 0, err
        rep = json.loads(text)
        return rep["command"], rep["polygraphy_command"], rep["profile_missing"]

    trtexec, poly, missing = commands()
    assert "Shapes" not in trtexec and "shapes" not in poly
    assert "X[?,3,?,?]" in missing and "--trt-min-shapes" in missing and "--input" in missing
    trtexec, poly, missing = commands("--input", "X[1..4,3,16,16]")
    assert missing is None
    assert trtexec.endswith(" --minShapes=X:1x3x16x16 --optShapes=X:4x3x16x16 --maxShapes=X:4x3x16x16"), trtexec
    assert f"polygraphy run {src} --onnxrt --input-shapes 'X:[4,3,16,16]' --save-inputs" in poly, poly
    assert (f"polygraphy run {out} --trt --trt-min-shapes 'X:[1,3,16,16]' --trt-opt-shapes 'X:[4,3,16,16]' "
            f"--trt-max-shapes 'X:[4,3,16,16]' --load-inputs") in poly, poly
    trtexec, poly, _ = commands("--trt-min-shapes", "X:[1,3,8,8]", "--trt-opt-shapes", "X:[2,3,16,16]",
                                "--trt-max-shapes", "X:[4,3,32,32]")
    assert "--minShapes=X:1x3x8x8 --optShapes=X:2x3x16x16 --maxShapes=X:4x3x32x32" in trtexec
    assert "--onnxrt --input-shapes 'X:[2,3,16,16]'" in poly
    # Polygraphy's options win over --input's range for the kind they give.
    trtexec, _, _ = commands("--input", "X[1..4,3,16,16]", "--trt-opt-shapes", "X:[2,3,16,16]")
    assert "--minShapes=X:1x3x16x16 --optShapes=X:2x3x16x16 --maxShapes=X:4x3x16x16" in trtexec
    for bad, field in ((["--trt-min-shapes", "X:[8,3,8,8]", "--trt-opt-shapes", "X:[2,3,8,8]", "--trt-max-shapes",
                         "X:[4,3,8,8]"], "trt-shapes"), (["--trt-min-shapes", "Z:[1,3,8,8]"], "trt-shapes"),
                       (["--trt-min-shapes", "X:[1,3,8]"], "trt-min-shapes")):
        rc, text, err = _cli(capsys, "convert", src, "--target", "tensorrt", "-o", out, "--force", *bad)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and f"field '{field}'" in err, (bad, err)
    rc, text, err = _cli(capsys, "convert", src, "-o", tmp_path / "o.xml", "--trt-min-shapes", "X:[1,3,8,8]")
    assert rc == 2 and "applies to --target tensorrt only" in err


def test_build_plugin_names_what_is_missing(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("TensorRT_ROOT", raising=False)
    monkeypatch.delenv("TENSORRT_ROOT", raising=False)
    rc, out, err = _cli(capsys, "build-plugin", "--tensorrt-include", tmp_path)
    assert rc == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "field 'tensorrt-include'" in line and "NvInferRuntime.h" in line and str(tmp_path) in line
    (tmp_path / "NvInferRuntime.h").write_text("// not TensorRT\n")
    rc, out, err = _cli(capsys, "build-plugin", "--tensorrt-include", tmp_path, "--tensorrt-lib", tmp_path, "--json")
    assert rc == 2 and json.loads(out)["error"]["field"] == "tensorrt-lib"
    assert "libnvinfer" in json.loads(out)["error"]["message"]
    if engine.find_tensorrt()[0] is None:
        rc, out, err = _cli(capsys, "build-plugin")
        assert rc == 2 and "TensorRT headers not found" in err and len(err.strip().splitlines()) == 1


@pytest.mark.cuda
@pytest.mark.compiled
def test_build_plugin_with_tensorrt(capsys, tmp_path):
    """Needs TensorRT headers and libnvinfer, the CUDA toolkit and nvcc: skipped where any is missing."""
    from resample_bridge.lowering.compiled import build

    include, lib = engine.find_tensorrt()
    if include is None or lib is None or build.nvcc() is None or build.missing_tools():
        pytest.skip("building the TensorRT plugin needs TensorRT headers and libraries, nvcc, CMake and a C++ "
                    f"compiler (found: headers {include}, libnvinfer {lib}, nvcc {build.nvcc()})")
    rc, out, err = _cli(capsys, "build-plugin", "-o", tmp_path)
    assert rc == 0, err
    built = tmp_path / "libresample_bridge_tensorrt.so"
    assert built.is_file() and str(built) in out
