"""The built-in example model: one graph holding the resampling cases that most often go wrong."""

from __future__ import annotations

import numpy as np


def tricky_model():
    """An opset-22 ONNX model with the cases converters get wrong (all shapes static except one
    run-time-fed scales input), each node named after its trap."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, inputs, outputs = [], [], [], []

    def const(name, values, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(values, dtype=dtype), name))
        return name

    def _out(name, rank=4):
        # Output lengths are left to shape inference: the rank is declared, the lengths are not.
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [None] * rank)

    def inp(name, shape):
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def resize(name, x, *, scales=None, sizes=None, roi=None, **attrs):
        ins = [x, roi or "", const(f"{name}_scales", scales) if scales is not None else "",
               const(f"{name}_sizes", sizes, np.int64) if sizes is not None else ""]
        while ins and ins[-1] == "":
            ins.pop()
        nodes.append(helper.make_node("Resize", ins, [name], name=name, **attrs))
        outputs.append(_out(name))

    img = inp("image", [1, 3, 20, 20])
    # Exact .5 source coordinates: fp32 evaluation flips outputs 1 and 4 (onnx/onnx#7841).
    resize("nearest_ties_20_to_6", img, sizes=[1, 3, 6, 6], mode="nearest",
           coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    # align_corners with a fractional output length (20*0.6=12): ONNX data divides by L*s - 1.
    resize("align_corners_fractional", img, scales=[1, 1, 0.63, 0.63], mode="linear",
           coordinate_transformation_mode="align_corners")
    # torchvision-style antialias: PyTorch AA = antialias + exclude_outside + a=-0.5.
    resize("antialias_cubic_down", img, sizes=[1, 3, 7, 7], mode="cubic", antialias=1, exclude_outside=1,
           cubic_coeff_a=-0.5)
    resize("crop_and_resize_extrapolate", img, roi=const("crop_roi", [0.4, 0.6, 1.2, 0.9]),
           sizes=[9, 5], axes=[2, 3], mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
           extrapolation_value=-1.0)
    resize("pytorch_half_pixel_to_1", img, sizes=[1, 3, 5, 1], mode="linear",
           coordinate_transformation_mode="pytorch_half_pixel")
    resize("keep_aspect_not_larger", img, sizes=[7, 9], axes=[-1, -2], mode="nearest",
           keep_aspect_ratio_policy="not_larger")
    resize("half_pixel_symmetric_1_7", img, scales=[1.7, 1.7], axes=[2, 3], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")
    runtime_scales = inputs.append(helper.make_tensor_value_info("scales_in", TensorProto.FLOAT, [4])) or "scales_in"
    nodes.append(helper.make_node("Resize", [img, "", runtime_scales], ["scales_at_run_time"],
                                  name="scales_at_run_time", mode="linear"))
    outputs.append(_out("scales_at_run_time"))

    vol = inp("volume", [1, 2, 4, 5, 6])
    grid = inp("grid3d", [1, 3, 4, 5, 3])
    nodes.append(helper.make_node("GridSample", [vol, grid], ["gridsample_5d"], name="gridsample_5d",
                                  mode="linear", padding_mode="reflection", align_corners=0))
    outputs.append(_out("gridsample_5d", 5))
    grid2 = inp("grid2d", [1, 8, 8, 2])
    nodes.append(helper.make_node("GridSample", [img, grid2], ["gridsample_cubic_border"],
                                  name="gridsample_cubic_border", mode="cubic", padding_mode="border"))
    outputs.append(_out("gridsample_cubic_border"))

    feat = inp("features", [1, 4, 9, 9])
    off = inp("offsets", [1, 2 * 9 * 2, 9, 9])
    mask = inp("mask", [1, 2 * 9, 9, 9])
    w = const("dcn_w", np.random.default_rng(0).standard_normal((6, 4, 3, 3)))
    b = const("dcn_b", np.arange(6))
    nodes.append(helper.make_node("DeformConv", [feat, w, off, b, mask], ["deform_conv_mask_bias"],
                                  name="deform_conv_mask_bias", pads=[1, 1, 1, 1], offset_group=2))
    outputs.append(_out("deform_conv_mask_bias"))

    graph = helper.make_graph(nodes, "resample_bridge_tricky", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)],
                              producer_name="resample-bridge", ir_version=10)  # runs on onnxruntime too
    onnx.checker.check_model(model)
    return model
