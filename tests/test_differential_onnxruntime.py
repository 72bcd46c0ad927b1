"""Differential test: onnxruntime's CPU execution provider against the oracle.

A seeded generator builds single-node ONNX models (Resize 10/11/13/18/19, Upsample-9, GridSample 16/20/22,
DeformConv 19/22). For each one:

* ``ir = parse_model(model)`` is the ONNX-spec IR and ``ort_ir = ort_semantics(ir)`` what onnxruntime is
  claimed to compute;
* **fixed**: ``oracle(ort_ir)`` must match a real onnxruntime run everywhere except at the output positions
  that ``diff`` reports as floating-point ties;
* **explained**: where ``oracle(ir)`` differs from onnxruntime (outside those ties), ``diff(ir, ort_ir)`` must
  name at least one material field; where ``diff`` says "same" with no ties, ``oracle(ir)`` must match.

Every disagreement between onnxruntime and the ONNX spec is thus either fixed or explained by a named IR field.
Configurations onnxruntime refuses (at session creation or at run time) are skipped and counted;
``test_enough_configs_accepted`` requires at least 300 accepted ones. Known gaps that no IR field can express
yet, and known bugs, are ``xfail`` with the reason spelled out.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ort.set_default_logger_severity(4)  # refusals are counted by the tests, not logged

from resample_bridge.semantics import reference  # noqa: E402
from resample_bridge.semantics.coords import bind_resize, unnormalize  # noqa: E402
from resample_bridge.semantics.equivalence import diff  # noqa: E402
from resample_bridge.semantics.ir import GridSampleIR, ResizeIR, axis_name  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from resample_bridge.translate.onnxruntime import (ort_output_shape, ort_rounds_integers_otherwise,  # noqa: E402
                                                   ort_semantics)

SEED = 1234
N_RESIZE, N_GRIDSAMPLE, N_DEFORMCONV = 380, 100, 60

ONNX_TYPE = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "uint8": TensorProto.UINT8,
             "int32": TensorProto.INT32}
SHORT = {"float32": "f32", "float16": "f16", "uint8": "u8", "int32": "i32"}
NEAREST_SHORT = {"round_prefer_floor": "rpf", "round_prefer_ceil": "rpc", "floor": "floor", "ceil": "ceil"}
COORDS_11 = ("half_pixel", "pytorch_half_pixel", "tf_half_pixel_for_nn", "align_corners", "asymmetric",
             "tf_crop_and_resize")
COORDS_19 = COORDS_11 + ("half_pixel_symmetric",)
SCALES = (0.6, 1.7, 2.5, 0.35, 0.5, 2.0, 1.5, 0.75, 3.0, 1.25, 0.8, 0.4, 1.3, 1.0)
DOWN = (0.6, 0.35, 0.5, 0.75, 0.4, 0.8)


@dataclasses.dataclass
class Case:
    id: str
    op: str  # resize | gridsample | deformconv
    model: object  # onnx.ModelProto
    feeds: dict  # graph inputs for onnxruntime
    node_inputs: tuple  # the node's inputs in order (None for omitted), for the oracle
    dtype: str
    info: dict
    marks: list = dataclasses.field(default_factory=list)


def _model(nodes_inputs, op, attrs, inits, graph_inputs, dtype, opset):
    node = helper.make_node(op, nodes_inputs, ["Y"], **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_tensor_value_info("Y", ONNX_TYPE[dtype], None)],
                              initializer=inits)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    return model


def _data(nrng: np.random.Generator, shape, dtype):
    if dtype == "uint8":
        return nrng.integers(0, 256, shape).astype(np.uint8)
    if dtype == "int32":
        return nrng.integers(-1000, 1001, shape).astype(np.int32)
    return (nrng.standard_normal(shape) * 3).astype(dtype)


# ----------------------------------------------------------------------------------------------------------
# Resize / Upsample


def _fmt(v) -> str:
    return f"{v:g}"


def _resize_case(rng: random.Random, idx: int) -> Case | None:
    kind = rng.choices(["19", "18", "13", "11", "10", "up9"], weights=[50, 14, 9, 9, 9, 9])[0]
    opset = 9 if kind == "up9" else int(kind)
    old = kind in ("10", "up9")
    rank = rng.choices([3, 4, 5], weights=[20, 60, 20])[0]
    if rank == 3:
        shape = [rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 7)]
    elif rank == 4:
        shape = [rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 7), rng.randint(1, 7)]
    else:
        shape = [1, rng.randint(1, 2), rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 5)]
    dtype = rng.choices(["float32", "float16", "uint8", "int32"], weights=[65, 15, 10, 10])[0]
    if old:
        mode = rng.choice(["nearest", "linear"])
    else:
        mode = rng.choices(["nearest", "linear", "cubic"], weights=[40, 35, 25])[0]

    # Which axes are resized.
    spatial = list(range(2, rank))
    resized = spatial
    r = rng.random()
    if rank == 4 and r < 0.15:
        resized = [1, 2]  # channels-last layout: ORT's NHWC kernels
    elif r < 0.25:
        resized = [rng.choice(spatial)]
    if mode == "cubic" and rng.random() < 0.85:
        if rank != 4:  # ORT implements cubic for 2-D/4-D only; keep a few other ranks to count refusals
            rank, shape = 4, [rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 7), rng.randint(1, 7)]
        resized = [2, 3]
    axes_attr = None
    if opset >= 18 and rng.random() < 0.35:
        order = list(resized)
        rng.shuffle(order)
        axes_attr = [a - rank if rng.random() < 0.5 else a for a in order]
    listed = [a % rank for a in axes_attr] if axes_attr is not None else list(range(rank))

    antialias = (not old and opset >= 18 and mode != "nearest" and rng.random() < 0.35)
    use_sizes = (not old and rng.random() < 0.35)
    policy = "stretch"
    if use_sizes and opset >= 18 and rng.random() < 0.3:
        policy = rng.choice(["not_larger", "not_smaller"])

    coord = None
    attrs: dict = {"mode": mode}
    if not old:
        coord = rng.choice(COORDS_19 if opset >= 19 else COORDS_11)
        attrs["coordinate_transformation_mode"] = coord
        if mode == "nearest":
            attrs["nearest_mode"] = rng.choice(list(NEAREST_SHORT))
        if mode == "cubic" and rng.random() < 0.3:
            attrs["cubic_coeff_a"] = rng.choice([-0.5, -0.6])
        if antialias:
            attrs["antialias"] = 1
        if (mode == "cubic" or antialias) and rng.random() < 0.3:
            attrs["exclude_outside"] = 1
        if policy != "stretch":
            attrs["keep_aspect_ratio_policy"] = policy
        if axes_attr is not None:
            attrs["axes"] = axes_attr
        if coord == "tf_crop_and_resize":
            attrs["extrapolation_value"] = rng.choice([0.0, -7.5, 3.25])

    # Per listed axis: scale or size.
    values = []
    for ax in listed:
        L = shape[ax]
        if ax not in resized:
            values.append(L if use_sizes else 1.0)
            continue
        if use_sizes:
            values.append(1 if rng.random() < 0.1 else rng.randint(1, 8))
            continue
        for _ in range(20):
            if kind != "up9" and rng.random() < 0.08:
                s = round(1.5 / L, 4)  # output length 1 with a fractional L*s
            elif kind == "up9":
                s = rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 1.7, 1.25, 1.3])
            elif antialias and rng.random() < 0.7:
                s = rng.choice(DOWN)
            else:
                s = rng.choice(SCALES)
            exact_len = math.floor(Fraction(float(np.float32(s))) * L)
            f32_len = int(np.float32(np.float32(s) * np.float32(L)))
            if exact_len >= 1 and f32_len >= 1 and f32_len <= 24:
                break
        else:
            return None
        values.append(s)

    roi = None
    if coord == "tf_crop_and_resize":
        starts, ends = [], []
        for ax in listed:
            if ax in resized or rng.random() < 0.3:
                starts.append(round(rng.uniform(-0.3, 0.5), 2))
                ends.append(round(rng.uniform(0.5, 1.3), 2))
            else:
                starts.append(0.0)
                ends.append(1.0)
        roi = starts + ends
    nrng = np.random.default_rng(rng.getrandbits(32))
    op = "Upsample" if kind == "up9" else "Resize"
    return _resize_from(op, opset, shape, dtype, attrs, values, use_sizes, roi, nrng, f"{idx:03d}")


def _resize_from(op, opset, shape, dtype, attrs, values, use_sizes, roi, nrng, tag) -> Case:
    """A Resize/Upsample case: ``values`` are the scales or sizes per listed axis, ``roi`` starts then ends."""
    x = _data(nrng, shape, dtype)
    old = op == "Upsample" or opset == 10
    inits, inputs = [], ["X"]
    roi = None if roi is None else np.array(roi, np.float32)
    if old:
        scales = np.array(values, np.float32)
        inits.append(numpy_helper.from_array(scales, "scales"))
        inputs.append("scales")
        node_inputs = (x, scales)
    else:
        if roi is not None:
            inits.append(numpy_helper.from_array(roi, "roi"))
            inputs.append("roi")
        elif opset < 13:
            inits.append(numpy_helper.from_array(np.zeros(0, np.float32), "roi"))
            inputs.append("roi")
        else:
            inputs.append("")
        if use_sizes:
            sizes = np.array(values, np.int64)
            if opset < 13:
                inits.append(numpy_helper.from_array(np.zeros(0, np.float32), "scales"))
                inputs.append("scales")
            else:
                inputs.append("")
            inits.append(numpy_helper.from_array(sizes, "sizes"))
            inputs.append("sizes")
            node_inputs = (x, roi, None, sizes)
        else:
            scales = np.array(values, np.float32)
            inits.append(numpy_helper.from_array(scales, "scales"))
            inputs.append("scales")
            node_inputs = (x, roi, scales)
    model = _model(inputs, op, attrs, inits, [helper.make_tensor_value_info("X", ONNX_TYPE[dtype], shape)], dtype,
                   opset)

    mode = attrs.get("mode", "nearest")
    name = f"{op.lower()}{opset}-{mode}"
    if "coordinate_transformation_mode" in attrs:
        name += f"-{attrs['coordinate_transformation_mode']}"
    if "nearest_mode" in attrs:
        name += f"-{NEAREST_SHORT[attrs['nearest_mode']]}"
    if attrs.get("antialias"):
        name += "-aa"
    if attrs.get("exclude_outside"):
        name += "-excl"
    if "cubic_coeff_a" in attrs:
        name += f"-a{_fmt(attrs['cubic_coeff_a'])}"
    if "keep_aspect_ratio_policy" in attrs:
        name += f"-{attrs['keep_aspect_ratio_policy']}"
    name += f"-{'sizes' if use_sizes else 'scales'}[{','.join(_fmt(v) for v in values)}]"
    if "axes" in attrs:
        name += f"-axes[{','.join(map(str, attrs['axes']))}]"
    name += f"-x{'x'.join(map(str, shape))}-{SHORT[dtype]}-{tag}"
    info = {"opset": f"{op}-{opset}", "mode": mode, "dtype": dtype, "rank": len(shape)}
    return Case(name, "resize", model, {"X": x}, node_inputs, dtype, info)


def _pinned_resize_cases() -> list[Case]:
    """Hand-picked configurations, one per measured onnxruntime behaviour (so each is always exercised)."""
    nrng = np.random.default_rng(SEED)
    H, AC, PY, TF, CR, HS, AS = ("half_pixel", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                  "tf_crop_and_resize", "half_pixel_symmetric", "asymmetric")
    specs = [
        # output length from the float32 product: 0.7f*10 -> 7, 1.3f*10 -> 13, 0.9f*10 -> 9 (exact floor one less)
        (19, [1, 1, 10], {"mode": "nearest", "coordinate_transformation_mode": AS, "nearest_mode": "floor"},
         [1, 1, 0.7], False, None),
        (19, [1, 2, 10], {"mode": "linear", "coordinate_transformation_mode": H}, [1, 1, 1.3], False, None),
        (13, [1, 1, 2, 10], {"mode": "cubic", "coordinate_transformation_mode": AC}, [1, 1, 1, 0.9], False, None),
        # keep-aspect length: float32(7/6) * 27 = 31.499998 -> 31, exact 31.5 -> 32
        (19, [1, 6, 27], {"mode": "nearest", "keep_aspect_ratio_policy": "not_smaller", "axes": [1, 2]},
         [7, 27], True, None),
        # pytorch_half_pixel at output length 1 (sizes, and scales with a fractional length 1.5)
        (19, [1, 1, 5, 4], {"mode": "cubic", "coordinate_transformation_mode": PY}, [1, 1, 1, 3], True, None),
        (19, [1, 1, 4, 4], {"mode": "cubic", "coordinate_transformation_mode": PY}, [1, 1, 0.375, 1.5], False,
         None),
        # align_corners / tf_crop_and_resize / half_pixel_symmetric with fractional L*s
        (19, [1, 1, 5, 7], {"mode": "linear", "coordinate_transformation_mode": AC}, [1, 1, 0.6, 1.7], False, None),
        (19, [1, 1, 5, 7], {"mode": "linear", "coordinate_transformation_mode": HS}, [1, 1, 0.6, 1.7], False, None),
        (19, [1, 1, 5, 7], {"mode": "cubic", "coordinate_transformation_mode": CR, "extrapolation_value": -2.0},
         [1, 1, 0.6, 1.7], False, [0, 0, 0.1, -0.2, 1, 1, 0.9, 1.1]),
        # copies: scale-1 axes (spec blends N and C under tf_half_pixel_for_nn), roi on a scale-1 axis,
        # all lengths equal (1.1 on 5), antialias with an equal length (1.25 on 3)
        (13, [2, 3, 3, 3], {"mode": "linear", "coordinate_transformation_mode": TF}, [1, 1, 2, 2], False, None),
        (19, [1, 1, 4, 4], {"mode": "linear", "coordinate_transformation_mode": CR}, [1, 1, 1, 2], False,
         [0, 0, 0.2, 0.1, 1, 1, 0.7, 0.9]),
        (19, [1, 1, 5, 5], {"mode": "linear", "coordinate_transformation_mode": H}, [1, 1, 1.1, 1.1], False, None),
        (19, [1, 1, 3, 3], {"mode": "linear", "coordinate_transformation_mode": H, "antialias": 1},
         [1, 1, 2, 1.25], False, None),
        (18, [1, 1, 2, 5], {"mode": "cubic", "antialias": 1, "keep_aspect_ratio_policy": "not_larger",
                            "axes": [2, 3]}, [2, 4], True, None),
        # antialias + tf_crop_and_resize + keep-aspect scale 5/6 on a length-3 axis (3 -> 3): copied by ORT
        (19, [1, 1, 3, 6], {"mode": "linear", "coordinate_transformation_mode": CR, "antialias": 1,
                            "keep_aspect_ratio_policy": "not_larger", "axes": [2, 3]}, [3, 5], True,
         [0.1, 0.2, 0.9, 0.8]),
        # integer extrapolation value: static_cast -> -7.5 becomes 249 in uint8
        (19, [1, 1, 3, 3], {"mode": "nearest", "coordinate_transformation_mode": CR, "extrapolation_value": -7.5},
         [1, 1, 2, 2], False, [0, 0, -1, -1, 1, 1, 2, 2]),
        # float32 near-tie: 2/0.4f is 5 in float32, 4.99999993 exactly
        (19, [1, 1, 1, 10], {"mode": "nearest", "coordinate_transformation_mode": AS, "nearest_mode": "floor"},
         [1, 1, 1, 0.4], False, None),
        # onnxruntime bugs: channels-last antialias with tf_crop_and_resize; negative axes under a policy
        (19, [1, 2, 6, 3], {"mode": "linear", "coordinate_transformation_mode": CR, "antialias": 1,
                            "extrapolation_value": -9.0}, [1, 1, 8, 3], True, [0, 0, -0.14, 0.14, 1, 1, 1.28, 0.62]),
        (19, [1, 2, 3, 4], {"mode": "linear", "keep_aspect_ratio_policy": "not_larger", "axes": [-2, -1]},
         [5, 7], True, None),
    ]
    out = []
    for k, (opset, shape, attrs, values, use_sizes, roi) in enumerate(specs):
        dtype = "uint8" if attrs.get("extrapolation_value") == -7.5 else "float32"
        out.append(_resize_from("Resize", opset, shape, dtype, attrs, values, use_sizes, roi, nrng, f"pin{k:02d}"))
    return out


# ----------------------------------------------------------------------------------------------------------
# GridSample


def _grid_values(nrng: np.random.Generator, shape):
    g = nrng.uniform(-1.3, 1.3, shape)
    # Lattice values hit borders, corners and exact .5 coordinates.
    lattice = nrng.integers(-12, 13, shape) / 8.0
    return np.where(nrng.random(shape) < 0.3, lattice, g)


def _gridsample_case(rng: random.Random, idx: int) -> Case:
    opset = rng.choices([16, 20, 22], weights=[15, 40, 45])[0]
    D = 2 if opset == 16 else rng.choices([2, 3], weights=[65, 35])[0]
    if opset == 16:
        mode = rng.choice(["bilinear", "nearest", "bicubic"])
    else:
        mode = rng.choices(["linear", "nearest", "cubic"], weights=[35, 35, 30 if D == 2 else 8])[0]
    padding = rng.choice(["zeros", "border", "reflection"])
    ac = rng.randint(0, 1)
    dtype = rng.choices(["float32", "float16"], weights=[85, 15])[0]
    N, C = rng.randint(1, 2), rng.randint(1, 2)
    spatial = [rng.randint(1, 5) for _ in range(D)]
    out = [rng.randint(1, 4) for _ in range(D)]
    xs, gs = [N, C] + spatial, [N] + out + [D]
    nrng = np.random.default_rng(rng.getrandbits(32))
    x = _data(nrng, xs, dtype)
    grid = _grid_values(nrng, gs).astype(dtype)
    vis = [helper.make_tensor_value_info("X", ONNX_TYPE[dtype], xs),
           helper.make_tensor_value_info("grid", ONNX_TYPE[dtype], gs)]
    model = _model(["X", "grid"], "GridSample", {"mode": mode, "padding_mode": padding, "align_corners": ac}, [], vis,
                   dtype, opset)
    name = (f"gridsample{opset}-{D}d-{mode}-{padding}-ac{ac}-x{'x'.join(map(str, xs))}"
            f"-grid{'x'.join(map(str, gs))}-{SHORT[dtype]}-{idx:03d}")
    info = {"opset": f"GridSample-{opset}", "mode": mode, "dtype": dtype, "rank": D + 2}
    return Case(name, "gridsample", model, {"X": x, "grid": grid}, (x, grid), dtype, info)


# ----------------------------------------------------------------------------------------------------------
# DeformConv


def _deformconv_case(rng: random.Random, idx: int) -> Case:
    opset = rng.choices([19, 22], weights=[30, 70])[0]
    dtype = rng.choices(["float32", "float16"], weights=[88, 12])[0]
    while True:
        C = rng.choice([2, 4])
        group = rng.choice([g for g in (1, 2, 4) if C % g == 0])
        offset_group = rng.choice([g for g in (1, 2, 4) if C % g == 0])
        OC = group * rng.randint(1, 2)
        N = rng.randint(1, 2)
        H, W = rng.randint(2, 6), rng.randint(2, 6)
        k = [rng.randint(1, 3), rng.randint(1, 3)]
        strides = [rng.randint(1, 2), rng.randint(1, 2)]
        dil = [rng.randint(1, 2), rng.randint(1, 2)]
        pads = [rng.randint(0, 2) for _ in range(4)]
        out = [(H + pads[0] + pads[2] - (dil[0] * (k[0] - 1) + 1)) // strides[0] + 1,
               (W + pads[1] + pads[3] - (dil[1] * (k[1] - 1) + 1)) // strides[1] + 1]
        if min(out) >= 1:
            break
    has_bias, has_mask = rng.random() < 0.5, rng.random() < 0.5
    xs, ws = [N, C, H, W], [OC, C // group] + k
    os_ = [N, offset_group * k[0] * k[1] * 2] + out
    ms = [N, offset_group * k[0] * k[1]] + out
    nrng = np.random.default_rng(rng.getrandbits(32))
    x, w = _data(nrng, xs, dtype), (nrng.standard_normal(ws)).astype(dtype)
    # Offsets up to several pixels: many taps fall outside; a third sit on integer/half-integer positions.
    off = nrng.standard_normal(os_) * 3
    off = np.where(nrng.random(os_) < 0.3, nrng.integers(-8, 9, os_) / 2.0, off).astype(dtype)
    b = nrng.standard_normal(OC).astype(dtype) if has_bias else None
    m = nrng.random(ms).astype(dtype) if has_mask else None
    vis = [helper.make_tensor_value_info(n, ONNX_TYPE[dtype], s) for n, s in (("X", xs), ("W", ws), ("offset", os_))]
    feeds = {"X": x, "W": w, "offset": off}
    inputs = ["X", "W", "offset"]
    if has_bias or has_mask:
        inputs.append("B" if has_bias else "")
    if has_bias:
        vis.append(helper.make_tensor_value_info("B", ONNX_TYPE[dtype], [OC]))
        feeds["B"] = b
    if has_mask:
        inputs.append("mask")
        vis.append(helper.make_tensor_value_info("mask", ONNX_TYPE[dtype], ms))
        feeds["mask"] = m
    attrs = {"group": group, "offset_group": offset_group, "strides": strides, "dilations": dil, "pads": pads}
    if rng.random() < 0.5:
        attrs["kernel_shape"] = k
    model = _model(inputs, "DeformConv", attrs, [], vis, dtype, opset)
    name = (f"deformconv{opset}-g{group}-og{offset_group}-k{k[0]}x{k[1]}-s{strides[0]}{strides[1]}"
            f"-d{dil[0]}{dil[1]}-p{''.join(map(str, pads))}{'-bias' if has_bias else ''}{'-mask' if has_mask else ''}"
            f"-x{'x'.join(map(str, xs))}-oc{OC}-{SHORT[dtype]}-{idx:03d}")
    info = {"opset": f"DeformConv-{opset}", "mode": "linear", "dtype": dtype, "rank": 4}
    return Case(name, "deformconv", model, feeds, (x, w, off, b, m), dtype, info)


# ----------------------------------------------------------------------------------------------------------
# Known gaps, decided per configuration before anything runs.

SIZE_RULE_GAP = ("no IR value for onnxruntime's keep-aspect output length: it rounds half away from zero the "
                 "float32 product policy_scale*length (size_rule 'floor_fp32' covers the scales case)")
ORT_NHWC_AA_CROP_BUG = ("onnxruntime bug: antialias in the channels-last kernel (axis 1 resized, innermost scale 1) "
                        "with tf_crop_and_resize writes the extrapolation value to the wrong outputs")


def _ort_channels_last_crop(ir: ResizeIR, ort_ir: ResizeIR, shape) -> bool:
    """ORT's channels-last kernel (4-D, axis 1 really resized) under antialias with an extrapolated output."""
    if not (ir.sampler.antialias and ir.coord == "tf_crop_and_resize" and ir.rank == 4 and 1 in ir.axes):
        return False
    i = ir.axes.index(1)
    if ir.scales is not None:
        resized = np.float32(float(ir.scales[i])) != 1
    else:
        resized = ort_output_shape(ir)[1] != shape[1]
    if not resized:
        return False
    return any(not ax.valid[0] <= ax.src(o) <= ax.valid[1]
               for ax in bind_resize(ort_ir, shape).axes if ax.valid is not None for o in range(ax.out_len))


def _mark(case: Case) -> Case:
    if case.op != "resize":
        return case
    ir = parse_model(case.model)[0][1]
    ort_ir = ort_semantics(ir)
    shape = case.node_inputs[0].shape
    # (keep_aspect_ratio_policy with axes listed as negative numbers: onnxruntime leaves them out, its convention
    # says so from ``ResizeIR.given_negative``; an xfail before)
    if ort_output_shape(ir) != bind_resize(ort_ir, shape).out_shape:
        case.marks.append(pytest.mark.xfail(reason=SIZE_RULE_GAP, strict=True))
    elif _ort_channels_last_crop(ir, ort_ir, shape):
        case.marks.append(pytest.mark.xfail(reason=ORT_NHWC_AA_CROP_BUG, strict=False))
    return case


def _generate() -> list[Case]:
    rng = random.Random(SEED)
    cases = []
    i = 0
    while sum(c.op == "resize" for c in cases) < N_RESIZE:
        c = _resize_case(rng, i)
        i += 1
        if c is not None:
            cases.append(c)
    cases += _pinned_resize_cases()
    cases += [_gridsample_case(rng, j) for j in range(N_GRIDSAMPLE)]
    cases += [_deformconv_case(rng, j) for j in range(N_DEFORMCONV)]
    return [_mark(c) for c in cases]


CASES = _generate()
BY_ID = {c.id: c for c in CASES}
assert len(BY_ID) == len(CASES), "case ids must be unique"


# ----------------------------------------------------------------------------------------------------------
# Running onnxruntime (once per case, shared by the tests)


@functools.lru_cache(maxsize=None)
def _ort_result(case_id: str):
    """("ok", output) or ("session", message) / ("run", message) when onnxruntime refuses the model."""
    case = BY_ID[case_id]
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        sess = ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
        return "session", str(e).splitlines()[0][:300]
    try:
        return "ok", sess.run(None, case.feeds)[0]
    except Exception as e:  # noqa: BLE001
        return "run", str(e).splitlines()[0][:300]


# ----------------------------------------------------------------------------------------------------------
# Comparison helpers


def _is_int(dtype: str) -> bool:
    return np.issubdtype(np.dtype(dtype), np.integer)


def _close(got: np.ndarray, want: np.ndarray, case: Case, int_tol: int = 0) -> np.ndarray:
    """Elementwise agreement of two outputs of the same shape."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    if _is_int(case.dtype):
        return np.abs(g - w) <= int_tol
    if case.dtype == "float16":
        span = float(np.ptp(w)) if w.size else 0.0
        return np.abs(g - w) <= 1e-2 * max(1.0, span)
    atol = 1e-5
    if case.op == "deformconv":  # sums of up to C*K products: absolute error grows with the magnitude
        atol *= max(1.0, float(np.abs(w).max()) if w.size else 1.0)
    return np.abs(g - w) <= atol + 1e-4 * np.abs(w)


def _tie_mask(case: Case, ir, ort_ir, out_shape, d_list) -> np.ndarray:
    """True where an output position is compared (not on a reported floating-point tie)."""
    keep = np.ones(out_shape, dtype=bool)
    ties = {}
    for d in d_list:
        for ax, idx in d.ties.items():
            ties.setdefault(ax, set()).update(idx)
    if isinstance(ir, ResizeIR):
        names = {axis_name(a, ir.rank): a for a in range(ir.rank)}
        for ax, idx in ties.items():
            sl = [slice(None)] * len(out_shape)
            sl[names[ax]] = sorted(i for i in idx if i < out_shape[names[ax]])
            keep[tuple(sl)] = False
    elif isinstance(ir, GridSampleIR) and "grid" in ties and ir.sampler.kind == "nearest":
        # Positions whose unnormalised coordinate is exactly x.5 (in float32, as both sides compute it).
        x, grid = case.node_inputs
        D = ir.spatial_rank
        on_tie = np.zeros(grid.shape[:-1], dtype=bool)
        for dim in range(D):
            L = x.shape[2 + dim]
            p = unnormalize(grid[..., D - 1 - dim].astype(np.float64), L, ir.align_corners).astype(np.float32)
            on_tie |= (p - np.floor(p)) == 0.5
        keep &= ~on_tie[:, None]
    return keep


def _input_shape(case: Case):
    return case.node_inputs[0].shape


def _params():
    return [pytest.param(c, id=c.id, marks=c.marks) for c in CASES]


# ----------------------------------------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize("case", _params())
def test_onnxruntime_fixed_or_explained(case: Case):
    status, y = _ort_result(case.id)
    if status != "ok":
        when = "session creation" if status == "session" else "run time"
        pytest.skip(f"onnxruntime refuses this model at {when}: {y}")
    ir = parse_model(case.model)[0][1]
    ort_ir = ort_semantics(ir)
    shape = _input_shape(case)
    d = diff(ir, ort_ir, shape)
    d_back = diff(ort_ir, ir, shape)

    # 1. Fixed: the oracle running ort_ir reproduces onnxruntime outside reported ties.
    y_fix = reference.run(ort_ir, *case.node_inputs)
    assert y_fix.shape == y.shape, f"output shape {y.shape} from onnxruntime, {y_fix.shape} from ort_ir\n{ort_ir}"
    keep = _tie_mask(case, ir, ort_ir, y.shape, [d, d_back])
    # Integer outputs of linear/cubic: no IR field carries ORT's truncation; hold them to one unit in the last place
    # here and report the exact mismatch below as an expected failure. uint8 antialias is held exactly: its fixed
    # point is the IR's (integer_rounding).
    rounding_gap = _is_int(case.dtype) and ir.sampler.kind != "nearest" and ort_rounds_integers_otherwise(ir)
    int_tol = 1 if rounding_gap else 0
    ok = _close(y, y_fix, case, int_tol)
    bad = ~ok & keep
    assert not bad.any(), (
        f"oracle(ort_ir) differs from onnxruntime at {int(bad.sum())} of {bad.size} positions, first "
        f"{np.argwhere(bad)[:5].tolist()}; max |diff| {np.abs(y.astype(np.float64) - y_fix)[bad].max()}\n"
        f"ort_ir: {ort_ir}")

    # 2. Explained: a difference between the spec and onnxruntime is named by diff(); "same" means same.
    y_spec = reference.run(ir, *case.node_inputs)
    if y_spec.shape != y.shape:
        spec_differs = True
    else:
        spec_differs = bool((~_close(y, y_spec, case, int_tol) & keep).any())
    if spec_differs:
        assert not d.same, f"onnxruntime differs from the ONNX spec but diff() names no material field: {d}"
    if d.same and not d.ties:
        assert not spec_differs, "diff() says same numbers, yet oracle(ir) differs from onnxruntime"

    if rounding_gap and not np.array_equal(y, y_fix):
        pytest.xfail("no IR field for onnxruntime's integer output rounding: it truncates linear / cubic results "
                     "toward zero, the spec rounds half to even once (8-bit antialias: its fixed point, named)")


def test_enough_configs_accepted():
    counts = collections.Counter()
    for c in CASES:
        status, _ = _ort_result(c.id)
        counts[(c.op, status)] += 1
    accepted = sum(n for (op, status), n in counts.items() if status == "ok")
    assert accepted >= 300, dict(counts)
    for op in ("resize", "gridsample", "deformconv"):
        assert counts[(op, "ok")] > 0, dict(counts)


def summary() -> dict:
    """Configurations by operator, opset, dtype and onnxruntime outcome (ok / session / run), for reports:
    ``cd tests && python -c 'import test_differential_onnxruntime as t; print(t.summary())'``."""
    out = collections.Counter()
    for c in CASES:
        status, _ = _ort_result(c.id)
        out[(c.info["opset"], c.info["dtype"], status)] += 1
    return dict(sorted(out.items()))
