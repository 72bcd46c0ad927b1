"""The Python facade ``resample_bridge.api``: typed results, exact saving, the same verbs as the CLI."""

import numpy as np
import onnx
import pytest

from resample_bridge import api
from resample_bridge.lowering.passes import NodeRecord
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.translate.onnx import parse_model
from tests.helpers.models import resize_model

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _symmetric_1_7():
    """Rung 3 (tap-table decomposition): its f32 tap weights are not all f16 values."""
    return resize_model((1, 3, 20, 20), scales=[1, 1, 1.7, 1.7], mode="linear",
                        coordinate_transformation_mode="half_pixel_symmetric")


def _nearest_ties():
    """OpenVINO's importer resolves the 20 -> 6 ties in fp32 and reads other elements: silently different."""
    return resize_model((1, 1, 20, 20), sizes=[1, 1, 6, 6], name="nn", mode="nearest",
                        coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")


def _run_xml(path, x, extension=None):
    import openvino as ov

    core = ov.Core()
    if extension:
        core.add_extension(extension)
    return core.compile_model(core.read_model(str(path)), "CPU", F32)([x])[0]


def test_the_facade_is_one_module():
    import resample_bridge.tools.api as impl

    assert api.convert is impl.convert and api.Conversion is impl.Conversion
    assert "compress_to_fp16" in api.__doc__


def test_save_keeps_tap_tables_exact_where_openvino_defaults_round_them(tmp_path):
    import openvino as ov

    model = _symmetric_1_7()
    ov_model, records = api.convert_model(model)
    assert [type(r) for r in records] == [NodeRecord] and records[0].rung == 3
    x = np.random.default_rng(0).standard_normal((1, 3, 20, 20)).astype(np.float32)
    (_, ir), = parse_model(model)
    want = oracle(ir, x, None, np.array([1, 1, 1.7, 1.7], np.float32), None)
    # The hazard is real: OpenVINO's default save rounds the tap weights to f16.
    ov.save_model(ov_model, str(tmp_path / "default.xml"))
    assert np.abs(_run_xml(tmp_path / "default.xml", x) - want).max() > 1e-4
    conv = api.save(ov_model, records, str(tmp_path / "safe.xml"))
    assert conv.files["bin"] == str(tmp_path / "safe.bin") and conv.records == tuple(records)
    assert np.abs(_run_xml(conv.output, x) - want).max() < 1e-5


def test_convert_writes_like_ovc_and_returns_records(tmp_path, monkeypatch):
    path = tmp_path / "sym.onnx"
    onnx.save(_symmetric_1_7(), path)
    conv = api.convert(str(path), str(tmp_path / "new" / "dir" / "out.xml"))
    assert conv.output == str(tmp_path / "new" / "dir" / "out.xml")
    assert (tmp_path / "new" / "dir" / "out.bin").exists() and conv.extension is None
    assert [(r.node, r.rung, r.rung_name) for r in conv.records] == [("r", 3, "decomposition")]
    monkeypatch.chdir(tmp_path)
    assert api.convert(str(path)).output == str(tmp_path / "sym.xml")  # ovc's default name
    with pytest.raises(api.BridgeError) as e:
        api.convert(str(path))  # exists: never replaced without force
    assert e.value.field == "output"
    x = np.random.default_rng(1).standard_normal((1, 3, 20, 20)).astype(np.float32)
    (_, ir), = parse_model(str(path))
    want = oracle(ir, x, None, np.array([1, 1, 1.7, 1.7], np.float32), None)
    assert np.abs(_run_xml(conv.output, x) - want).max() < 1e-5


def test_convert_onnx_target_returns_records(tmp_path):
    conv = api.convert(_symmetric_1_7(), str(tmp_path / "p.onnx"), target="onnx")
    assert conv.target == "onnx" and [(r.node, r.rung) for r in conv.records] == [("r", 1)]  # ONNX has the op
    import onnxruntime as ort

    x = np.random.default_rng(2).standard_normal((1, 3, 20, 20)).astype(np.float32)
    (_, ir), = parse_model(_symmetric_1_7())
    got = ort.InferenceSession(conv.output, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert np.abs(got - oracle(ir, x, None, np.array([1, 1, 1.7, 1.7], np.float32), None)).max() < 1e-5


def test_check_is_typed_and_gates(tmp_path):
    bad = api.check(_nearest_ties())
    (row,) = bad.rows
    assert isinstance(row, api.CheckRow) and row.name == "nn"
    assert (row.importer, row.outcome) == ("silently different", "different") and row.max_error > 0.1
    assert row.rung == 3 and not bad.passed
    good = api.check(resize_model((1, 1, 8, 8), scales=[1, 1, 2, 2], mode="linear"))
    assert good.rows[0].outcome == "exact" and good.passed


def test_inspect_under_both_conventions():
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 0.6, 0.6], mode="linear",
                     coordinate_transformation_mode="align_corners")
    (spec,) = api.inspect(m)
    (ref,) = api.inspect(m, convention="reference")
    assert spec.text[0].startswith("H 4->2: src = 3*dst") and ref.text[0].startswith("H 4->2: src = ~2.142857*dst")
    assert spec.ir != ref.ir


def test_verify_converted_file(tmp_path):
    path = tmp_path / "sym.onnx"
    onnx.save(_symmetric_1_7(), path)
    conv = api.convert(str(path), str(tmp_path / "out.xml"))
    result = api.verify(str(path), converted=conv.output)
    assert result.ok and result.nodes[0].name == "r" and result.nodes[0].max_abs < 1e-5
    assert result.nodes[0].shape == (1, 3, 34, 34) and result.nodes[0].shape_mismatch is None
    assert all(isinstance(s, api.ErrorStats) for s in result.outputs + result.nodes)


def test_bad_input_is_a_bridge_error():
    with pytest.raises(api.BridgeError) as e:
        api.inspect(42)
    assert e.value.field == "model"
    with pytest.raises(api.BridgeError) as e:
        api.convert(_symmetric_1_7(), target="coreml")
    assert e.value.field == "target"
    with pytest.raises(api.BridgeError) as e:
        api.verify(_symmetric_1_7(), tolerance=1)
    assert e.value.field == "tolerance"


def test_convert_tensorrt_target_returns_records(tmp_path):
    """TensorRT-ready ONNX needs no TensorRT: a half_pixel_symmetric x2 resize is respelled for its importer."""
    m = resize_model((1, 3, 8, 8), scales=[1, 1, 2, 2], mode="linear",
                     coordinate_transformation_mode="half_pixel_symmetric")
    conv = api.convert(m, str(tmp_path / "t.onnx"), target="tensorrt")
    assert conv.target == "tensorrt" and all(isinstance(r, NodeRecord) for r in conv.records)
    assert [r.rung for r in conv.records] == [2] and "command" in conv.extra
    assert onnx.load(conv.output).graph.node[0].op_type == "Resize"
