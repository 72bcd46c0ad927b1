"""verify's lines where the input or the result is unusual: a converted file that does not exist, a grid of NaN and
infinities (no library warning with a source path), a network whose own bf16 rounding fails the tolerance (OpenVINO's
importer measured beside it), a precision this CPU does not compute in (named as what ran)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import resize_model, saved, strict_json  # noqa: E402
from tests.helpers.precision import needs_bf16, ran_at  # noqa: E402


def test_a_converted_file_that_does_not_exist_is_said_so(tmp_path, capsys):
    """``--converted`` naming no file: one line saying so (it said "is not an OpenVINO .xml file"), status 2."""
    src = saved(resize_model((1, 2, 6, 5), scales=[1, 1, 2, 1.5], mode="cubic", name="c"), tmp_path, "m.onnx")
    assert main(["verify", src, "--converted", str(tmp_path / "none" / "m.xml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "field 'converted'" in err[0] and "no such file: " in err[0], err


def test_non_finite_grid_values_print_no_source_path(tmp_path):
    """A GridSample fed NaN and infinite grid coordinates (RAFT at a size below its smallest pyramid level): the
    oracle's numpy arithmetic meets NaN there, and its RuntimeWarning printed "/.../semantics/reference.py:162:"
    with the line of code; the command's output holds no source path."""
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("GridSample", ["X", "G"], ["Y"], align_corners=1, name="gs")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 3]),
                                            helper.make_tensor_value_info("G", TensorProto.FLOAT, [1, 1, 4, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    src = tmp_path / "gs.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8), src)
    feeds = tmp_path / "in.npz"
    np.savez(feeds, X=np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3),
             G=np.array([np.nan, 0, np.inf, 0, 0, -np.inf, 0.5, 0.25], np.float32).reshape(1, 1, 4, 2))
    import subprocess
    import sys

    # a process of its own, as the user runs it (pytest records warnings instead of printing them)
    done = subprocess.run([sys.executable, "-m", "resample_bridge.tools.cli", "verify", str(src), "--load-inputs",
                           str(feeds)], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1) and ".py:" not in done.stdout + done.stderr and "Warning" not in done.stderr, \
        done.stderr


def test_a_networks_own_bf16_rounding_is_said_beside_the_importers(tmp_path, capsys):
    """At bf16 the output of Conv(b, 1.001 w) - Conv(b, w) after a nearest x2 is mostly bf16 rounding (OpenVINO's
    default here): the output fails the tolerance and the row says OpenVINO's own importer is as far off, while
    the node passes; at f32 no such line. Skipped on a CPU without bf16."""
    needs_bf16()
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((16, 16, 3, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w1"), numpy_helper.from_array((w * 1.001).astype(np.float32), "w3"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")]
    nodes = [helper.make_node("Conv", ["X", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["a", "", "s"], ["b"], mode="nearest", name="up"),
             helper.make_node("Conv", ["b", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["b", "w3"], ["d"], pads=[1, 1, 1, 1]),
             helper.make_node("Sub", ["d", "c"], ["Y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 16, 8, 8])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    src = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), src)
    xml = str(tmp_path / "out" / "m.xml")
    assert main(["convert", src, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml, "--precision", "bf16"]) == 1
    out = capsys.readouterr().out
    assert "OpenVINO's own importer at bf16 is as far off" in out and "1 resampling node passed" in out, out
    assert main(["verify", src, "--converted", xml]) == 0
    assert "own importer" not in capsys.readouterr().out


@pytest.mark.parametrize("precision", ["bf16", "f16"])
def test_verify_names_the_precision_the_cpu_ran(tmp_path, capsys, precision):
    """``--precision bf16`` / ``f16`` on a CPU that does not compute in it: OpenVINO runs the hint in f32 without a
    word, and verify labelled the run "OpenVINO CPU bf16"; it names f32 and says why in one line. Where the CPU
    computes in it (read from OpenVINO's capabilities), the label is that precision and no such line."""
    src = saved(resize_model((1, 2, 6, 5), scales=[1, 1, 2, 1.5], mode="linear"), tmp_path, "m.onnx")
    assert main(["verify", src, "--precision", precision]) == 0
    out, ran = capsys.readouterr().out, ran_at(precision)
    assert f"model outputs (OpenVINO CPU {ran} vs " in out, out
    said = [line for line in out.splitlines() if f"this CPU does not compute in {precision}" in line]
    assert len(said) == (ran != precision), out
    assert main(["verify", src, "--precision", precision, "--json"]) == 0
    assert strict_json(capsys.readouterr().out)["precision"] == ran
