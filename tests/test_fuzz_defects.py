"""Issue 22 items 9-11: the defects the 500-case fuzz campaign (seed 2) found, each its reproducer, through the
real CLI: a model the spec or the runtimes refuse is refused with exit status 2 in one line naming the node and
the field, in every verb; a valid one converts and equals onnxruntime."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.equivalence import field_differences
from resample_bridge.tools.dev import fuzz_bad as fb
from resample_bridge.tools.dev.fuzz import cli_command, run_process
from resample_bridge.tools.dev.fuzz_cases import const_init, make_model, out_vi, vi
from resample_bridge.tools.dev.fuzz_classify import message_problems
from resample_bridge.tools.dev.fuzz_exec import run_onnxruntime
from resample_bridge.translate.onnx import parse_model

F = TensorProto.FLOAT
VERBS = {
    "inspect": lambda p, d: ["inspect", p],
    "check": lambda p, d: ["check", p],
    "convert-ov": lambda p, d: ["convert", p, "--target", "openvino", "-o", d / "out.xml"],
    "convert-trt": lambda p, d: ["convert", p, "--target", "tensorrt", "-o", d / "out_trt.onnx"],
    "convert-onnx": lambda p, d: ["convert", p, "--target", "onnx", "-o", d / "out_portable.onnx"],
}


def cli(*args, cwd, timeout=120):
    rc, out, err, hung = run_process(cli_command() + [str(a) for a in args], str(cwd),
                                     dict(os.environ, TMPDIR=str(cwd)), timeout, 4.0)
    assert not hung, f"resample-bridge {args[0]} hung"
    return rc, out, err


def save(model, d, name="model.onnx"):
    p = d / name
    p.write_bytes(model.SerializeToString())
    return p


def refused_everywhere(model, tmp_path, node, field, verbs=tuple(VERBS)):
    """Every verb refuses ``model`` with exit 2, one line naming ``node`` and ``field``."""
    p = save(model, tmp_path)
    for verb in verbs:
        d = tmp_path / verb
        d.mkdir()
        rc, out, err = cli(*VERBS[verb](p, d), cwd=d)
        assert rc == 2, f"{verb}: exit {rc}: {(err or out)[-300:]}"
        assert not message_problems(err, True), f"{verb}: {message_problems(err, True)}: {err[:300]!r}"
        assert f"node '{node}'" in err and f"field '{field}'" in err, f"{verb}: {err[:300]}"


def test_deformconv_output_channels_not_divisible_by_group(tmp_path):
    """oC=3, group=2 was converted (exit 0) and the extension read out of bounds; the spec requires
    oC % group == 0."""
    m = fb.deformconv(attrs={"group": 2}, x=(1, 2, 5, 5), w=(3, 1, 2, 2))
    refused_everywhere(m, tmp_path, "deformconv_bad", "group", ("inspect", "check", "convert-ov", "convert-trt"))


@pytest.mark.parametrize("case", ["input_channels", "kernel_shape"])
def test_deformconv_shape_rules(case):
    """C % group with W's channel count unknown, and kernel_shape against W's spatial shape."""
    from resample_bridge.semantics.errors import BridgeError
    if case == "input_channels":
        m = fb.deformconv(attrs={"group": 2}, x=(1, 3, 5, 5), w=(2, 2, 2, 2))
        m.graph.initializer.pop()
        m.graph.input.append(vi("W", F, ["o", "c", 2, 2]))
        field = "group"
    else:
        m = fb.deformconv(attrs={"kernel_shape": [3, 3]}, off=(1, 18, 3, 3))
        field = "kernel_shape"
    with pytest.raises(BridgeError) as e:
        parse_model(m)
    assert e.value.node == "deformconv_bad" and e.value.field == field, str(e.value)


def test_zero_size_refused_in_every_verb(tmp_path):
    """sizes 0 on a non-empty axis is a scale of 0 (onnxruntime: "Scale value should be greater than 0");
    check exited 3 / convert raised ZeroDivisionError, inspect and tensorrt took it."""
    m = fb.resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 1, 0, 8), attrs={"mode": "linear"})
    with pytest.raises(Exception, match="greater than 0"):
        run_onnxruntime(m, {"X": np.ones((1, 1, 4, 4), np.float32)})
    refused_everywhere(m, tmp_path, "resize_bad", "sizes", ("inspect", "check", "convert-ov", "convert-trt"))


def test_undeclared_domain_refused(tmp_path):
    """A Resize in domain com.fuzz with no opset import: inspect exited 0, convert gave OpenVINO's message."""
    m = fb.resize()
    m.graph.node[0].domain = "com.fuzz"
    refused_everywhere(m, tmp_path, "resize_bad", "domain", ("inspect", "check", "convert-ov", "convert-trt"))


def test_node_without_outputs_named(tmp_path):
    m = fb.resize()
    m.graph.node[0].ClearField("output")
    refused_everywhere(m, tmp_path, "resize_bad", "outputs", ("inspect", "convert-ov"))


def _nan_extrapolation():
    return fb.resize(ins=("X", "roi", "scales"), roi=[0, 0, -0.25, -0.25, 1, 1, 1.25, 1.25],
                     attrs={"coordinate_transformation_mode": "tf_crop_and_resize", "mode": "linear",
                            "extrapolation_value": float("nan")})


def test_nan_extrapolation_ir_equality():
    (_, ir), = parse_model(_nan_extrapolation())
    assert np.isnan(ir.extrapolation_value)
    other = dataclasses.replace(ir, extrapolation_value=float("nan"))
    assert ir == other and hash(ir) == hash(other) and not field_differences(ir, other)
    assert ir != dataclasses.replace(ir, extrapolation_value=0.0)
    assert [d.name for d in field_differences(ir, dataclasses.replace(ir, extrapolation_value=0.0))] == \
        ["extrapolation_value"]


def test_nan_extrapolation_converts(tmp_path):
    """A valid NaN extrapolation_value was refused by the ONNX target's self-check (NaN != NaN)."""
    import onnx
    m = _nan_extrapolation()
    p = save(m, tmp_path)
    out = tmp_path / "out_portable.onnx"
    rc, _, err = cli("convert", p, "--target", "onnx", "-o", out, cwd=tmp_path)
    assert rc == 0, err[-300:]
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    want = run_onnxruntime(m, {"X": x})["Y"]
    got = run_onnxruntime(onnx.load(str(out)), {"X": x})["Y"]
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-6, atol=1e-6)


def test_string_input_refused(tmp_path):
    m = make_model([helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize_str")],
                   [vi("X", TensorProto.STRING, [1, 1, 4, 4])], [out_vi("Y", TensorProto.STRING, 4)],
                   [const_init("scales", np.array([1, 1, 2, 2], np.float32))])
    refused_everywhere(m, tmp_path, "resize_str", "X", ("inspect", "check", "convert-ov", "convert-trt"))


def test_bfloat16_refusal_message_whole(tmp_path):
    """The refusal quoted '(float32, float16...;' with the parenthesis never closed."""
    m = make_model([helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize_bf16", mode="linear")],
                   [vi("X", TensorProto.BFLOAT16, [1, 1, 4, 4])], [out_vi("Y", TensorProto.BFLOAT16, 4)],
                   [const_init("scales", np.array([1, 1, 2, 2], np.float32))])
    p = save(m, tmp_path)
    rc, _, err = cli("convert", p, "--target", "openvino", "-o", tmp_path / "out.xml", cwd=tmp_path)
    if rc == 0:
        return  # converted (a bfloat16 compute path): nothing left of the defect
    assert rc == 2 and not message_problems(err, True), err[:400]
    line = err.strip()
    assert line.count("(") == line.count(")"), line
    assert "...;" not in line and "bfloat16" in line, line


def test_upsample_bilinear_refused(tmp_path):
    """mode 'bilinear' is no ONNX Upsample mode (onnxruntime and OpenVINO refuse it); it was converted silently
    as linear with a record saying "with the same attributes"."""
    m = make_model([helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up_bil", mode="bilinear")],
                   [vi("X", F, [1, 1, 4, 4])], [out_vi("Y", F, 4)],
                   [const_init("scales", np.array([1, 1, 2, 2], np.float32))], opset=9)
    with pytest.raises(Exception):
        run_onnxruntime(m, {"X": np.ones((1, 1, 4, 4), np.float32)})
    refused_everywhere(m, tmp_path, "up_bil", "mode", ("inspect", "check", "convert-ov"))


@pytest.mark.compiled
@pytest.mark.parametrize("bad", ["offset", "mask", "B"])
def test_deformconv_c_abi_refuses_short_inputs(bad):
    """The C ABI (the compiled proof's and CUDA's entry point) indexed offset / mask / B by the spec's lengths
    without looking at their shapes: a short one was read out of bounds. It refuses now."""
    import ctypes
    from resample_bridge.lowering.compiled import abi, cpu
    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.semantics.ir import DeformConvIR
    ir = DeformConvIR(2, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 1, 1, True, True)
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 2, 2), np.float32)
    arrays, y, params = cpu.deformconv_args(ir, x, w, np.zeros((1, 8, 4, 4), np.float32),
                                            np.ones(3, np.float32), np.ones((1, 4, 4, 4), np.float32))
    arrays[2 if bad == "offset" else 4 if bad == "mask" else 3] = {
        "offset": np.zeros((1, 8, 2, 2), np.float32), "mask": np.ones((1, 4, 2, 2), np.float32),
        "B": np.ones(1, np.float32)}[bad]
    inputs, n = abi.tensors(arrays, cpu.DEFORMCONV_INPUTS)
    with pytest.raises(BridgeError, match=bad):
        abi.call(abi.library().rb_deformconv, inputs, n, ctypes.byref(params), ctypes.byref(abi.tensor(y)), 1)


@pytest.mark.compiled
def test_a_rung_caught_only_by_the_whole_model_check_is_a_defect(tmp_path, monkeypatch):
    """A valid model that convert refuses because a node of the model it wrote is not its oracle's output (a
    rung's proof let it through; only the whole-model check caught it) is SELF-REFUSED, not refused-ok: the
    campaign had counted such a refusal good. Made real by putting back the blind spot it hid (a keep-aspect
    Resize on dynamic lengths proven on one square length, ``interpolate.length_free``), and classified from the
    line the CLI prints."""
    from resample_bridge.lowering.openvino import interpolate
    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.tools.convert import convert_openvino_model
    from resample_bridge.tools.dev.fuzz_cases import Case
    from resample_bridge.tools.dev.fuzz_classify import CallResult, classify_call
    from tests.helpers.models import resize_model

    m = resize_model((1, 2, "H", "W"), sizes=[8, 8], opset=19, mode="linear", axes=[2, 3],
                     keep_aspect_ratio_policy="not_smaller")
    p = save(m, tmp_path)
    monkeypatch.setattr(interpolate, "length_free", lambda ir, shape: None)
    with pytest.raises(BridgeError) as caught:
        convert_openvino_model(str(p))
    call = CallResult("convert-ov", [], 2, "", f"resample-bridge: error: {caught.value.line()}\n", False, 1.0)
    classify_call(Case("resize", "keep aspect", model=m), call, {}, {}, str(tmp_path), 2)
    assert call.outcome == "SELF-REFUSED", (call.outcome, call.detail)


def test_onnxruntimes_float32_tie_on_a_run_time_roi_is_explained():
    """Fuzz seed 16912 case 10: nearest tf_crop_and_resize with its roi fed at run time, W 6 -> 3 from 0.1f: output
    0's source is 0.1f * 5 = 0.5 + 7e-9, which onnxruntime (and onnx.reference) round to 0.5 in float32, a tie its
    round_prefer_floor sends to 0; the oracle's exact arithmetic reads 1. The campaign called the oracle disputed
    (silently wrong) because re-running the oracle on onnxruntime's convention cannot reproduce a float32 tie; the
    whole-model check's own allowance (``model_reference.same_off_ties``) explains it."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.dev.fuzz_exec import ort_verdict

    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], mode="nearest", name="resize",
                            coordinate_transformation_mode="tf_crop_and_resize", nearest_mode="round_prefer_floor")
    model = make_model([node], [vi("X", TensorProto.INT32, [1, 1, 6, 6]), vi("roi", F, [8])],
                       [out_vi("Y", TensorProto.INT32, 4)],
                       [const_init("scales", np.array([1, 1, 0.5, 0.5], np.float32))], opset=17)
    x = np.random.default_rng(0).integers(-1000, 1000, (1, 1, 6, 6)).astype(np.int32)
    roi = np.array([0.1, -0.2, 0, 0.1, 1, 0.75, 0.75, 1], np.float32)
    (_, ir), = parse_model(model)
    args = [x, roi, np.array([1, 1, 0.5, 0.5], np.float32), None]
    want, got = run(ir, *args), run_onnxruntime(model, {"X": x, "roi": roi})["Y"]
    assert not np.array_equal(got, want)  # the tie: onnxruntime reads element 0, the oracle element 1
    verdict = ort_verdict(got, want, ir, args, 1.0)
    assert verdict.startswith("explained") and verdict.endswith("(float32 ties)"), verdict


def test_onnxruntimes_crop_of_an_equal_length_axis_with_truncated_integers_is_explained():
    """Fuzz seed 20261204 case 81: int32 linear tf_crop_and_resize at rank 3, N 2 -> 2 cropped by roi [0.1, 1.2],
    W 5 -> 10. onnxruntime copies the equal-length N axis (its IR, ``ort_semantics``: the oracle puts batch 1's
    source at 1.2, outside, the extrapolation value) and truncates the integer taps' sum; either alone the
    campaign named, both at once it called UNEXPLAINED (908 off)."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.dev.fuzz_exec import ort_verdict

    node = helper.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], mode="linear", name="resize",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.43887)
    roi = np.array([0.1, 0, -0.2446, 1.2, 1.221, 0.75], np.float32)
    model = make_model([node], [vi("X", TensorProto.INT32, [2, 1, 5])], [out_vi("Y", TensorProto.INT32, 3)],
                       [const_init("roi", roi), const_init("sizes", np.array([2, 1, 10], np.int64))], opset=18)
    x = np.random.default_rng(1).integers(-1000, 1000, (2, 1, 5)).astype(np.int32)
    (_, ir), = parse_model(model)
    args = [x, roi, None, np.array([2, 1, 10], np.int64)]
    want, got = run(ir, *args), run_onnxruntime(model, {"X": x})["Y"]
    assert np.abs(got.astype(np.int64) - want).max() > 100
    verdict = ort_verdict(got, want, ir, args, 1000.0)
    assert verdict.startswith("explained") and verdict.endswith("(integer results truncated)"), verdict


def test_onnxruntimes_int8_antialias_saturated_to_uint8_is_explained():
    """Fuzz seed 20261209 case 4: int8 cubic antialias, W 2 -> 6. onnxruntime runs its uint8 fixed point, each
    pass clipped to [0, 255] and cast to int8 (-120 -> 0, 129 -> -127); the oracle and OpenVINO round the exact
    sum once and saturate to int8. The campaign called it UNEXPLAINED (127 off); onnxruntime's convention names
    it (``integer_rounding``)."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.dev.fuzz_exec import ort_verdict

    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], mode="cubic", antialias=1, axes=[3], name="resize",
                            coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.5)
    scales = np.array([3], np.float32)
    model = make_model([node], [vi("X", TensorProto.INT8, [1, 1, 4, 2])], [out_vi("Y", TensorProto.INT8, 4)],
                       [const_init("scales", scales)], opset=18)
    x = np.array([[[[-25, -120], [109, 59], [100, 127], [-128, -1]]]], np.int8)
    (_, ir), = parse_model(model)
    args = [x, None, scales, None]
    want, got = run(ir, *args), run_onnxruntime(model, {"X": x})["Y"]
    assert want.min() < 0 and got[want < 0].max() == 0  # onnxruntime's lower bound is 0
    verdict = ort_verdict(got, want, ir, args, 127.0)
    assert verdict.startswith("explained by") and "integer_rounding" in verdict, verdict


def test_onnxruntimes_copy_under_a_keep_aspect_policy_with_negative_axes_is_explained():
    """Fuzz seed 20261209 case 59: cubic, keep_aspect_ratio_policy not_larger, sizes [4] on axes [-2] of
    [1, 2, 2, 7]. onnxruntime returns X unchanged (the same node with axes [2] resizes H to 4, as the oracle and
    OpenVINO do); the campaign called it UNEXPLAINED ([1, 2, 2, 7] vs [1, 2, 4, 7]). onnxruntime's convention
    leaves an axis listed negative out of a keep-aspect policy (``ResizeIR.given_negative``): named."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.dev.fuzz_exec import ort_verdict

    sizes = np.array([4], np.int64)
    x = np.random.default_rng(2).uniform(-1, 1, (1, 2, 2, 7)).astype(np.float32)
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="cubic", axes=[-2], name="resize",
                            keep_aspect_ratio_policy="not_larger")
    model = make_model([node], [vi("X", F, [1, 2, 2, 7])], [out_vi("Y", F, 4)], [const_init("sizes", sizes)],
                       opset=19)
    (_, ir), = parse_model(model)
    args = [x, None, None, sizes]
    want, got = run(ir, *args), run_onnxruntime(model, {"X": x})["Y"]
    assert want.shape == (1, 2, 4, 7) and got.shape == x.shape
    verdict = ort_verdict(got, want, ir, args, 1.0)
    assert verdict.startswith("explained by") and "axes" in verdict, verdict
