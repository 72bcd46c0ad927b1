"""The shape evaluator (translate/onnx_shape_eval.py) against onnxruntime: every entry it calls a constant is
onnxruntime's value at every run-time shape tried, every entry it calls a run-time length is that length, and
arithmetic on run-time lengths is never called either (issue 40: torchvision's detection transform, sized from
min/max ratios, was read as a constant 224x224)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from resample_bridge.translate.onnx import Graph
from tests.helpers.models import ratio_sized_model

ort = pytest.importorskip("onnxruntime")

SHAPES = [(210, 300), (300, 140), (64, 64), (17, 400), (1, 2)]


def _c(name, v, dt=np.int64):
    return nh.from_array(np.array(v, dtype=dt), name)


def _model(nodes, inits):
    """x [1, 3, H, W] -> ... -> 'sizes'; the sizes feed a Resize as exporters write it."""
    nodes = nodes + [h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("sizes", T.INT64, [4])],
                     inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 16)], ir_version=8)


def detection_transform():
    """torchvision GeneralizedRCNNTransform: floor(hw * min(224 / min(hw), 320 / max(hw)))."""
    return ratio_sized_model()


def own_size_and_constant():
    """F.interpolate(size=(x.shape[2], 48)) through Gather, Cast to float and back, Mul by 1."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Gather", ["shp", "i2"], ["hh"], axis=0),
             h.make_node("Cast", ["hh"], ["hf"], to=T.FLOAT), h.make_node("Mul", ["hf", "one"], ["hm"]),
             h.make_node("Cast", ["hm"], ["hi"], to=T.INT64), h.make_node("Unsqueeze", ["hi", "a0"], ["h1"]),
             h.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
             h.make_node("Concat", ["nc", "h1", "w48"], ["sizes"], axis=0)]
    return _model(nodes, [_c("i2", 2), _c("one", 1.0, np.float32), _c("a0", [0]), _c("s0", [0]), _c("s2", [2]),
                          _c("w48", [48])])


def min_of_lengths():
    """min(H, 2W) and W // 2: arithmetic on lengths, never one length nor a constant."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Gather", ["shp", "i2"], ["hh"], axis=0),
             h.make_node("Gather", ["shp", "i3"], ["ww"], axis=0), h.make_node("Mul", ["ww", "two"], ["w2"]),
             h.make_node("Min", ["hh", "w2"], ["m"]), h.make_node("Div", ["ww", "two"], ["wh"]),
             h.make_node("Unsqueeze", ["m", "a0"], ["m1"]), h.make_node("Unsqueeze", ["wh", "a0"], ["wh1"]),
             h.make_node("Concat", ["nc", "m1", "wh1"], ["sizes"], axis=0)]
    return _model(nodes, [_c("i2", 2), _c("i3", 3), _c("two", 2), _c("a0", [0]), _c("nc", [1, 3])])


def _partial(model):
    g = Graph(model)
    return g.partials.get("sizes")


@pytest.mark.parametrize("build", [detection_transform, own_size_and_constant, min_of_lengths])
def test_every_claim_holds_on_onnxruntime(build):
    model = build()
    known = _partial(model)
    assert known is not None
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for hw in SHAPES:
        x = np.zeros((1, 3) + hw, np.float32)
        sizes = sess.run(["sizes"], {"x": x})[0].tolist()
        for entry, actual in zip(known, sizes):
            if isinstance(entry, int):
                assert entry == actual, (build.__name__, hw, known, sizes)
            elif entry is not None:
                assert entry[0] == "dim" and x.shape[entry[2]] == actual, (build.__name__, hw, known, sizes)


def test_what_it_knows():
    """The claims themselves: the batch and channels copied, the lengths computed from ratios unknown, a length
    moved through casts and a multiplication by 1 still that length."""
    assert _partial(detection_transform()) == (1, 3, None, None)
    assert _partial(own_size_and_constant()) == (1, 3, ("dim", "x", 2), 48)
    assert _partial(min_of_lengths()) == (1, 3, None, None)


# -- values known only at run time (onnx_shape_eval.runtime_values) ---------------------------------------------


def _fed_model(nodes, inits, t_type=T.INT64, t_shape=(2,)):
    """x [N, 3, H, W] and a graph input t -> ... -> 'sizes' -> a nearest Resize (which onnxruntime runs on
    sizes that change N or C too)."""
    nodes = nodes + [h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"]),
                                  h.make_tensor_value_info("t", t_type, list(t_shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("sizes", T.INT64, [4])],
                     inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 16)], ir_version=8)


def given_hw():
    """A preprocessing graph's "resize to the size it is given": Concat(Shape(x)[:2], t)."""
    return _fed_model([h.make_node("Shape", ["x"], ["shp"]), h.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
                       h.make_node("Concat", ["nc", "t"], ["sizes"], axis=0)], [_c("s0", [0]), _c("s2", [2])])


def given_scale():
    """sizes = Concat(Shape(x)[:2], floor(Shape(x)[2:] * t)), t a float32 [2] scale fed at run time."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
             h.make_node("Slice", ["shp", "s2", "s4"], ["hw"]), h.make_node("Cast", ["hw"], ["hwf"], to=T.FLOAT),
             h.make_node("Mul", ["hwf", "t"], ["m"]), h.make_node("Floor", ["m"], ["f"]),
             h.make_node("Cast", ["f"], ["fi"], to=T.INT64), h.make_node("Concat", ["nc", "fi"], ["sizes"], axis=0)]
    return _fed_model(nodes, [_c("s0", [0]), _c("s2", [2]), _c("s4", [4])], T.FLOAT)


def picked_by_the_input():
    """Entries of x's shape picked by indices fed at run time, and the input times 0 plus 5 (always 5, but read
    through arithmetic on a run-time value): none of them is X's own length or a constant for the reader."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Gather", ["shp", "t"], ["picked"], axis=0),
             h.make_node("Mul", ["t", "zero"], ["z"]), h.make_node("Add", ["z", "five"], ["f"]),
             h.make_node("Concat", ["picked", "f"], ["sizes"], axis=0)]
    return _fed_model(nodes, [_c("zero", 0), _c("five", 5)])


def read_from_data():
    """The lengths read from a tensor of any length (paste_masks' box in a Loop body; a size from a ReduceMax):
    t [M] float, sizes = Concat(Shape(x)[:2], [ceil(max(t)), ceil(min(t))]). Nothing that computes the lengths
    can be read, a scalar on the way can: N and C are still x's own."""
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
             h.make_node("ReduceMax", ["t"], ["mx"], keepdims=0), h.make_node("ReduceMin", ["t"], ["mn"], keepdims=0),
             h.make_node("Concat", ["mx1", "mn1"], ["hwf"], axis=0), h.make_node("Ceil", ["hwf"], ["hwc"]),
             h.make_node("Unsqueeze", ["mx", "a0"], ["mx1"]), h.make_node("Unsqueeze", ["mn", "a0"], ["mn1"]),
             h.make_node("Cast", ["hwc"], ["hw"], to=T.INT64), h.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0)]
    return _fed_model(nodes, [_c("s0", [0]), _c("s2", [2]), _c("a0", [0])], T.FLOAT, ("M",))


FED = {given_hw: [(7, 9), (1, 1), (300, 2)], given_scale: [(1.5, 2.0), (1.0, 1.0), (3.3, 1.25)],
       picked_by_the_input: [(0, 1), (2, 3), (3, 0)], read_from_data: [(7.5, 2.2, 3.0), (1.0,), (2.5, 40.0)]}


@pytest.mark.parametrize("build", list(FED))
def test_claims_next_to_a_graph_input_hold_on_onnxruntime(build):
    model = build()
    known = _partial(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    t_type = sess.get_inputs()[1].type
    for hw in SHAPES:
        for n in (1, 2):
            x = np.zeros((n, 3) + hw, np.float32)
            for t in FED[build]:
                fed = np.array(t, np.float32 if "float" in t_type else np.int64)
                sizes = sess.run(["sizes"], {"x": x, "t": fed})[0].tolist()
                for entry, actual in zip(known or (), sizes):
                    if isinstance(entry, int):
                        assert entry == actual, (build.__name__, hw, t, known, sizes)
                    elif entry is not None:
                        assert entry[0] == "dim" and x.shape[entry[2]] == actual, (build.__name__, hw, t, known)


def test_what_it_knows_next_to_a_graph_input():
    """N and C read from x's shape beside a run-time input are x's own; nothing the input reaches is known; a
    sizes that is a graph input as it is reads as nothing known (None), as before inputs were read."""
    assert _partial(given_hw()) == (("dim", "x", 0), 3, None, None)
    assert _partial(given_scale()) == (("dim", "x", 0), 3, None, None)
    assert _partial(picked_by_the_input()) in (None, (None, None, None, None))
    assert _partial(read_from_data()) == (("dim", "x", 0), 3, None, None)  # (was None: t's length is dynamic)
    whole = h.make_graph([h.make_node("Resize", ["x", "", "", "t"], ["y"], mode="linear")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"]),
                          h.make_tensor_value_info("t", T.INT64, [4])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    assert Graph(h.make_model(whole, opset_imports=[h.make_opsetid("", 16)], ir_version=8)).partials.get("t") is None
