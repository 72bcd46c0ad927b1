"""A linear Resize above rank 5: OpenVINO's CPU Interpolate in linear_onnx mode aborts the whole process at
inference there ("free(): invalid pointer", SIGABRT: measured on 2026.4.1 with the model its own importer writes),
which took `convert` and `check` down with it (exit 134, no message). Neither runs such an op now: `convert` takes
the decomposition and computes the oracle's numbers, `check` says the importer's model does not run. The verbs
run in child processes: a regression aborts the child, not the test session."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino.graph import cpu_aborts  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

pytestmark = pytest.mark.openvino
SHAPE = [1, 2, 3, 4, 8, 8]


def _model(path, mode="linear"):
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], mode=mode)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("sc", TensorProto.FLOAT, [6], [1, 1, 1, 1, 2, 1.5])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), path)
    return path


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "resample_bridge.tools.cli", *map(str, args)], cwd=cwd,
                          env=dict(os.environ, CI="true"), capture_output=True, text=True, timeout=600)


def test_convert_does_not_run_linear_onnx_above_rank_5(tmp_path):
    src = _model(tmp_path / "m.onnx")
    r = _cli("convert", src, "-o", tmp_path / "m.xml", cwd=tmp_path)
    assert r.returncode == 0 and "rung 3" in r.stdout, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    (_, ir), = parse_model(str(src))
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    got = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert against_oracle(ir, got, run(ir, x), [x]).ok


def test_check_says_the_importers_model_does_not_run(tmp_path):
    src = _model(tmp_path / "m.onnx")
    r = _cli("check", src, cwd=tmp_path)
    assert r.returncode in (0, 1) and "refused: converts but does not run on CPU" in r.stdout and \
        "linear_onnx" in r.stdout, (r.returncode, r.stdout[-500:], r.stderr[-500:])


def test_the_guard_reads_the_mode_and_the_rank():
    """The importer's own model holds linear_onnx at rank 6; at rank 5, or cubic at rank 6, it runs."""
    import openvino.opset11 as o

    def interpolate(rank, mode):
        x = o.parameter(SHAPE[-rank:], np.float32)
        y = o.interpolate(x, o.constant(np.array([2, 2], np.float32)), mode, "scales",
                          axes=o.constant(np.array([rank - 2, rank - 1], np.int64)))
        return ov.Model([y], [x])

    assert "rank 5 (here 6" in cpu_aborts(interpolate(6, "linear_onnx"))
    assert cpu_aborts(interpolate(5, "linear_onnx")) is None and cpu_aborts(interpolate(6, "cubic")) is None
