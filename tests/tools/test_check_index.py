"""``check``'s rows for the model's own index arithmetic (``tools/check_index.py``): a shape the dynamic dimensions
admit where OpenVINO's importer computes other integers than onnxruntime from a float Div on shapes; judged here by
running the whole model at that shape in both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.tools.check_index import ROW_OP, index_rows  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402

NEAREST_EXACT = Path(__file__).resolve().parents[1] / "models" / "dy18_dynhw_nearest_exact_conv_x1_5" / "model.onnx"


def test_the_dynamo_nearest_exact_is_found_at_a_shape_where_the_importer_differs():
    (row,) = index_rows(onnx.load(str(NEAREST_EXACT)))
    v = row["openvino"]
    assert row["op"] == ROW_OP and v["verdict"] == "silently different"
    x = np.random.default_rng(0).standard_normal(v["shape"]).astype(np.float32)
    want = ort.InferenceSession(str(NEAREST_EXACT), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = ov.Core().compile_model(ov.convert_model(str(NEAREST_EXACT)), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert got.shape != want.shape or np.abs(got - want).max() > 1e-2, v["shape"]


def test_the_gate_fails_on_it(capsys):
    assert main(["check", str(NEAREST_EXACT)]) == 1
    out = capsys.readouterr().out
    assert f"({ROW_OP}): OpenVINO importer: silently different (on input shape" in out, out
    # the model holds no resampling node: the row is counted as what it is
    assert "summary: 0 resampling nodes, 1 index arithmetic row;" in out, out


def _halved(divisor: float):
    """Y = Gather(X, Cast(Range(0, W) / divisor) along W): an index from the input's width through a float Div."""
    nodes = [helper.make_node("Shape", ["X"], ["s"], start=1, end=2),
             helper.make_node("Squeeze", ["s"], ["w"]),
             helper.make_node("Range", ["zero", "w", "one"], ["r"]),
             helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["rf", "d"], ["q"]),
             helper.make_node("Cast", ["q"], ["i"], to=TensorProto.INT64),
             helper.make_node("Gather", ["X", "i"], ["Y"], axis=1)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, "w"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_tensor("zero", TensorProto.INT64, [], [0]), helper.make_tensor("one", TensorProto.INT64, [], [1]),
         helper.make_tensor("d", TensorProto.FLOAT, [], [divisor])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_division_the_importer_computes_exactly_makes_no_row():
    """i / 2: a * (1 / b) is exact for a power of two: nothing differs on any shape tried, so no row."""
    assert index_rows(_halved(2.0)) == []


def test_a_division_by_a_value_of_the_model_makes_no_row():
    """The divisor a graph input: not index arithmetic on shapes (its values are the user's to feed)."""
    model = _halved(2.0)
    model.graph.initializer.pop()  # "d" becomes a graph input
    model.graph.input.append(helper.make_tensor_value_info("d", TensorProto.FLOAT, []))
    assert index_rows(model) == []


def test_a_division_by_a_constant_that_moves_an_index_makes_a_row():
    """i / 1.7: 17 * (1 / 1.7) is 9.9999999 in float32 where 17 / 1.7 is 10 (numpy: 240 of 4096 indices), so the
    importer's Gather reads another column; the row's shape shows it on the model itself."""
    model = _halved(1.7)
    (row,) = index_rows(model)
    w = row["openvino"]["shape"][1]
    x = np.arange(2 * w, dtype=np.float32).reshape(2, w)
    got = ov.Core().compile_model(ov.convert_model(_bytes(model)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert not np.array_equal(got, want)


def _bytes(model):
    import io

    return io.BytesIO(model.SerializeToString())
