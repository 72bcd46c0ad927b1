"""Issue 43, third pass: what a newcomer trips on in the CLI and the API, tried through the real CLI."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from resample_bridge.lowering.openvino.ladder import refusal_text
from resample_bridge.semantics.errors import BridgeError


def _run(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "resample_bridge.tools.cli", *map(str, args)], cwd=cwd,
                          env=env or dict(os.environ, CI="true"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=300)


def _runtime_scales_model() -> onnx.ModelProto:
    """A tf_crop_and_resize Resize whose scales are a graph input: only the extension computes it exactly (no
    in-graph form takes its crop box with a run-time scale; ``EXTENSION_ONLY``)."""
    from tests.helpers.models import EXTENSION_ONLY, roi_initializer

    node = helper.make_node("Resize", ["X", "roi", "S"], ["Y"], name="scales_at_run_time", **EXTENSION_ONLY)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 8, 8]),
                                            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [roi_initializer()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.mark.openvino
def test_json_error_names_the_node_and_field_of_a_refusal_inside_openvinos_converter(tmp_path):
    """A node refused while OpenVINO's converter runs (here: no compiler for the extension it needs) kept its
    node and field only in the text; --json's error object had null for both."""
    onnx.save(_runtime_scales_model(), tmp_path / "m.onnx")
    venv_bin = os.path.dirname(sys.executable)  # cmake may be there; no C++ compiler is
    env = dict(os.environ, CI="true", PATH=venv_bin, RESAMPLE_BRIDGE_CACHE=str(tmp_path / "cache"))
    r = _run("convert", "m.onnx", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 2, r.stderr
    err = json.loads(r.stdout)["error"]
    assert err["node"] == "scales_at_run_time" and err["field"] in ("compiler", "cmake", "make"), err
    assert not err["message"].startswith("node '"), err  # the location is in its fields, not repeated


def test_a_long_refusal_is_whole_in_json_and_verbose_and_short_on_the_default_line():
    tried = [(1, "native", "differs from the oracle on a probe, shape [1, 1, 8, 8]: worst element [0, 0, 3, 5] "
                           "is 0.25, oracle 0.5 " + "x" * 200),
             (3, "decomposition", "input shape (None, 1, None, None) is not static " + "y" * 100),
             (4, "extension", "a C++17 compiler is needed: apt-get install g++")]
    whole = refusal_text(tried, limit=None)
    e = BridgeError(whole, "gs", "rung", brief=refusal_text(tried))
    assert e.to_dict()["message"] == whole and "oracle 0.5 " + "x" * 200 in whole
    assert whole in e.line(20000)  # -v
    assert len(e.line()) < 300 and "apt-get install g++" in e.line()


def _parsers(parser):
    import argparse

    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_argument_of_every_verb_has_help():
    from resample_bridge.tools.cli import build_parser

    missing = [f"{prog} {a.option_strings or a.dest}" for prog, p in _parsers(build_parser())
               for a in p._actions if not a.help and a.dest not in ("help", "cmd")]
    assert not missing, missing


def test_every_verb_that_reads_a_model_takes_the_same_input_shape_options():
    from resample_bridge.tools.cli import build_parser

    verbs = {p.prog.split()[-1]: p for _, p in _parsers(build_parser())}
    for verb in ("inspect", "check", "convert", "verify"):
        flags = {f for a in verbs[verb]._actions for f in a.option_strings}
        assert {"--input", "--input-shapes"} <= flags, verb


def _dynamic_model(tmp_path) -> str:
    from tests.helpers.models import resize_model

    m = resize_model((1, 3, 4, 4), scales=[1, 1, 2, 2], mode="nearest")
    for d, name in zip(m.graph.input[0].type.tensor_type.shape.dim[2:], ("h", "w")):
        d.ClearField("dim_value")
        d.dim_param = name
    p = tmp_path / "dyn.onnx"
    onnx.save(m, p)
    return str(p)


@pytest.mark.parametrize("spec", [["--input", "X[1,3,5,6]"], ["--input", "X:1x3x5x6"],
                                  ["--input", "X[1,3,5,6]{f32}"], ["--input", "X{f32}[1,3,5,6]"],
                                  ["--input-shapes", "X:[1,3,5,6]"]])
def test_inspect_takes_every_spelling_of_an_input_shape(tmp_path, spec):
    from resample_bridge.tools.cli import main

    path = _dynamic_model(tmp_path)
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["inspect", path, *spec]) == 0
    assert "H 5->10" in out.getvalue() and "W 6->12" in out.getvalue(), out.getvalue()


def test_an_input_named_alone_keeps_its_shape_and_an_unknown_name_or_another_type_is_refused(tmp_path, capsys):
    from resample_bridge.tools.cli import main

    path = _dynamic_model(tmp_path)
    assert main(["inspect", path, "--json"]) == 0
    as_declared = capsys.readouterr().out
    assert main(["inspect", path, "--input", "X", "--json"]) == 0
    assert capsys.readouterr().out == as_declared  # named: H and W stay dynamic
    assert main(["inspect", path, "--input", "images"]) == 2
    assert "the model has no input 'images'" in capsys.readouterr().err
    assert main(["inspect", path, "--input", "X[1,3,5,6]{f16}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "field 'input'" in err[0] and "is f32 in the model, not f16" in err[0], err
    assert main(["inspect", path, "--input", "X[1,3,5,6]{q7}"]) == 2
    assert "unknown element type 'q7'" in capsys.readouterr().err


@pytest.mark.parametrize("tail", ["x.xml", "deeper/x.xml"])
def test_an_output_under_a_file_says_the_parent_is_a_file(tmp_path, capsys, tail):
    from resample_bridge.tools.cli import main

    path = _dynamic_model(tmp_path)
    (tmp_path / "file.onnx").write_bytes(b"not a folder")
    assert main(["convert", path, "-o", str(tmp_path / "file.onnx" / tail)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{tmp_path / 'file.onnx'} is a file, not a folder" in err[0], err
    assert sorted(os.listdir(tmp_path)) == ["dyn.onnx", "file.onnx"]


def test_build_plugin_o_is_a_folder_named_so_and_its_first_spelling_still_parses():
    from resample_bridge.tools.cli import build_parser

    p = build_parser()
    for flag in ("-o", "--output-dir", "--output"):
        assert p.parse_args(["build-plugin", flag, "libdir"]).output == "libdir"
    convert = next(sub for _, sub in _parsers(p) if sub.prog.endswith(" convert"))
    helps = {f: a.help for a in convert._actions for f in a.option_strings}
    assert "names tensors" in helps["-o"] and "tensors" in helps["--output"]


def test_the_package_has_a_docstring_and_a_version_from_its_metadata():
    import re
    from importlib.metadata import version
    from pathlib import Path

    import resample_bridge

    assert "resample_bridge import api" in (resample_bridge.__doc__ or "")
    assert resample_bridge.__version__ == version("resample-bridge")
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert resample_bridge.__version__ == re.search(r'^version = "(.+)"', pyproject, re.M).group(1)


@pytest.mark.openvino
def test_api_verify_takes_atol_and_rtol_and_says_when_they_are_looser_than_the_defaults():
    from resample_bridge import api
    from resample_bridge.tools.verify_openvino import format_verify
    from tests.helpers.models import resize_model

    m = resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="linear")
    loose = api.verify(m, atol=1e-3, rtol=1e-3)
    assert loose.ok and len(loose.raw["looser"]) == 2, loose.raw.get("looser")
    assert "judged under tolerances looser than the defaults: node r" in format_verify(loose.raw)
    strict = api.verify(m, atol={"": 0.0}, rtol=0.0)  # stricter than the bound: judged, not noted
    assert "looser" not in strict.raw
    with pytest.raises(TypeError, match="unexpected keyword argument 'atool'.*atol, rtol"):
        api.verify(m, atool=1e-3)
    with pytest.raises(BridgeError, match="atol must be a finite number"):
        api.verify(m, atol=-1.0)


def test_api_errors_name_parameters_not_flags(tmp_path):
    from resample_bridge import api
    from resample_bridge.tools.api_terms import in_api_terms
    from tests.helpers.models import resize_model

    assert in_api_terms("give --input; --input-shapes, -o and --force") == \
        "give input_shapes; input_shapes, output and force=True"
    m = resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="nearest")
    (tmp_path / "m.onnx").write_bytes(b"")
    with pytest.raises(BridgeError) as e:
        api.convert(m, tmp_path / "m.onnx", target="onnx")
    assert "force=True" in e.value.message and "--" not in e.value.message, e.value.message
    with pytest.raises(BridgeError) as e:
        api.inspect(m, input_shapes={"images": [1, 1, 6, 6]})
    assert e.value.field == "input_shapes"


@pytest.mark.openvino
def test_api_convert_model_takes_input_shapes_and_outputs(tmp_path):
    from resample_bridge import api

    model = onnx.load(_dynamic_model(tmp_path))
    ov_model, records = api.convert_model(model, input_shapes={"X": [1, 3, 5, 6]}, outputs=["Y"])
    assert list(ov_model.inputs[0].get_shape()) == [1, 3, 5, 6] and [r.node for r in records] == ["r"]
    assert list(ov_model.outputs[0].get_shape()) == [1, 3, 10, 12]


def test_inspect_says_constant_scales_are_constants_on_a_dynamic_input(tmp_path, capsys):
    from resample_bridge.tools.cli import main

    assert main(["inspect", _dynamic_model(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "bound at run time" not in out
    assert "scales [2, 2] constant, lengths follow the run-time input shape [1, 3, ?, ?]" in out, out


@pytest.mark.parametrize("scale", [2, 3, 1.5])
def test_integer_or_float32_scale_asymmetric_floor_nearest_lists_no_tie(scale):
    """src = dst / scale is an integer only where float32's correctly rounded division gives it exactly."""
    from resample_bridge import api
    from resample_bridge.semantics.reference import run
    from tests.helpers.models import resize_model

    for mode in ("floor", "ceil"):
        m = resize_model((1, 1, 10, 10), scales=[1, 1, scale, scale], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode=mode)
        (row,) = api.inspect(m)
        assert row.ties == {}, (scale, mode, row.ties)
    # The ties that are real stay: 6 -> 4 asymmetric, src = 3/2*dst lands halfway at dst 1 and 3, where the
    # rounding mode decides
    m = resize_model((1, 1, 6, 6), sizes=[1, 1, 4, 4], mode="nearest", nearest_mode="round_prefer_floor",
                     coordinate_transformation_mode="asymmetric")
    (row,) = api.inspect(m)
    assert row.ties == {"H": [1, 3], "W": [1, 3]}
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    assert run(row.ir, x)[0, 0, 0, 1] == x[0, 0, 0, 1]  # round_prefer_floor: 1.5 reads input 1, not 2


def test_an_integer_node_is_said_to_be_compared_exactly_not_by_a_tiny_atol():
    from resample_bridge import api
    from resample_bridge.semantics.compare import against_oracle
    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.verify_openvino import tolerance_text
    from tests.helpers.models import resize_model

    (row,) = api.inspect(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="linear", dtype=TensorProto.UINT8))
    x = np.arange(36, dtype=np.uint8).reshape(1, 1, 6, 6) * 7
    want = run(row.ir, x)
    judged = against_oracle(row.ir, want + 1, want, [x]).to_dict()
    assert not judged["ok"] and tolerance_text(judged) == "exact (integers are compared exactly)"
    (frow,) = api.inspect(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="linear"))
    xf = x.astype(np.float32)
    assert tolerance_text(against_oracle(frow.ir, run(frow.ir, xf) + 1, run(frow.ir, xf), [xf]).to_dict()) == \
        "the float32 error bound"


def test_a_uint8_resize_the_onnx_target_refuses_names_the_rungs_and_the_way_out(tmp_path, capsys):
    from resample_bridge.tools.cli import main
    from tests.helpers.models import resize_model

    m = resize_model((1, 1, "h", "w"), scales=[1, 1, 2, 2], mode="linear", dtype=TensorProto.UINT8)
    onnx.save(m, tmp_path / "u8.onnx")
    assert main(["convert", str(tmp_path / "u8.onnx"), "--target", "onnx", "-o", str(tmp_path / "o.onnx")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "node 'r', field 'rung': native: onnxruntime truncates integer linear" in line
    assert line.endswith("give the input shapes with --input (the tap tables are exact for fixed shapes)"), line
    assert main(["convert", str(tmp_path / "u8.onnx"), "--target", "onnx", "-o", str(tmp_path / "o.onnx"),
                 "--input", "X[1,1,6,6]"]) == 0  # the advice works: rung 3, proven on onnxruntime
    assert "rung 3 (decomposition)" in capsys.readouterr().out
