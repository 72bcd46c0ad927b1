"""One test per bug of issue 10's "Why" section, each its exact reproducer, each asserting the right behaviour
through the real CLI: the converted model equals onnxruntime (or an independent exact computation, or the
oracle where onnxruntime cannot run the case), or the input is refused with exit status 2 in one clean line
naming the node and the field. Tests of bugs still present are xfail(strict=True): they flip when fixed.
"""

from __future__ import annotations

import os
import stat
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.tools.dev.fuzz import cli_command, run_process
from resample_bridge.tools.dev.fuzz_classify import CTRL, message_problems
from resample_bridge.tools.dev.fuzz_exec import oracle, run_onnxruntime, run_openvino
from tests.helpers.models import EXTENSION_ONLY, resize_model, roi_initializer

F, I32, U8 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.UINT8
LIB = "libresample_bridge_openvino.so"
BUG = "issue 10: "


def xfail(why, found=False):
    """A bug still present; ``found``: found by the fuzz campaign beside issue 10's list."""
    return pytest.mark.xfail(strict=True, reason=("found by tools/dev/fuzz.py: " if found else BUG) + why)


def cli(*args, cwd, timeout=60, mem_gb=4.0):
    rc, out, err, hung = run_process(cli_command() + [str(a) for a in args], str(cwd),
                                     dict(os.environ, TMPDIR=str(cwd)), timeout, mem_gb)
    assert not hung, f"resample-bridge {args[0]} hung for {timeout} s"
    return rc, out, err


def assert_refused(rc, err, field=None, node=True):
    assert rc == 2, f"exit {rc}: {err[:300]}"
    probs = message_problems(err, node)
    assert not probs, f"{probs}: {err[:300]!r}"
    if field:
        assert f"field '{field}'" in err, err[:300]


def save(model, tmp_path, name="model.onnx"):
    p = tmp_path / name
    p.write_bytes(model.SerializeToString())
    return p


def convert(model, tmp_path, *flags):
    p = save(model, tmp_path)
    xml = tmp_path / "out.xml"
    rc, out, err = cli("convert", p, "--target", "openvino", "-o", xml, *flags, cwd=tmp_path)
    assert rc in (0, 2), f"exit {rc}: {err[:300]}"
    if rc == 2:
        assert_refused(rc, err)
    return rc, str(xml)


def converted_output(model, tmp_path, feeds):
    """The converted model's output on ``feeds``, or None when convert refused (cleanly)."""
    rc, xml = convert(model, tmp_path)
    if rc == 2:
        return None
    got, _ = run_openvino(xml, feeds)
    return got.get("Y", got.get("__only__"))


def single(node, inputs, inits=(), opset=19, out_rank=4, out_elem=F):
    out = helper.make_tensor_value_info("Y", out_elem, [f"y{i}" for i in range(out_rank)])
    g = helper.make_graph([node], "g", inputs, [out], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


# ----------------------------------------------------------------------------------------------------------
# Garbage written as proven; integers through float32


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_at_identity_size_copies_the_input(tmp_path, mode):
    m = resize_model((1, 1, 4, 4), sizes=[1, 1, 4, 4], opset=18, mode=mode, antialias=1)
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    got = converted_output(m, tmp_path, {"X": x})
    if got is not None:
        np.testing.assert_allclose(got, run_onnxruntime(m, {"X": x})["Y"], rtol=1e-5, atol=1e-6)


def test_int32_nearest_near_2_24_is_exact(tmp_path):
    m = resize_model((1, 1, 2, 2), scales=[1, 1, 1.5, 1.5], dtype=I32, mode="nearest")
    x = (2**24 + np.array([1, 3, 5, 7])).astype(np.int32).reshape(1, 1, 2, 2)
    got = converted_output(m, tmp_path, {"X": x})
    if got is not None:
        np.testing.assert_array_equal(got, run_onnxruntime(m, {"X": x})["Y"])


def test_int32_cubic_saturates(tmp_path):
    m = resize_model((1, 1, 1, 4), scales=[1, 1, 1, 2], dtype=I32, mode="cubic")
    big = np.iinfo(np.int32).max
    x = np.array([0, big, big, 0], np.int32).reshape(1, 1, 1, 4)
    got = converted_output(m, tmp_path, {"X": x})
    if got is not None:
        # Halfway between the two maxima the Keys weights sum the neighbours to 1.1875 * max: saturated, not
        # wrapped; the undershoot next to the zeros is genuine (negative lobe), compared with the oracle below.
        assert got[0, 0, 0, 3] == big, got
        np.testing.assert_array_equal(got, oracle(m, {"X": x})["Y"][0])
        want = oracle(m, {"X": x})["Y"][0]
        np.testing.assert_array_equal(got, want)


def _exact_cubic_align_corners(x: np.ndarray, out_hw, a=Fraction(-3, 4)) -> np.ndarray:
    """ONNX cubic (Keys, edge-clamped taps) with align_corners, in exact rationals, then round half to even
    and saturate to uint8: an implementation independent of the project's."""
    def w(t):
        t = abs(t)
        if t <= 1:
            return (a + 2) * t**3 - (a + 3) * t**2 + 1
        if t < 2:
            return a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
        return Fraction(0)

    def axis(vals, n_out):
        n = len(vals)
        res = []
        for o in range(n_out):
            s = Fraction(o * (n - 1), n_out - 1) if n_out > 1 else Fraction(0)
            f = s.numerator // s.denominator
            res.append(sum(w(s - k) * vals[min(max(k, 0), n - 1)] for k in range(f - 1, f + 3)))
        return res

    h, wd = x.shape
    rows = [axis([Fraction(int(v)) for v in r], out_hw[1]) for r in x]
    cols = [axis([rows[i][j] for i in range(h)], out_hw[0]) for j in range(out_hw[1])]
    y = np.array([[cols[j][i] for j in range(out_hw[1])] for i in range(out_hw[0])], dtype=object)
    rounded = np.vectorize(lambda q: min(255, max(0, round(q))))(y)  # round() on Fraction: half to even
    return rounded.astype(np.uint8)


def test_u8_cubic_align_corners_rounds_the_exact_value(tmp_path):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 3], dtype=U8, mode="cubic",
                     coordinate_transformation_mode="align_corners")
    rc, xml = convert(m, tmp_path)
    if rc == 2:
        return
    rng = np.random.default_rng(0)   # draws 84 and 106 hit results one off today
    compiled = None
    for _ in range(120):
        x = rng.integers(0, 256, (1, 1, 4, 4)).astype(np.uint8)
        got, compiled = run_openvino(xml, {"X": x}, compiled)
        np.testing.assert_array_equal(got["Y"][0, 0], _exact_cubic_align_corners(x[0, 0], (8, 12)))


def test_oracle_rounds_exact_halves_half_to_even():
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model
    m = resize_model((1, 1, 2, 2), scales=[1, 1, 2, 3], dtype=U8, mode="cubic",
                     coordinate_transformation_mode="align_corners")
    x = np.array([[209, 181], [77, 202]], np.uint8)
    (_, ir), = parse_model(m)
    got = run(ir, x.reshape(1, 1, 2, 2), None, np.array([1, 1, 2, 3], np.float32))
    np.testing.assert_array_equal(got[0, 0], _exact_cubic_align_corners(x, (4, 6)))   # [3, 2] is 251/2 -> 126


# ----------------------------------------------------------------------------------------------------------
# Models OpenVINO cannot compile, or that crash it


@xfail("linear Resize of N/C is written as Interpolate, which compile_model refuses")
def test_linear_resize_of_the_batch_axis_compiles_and_is_right(tmp_path):
    m = resize_model((2, 1, 3, 3), scales=[2, 1, 1, 1], mode="linear")   # N doubled
    x = np.random.default_rng(1).standard_normal((2, 1, 3, 3)).astype(np.float32)
    rc, xml = convert(m, tmp_path)
    if rc == 0:
        got, _ = run_openvino(xml, {"X": x})   # raises if the written model does not compile
        np.testing.assert_allclose(got["Y"], run_onnxruntime(m, {"X": x})["Y"], rtol=1e-5, atol=1e-6)


def test_zero_length_output_axis_does_not_crash(tmp_path):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 1e-30, 2], mode="cubic", exclude_outside=1)
    p = save(m, tmp_path)
    np.savez(tmp_path / "x.npz", X=np.ones((1, 1, 4, 4), np.float32))
    rc, out, err = cli("verify", p, "--target", "openvino", "--inputs", "x.npz", cwd=tmp_path)
    assert rc in (0, 2), f"verify exit {rc}: {err[:200]}"
    if rc == 2:
        assert_refused(rc, err)
    rc, xml = convert(m, tmp_path)
    if rc == 0:   # run it in a process of its own: a SIGFPE must not take pytest down
        import subprocess
        import sys
        r = subprocess.run([sys.executable, "-m", "resample_bridge.tools.dev.fuzz_exec", str(p), xml,
                            str(tmp_path / "x.npz")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and '"ok": true' in r.stdout, (r.returncode, r.stdout[-400:])


def test_gridsample_nearest_next_to_a_tie_reads_like_onnxruntime(tmp_path):
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode="nearest", padding_mode="border",
                            align_corners=0)
    m = single(node, [helper.make_tensor_value_info("X", F, [1, 1, 6, 1]),
                      helper.make_tensor_value_info("grid", F, [1, 1, 1, 2])], opset=20)
    feeds = {"X": np.arange(6, dtype=np.float32).reshape(1, 1, 6, 1) * 10,
             "grid": np.array([0.0, -1 / 3], np.float32).reshape(1, 1, 1, 2)}
    want = run_onnxruntime(m, feeds)["Y"]
    assert want.item() == 10.0   # row 1: the exact source row is 1.49999997
    got = converted_output(m, tmp_path, feeds)
    if got is not None:
        np.testing.assert_array_equal(got, want)


def test_extension_with_an_integer_dtype(tmp_path):
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs1d", mode="nearest")
    m = single(node, [helper.make_tensor_value_info("X", I32, [1, 1, 5]),
                      helper.make_tensor_value_info("grid", F, [1, 3, 1])], opset=20, out_rank=3, out_elem=I32)
    feeds = {"X": np.array([[[1, 2, 3, 4, 16777217]]], np.int32),
             "grid": np.array([-1.0, 0.1, 1.0], np.float32).reshape(1, 3, 1)}
    got = converted_output(m, tmp_path, feeds)
    if got is not None:
        np.testing.assert_array_equal(got, oracle(m, feeds)["Y"][0])


# ----------------------------------------------------------------------------------------------------------
# Self-proof refusals and conditional conversions on valid models


def test_f16_linear_tf_half_pixel_for_nn_converts(tmp_path):
    m = resize_model((1, 1, 7, 4), scales=[1, 1, 2, 0.5], roi=[], opset=11, dtype=TensorProto.FLOAT16,
                     mode="linear", coordinate_transformation_mode="tf_half_pixel_for_nn")
    x = np.random.default_rng(2).standard_normal((1, 1, 7, 4)).astype(np.float16)
    rc, xml = convert(m, tmp_path)
    assert rc == 0, "a valid static model must convert (rung 3 computes anything static)"
    got, _ = run_openvino(xml, {"X": x})
    np.testing.assert_allclose(got["Y"].astype(np.float32), oracle(m, {"X": x})["Y"][0].astype(np.float32),
                               rtol=2e-3, atol=2e-3)


CROPS = {  # (X shape, sizes, roi): the self-proof refusal, and an exit 3 the campaign found beside it
    "no gather in the produced model": ((1, 1, 6, 2), [1, 1, 5, 2], [0, 0, -0.25, -0.1, 1, 1, 1, 1.2]),
    "exit 3: node index is out of range": ((1, 1, 2, 2), [1, 1, 2, 6], [0, 0, -0.5, -0.5, 1, 1, 1.2, 1.2]),
}


@pytest.mark.parametrize("key", list(CROPS))
def test_tf_crop_and_resize_with_a_negative_roi_start_converts(tmp_path, key):
    shape, sizes, roi = CROPS[key]
    m = resize_model(shape, sizes=sizes, roi=roi, mode="cubic", coordinate_transformation_mode="tf_crop_and_resize")
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    rc, xml = convert(m, tmp_path)
    assert rc == 0, "a valid static model must convert"
    got, _ = run_openvino(xml, {"X": x})
    np.testing.assert_allclose(got["Y"], oracle(m, {"X": x})["Y"][0], rtol=1e-4, atol=1e-5)


def test_runtime_scales_model_is_right_for_every_fed_value(tmp_path):
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="rt", mode="cubic",
                            coordinate_transformation_mode="align_corners")
    m = single(node, [helper.make_tensor_value_info("X", F, [1, 1, 5, 7]),
                      helper.make_tensor_value_info("scales", F, [4])])
    rc, xml = convert(m, tmp_path)
    if rc == 2:
        return
    x = np.random.default_rng(4).standard_normal((1, 1, 5, 7)).astype(np.float32)
    for s in ([1, 1, 2, 2], [1, 1, 0.75, 0.25]):
        feeds = {"X": x, "scales": np.array(s, np.float32)}
        got, _ = run_openvino(xml, feeds)
        np.testing.assert_allclose(got["Y"], oracle(m, feeds)["Y"][0], rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------------------------------------
# Error paths: exit 2, one clean line, node and field named


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "-0.75"], ids=["nan", "inf", "string"])
def test_cubic_coeff_a_nan_inf_string(tmp_path, value):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], name="cub", mode="cubic", cubic_coeff_a=value)
    p = save(m, tmp_path)
    for verb in (["inspect"], ["convert", "--target", "openvino", "-o", "o.xml"], ["check", "--target", "tensorrt"]):
        rc, out, err = cli(verb[0], p, *verb[1:], cwd=tmp_path)
        assert_refused(rc, err, "cubic_coeff_a")


def test_huge_claimed_tensor(tmp_path):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2])
    t = m.graph.initializer[0]
    del t.dims[:]
    t.dims.extend([1 << 28])
    t.raw_data = b"\0" * 16
    rc, out, err = cli("convert", save(m, tmp_path), "--target", "openvino", "-o", "o.xml", cwd=tmp_path)
    assert_refused(rc, err, node=False)


def test_verify_on_a_graph_without_nodes(tmp_path):
    g = helper.make_graph([], "g", [helper.make_tensor_value_info("X", F, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("X", F, [1, 1, 4, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    rc, out, err = cli("verify", save(m, tmp_path), "--target", "openvino", cwd=tmp_path)
    assert rc in (0, 2), f"exit {rc}: {err[:300]}"
    if rc == 2:
        assert_refused(rc, err, node=False)


def test_cyclic_graph(tmp_path):
    nodes = [helper.make_node("Resize", ["Z", "", "scales"], ["Y"], name="loop_resize"),
             helper.make_node("Relu", ["Y"], ["Z"], name="loop_relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("Y", F, ["a", "b", "c", "d"])],
                          [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    p = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path)
    for verb in (["convert", "--target", "openvino", "-o", "o.xml"], ["verify", "--target", "openvino"]):
        rc, out, err = cli(verb[0], p, *verb[1:], cwd=tmp_path)
        assert_refused(rc, err)


def test_fifo_as_the_model(tmp_path):
    os.mkfifo(tmp_path / "model.onnx")
    rc, out, err = cli("inspect", tmp_path / "model.onnx", cwd=tmp_path, timeout=20)
    assert_refused(rc, err, node=False)


def test_dev_zero_as_the_model(tmp_path):
    rc, out, err = cli("convert", "/dev/zero", "--target", "openvino", "-o", "o.xml", cwd=tmp_path, timeout=30)
    assert_refused(rc, err, node=False)


def test_external_data_outside_the_folder(tmp_path):
    (tmp_path / "secret.bin").write_bytes(np.array([1, 1, 2, 2], np.float32).tobytes())
    (tmp_path / "m").mkdir()
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2])
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "../secret.bin"
    p = save(m, tmp_path / "m")
    rc, out, err = cli("inspect", p, cwd=tmp_path)
    assert_refused(rc, err, node=False)
    assert "outside" in err and "ValidationError" not in err, err


INVALID = {
    "unknown attribute": (dict(scales=[1, 1, 2, 2], foo=1), 19, "foo"),
    "antialias in opset 13": (dict(scales=[1, 1, 2, 2], mode="linear", antialias=1), 13, "antialias"),
    "int64 scales": (dict(), 19, "scales"),
    "float sizes": (dict(), 19, "sizes"),
}


@pytest.mark.parametrize("key", list(INVALID), ids=list(INVALID))
def test_invalid_resize_is_refused_by_convert(tmp_path, key):
    kwargs, opset, field = INVALID[key]
    m = resize_model((1, 1, 4, 4), name="bad", opset=opset, **kwargs)
    if key == "int64 scales":
        m.graph.initializer.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.int64), "scales"))
        m.graph.node[0].input.extend(["", "scales"])
    if key == "float sizes":
        m.graph.initializer.append(numpy_helper.from_array(np.array([1, 1, 8, 8], np.float32), "sizes"))
        m.graph.node[0].input.extend(["", "", "sizes"])
    p = save(m, tmp_path)
    for verb in (["convert", "--target", "openvino", "-o", "o.xml"], ["check", "--target", "tensorrt"]):
        rc, out, err = cli(verb[0], p, *verb[1:], cwd=tmp_path)
        assert_refused(rc, err, field)


def test_upsample_in_opset_10(tmp_path):
    node = helper.make_node("Upsample", ["X", "scales"], ["Y"], name="up")
    m = single(node, [helper.make_tensor_value_info("X", F, [1, 1, 4, 4])],
               [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")], opset=10)
    rc, out, err = cli("convert", save(m, tmp_path), "--target", "openvino", "-o", "o.xml", cwd=tmp_path)
    assert_refused(rc, err)


def test_deformconv_bias_of_the_wrong_length(tmp_path):
    node = helper.make_node("DeformConv", ["X", "W", "offset", "B"], ["Y"], name="dc", kernel_shape=[2, 2])
    m = single(node, [helper.make_tensor_value_info("X", F, [1, 2, 5, 5]),
                      helper.make_tensor_value_info("offset", F, [1, 8, 4, 4])],
               [numpy_helper.from_array(np.ones((2, 2, 2, 2), np.float32), "W"),
                numpy_helper.from_array(np.ones(3, np.float32), "B")], opset=19)
    rc, out, err = cli("convert", save(m, tmp_path), "--target", "openvino", "-o", "o.xml", cwd=tmp_path)
    assert_refused(rc, err)


# ----------------------------------------------------------------------------------------------------------
# Terminal safety, output files


@pytest.mark.parametrize("verb", ["inspect", "verify"])
def test_ansi_escape_in_a_mode_attribute_never_reaches_the_terminal(tmp_path, verb):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], name="esc", mode="\x1b[2J\x1b[31mlinear\x07\x08\u202e")
    args = [verb, save(m, tmp_path)] + (["--target", "openvino"] if verb == "verify" else [])
    rc, out, err = cli(*args, cwd=tmp_path)
    assert not CTRL.search(out + err), repr((out + err)[:300])
    assert_refused(rc, err, "mode")


def test_a_1mb_attribute_is_not_echoed(tmp_path):
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], name="big", mode="A" * (1 << 20))
    rc, out, err = cli("inspect", save(m, tmp_path), cwd=tmp_path)
    assert len(out) + len(err) < 1000
    assert_refused(rc, err, "mode")


def test_force_onto_a_directory_leaves_nothing(tmp_path):
    (tmp_path / "d" / "model.xml").mkdir(parents=True)
    p = save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2]), tmp_path)
    rc, out, err = cli("convert", p, "--target", "openvino", "-o", "d/model.xml", "--force", cwd=tmp_path)
    assert_refused(rc, err, node=False)
    assert sorted(os.listdir(tmp_path / "d")) == ["model.xml"] and (tmp_path / "d" / "model.xml").is_dir()


def _extension_model():
    # tf_crop_and_resize with its scales fed at run time: no in-graph form computes it, so the extension is
    # needed even by the portable default (issue 42; ``EXTENSION_ONLY``).
    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], name="r", **EXTENSION_ONLY)
    return single(node, [helper.make_tensor_value_info("X", F, [1, 1, 5, 5]),
                         helper.make_tensor_value_info("scales", F, [4])], [roi_initializer()], opset=19)


def test_existing_extension_library_is_not_overwritten(tmp_path):
    (tmp_path / "out").mkdir()
    lib = tmp_path / "out" / LIB
    lib.write_bytes(b"the user's own library")
    p = save(_extension_model(), tmp_path)
    rc, out, err = cli("convert", p, "--target", "openvino", "-o", "out/model.xml", cwd=tmp_path)
    assert lib.read_bytes() == b"the user's own library"
    assert_refused(rc, err, node=False)
    assert sorted(os.listdir(tmp_path / "out")) == [LIB]


def test_tensorrt_output_mode_follows_the_umask(tmp_path):
    p = save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2]), tmp_path)
    rc, out, err = cli("convert", p, "--target", "tensorrt", "-o", "m.onnx", cwd=tmp_path)
    assert rc == 0, err
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "m.onnx").st_mode) == 0o666 & ~umask


def test_check_tensorrt_refuses_what_convert_refuses(tmp_path):
    m = resize_model((1, 1, 4, 4), sizes=[1, 1, 8], name="short")   # sizes of the wrong length
    rc, out, err = cli("check", save(m, tmp_path), "--target", "tensorrt", cwd=tmp_path)
    assert_refused(rc, err, "sizes")


def test_verify_names_the_node_onnxruntime_cannot_run(tmp_path):
    """Found by tools/dev/fuzz.py (seed 7): a node onnxruntime refuses at run time left verify's one line without
    a node. The seed's reproducer (sizes with a zero length) is now refused when the model is read (issue 22), so
    this is another node onnxruntime refuses only when it runs and resample-bridge converts (rung 3): a linear
    Resize that also shrinks the batch axis (onnxruntime's 'Linear' mode needs the outer two scales 1)."""
    m = resize_model((2, 1, 12, 12), sizes=[1, 1, 5, 5], mode="linear", name="batch_down")
    p = save(m, tmp_path)
    rc, out, err = cli("convert", p, "-o", "out.xml", cwd=tmp_path)
    assert rc == 0, err
    # verify names the node and onnxruntime's reason, and judges against the oracle there instead (issue 43)
    rc, out, err = cli("verify", p, cwd=tmp_path)
    assert rc == 0, err
    said = [line for line in out.splitlines() if line.startswith("onnxruntime cannot run node batch_down")]
    assert said and "outermost 2 scale values" in said[0] and "by the oracle" in said[0], out


def test_verify_names_a_node_onnxruntime_refuses_to_load(tmp_path):
    """Found by tools/dev/fuzz.py (seed 7): onnxruntime's Resize kernel refuses exclude_outside with nearest when
    the session is created, naming no node; verify finds the node by loading each one alone, says so, and judges
    against the oracle there (issue 43)."""
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="nearest", exclude_outside=1, name="xo_nearest")
    rc, out, err = cli("verify", save(m, tmp_path), cwd=tmp_path)
    said = [line for line in out.splitlines() if line.startswith("onnxruntime cannot run node xo_nearest")]
    assert rc == 0 and said and "exclude_outside" in said[0], out + err


def test_tensorrt_reads_an_empty_value_floats_constant(tmp_path):
    """Found by tools/dev/fuzz.py (seed 7): roi as Constant(value_floats=[]) (an exporter's "absent") broke the
    TensorRT and ONNX rewrites (onnx-graphsurgeon cannot type an empty list attribute): exit 3."""
    m = resize_model((1, 1, 7, 4), scales=[1, 1, 0.75, 3], mode="linear",
                     coordinate_transformation_mode="pytorch_half_pixel")
    node = m.graph.node[0]
    node.input[1] = "roi_c"
    const = helper.make_node("Constant", [], ["roi_c"])
    const.attribute.add(name="value_floats", type=onnx.AttributeProto.FLOATS)  # helper cannot type an empty list
    m.graph.node.insert(0, const)
    p = save(m, tmp_path)
    for verb in (["check", p, "--target", "tensorrt"], ["convert", p, "--target", "tensorrt", "-o", "o.onnx"],
                 ["convert", p, "--target", "onnx", "-o", "p.onnx"]):
        rc, out, err = cli(*verb, cwd=tmp_path)
        assert rc == 0, err


def test_integer_resize_to_a_zero_length_axis_at_run_time_is_no_internal_error(tmp_path):
    """Found by tools/dev/fuzz.py (seed 7): the exact integer oracle had no tap to accumulate on an empty output."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    m = resize_model((1, 3, 1, 6), scales=[0.1, 1, 1], mode="cubic", axes=[3, 2, 1], dtype=TensorProto.INT8)
    (_, ir), = parse_model(m)
    y = run(ir, np.ones((1, 3, 1, 6), np.int8))
    assert y.shape == (1, 3, 1, 0) and y.dtype == np.int8
