"""Issue 43, third pass: what a newcomer trips on in the CLI and the API, tried through the real CLI."""

import json
import os
import subprocess
import sys

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
    """A linear Resize whose scales are a graph input: only the extension computes it exactly."""
    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], name="scales_at_run_time", mode="linear")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 8, 8]),
                                            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
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
