"""The whole-model postcondition (lowering/model_check.py) and verify's verdict on whole models (issue 40).

A deliberately broken shape evaluator (the FCOS defect: run-time sizes read as constants) must make convert
refuse, naming the node, the output or the shape; verify must fail a written model whose outputs differ from the
source on onnxruntime, and never pass an output it did not judge."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.translate import onnx_fold  # noqa: E402

DETECTOR = Path(__file__).parents[1] / "models" / "ts16_tv_rcnn_transform_dynhw" / "model.onnx"


def frozen(name, producers, consts, shapes, opset, dim_params, x="", inputs=None):
    """The defect issue 40 found: sizes computed from min/max ratios of the image read as the constant they take
    at one pair of near-square stand-in lengths."""
    return (1, 3, 224, 224)


def test_a_broken_shape_evaluation_is_refused(monkeypatch):
    monkeypatch.setattr(onnx_fold, "partial_value", frozen)
    with pytest.raises(BridgeError) as e:
        convert(str(DETECTOR), prefer="builtin")
    assert e.value.field == "model"
    assert "/transform/Resize" in e.value.message and "read wrong" in e.value.message


def test_the_detector_converts_and_follows_every_aspect_ratio():
    model, records = convert(str(DETECTOR), prefer="builtin")
    import onnxruntime as ort

    sess = ort.InferenceSession(str(DETECTOR), providers=["CPUExecutionProvider"])
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for hw in ((210, 300), (300, 140), (97, 200)):
        x = np.random.default_rng(0).uniform(0, 1, (1, 3) + hw).astype(np.float32)
        want = sess.run(None, {"image": x})[0]
        got = compiled({"image": x})[0]
        assert got.shape == want.shape, hw
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_verify_fails_a_written_model_whose_outputs_differ(tmp_path, monkeypatch):
    """A model written with the frozen sizes (the broken evaluator, the postcondition switched off) is what
    convert wrote before issue 40; verify, with today's reading, fails it."""
    from resample_bridge.lowering import passes
    from resample_bridge.tools.verify_openvino import verify_openvino

    with monkeypatch.context() as m:
        m.setattr(onnx_fold, "partial_value", frozen)
        m.setattr(passes, "whole_model_failures", lambda *a, **k: [])
        model, _ = convert(str(DETECTOR), prefer="builtin")
    ov.save_model(model, str(tmp_path / "frozen.xml"))
    report = verify_openvino(str(DETECTOR), converted=str(tmp_path / "frozen.xml"),
                             shapes={"image": [1, 3, 210, 300]})
    assert report["verdict"] == "FAILED"
    assert report["counts"]["outputs_failed"] == 1


def test_an_output_not_judged_is_not_a_pass():
    from resample_bridge.tools.verify_openvino import _verdict

    report = _verdict({"outputs": [{"name": "y", "ok": None}], "nodes": [{"name": "r", "ok": True}]})
    assert report["verdict"] == "FAILED"


def _miscompiled_chain(tmp_path) -> str:
    """A model whose sizes chain OpenVINO 2026.4.1's CPU plugin compiles, read from an IR file (or from its own
    importer), into the reciprocal scale (16x16 -> 0x0 where onnxruntime gives 224x224); skipped where this
    OpenVINO computes the chain right."""
    import onnx

    from tests.helpers.models import ratio_sized_model

    path = str(tmp_path / "m.onnx")
    onnx.save(ratio_sized_model(), path)
    imported = ov.Core().compile_model(ov.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    if imported([np.zeros((1, 3, 16, 16), np.float32)])[0].shape == (1, 3, 224, 224):
        pytest.skip("this OpenVINO computes the chain right")
    return path


def test_the_written_model_is_checked_as_read_back(tmp_path, monkeypatch):
    """The same model in memory after our conversion computes the chain right: the postcondition runs on what was
    written, and convert refuses and writes nothing. (Shown with the sizes' producer left as the importer
    writes it, as before ``grid_pin`` and ``index_arithmetic`` respelled and pinned it: so, the plugin compiles the
    chain right, below.)"""
    from resample_bridge.lowering.openvino import grid_pin, target
    from resample_bridge.tools.cli import main

    path = _miscompiled_chain(tmp_path)
    monkeypatch.setattr(grid_pin.POSITIONS, "of", lambda ir: ((lambda ir, inputs: []), "none", grid_pin.GRID_OF))
    monkeypatch.setattr(target, "exact_index_arithmetic", lambda model, divisors: {})
    assert main(["convert", path, "-o", str(tmp_path / "out" / "m.xml")]) == 2
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_pinned_sizes_compile_right_where_the_importer_does_not(tmp_path):
    """With the sizes' producer pinned to f32 (``grid_pin``: a Resize's sizes fed at run time), the written model
    read back computes onnxruntime's lengths and numbers at every shape tried, where the importer gives 0x0."""
    import onnxruntime as ort

    from resample_bridge.tools.cli import main

    path = _miscompiled_chain(tmp_path)
    assert main(["convert", path, "-o", str(tmp_path / "out" / "m.xml")]) == 0
    written = ov.Core().compile_model(str(tmp_path / "out" / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for shape in ((1, 3, 16, 16), (1, 3, 32, 48), (1, 3, 7, 9)):
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        want = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        got = written([x])[0]
        assert got.shape == want.shape, (shape, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_onnx_target_checks_the_whole_model_too(monkeypatch, tmp_path):
    """The portable ONNX target: a nearest x2 whose sizes are computed from the input's own shape, read wrong on
    purpose (a constant 32x32), is refused before anything is written; read right, it converts."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from resample_bridge.tools.cli import main

    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Slice", ["shp", "z", "two"], ["nc"]),
             h.make_node("Slice", ["shp", "two", "four"], ["hw"]), h.make_node("Mul", ["hw", "two"], ["hw2"]),
             h.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
             h.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="up", mode="nearest")]
    consts = [nh.from_array(np.array([v]), n) for n, v in (("z", 0), ("two", 2), ("four", 4))]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 3, "h", "w"])], consts)
    path = str(tmp_path / "up.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 16)], ir_version=8), path)
    assert main(["convert", path, "--target", "onnx", "-o", str(tmp_path / "ok.onnx")]) == 0
    monkeypatch.setattr(onnx_fold, "partial_value", lambda *a, **k: (1, 3, 32, 32))
    assert main(["convert", path, "--target", "onnx", "-o", str(tmp_path / "bad.onnx")]) == 2
    assert not (tmp_path / "bad.onnx").exists()


def _divided_height(add: int):
    """X[1, 1, H, W] -> nearest x2 (ours) and Z = (H * 2^20 + add) // 3 in int64: OpenVINO divides integers through
    float32 (its importer too), so Z is off by one where H * 2^20 + add passes 2^24 off a multiple of 3: with
    add 1 at H = 64 only (the second of the probe shapes 16, 64, 96), with add 5 at all three (measured)."""
    from onnx import TensorProto as T, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in (
        ("sc", [1, 1, 2, 2], np.float32), ("ax", 2, np.int64), ("mul", 2 ** 20, np.int64), ("add", add, np.int64),
        ("d", 3, np.int64))]
    nodes = [helper.make_node("Resize", ["X", "", "sc"], ["Y"], name="up", mode="nearest"),
             helper.make_node("Shape", ["X"], ["shp"]), helper.make_node("Gather", ["shp", "ax"], ["h"]),
             helper.make_node("Mul", ["h", "mul"], ["hm"]), helper.make_node("Add", ["hm", "add"], ["n"]),
             helper.make_node("Div", ["n", "d"], ["Z"], name="div")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 1, "H", "W"])],
                          [helper.make_tensor_value_info("Y", T.FLOAT, None),
                           helper.make_tensor_value_info("Z", T.INT64, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_difference_of_openvinos_own_conversion_is_refused_and_said_so():
    """A node that is not a resampling node, computed by OpenVINO's own importer exactly as by the written model
    but otherwise than onnxruntime: the written model computes other numbers, so convert refuses it, and says the
    difference is the runtime's conversion of the user's graph (before, the message named the node only: users of
    a Mask2Former export read a Gather of a shape, [1] for a scalar, as ours)."""
    import onnx

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        onnx.save(_divided_height(1), p)
        with pytest.raises(BridgeError) as e:
            convert(str(p))
    assert e.value.field == "model" and "X[1, 1, 64, 96]" in e.value.message and "div (Div)" in e.value.message, \
        e.value.message
    assert "OpenVINO's own importer computes it so too" in e.value.message, e.value.message
    # a dynamic model: the one line keeps what to do (fixed lengths, where the model runs at them)
    assert e.value.line().endswith("convert --input gives them"), e.value.line()


def _empty_half_concat():
    """A stride-16 pool, its even and odd rows concatenated on the channels (a Swin patch merge's shape), then a
    nearest x2 Resize: at the probes' first shape, 16 x 16, the pool leaves one row and the odd half none, which
    onnxruntime concatenates and OpenVINO refuses (Mask2Former's Swin backbone exported with dynamic H / W)."""
    from onnx import TensorProto as T, helper, numpy_helper

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)
    nodes = [helper.make_node("MaxPool", ["X"], ["p"], kernel_shape=[16, 16], strides=[16, 16]),
             helper.make_node("Slice", ["p", "zero", "end", "h", "two"], ["even"]),
             helper.make_node("Slice", ["p", "one", "end", "h", "two"], ["odd"]),
             helper.make_node("Concat", ["even", "odd"], ["c"], axis=1),
             helper.make_node("Resize", ["c", "", "s"], ["Y"], name="r", mode="nearest")]
    inits = [i64("zero", [0]), i64("one", [1]), i64("end", [1 << 30]), i64("h", [2]), i64("two", [2]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 1, "h", "w"])],
                          [helper.make_tensor_value_info("Y", T.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_a_probe_shape_openvino_cannot_run_at_all_is_skipped():
    """The whole-model check's first probe shape, where OpenVINO's own importer cannot run the source model either:
    the shape's, not the conversion's, so convert goes on to the other probe shapes (it refused the model before);
    the written model computes onnxruntime's numbers where OpenVINO runs it."""
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        onnx.save(_empty_half_concat(), p)
        core = ov.Core()
        with pytest.raises(RuntimeError):  # OpenVINO's importer, at the first probe shape
            core.compile_model(core.read_model(str(p)), "CPU")(np.zeros((1, 1, 16, 16), np.float32))
        model, records = convert(str(p))
        assert [r.rung for r in records] == [1]
        session = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        for h, w in ((64, 96), (160, 32)):
            x = np.random.default_rng(h).standard_normal((1, 1, h, w)).astype(np.float32)
            assert np.array_equal(compiled(x)[0], session.run(None, {"X": x})[0])


def _resize_in_a_body():
    """An If whose branches resize a uint8 image: linear x2 (then, where onnxruntime truncates the taps' sum and
    the spec rounds half to even) and nearest x2 (else)."""
    from onnx import TensorProto as T, helper, numpy_helper

    def branch(name, mode):
        node = helper.make_node("Resize", ["X", "", "s"], [name + "_y"], mode=mode, name=name + "_resize")
        return helper.make_graph([node], name, [], [helper.make_tensor_value_info(name + "_y", T.UINT8, [1, 1, 8, 8])])
    node = helper.make_node("If", ["c"], ["Y"], then_branch=branch("t", "linear"), else_branch=branch("e", "nearest"),
                            name="if0")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", T.UINT8, [1, 1, 4, 4]),
                                        helper.make_tensor_value_info("c", T.BOOL, [])],
                          [helper.make_tensor_value_info("Y", T.UINT8, [1, 1, 8, 8])],
                          [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_difference_inside_a_body_names_the_resampling_node_there():
    """onnxruntime's own Resize inside an If body (it truncates uint8 linear results) cannot be put right by the
    oracle-corrected reference, which corrects top-level nodes only: convert refuses the model, and the one line
    names the body's node onnxruntime departs from, uncut (it said "not a resampling node" of the If, and was cut
    at its line's cap); -v's full text shows the values."""
    import onnx
    import onnxruntime as ort

    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    model = _resize_in_a_body()
    x = np.array([[[[0, 1, 2, 3], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 17]]]], np.uint8)
    ir = dict(parse_model(model))["if0/then_branch/t_resize"]
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "c": np.array(True)})[0]
    assert not np.array_equal(theirs, run(ir, x, None, np.array([1, 1, 2, 2], np.float32), None))  # the premise
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        onnx.save(model, p)
        with pytest.raises(BridgeError) as e:
            convert(str(p))
    line = e.value.line()
    assert e.value.field == "model" and "if0/then_branch/t_resize" in line and "more characters" not in line, line
    assert "not a resampling node" not in e.value.message and "gives values" in e.value.message, e.value.message


def test_the_probes_stay_inside_the_bounds_input_gives():
    """ovc's bounded dimensions (``--input "x[1,3,64..256,100..]"``): the whole-model check probed 16 x 16 all the
    same, and refused a dynamic Deformable DETR on NaNs OpenVINO computes only at a length the user had ruled
    out. The bounds name the dimension and every probe length lies inside them."""
    from onnx import TensorProto, helper

    from resample_bridge.lowering.model_probes import probes
    from resample_bridge.translate.onnx_shapes import bounds, parse_ovc_inputs, with_input_shapes

    assert bounds("64..256") == (64, 256) and bounds("..4") == (1, 4) and bounds("100..") == (100, None)
    assert bounds("H") is None and bounds(None) is None
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    fixed = with_input_shapes(model, parse_ovc_inputs("x[1,3,64..80,100..]"))
    shapes = [p.shapes["x"] for p in probes(fixed)]
    assert len(shapes) == 3
    assert all(64 <= h <= 80 and w >= 100 for _, _, h, w in shapes), shapes
    assert {p.shapes["x"] for p in probes(model)} >= {(1, 3, 16, 16)}  # without bounds: as before


def test_the_written_model_keeps_the_bounds_input_gives(tmp_path):
    """ovc writes ``--input "x[1,3,64..256,100..]"`` as interval dimensions of the IR's input; so does convert (the
    written model was fully dynamic before, and a runtime was told nothing of the bounds)."""
    from pathlib import Path

    from resample_bridge.tools.cli import main

    src = Path(__file__).resolve().parents[1] / "models" / "dy18_dynhw_nearest_exact_conv_x1_5" / "model.onnx"
    xml = tmp_path / "m.xml"
    assert main(["convert", str(src), "--input", "x[1,3,64..256,100..]", "-o", str(xml)]) == 0
    shape = ov.Core().read_model(str(xml)).inputs[0].get_partial_shape()
    assert str(shape) == "[1,3,64..256,100..]", shape
    assert main(["convert", str(src), "-o", str(tmp_path / "plain.xml")]) == 0
    assert str(ov.Core().read_model(str(tmp_path / "plain.xml")).inputs[0].get_partial_shape()) == "[1,3,?,?]"


def test_a_single_value_in_another_rank_is_not_a_difference():
    """OpenVINO spells some single values as [1] where onnxruntime has [] (torchvision's SSD anchor generator: the
    Mul of two Gathers of a shape): the attribution reads them as the same tensor, so a refusal names the node that
    computes other numbers (there: a TopK), not that Mul; tensors of more values keep their shapes."""
    from resample_bridge.lowering.model_check import _aligned

    got = _aligned(np.array([6], np.int64), np.array(6, np.int64))
    assert got.shape == () and got == 6
    assert _aligned(np.zeros((1, 2)), np.zeros(2)).shape == (1, 2)


def _grid_from_width_past(least: int):
    """Y = GridSample(X, G * (sqrt(W - least) * 0 + 1)): its grid is NaN below the width ``least`` (RAFT below
    its least size: its coarsest level's grid divides 0 by 0), the constant G from there on."""
    from onnx import TensorProto as T, helper, numpy_helper

    g = np.random.default_rng(0).uniform(-1.1, 1.1, (1, 4, 5, 2)).astype(np.float32)
    nodes = [helper.make_node("Shape", ["X"], ["s"], start=3, end=4), helper.make_node("Cast", ["s"], ["w"], to=1),
             helper.make_node("Sub", ["w", "least"], ["d"]), helper.make_node("Sqrt", ["d"], ["r"]),
             helper.make_node("Mul", ["r", "zero"], ["z"]), helper.make_node("Add", ["z", "one"], ["k"]),
             helper.make_node("Mul", ["G", "k"], ["grid"]),
             helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", align_corners=1)]
    inits = [numpy_helper.from_array(g, "G")] + [numpy_helper.from_array(np.array([v], np.float32), n)
                                                 for n, v in (("least", least), ("zero", 0), ("one", 1))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 2, "h", "w"])],
                              [helper.make_tensor_value_info("Y", T.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)


def test_a_probe_shape_below_the_models_domain_gives_way_to_a_larger_one():
    """Below its least width the model's grid is NaN (OpenVINO and PyTorch give NaN there, onnxruntime and the
    oracle read other elements: the spec has no word for it): the whole-model check skips those probe shapes and
    runs the model at twice their lengths, where it computes onnxruntime's numbers (refused before, naming the
    GridSample as not its oracle's output: RAFT with dynamic H / W)."""
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        onnx.save(_grid_from_width_past(100), p)
        ov_model, records = convert(str(p))
        assert [r.rung for r in records] == [1]
        x = np.random.default_rng(1).standard_normal((1, 2, 40, 130)).astype(np.float32)
        want = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5)  # (float32 coordinates; another element is O(1) off)


def _loop_resizing_each(mode: str = "half_pixel"):
    """A Loop over N masks, each resized (linear) to its own run-time size read from ``hw`` in the body,
    sizes = Concat(Shape(mask)[:2], hw[i]) as torchvision's paste_masks exports it; each iteration's sum and
    maximum are stacked, [N, 2]."""
    from onnx import TensorProto as T, helper, numpy_helper

    c = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("zero", [0]), ("two", [2]), ("i0", 0))]
    body = helper.make_graph(
        [helper.make_node("Gather", ["masks", "i"], ["m"], axis=0),
         helper.make_node("Unsqueeze", ["m", "zero"], ["m4"]),
         helper.make_node("Gather", ["hw", "i"], ["size"], axis=0), helper.make_node("Shape", ["m4"], ["shp"]),
         helper.make_node("Slice", ["shp", "zero", "two"], ["nc"]),
         helper.make_node("Concat", ["nc", "size"], ["sizes"], axis=0),
         helper.make_node("Resize", ["m4", "", "", "sizes"], ["r"], mode="linear", name="resize",
                          coordinate_transformation_mode=mode),
         helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0),
         helper.make_node("ReduceMax", ["r"], ["mx"], keepdims=0),
         helper.make_node("Unsqueeze", ["s", "zero"], ["s1"]), helper.make_node("Unsqueeze", ["mx", "zero"], ["mx1"]),
         helper.make_node("Concat", ["s1", "mx1"], ["row"], axis=0), helper.make_node("Identity", ["cond"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond", T.BOOL, [])],
        [helper.make_tensor_value_info("c_out", T.BOOL, []), helper.make_tensor_value_info("row", T.FLOAT, [2])], c)
    g = helper.make_graph(
        [helper.make_node("Shape", ["masks"], ["mshape"]), helper.make_node("Gather", ["mshape", "i0"], ["n"], axis=0),
         helper.make_node("Loop", ["n", "true"], ["rows"], body=body, name="loop")], "g",
        [helper.make_tensor_value_info("masks", T.FLOAT, ["N", 1, 8, 8]),
         helper.make_tensor_value_info("hw", T.INT64, ["N", 2])],
        [helper.make_tensor_value_info("rows", T.FLOAT, ["N", 2])],
        [numpy_helper.from_array(np.array(True), "true"), numpy_helper.from_array(np.array(0, np.int64), "i0")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _openvino_runner(model):
    """``(feeds, names) -> outputs by name`` of ``model`` (an OpenVINO model, or an ONNX file's path: OpenVINO's
    own import of it) on CPU in f32, compiled once per set of observed tensors."""
    from resample_bridge.lowering.openvino.graph import observing

    core, compiled = ov.Core(), {}

    def run(feeds, observe):
        if tuple(observe) not in compiled:
            m = ov.convert_model(str(model)) if isinstance(model, (str, Path)) else model
            compiled[tuple(observe)] = core.compile_model(observing(m, observe), "CPU",
                                                          {"INFERENCE_PRECISION_HINT": "f32"})
        return {n: v for port, v in compiled[tuple(observe)](feeds).items() for n in port.get_names()}
    return run


def test_sizes_read_in_a_loop_body_keep_n_and_c():
    """The body's sizes read N and C from the mask's own shape and H, W from the iteration's row of ``hw`` (a
    tensor of dynamic length): N and C are the mask's own, so the Resize is OpenVINO's Interpolate fed the
    run-time sizes (rung 1; it was the run-time window decomposition, whose output a paste_masks Concat read
    uninitialised memory after), and the converted model computes onnxruntime's numbers, 1x1 included."""
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.onnx"
        onnx.save(_loop_resizing_each(), p)
        model, records = convert(str(p))
        sess = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
    assert [r.rung for r in records] == [1], [r.summary() for r in records]
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    masks = np.random.default_rng(5).random((4, 1, 8, 8), dtype=np.float32)
    for hw in ([[1, 1], [2, 3], [8, 8], [13, 5]], [[5, 1], [1, 7], [3, 3], [16, 2]]):
        feeds = {"masks": masks, "hw": np.array(hw, np.int64)}
        np.testing.assert_allclose(compiled(feeds)[0], sess.run(None, feeds)[0], rtol=1e-5, atol=1e-5)


def test_a_loop_whose_body_computes_otherwise_is_not_rounding():
    """A Loop whose body's resampling node is lowered otherwise (align_corners written for half_pixel): the Loop's
    float output differs where its inputs agree, and that is not OpenVINO's rounding of an op not ours (it was
    judged so, and passed): the check names the Loop and the node in its body. The source as written passes."""
    import onnx

    from resample_bridge.lowering.model_check import whole_model_failures
    from resample_bridge.translate.onnx import parse_model

    source = _loop_resizing_each()
    with tempfile.TemporaryDirectory() as d:
        p, q = Path(d) / "m.onnx", Path(d) / "w.onnx"
        onnx.save(source, p)
        onnx.save(_loop_resizing_each("align_corners"), q)
        irs = dict(parse_model(source))
        assert whole_model_failures(source, _openvino_runner(p), irs, _openvino_runner(p)) == []
        failures = whole_model_failures(source, _openvino_runner(q), irs, _openvino_runner(p))
    assert failures and "loop (Loop), whose body holds loop/body/resize" in failures[0], failures
    assert "importer computes it otherwise" in failures[0], failures


def test_a_difference_that_vanishes_when_observed_is_not_rounding():
    """OpenVINO's CPU computes a SegFormer (dynamic H / W, its importer's model as ours: every Resize rung 1) 0.3
    off at 96 x 96 after a run at 52 x 44, where every tensor agrees once the intermediate tensors are observed
    (its fused subgraphs, right with SNIPPETS_MODE=DISABLE; measured on an AVX2 AMD EPYC, OpenVINO 2026.4.1). That is no rounding: the check says
    so (it passed the difference as drift), then asks the importer's model, fed the same lengths in the same order:
    identical there, it is OpenVINO's compile of the user's graph. Skipped on a CPU where OpenVINO computes the
    model right there."""
    import onnx

    from resample_bridge.lowering import model_check
    from resample_bridge.lowering.model_probes import Probe
    from resample_bridge.lowering.model_reference import SourceRunner, constants, reference
    from resample_bridge.translate.onnx import parse_model

    src = Path(__file__).parents[1] / "models" / "ts14_hf_segformer_dynhw" / "model.onnx"
    source = onnx.load(src)
    written, _ = convert(str(src))
    run_written = _openvino_runner(written)

    rng = np.random.default_rng(0)
    first = rng.uniform(0, 1, (1, 3, 52, 44)).astype(np.float32)
    run_written({"pixel_values": first}, [])  # the saved shape first
    x = rng.uniform(0, 1, (1, 3, 96, 96)).astype(np.float32)
    probe = Probe({"pixel_values": x.shape}, {"pixel_values": x})
    irs, consts = dict(parse_model(source)), constants(source)
    want = reference(source, probe.feeds, irs, SourceRunner(source), consts).values
    out = source.graph.output[0].name
    if np.allclose(run_written(probe.feeds, [])[out], want[out], rtol=1e-4, atol=1e-4):
        pytest.skip("OpenVINO computes this SegFormer right at 96 x 96 on this CPU: nothing to judge")
    why = model_check._attributed(source, want, run_written, probe, irs, consts, False, _openvino_runner(src))
    assert why is not None and "no tensor differs where the runtime is asked for the intermediate" in why, why
    # OpenVINO's own import, fed the same lengths in the same order, computes the written model's outputs: its
    # compile of the user's graph, passed as a float op not ours is; a fresh one, fed 96 x 96 first, does not
    mine = run_written(probe.feeds, [])
    before = Probe({"pixel_values": first.shape}, {"pixel_values": first})
    assert model_check._importer_alike(_openvino_runner(src), [before, probe], mine)
    assert not model_check._importer_alike(_openvino_runner(src), [probe], mine)
