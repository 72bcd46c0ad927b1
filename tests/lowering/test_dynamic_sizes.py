"""Static sizes on an input whose resized lengths are dynamic (a depth head resized to a fixed grid): linear and
cubic take Interpolate-11 in sizes mode (rung 1), whose map reads the run-time length through the same formula as
the source; each converted model is compared with the oracle, under the one tolerance policy, at lengths from 1 to
1000. Nearest is not taken this way (its ties move with the length): the index form takes it. Sizes fed at run
time: half_pixel_symmetric, whose offset is 0 at a given size, is Interpolate-11's half_pixel."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.reference import run
from resample_bridge.translate.onnx import parse_model

ov = pytest.importorskip("openvino")
from resample_bridge.lowering.openvino import convert  # noqa: E402

pytestmark = pytest.mark.openvino
SIZES = np.array([24, 20], np.int64)
LENGTHS = [(1, 1), (2, 3), (5, 7), (17, 9), (48, 40), (100, 37), (333, 1000)]


def _model(mode, coord):
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode=mode,
                            coordinate_transformation_mode=coord, axes=[2, 3])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(SIZES, "sizes")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("mode,coord,rung", [("linear", "align_corners", 1), ("linear", "pytorch_half_pixel", 1),
                                             ("cubic", "half_pixel", 1), ("cubic", "asymmetric", 1),
                                             ("nearest", "asymmetric", 3)])
def test_static_sizes_on_dynamic_lengths(mode, coord, rung, tmp_path):
    onnx.save(_model(mode, coord), tmp_path / "m.onnx")
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    model, (rec,) = convert(str(tmp_path / "m.onnx"), prefer="builtin")  # the rung under test, not the cost model
    assert rec.rung == rung, rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for h, w in LENGTHS:
        x = np.random.default_rng(h * w).standard_normal((2, 4, h, w)).astype(np.float32) * 100
        args = [x, None, None, SIZES]
        assert against_oracle(ir, compiled([x])[0], run(ir, *args), args).ok, (h, w)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_run_time_sizes_half_pixel_symmetric_is_half_pixel(mode, tmp_path):
    """Its offset L/2 * (1 - out / L*(out/L)) is 0 for every given size (``coords.plain_coord``): Interpolate-11
    fed the run-time sizes in half_pixel, no library; the proof re-reads it; the oracle's numbers at sizes up, down,
    equal and 1."""
    from resample_bridge.lowering.openvino.prove import prove

    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode=mode, axes=[2, 3],
                            coordinate_transformation_mode="half_pixel_symmetric")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                            helper.make_tensor_value_info("sizes", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), tmp_path / "m.onnx")
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.rung == 1 and "run-time sizes" in rec.summary() and prove(model, [rec]) == [], rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for (h, w), out in (((11, 13), (23, 5)), ((11, 13), (7, 20)), ((5, 7), (5, 7)), ((9, 3), (1, 8)),
                        ((48, 40), (97, 13))):
        x = np.random.default_rng(h * w).standard_normal((1, 2, h, w)).astype(np.float32) * 100
        args = [x, None, None, np.array(out, np.int64)]
        assert against_oracle(ir, compiled(args[:1] + args[3:])[0], run(ir, *args), args).ok, (h, w, out)


def _sizes_model(mode, rank, pinned, tmp_path, antialias=0):
    """Resize of a rank-``rank`` input by sizes fed at run time on every axis: a graph input, or (``pinned``)
    Concat(Shape(x)[:2], Shape(skip)[2:]) as F.interpolate(x, size=skip.shape[-2:]) exports it (an FPN's top-down
    path), which keeps N and C; ``pinned`` "given": Concat(Shape(x)[:2], hw), hw a graph input (a preprocessing
    graph that resizes to the size it is given)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None] * rank)
    nodes, inputs = [], [x]
    if pinned:
        given = pinned == "given"
        nodes += [helper.make_node("Shape", ["x"], ["nc"], start=0, end=2),
                  helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0)]
        if given:
            inputs.append(helper.make_tensor_value_info("hw", TensorProto.INT64, [rank - 2]))
        else:
            nodes.insert(1, helper.make_node("Shape", ["skip"], ["hw"], start=2))
            inputs.append(helper.make_tensor_value_info("skip", TensorProto.FLOAT, [None] * rank))
    else:
        inputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [rank]))
    nodes.append(helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode=mode, antialias=antialias))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), tmp_path / "m.onnx")
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    return ir, convert(str(tmp_path / "m.onnx"))


@pytest.mark.parametrize("mode,rank", [("linear", 4), ("cubic", 4), ("cubic", 3), ("linear", 5)])
def test_run_time_sizes_that_may_resize_batch_or_channels(mode, rank, tmp_path):
    """OpenVINO's CPU Interpolate resizes linear / cubic on its spatial axes only: fed sizes that resize N it
    throws at inference, C (cubic, rank 4) or axis 0 (cubic, rank 3) it reads out of bounds (values near 1e35,
    silently). Where the graph does not pin those axes to X's own length the default takes the run-time window
    form (rung 3, no library) and computes the oracle's numbers whichever axis the sizes resize."""
    ir, (model, (rec,)) = _sizes_model(mode, rank, False, tmp_path)
    assert rec.rung == 3 and "window decomposition" in rec.summary(), rec.summary()  # rung 3: no library
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    shape = (2, 3, 5, 6, 4)[:rank]
    for axis in range(rank):
        for f in (2, 0.5):
            sizes = np.array([max(1, int(d * f)) if a == axis else d for a, d in enumerate(shape)], np.int64)
            x = np.random.default_rng(axis).standard_normal(shape).astype(np.float32) * 100
            args = [x, None, None, sizes]
            assert against_oracle(ir, compiled([x, sizes])[0], run(ir, *args), args).ok, (axis, f)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_run_time_sizes_that_keep_batch_and_channels_take_interpolate(mode, tmp_path):
    """F.interpolate(x, size=skip.shape[-2:]) pins N and C: Interpolate-11 fed the sizes (rung 1)."""
    ir, (model, (rec,)) = _sizes_model(mode, 4, True, tmp_path)
    assert rec.rung == 1 and "run-time sizes" in rec.summary(), rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 7)).astype(np.float32)
    skip = np.zeros((5, 1, 13, 4), np.float32)
    args = [x, None, None, np.array([2, 3, 13, 4], np.int64)]
    assert against_oracle(ir, compiled([x, skip])[0], run(ir, *args), args).ok


@pytest.mark.parametrize("mode,antialias", [("linear", 0), ("cubic", 0), ("linear", 1), ("cubic", 1)])
def test_run_time_sizes_given_beside_batch_and_channels(mode, antialias, tmp_path):
    """Concat(Shape(x)[:2], hw) with hw a graph input pins N and C as well (the shape reader reads the input as a
    value known only at run time): Interpolate-11 fed the sizes (rung 1) without antialias, the run-time window
    on H and W only (N and C copied) with it; onnxruntime's numbers (the oracle's where it differs) at several
    fed sizes and shapes."""
    ir, (model, (rec,)) = _sizes_model(mode, 4, "given", tmp_path, antialias)
    if antialias:
        assert rec.rung == 3 and list(rec.proof["copied"]) == [0, 1], rec.summary()
    else:
        assert rec.rung == 1 and "run-time sizes" in rec.summary(), rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for shape, hw in (((2, 3, 9, 7), (13, 4)), ((1, 2, 20, 30), (7, 11)), ((3, 1, 5, 5), (5, 5))):
        x = np.random.default_rng(sum(hw)).standard_normal(shape).astype(np.float32)
        args = [x, None, None, np.array(shape[:2] + hw, np.int64)]
        assert against_oracle(ir, compiled([x, np.array(hw, np.int64)])[0], run(ir, *args), args).ok, (shape, hw)


def test_frontend_pins_the_lengths_its_graph_copies_from_x():
    """A node whose input rank ONNX's shape inference could not give is parsed from OpenVINO's view, where the
    ONNX model's partial values are not seen: the sizes' entries that OpenVINO's graph computes as X's own
    length (TorchScript's Concat(Slice(Shape(x), 0, 2), Cast(Concat(Shape(skip)[2], Shape(skip)[3]))) are found
    in that graph, so Interpolate stays exact on them (rung 1, as for the ONNX-parsed node); the length of
    another tensor, or a value read from data, is not X's."""
    import dataclasses

    from resample_bridge.lowering.openvino.frontend import with_frontend_pins
    from resample_bridge.semantics.ir import ResizeIR, RuntimeValue, Sampler

    import openvino.opset13 as o
    x = o.parameter([-1, 8, -1, -1], np.float32)
    skip = o.parameter([-1, 8, -1, -1], np.float32)
    data = o.parameter([2], np.int64)

    def piece(t, k):
        return o.unsqueeze(o.gather(o.shape_of(t), o.constant(np.int64(k)), o.constant(np.int64(0))),
                           o.constant(np.int64(0)))

    nc = o.slice(o.shape_of(x), o.constant(np.array([0])), o.constant(np.array([2])),
                 o.broadcast(o.constant(np.array([1])), o.shape_of(o.constant(np.array([0])))),
                 o.constant(np.array([0])))
    hw = o.convert(o.concat([piece(skip, 2), piece(skip, 3)], 0), "i64")
    ir = ResizeIR(rank=4, axes=(0, 1, 2, 3), scales=None, sizes=RuntimeValue("s"), roi=None, coord="half_pixel",
                  sampler=Sampler("linear"), origin="Resize-11", input_shape=(None, 8, None, None))

    def pins(sizes):
        got = with_frontend_pins(ir, [x.output(0), None, None, sizes.output(0)])
        return got.sizes.same_as_input

    assert pins(o.concat([nc, hw], 0)) == (0, 1)
    assert pins(o.concat([o.constant(np.array([1, 8])), hw], 0)) == (1,)  # C = 8 is X's static length
    other = o.slice(o.shape_of(skip), o.constant(np.array([0])), o.constant(np.array([2])),
                    o.constant(np.array([1])), o.constant(np.array([0])))
    assert pins(o.concat([other, hw], 0)) == (1,)  # another tensor's lengths: its static C = 8 only
    assert pins(o.concat([data, hw], 0)) == ()
    assert pins(o.parameter(ov.PartialShape.dynamic(), np.int64)) == ()  # no rank: nothing read, no error
    pinned = dataclasses.replace(ir, sizes=RuntimeValue("s", same_as_input=(0, 1)))
    assert with_frontend_pins(pinned, [x.output(0), None, None, o.concat([data, hw], 0).output(0)]) is pinned


def test_batch_and_channel_lengths_are_a_stated_condition_of_interpolate(tmp_path):
    """Interpolate fed the sizes is exact only if N and C keep their length, and the condition is real (OpenVINO's
    own importer writes that Interpolate: cubic resizing C reads out of bounds). ``check`` says so of the importer
    ("exact only if", where it said "exact"); --allow-conditional still takes the exact window form (an
    unconditional candidate beats a conditional one)."""
    from resample_bridge.tools.check_openvino import check_openvino

    ir, _ = _sizes_model("cubic", 4, False, tmp_path)
    (row,) = check_openvino(str(tmp_path / "m.onnx"))
    verdict = row["openvino"]
    assert verdict["verdict"] == "exact only if", verdict
    assert any("keep the length of axis 0, 1" in c for c in verdict["conditions"]), verdict
    importer = ov.Core().compile_model(ov.convert_model(str(tmp_path / "m.onnx")), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    for sizes, holds in (([2, 3, 10, 3], True), ([2, 6, 10, 3], False)):
        sizes = np.array(sizes, np.int64)
        args = [x, None, None, sizes]
        assert against_oracle(ir, importer([x, sizes])[0], run(ir, *args), args).ok == holds, sizes
    _, (rec,) = convert(str(tmp_path / "m.onnx"), allow_conditional=True)
    assert rec.rung == 3 and not rec.condition, rec.summary()
