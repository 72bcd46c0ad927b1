"""Small ONNX models built in tests (no files checked in)."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def resize_model(x_shape, *, scales=None, sizes=None, roi=None, opset=19, name="r", dtype=TensorProto.FLOAT,
                 **attrs) -> onnx.ModelProto:
    """One Resize node with its roi/scales/sizes as initializers (None = omitted)."""
    inits, ins = [], ["X"]
    for key, val, dt in (("roi", roi, np.float32), ("scales", scales, np.float32), ("sizes", sizes, np.int64)):
        if val is None:
            ins.append("")
        else:
            inits.append(numpy_helper.from_array(np.asarray(val, dtype=dt), key))
            ins.append(key)
    while ins[-1] == "":
        ins.pop()
    node = helper.make_node("Resize", ins, ["Y"], name=name, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", dtype, list(x_shape))],
                              [helper.make_tensor_value_info("Y", dtype, None)], inits)
    # IR 10: onnxruntime 1.31 refuses the IR 14 that onnx 1.23 writes by default.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


# A Resize that no in-graph form computes where its scales are fed at run time or its lengths known only then:
# a nearest tf_crop_and_resize whose crop box (the roi below, an initializer input) reaches outside the input on H
# and W: which element a tie picks there and which outputs take the extrapolation value have no exact run-time index
# form, so even the portable default writes the extension. One place for the tests that need a library written.
EXTENSION_ONLY = dict(mode="nearest", coordinate_transformation_mode="tf_crop_and_resize")
EXTENSION_ROI = [0, 0, -0.1, 0.2, 1, 1, 0.8, 1.25]


def roi_initializer(name: str = "roi"):
    """``EXTENSION_ROI`` as a float32 initializer named ``name``."""
    return numpy_helper.from_array(np.array(EXTENSION_ROI, np.float32), name)


def strict_json(text: str):
    """``json.loads`` that refuses NaN / Infinity (which strict JSON has no spelling for)."""
    def no_constant(c):
        raise ValueError(f"non-strict JSON constant {c}")
    return json.loads(text, parse_constant=no_constant)


def saved(model, folder, name: str = "m.onnx") -> str:
    """``model`` written as ``folder/name``; the path as a string."""
    p = folder / name
    onnx.save(model, p)
    return str(p)


def chain_model(nodes, inputs, inits, out):
    """A float graph of ``nodes`` (opset 22, IR 10) with one output ``out``."""
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def const(name, arr, dtype=np.float32):
    """An initializer ``name`` holding ``arr`` as ``dtype``."""
    return numpy_helper.from_array(np.asarray(arr, dtype=dtype), name)


def real_models():
    """(name, model): five real-shaped graphs around a resampling node (YOLO neck, segmentation head,
    torchvision antialias, spatial transformer, DCN block); seeded, so every call builds the same models."""
    rng = np.random.default_rng(0)
    f = TensorProto.FLOAT
    yield "yolo_neck_nearest_x2", chain_model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Resize", ["c", "", "s"], ["up"], mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
         helper.make_node("Concat", ["up", "skip"], ["y"], axis=1)],
        [helper.make_tensor_value_info("x", f, [1, 16, 20, 20]), helper.make_tensor_value_info("skip", f, [1, 8, 40, 40])],
        [const("w", rng.standard_normal((16, 16, 3, 3)) * 0.1), const("s", [1, 1, 2, 2])], "y")
    yield "segmentation_head_linear_align_corners_x4", chain_model(
        [helper.make_node("Conv", ["x", "w"], ["logits"]),
         helper.make_node("Resize", ["logits", "", "s"], ["y"], mode="linear",
                          coordinate_transformation_mode="align_corners")],
        [helper.make_tensor_value_info("x", f, [1, 32, 32, 32])],
        [const("w", rng.standard_normal((5, 32, 1, 1)) * 0.1), const("s", [1, 1, 4, 4])], "y")
    yield "torchvision_antialias_512_to_224", chain_model(
        [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", antialias=1, exclude_outside=1,
                          coordinate_transformation_mode="pytorch_half_pixel")],
        [helper.make_tensor_value_info("x", f, [1, 3, 512, 512])], [const("sz", [1, 3, 224, 224], np.int64)], "y")
    yield "spatial_transformer_gridsample", chain_model(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
         helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="zeros")],
        [helper.make_tensor_value_info("x", f, [2, 3, 24, 24]), helper.make_tensor_value_info("theta", f, [2, 2, 3])],
        [const("size", [2, 3, 16, 16], np.int64)], "y")
    yield "dcn_block_mask_bias", chain_model(
        [helper.make_node("Conv", ["x", "wo"], ["off"], pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "wm"], ["mlogit"], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["mlogit"], ["mask"]),
         helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], pads=[1, 1, 1, 1]),
         ],
        [helper.make_tensor_value_info("x", f, [1, 8, 14, 14])],
        [const("wo", rng.standard_normal((18, 8, 3, 3)) * 0.3), const("wm", rng.standard_normal((9, 8, 3, 3)) * 0.3),
         const("w", rng.standard_normal((16, 8, 3, 3)) * 0.1), const("b", rng.standard_normal(16))], "y")


def ratio_sized_model() -> onnx.ModelProto:
    """x [1, 3, H, W] resized to sizes = floor(hw * min(224 / min(hw), 320 / max(hw))), the arithmetic of
    torchvision's detection transform written by hand (ReduceMin / ReduceMax / Div / Min / Floor); 'sizes' is also
    an output (issue 40)."""
    def c(name, v, dt=np.int64):
        return numpy_helper.from_array(np.array(v, dtype=dt), name)

    T = TensorProto
    h = helper
    nodes = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Slice", ["shp", "s2", "s4"], ["hw"]),
             h.make_node("Cast", ["hw"], ["hwf"], to=T.FLOAT),
             h.make_node("ReduceMin", ["hwf"], ["mn"], keepdims=0), h.make_node("ReduceMax", ["hwf"], ["mx"], keepdims=0),
             h.make_node("Div", ["f224", "mn"], ["r1"]), h.make_node("Div", ["f320", "mx"], ["r2"]),
             h.make_node("Min", ["r1", "r2"], ["sc"]), h.make_node("Mul", ["hwf", "sc"], ["o1"]),
             h.make_node("Floor", ["o1"], ["o2"]), h.make_node("Cast", ["o2"], ["o3"], to=T.INT64),
             h.make_node("Concat", ["nc", "o3"], ["sizes"], axis=0),
             h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")]
    consts = [c("s2", [2]), c("s4", [4]), c("f224", 224.0, np.float32), c("f320", 320.0, np.float32),
              c("nc", [1, 3])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 3, "h", "w"]),
                      h.make_tensor_value_info("sizes", T.INT64, [4])], consts)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 16)], ir_version=8)


def _conv3x3(name, x, cin, cout, stride, rng, std, dtype):
    w = helper.make_tensor(f"{name}_w", dtype, [cout, cin, 3, 3], rng.normal(0, std, (cout, cin, 3, 3)).astype(
        helper.tensor_dtype_to_np_dtype(dtype)).tobytes(), raw=True)
    conv = helper.make_node("Conv", [x, w.name], [f"{name}_c"], pads=[1, 1, 1, 1], strides=[stride, stride])
    relu = helper.make_node("Relu", [f"{name}_c"], [name])
    return [conv, relu], [w]


def skip_sized_unet(mode: str = "linear", coord: str = "half_pixel", dynamic: bool = True,
                    dtype=TensorProto.FLOAT16):
    """x -> conv a -> conv stride 2 b -> Resize(b, sizes=Concat(Shape(b)[:2], Shape(a)[2:])) + a, as TorchScript
    writes ``F.interpolate(b, size=a.shape[-2:])``: the lengths computed in the graph (the whole-model reference
    judges our reading of them); float16 as ``model.half()`` exports it, or ``dtype``."""
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    # small activations (1e-3 and below, some subnormal: float16's steps there are absolute, 2^-24)
    for name, x, cin, cout, stride, std in (("a", "x", 3, 8, 1, 4e-4), ("b", "a", 8, 8, 2, 0.4)):
        n, i = _conv3x3(name, x, cin, cout, stride, rng, std, dtype)
        nodes += n
        inits += i
    ints = {k: helper.make_tensor(k, TensorProto.INT64, [1], [v]) for k, v in
            (("zero", 0), ("two", 2), ("four", 4))}
    inits += list(ints.values())
    nodes += [helper.make_node("Shape", ["b"], ["sb"]), helper.make_node("Shape", ["a"], ["sa"]),
              helper.make_node("Slice", ["sb", "zero", "two"], ["nc"]),
              helper.make_node("Slice", ["sa", "two", "four"], ["hw"]),
              helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
              helper.make_node("Resize", ["b", "", "", "sizes"], ["up"], mode=mode,
                               coordinate_transformation_mode=coord, name="/Resize"),
              helper.make_node("Add", ["up", "a"], ["y"])]
    dims = [1, 3, "h", "w"] if dynamic else [1, 3, 32, 48]
    graph = helper.make_graph(nodes, "unet16", [helper.make_tensor_value_info("x", dtype, dims)],
                              [helper.make_tensor_value_info("y", dtype, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def computed_grid_sample(mode: str = "nearest", dtype=TensorProto.FLOAT16):
    """x -> conv f -> grid = Tanh(conv(f)) as [N, H, W, 2] * 1.1 -> GridSample(f, grid, border): a grid the model
    computes, as a float16 spatial transformer exports it."""
    rng = np.random.default_rng(4)
    nodes, inits = [], []
    for name, x, cin, cout, std in (("f", "x", 3, 4, 0.4), ("o", "f", 4, 2, 0.4)):
        n, i = _conv3x3(name, x, cin, cout, 1, rng, std, dtype)
        nodes += n[:1] + ([n[1]] if name == "f" else [helper.make_node("Identity", [f"{name}_c"], [name])])
        inits += i
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    inits.append(helper.make_tensor("k", dtype, [], np.array(1.1, np_dtype).tobytes(), raw=True))
    nodes += [helper.make_node("Tanh", ["o"], ["t"]),
              helper.make_node("Transpose", ["t"], ["tg"], perm=[0, 2, 3, 1]),
              helper.make_node("Mul", ["tg", "k"], ["grid"]),
              helper.make_node("GridSample", ["f", "grid"], ["y"], mode=mode, padding_mode="border",
                               name="/GridSample")]
    graph = helper.make_graph(nodes, "stn16", [helper.make_tensor_value_info("x", dtype, [1, 3, 32, 48])],
                              [helper.make_tensor_value_info("y", dtype, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
