"""The default policy weighs integer linear / cubic Resize by rates timed on integers (``cost_timing.INTEGER``):
no built-in op computes them exactly, the decomposition runs in int32 and the extension's exact integer sums at
other speeds than float32's. Fixed tables (``cost.using``) make the choices the same on every machine; the
converted model is run on OpenVINO and compared with the oracle bit for bit."""

import functools
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import cost  # noqa: E402
from resample_bridge.lowering.openvino.target import convert as _convert  # noqa: E402

# The cost model weighs the extension under --prefer fastest (the default is portable since issue 42).
convert = functools.partial(_convert, prefer="fastest")
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
ELEM = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.float32: TensorProto.FLOAT}


def _resize(dtype, shape=(1, 3, 30, 40), sizes=(1, 3, 14, 18), mode="linear"):
    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="r", mode=mode)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", ELEM[dtype], list(shape))],
                          [helper.make_tensor_value_info("Y", ELEM[dtype], None)],
                          [numpy_helper.from_array(np.array(sizes, np.int64), "sz")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _table(decomposition, extension, suffix="/int"):
    return cost.Calibration({f"decomposition/linear/plain/down{suffix}": decomposition,
                             f"extension/linear/plain/down{suffix}": extension, "copy": 0.0, "layout": 0.0},
                            "the test's table")


@pytest.mark.compiled
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("prefer, rung", [("fastest", 4), ("builtin", 3)])
def test_integer_linear_takes_the_extension_where_its_integer_rates_say(tmp_path, dtype, prefer, rung):
    """The integer rates (here 4x apart) decide, the extension taken computes the oracle's bits on OpenVINO, and
    ``--prefer builtin`` keeps the decomposition."""
    from resample_bridge.lowering import compiled

    path = tmp_path / "m.onnx"
    onnx.save(_resize(dtype), path)
    with cost.using(_table(4.0, 1.0)):
        ov_model, (rec,) = convert(str(path), prefer=prefer)
    assert rec.rung == rung, rec.summary()
    if rung == 4:
        assert rec.extra["cost"]["chosen_ms"] == pytest.approx(4.0 * 3 * 14 * 18 / 1e6)
        assert "cost model: 4x faster than the decomposition (rung 3)" in rec.reason, rec.reason
    core = ov.Core()
    core.add_extension(compiled.openvino_extension())
    info = np.iinfo(dtype)
    x = np.random.default_rng(0).integers(info.min, info.max + 1, (1, 3, 30, 40)).astype(dtype)
    (_, ir), = parse_model(str(path))
    got = core.compile_model(ov_model, "CPU", F32)([x])[0]
    assert got.dtype == dtype and np.array_equal(got, run(ir, x))


def test_integer_nodes_read_the_integer_rates_only():
    """The float32 rates do not stand in for integer ones (a table without them weighs nothing), and float32
    nodes do not read the integer ones."""
    ir_int, ir_float = (parse_model(_resize(dt))[0][1] for dt in (np.uint8, np.float32))
    shape = (1, 3, 30, 40)
    assert cost.estimate(ir_int, 3, shape, _table(4.0, 1.0))["chosen_ms"] == pytest.approx(4.0 * 756 / 1e6)
    assert cost.estimate(ir_int, 3, shape, _table(4.0, 1.0, suffix="")) is None
    assert cost.estimate(ir_float, 3, shape, _table(4.0, 1.0)) is None


def test_the_reference_table_has_every_integer_class():
    rates = json.loads(cost.REFERENCE.read_text())["rates"]
    for kind in ("linear", "cubic"):
        for aa in ("plain", "aa"):
            for up in ("up", "down"):
                for cls in ("decomposition", "extension"):
                    assert rates.get(f"{cls}/{kind}/{aa}/{up}/int", 0) > 0, (cls, kind, aa, up)
    # What sent the class here: the int32 decomposition, several times the extension's time per element.
    assert rates["decomposition/linear/plain/down/int"] > 2 * rates["extension/linear/plain/down/int"]
