"""`verify` on real artifacts, through the real CLI entry point: --converted checks the user's file (a --strict
conversion included), a wrong file FAILS with exit 1, dynamic dimensions are never guessed, Polygraphy's
options (--input-shapes, --seed, --val-range, --load/--save-inputs, per-output --atol/--rtol, --save-results),
strict JSON, and the closing PASSED/FAILED line counting what was not judged."""


import os

import numpy as np
import pytest

pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import resize_model, saved, strict_json  # noqa: E402
from tests.helpers.precision import needs_bf16  # noqa: E402


def test_verify_converted_checks_the_strict_conversion_the_user_wrote(tmp_path, capsys):
    src = saved(resize_model((1, 2, 6, 5), scales=[1, 1, 2, 1.5], mode="cubic", name="c"), tmp_path, "m.onnx")
    xml = str(tmp_path / "out" / "m.xml")
    assert main(["convert", src, "--strict", "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  X: float32 [1, 2, 6, 5] (model)" in out
    assert out[-1] == "PASSED: 1 output passed, 0 failed, 0 not judged; 1 resampling node passed, 0 failed"


def test_verify_converted_fails_on_a_file_that_computes_something_else(tmp_path, capsys):
    """The model says cubic; the file was converted from a linear model: exit 1, FAILED, JSON strict."""
    src = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="cubic"), tmp_path, "m.onnx")
    other = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="linear"), tmp_path, "o.onnx")
    xml = str(tmp_path / "o.xml")
    assert main(["convert", other, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("FAILED: 0 outputs passed, 1 failed")
    assert main(["verify", src, "--converted", xml, "--json"]) == 1
    doc = strict_json(capsys.readouterr().out)
    assert doc["verdict"] == "FAILED" and doc["outputs"][0]["ok"] is False and doc["outputs"][0]["max_abs"] > 1e-3
    for k in ("max_abs", "mean_abs", "median_abs", "p99_abs", "max_rel", "mean_rel", "median_rel", "p99_rel"):
        assert isinstance(doc["outputs"][0][k], float)
    # A loose enough tolerance for that tensor (the model's output and the node's) passes it; a tolerance
    # for a tensor that is not judged is refused.
    assert main(["verify", src, "--converted", xml, "--atol", "Y:0.7", "1e-5", "--rtol", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASSED: 1 output passed, 0 failed")
    assert main(["verify", src, "--converted", xml, "--atol", "Z:0.7"]) == 2
    assert "field 'atol'" in capsys.readouterr().err


def test_a_shape_onnxruntime_gets_wrong_is_judged_against_the_oracle(tmp_path, capsys):
    """keep_aspect_ratio_policy with axes written as negative numbers: onnxruntime ignores the policy (a known
    departure, translate/onnxruntime.py), so its output shape differs; the node's parameters are constants of the
    model (nothing of our reading of the graph at stake), so the output is judged against the oracle-corrected
    reference (issue 40: verify never passes what it did not judge)."""
    m = resize_model((1, 3, 20, 20), sizes=[7, 9], mode="nearest", axes=[-1, -2], keep_aspect_ratio_policy="not_larger")
    src = saved(m, tmp_path, "m.onnx")
    xml = str(tmp_path / "m.xml")
    assert main(["convert", src, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml]) == 0
    out = capsys.readouterr().out.splitlines()
    line = next(ln for ln in out if ln.startswith("  output Y:"))
    assert line.endswith(" ok") and "SHAPE" not in line, line
    assert any("oracle-corrected reference" in ln for ln in out), out
    assert out[-1].startswith("PASSED: 1 output passed, 0 failed, 0 not judged; 1 resampling node passed"), out[-1]


def _converted_and_verified(src, tmp_path, capsys, **feeds):
    """(xml, feeds file, verify's lines): ``src`` converted with the default and verified on ``feeds``, which must
    pass against the oracle-corrected reference."""
    path = tmp_path / "feeds.npz"
    np.savez(path, **feeds)
    xml = str(tmp_path / "m.xml")
    assert main(["convert", src, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml, "--inputs", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any("oracle-corrected reference" in ln for ln in out), out
    return xml, str(path), out


def test_run_time_scales_on_a_float32_tie_are_judged_against_the_oracle(tmp_path, capsys):
    """A nearest Resize whose scales are a graph input (the default: rung 3's run-time scale index form), fed 0.7
    on a length 10: onnxruntime floors the float32 product (7 rows; the spec's exact floor is 6) and computes
    the source in float32 (3.5 / 0.7f is 5.0, exactly 5.00000009: another element at round_prefer_floor). Both are
    onnxruntime's own departures (translate/onnxruntime.py), so the output is judged against the oracle-corrected
    reference; verify said "the graph around it was read wrong" and FAILED before. A file that computes
    something else still fails."""
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode="nearest", name="r",
                            coordinate_transformation_mode="half_pixel")
    cat = helper.make_node("Concat", ["ones", "S2"], ["S"], axis=0)  # F.interpolate's: computed in the graph
    graph = helper.make_graph([cat, node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 10, 7]),
                                                 helper.make_tensor_value_info("S2", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.ones(2, np.float32), "ones")])
    src = saved(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path,
                "m.onnx")
    xml, feeds, out = _converted_and_verified(src, tmp_path, capsys, X=np.random.default_rng(0).standard_normal(
        (1, 2, 10, 7)).astype(np.float32), S2=np.array([0.7, 0.7], np.float32))
    assert out[-1].startswith("PASSED: 1 output passed, 0 failed, 0 not judged; 1 resampling node passed"), out[-1]
    (coord,) = [a for a in graph.node[1].attribute if a.name == "coordinate_transformation_mode"]
    coord.s = b"asymmetric"  # the file computes half_pixel; the model now says asymmetric
    other = saved(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path,
                  "o.onnx")
    assert main(["verify", other, "--converted", xml, "--inputs", feeds]) == 1


def test_two_departures_of_onnxruntime_at_once_are_named(tmp_path, capsys):
    """Integer cubic antialias tf_crop_and_resize with its roi computed in the graph (fuzz 5252-0075, written by the
    extension, exact): onnxruntime casts the extrapolation value -1.5 to -1, the spec to -2 (its IR's named
    departure), and rounds the taps' sum its own way (within one step of its IR): both at once were "the graph
    around it was read wrong" and verify FAILED a model equal to the oracle; judged against the oracle-corrected
    reference now. int32 on small values: the fuzz case's uint8 antialias is onnxruntime's own fixed point now,
    whose form needs static lengths (tests/lowering/test_fixed_point.py)."""
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("Resize", ["X", "r", "scales"], ["Y"], name="resize", mode="cubic", antialias=1,
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.5)
    graph = helper.make_graph([helper.make_node("Identity", ["roi"], ["r"]), node], "g",
                              [helper.make_tensor_value_info("X", TensorProto.INT32, [2, 1, 7, 6]),
                                            helper.make_tensor_value_info("roi", TensorProto.FLOAT, [8])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT32, None)],
                              [numpy_helper.from_array(np.array([1, 1, 0.35, 2.5], np.float32), "scales")])
    src = saved(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), tmp_path,
                "m.onnx")
    _converted_and_verified(src, tmp_path, capsys, X=np.random.default_rng(0).integers(0, 256, (2, 1, 7, 6)).astype(
        np.int32), roi=np.array([0.25, -0.2, -0.2, 0.1, 1.2278395, 0.75, 0.9, 1], np.float32))


def test_a_graph_input_parameter_is_not_our_reading_of_the_graph(tmp_path, capsys):
    """int8 antialias linear with its scales a graph input (fuzz 6363-0099, the extension, equal to the oracle and
    to onnx.reference): onnxruntime is off by up to 128, a departure no IR field names. A scale fed as a graph
    input is read as it is, so the difference is onnxruntime's own: judged against the oracle-corrected reference,
    not "the graph around it was read wrong" (FAILED before)."""
    from onnx import TensorProto, helper

    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize", mode="linear", antialias=1,
                            coordinate_transformation_mode="asymmetric")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.INT8, [2, 3, 2]),
                                            helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT8, None)])
    src = saved(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path,
                "m.onnx")
    _converted_and_verified(src, tmp_path, capsys, X=np.random.default_rng(1).integers(-128, 128, (2, 3, 2)).astype(
        np.int8), scales=np.array([1, 1, 2.249], np.float32))


def test_dynamic_dimensions_are_never_guessed(tmp_path, capsys):
    src = saved(resize_model((1, 3, "H", "W"), scales=[1, 1, 2, 2], mode="nearest"), tmp_path, "d.onnx")
    assert main(["verify", src]) == 2
    err = capsys.readouterr().err
    assert "field 'input-shapes'" in err and "'H'" in err and "never guesses" in err
    assert main(["verify", src, "--input-shapes", "X:[1,3,5,7]"]) == 0
    out = capsys.readouterr().out
    assert "  X: float32 [1, 3, 5, 7] (--input-shapes)" in out
    # Sizes are validated before anything is allocated.
    assert main(["verify", src, "--input-shapes", "X:[1000000,3,100000,7]"]) == 2
    assert "GiB" in capsys.readouterr().err


def test_inputs_round_trip_seed_val_range_and_results(tmp_path, capsys):
    src = saved(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), tmp_path, "m.onnx")
    ins, res = str(tmp_path / "in.npz"), str(tmp_path / "res.npz")
    assert main(["verify", src, "--seed", "7", "--val-range", "[2,3]", "--save-inputs", ins,
                 "--save-results", res]) == 0
    capsys.readouterr()
    with np.load(ins) as z:
        x = z["X"]
    assert x.shape == (1, 1, 4, 4) and x.min() >= 2 and x.max() <= 3
    with np.load(res) as z:
        assert sorted(z.files) == ["onnxruntime/Y", "openvino/Y"]
        np.testing.assert_allclose(z["openvino/Y"], z["onnxruntime/Y"], rtol=1e-5, atol=1e-6)
    assert main(["verify", src, "--load-inputs", ins, "--json"]) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["inputs"] == [{"name": "X", "dtype": "float32", "shape": [1, 1, 4, 4], "source": "given"}]
    assert main(["verify", src, "--seed", "8", "--save-inputs", str(tmp_path / "in8.npz")]) == 0
    with np.load(tmp_path / "in8.npz") as z:
        assert not np.array_equal(z["X"], x)
    for bad in (["--atol", "abc"], ["--rtol", "Y:-1"], ["--val-range", "[3,2]"], ["--input-shapes", "Z:[1]"]):
        capsys.readouterr()
        assert main(["verify", src] + bad) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _index_math_in_reduced_precision(path):
    """A 'converted' nearest Resize (W x1.5, asymmetric, floor) whose source indices come out of a MatMul on float
    coordinates: OpenVINO runs a MatMul in bf16 under the bf16 hint, so the indices move there (bf16 has 8 bits:
    coordinates past 256 step by 2)."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 1, 1, -1], np.float32, name="X")
    width = ops.gather(ops.shape_of(x, "i64"), ops.constant(np.array([3])), ops.constant(0))
    out_w = ops.convert(ops.multiply(ops.convert(width, "f32"), ops.constant(np.float32(1.5))), "i64")
    dst = ops.convert(ops.range(ops.constant(np.int64(0)), ops.squeeze(out_w, ops.constant(0)),
                                ops.constant(np.int64(1)), "i64"), "f32")
    src = ops.matmul(ops.unsqueeze(dst, ops.constant(1)), ops.constant(np.array([[1 / 1.5]], np.float32)),
                     False, False)
    index = ops.convert(ops.floor(ops.squeeze(src, ops.constant(1))), "i32")
    y = ops.gather(x, index, ops.constant(3))
    y.output(0).get_tensor().set_names({"Y"})
    ov.save_model(ov.Model([y.output(0)], [x]), path)


def test_verify_at_bf16_fails_index_arithmetic_left_in_reduced_precision(tmp_path, capsys):
    """verify --precision bf16 (this CPU's OpenVINO default where it has bf16): the demo's written model passes
    (values round), a model whose index arithmetic runs in bf16 fails (an index moves) though it passes at f32
    (issue 43). Skipped on a CPU without bf16, where OpenVINO runs the bf16 hint in f32."""
    needs_bf16()
    src = saved(resize_model((1, 1, 1, "W"), scales=[1, 1, 1, 1.5], mode="nearest",
                             coordinate_transformation_mode="asymmetric", nearest_mode="floor"), tmp_path, "n.onnx")
    xml = str(tmp_path / "n.xml")
    _index_math_in_reduced_precision(xml)
    shapes = ["--input-shapes", "X:[1,1,1,400]"]
    assert main(["verify", src, "--converted", xml, *shapes]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml, *shapes, "--precision", "bf16"]) == 1
    assert "OpenVINO CPU bf16" in capsys.readouterr().out
    demo = str(tmp_path / "tricky.onnx")
    assert main(["demo", "--save", demo]) == 0
    assert main(["convert", demo, "-o", str(tmp_path / "t" / "tricky.xml")]) == 0
    capsys.readouterr()
    assert main(["verify", demo, "--converted", str(tmp_path / "t" / "tricky.xml"), "--precision", "bf16"]) == 0


def test_verify_a_bfloat16_source_takes_the_oracle_where_onnxruntime_has_no_kernel(tmp_path, capsys):
    """onnxruntime has no bfloat16 Resize: the reference computes that node by the oracle (and says so), so the
    written model passes and a model computing something else fails (issue 43)."""
    from onnx import TensorProto

    src = saved(resize_model((1, 2, 8, 8), scales=[1, 1, 2, 2], mode="linear", dtype=TensorProto.BFLOAT16),
                tmp_path, "bf16.onnx")
    assert main(["verify", src]) == 0
    out = capsys.readouterr().out
    assert "onnxruntime cannot run node r of the source (" in out
    assert "the reference computes every resampling node by the oracle" in out
    other = saved(resize_model((1, 2, 8, 8), scales=[1, 1, 2, 2], mode="nearest", dtype=TensorProto.BFLOAT16),
                  tmp_path, "nearest.onnx")
    assert main(["convert", other, "-o", str(tmp_path / "nearest.xml"), "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", str(tmp_path / "nearest.xml")]) == 1


def _verify_real_at_bf16(name: str, tmp_path, capsys) -> tuple[int, str]:
    """A real exported model of tests/models converted with the default, then verify --precision bf16 on its
    saved inputs: (exit status, output). Skipped on a CPU without bf16."""
    needs_bf16()
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", name)
    xml = str(tmp_path / "m.xml")
    assert main(["convert", os.path.join(d, "model.onnx"), "-o", xml]) == 0
    capsys.readouterr()
    rc = main(["verify", os.path.join(d, "model.onnx"), "--converted", xml, "--inputs",
               os.path.join(d, "inputs.npz"), "--precision", "bf16"])
    return rc, capsys.readouterr().out


def test_verify_at_bf16_judges_a_node_on_the_input_openvino_computed(tmp_path, capsys):
    """A nearest Resize to its input's own size right after a Conv (torchvision's FPN, exported dynamic). Its form
    resizes no axis; it once returned the Conv's output tensor itself, which then took the node's output name, so
    verify could not read what the node was fed and left it to the outputs (and before that judged it on
    onnxruntime's float32 copy of its input, charging the bf16 Conv's rounding to the node: 474 elements "beyond
    the bound", an exact conversion FAILED). The form's output is now a tensor of its own (``frontend.own_tensor``):
    the node is judged at bf16 on the input OpenVINO computed, exactly, and the model outputs within the bound."""
    rc, out = _verify_real_at_bf16("ts11_tv_fpn_own_size_dynbatch", tmp_path, capsys)
    assert rc == 0, out
    assert "node /fpn/Resize: abs max 0 mean 0" in out, out
    assert "4 outputs passed, 0 failed" in out and "2 resampling nodes passed, 0 failed" in out, out


def test_verify_at_bf16_passes_an_exact_bicubic(tmp_path, capsys):
    """A real exported bicubic (x0.75, rung 1: OpenVINO's own Interpolate) run under the bf16 hint rounds values
    only: verify --precision bf16 passes it. The reduced bound once read sum |w| |x| as the oracle on |X|, where
    cubic's negative weights cancel: one element 0.0058 off (value 2.13) against a bound of 0.00044 failed it."""
    rc, out = _verify_real_at_bf16("ts11_bicubic_scale_0_75", tmp_path, capsys)
    assert rc == 0, out


def test_verify_reads_a_rank_only_the_run_gives(tmp_path, capsys):
    """kornia's pyramid exported dynamic: no ONNX shape inference gives the Resize's input rank (its shape is
    computed from data). convert reads it through OpenVINO's frontend; verify refused the model in one line
    (exit 2) until it took the ranks from the tensors onnxruntime computed."""
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                     "ts13_kornia_pyramid_dynhw")
    src, xml = os.path.join(d, "model.onnx"), str(tmp_path / "m.xml")
    assert main(["convert", src, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml, "--inputs", os.path.join(d, "inputs.npz")]) == 0
    assert "3 resampling nodes passed, 0 failed" in capsys.readouterr().out


def test_a_node_inside_a_loop_body_is_listed_not_observable(tmp_path, capsys):
    """torchvision's paste_masks_in_image: a Loop body resizes each mask to its box's run-time size, and no
    shape information reaches the body. verify exited 2 ("the input rank is unknown") and its report crashed on
    that node, which it left out of the node list where it could run; now the node is listed as not observable
    (onnxruntime exposes no body tensor) and the model outputs judge it."""
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                     "ts11_tv_paste_masks_loop_dynhw")
    src, xml = os.path.join(d, "model.onnx"), str(tmp_path / "m.xml")
    if main(["convert", src, "-o", xml]) == 2:
        # The whole-model check's probe boxes may be degenerate (y2 < y1), where OpenVINO's Loop output holds
        # uninitialised memory, ours and its importer's alike (measured: 1e35 where onnxruntime has 0.53): garbage
        # or zeros as the process's memory happens to be. Refusing it then is right; the line names the Loop's body.
        err = capsys.readouterr().err
        assert "Loop_100" in err and "/body/Resize" in err, err
        pytest.skip("OpenVINO's Loop read uninitialised memory at a degenerate probe box: convert refused it")
    capsys.readouterr()
    args = ["verify", src, "--converted", xml, "--inputs", os.path.join(d, "inputs.npz")]
    assert main(args + ["--report", str(tmp_path / "page")]) == 0
    out = capsys.readouterr().out.splitlines()
    body = [line for line in out if "Loop" in line and "/body/" in line]
    assert len(body) == 1 and "inside a control-flow body" in body[0]
    assert out[-1] == "PASSED: 1 output passed, 0 failed, 0 not judged; 0 resampling nodes passed, 0 failed, " \
                      "1 not observable"
    assert (tmp_path / "page" / "index.html").is_file()
    # Shapes given, inputs drawn: the ranks from the tensors onnxruntime computed, none from the Loop body (the
    # drawn boxes are a pixel wide, where OpenVINO's padding reads uninitialised memory: PASSED or FAILED, judged)
    shapes = ["--input-shapes", "masks:[3,1,28,28]", "boxes:[3,4]", "image:[1,3,48,64]"]
    assert main(["verify", src, "--converted", xml] + shapes) in (0, 1)
    assert any("inside a control-flow body" in line for line in capsys.readouterr().out.splitlines())


def test_an_unknown_input_name_lists_the_models_inputs_in_its_own_order():
    """The line naming the model's inputs read them from a set: their order changed from run to run."""
    from onnx import TensorProto, helper

    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.tools.verify_inputs import input_specs

    names = ["x", "s", "b", "a"]
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in names],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    with pytest.raises(BridgeError) as e:
        input_specs(helper.make_model(graph), shapes={"q": [2]})
    assert "(its inputs: x, s, b, a)" in e.value.message and e.value.field == "input-shapes"


def test_a_shape_onnxruntime_cannot_run_is_said_in_one_whole_line(tmp_path, capsys):
    """An export that holds at even heights only (its even and odd rows concatenated on the channels, as a Swin
    patch merge): fed an odd height, onnxruntime cannot run its Concat, so verify has no reference. The one line
    names the node and keeps onnxruntime's sentence whole (it was cut before the mismatched lengths, its preamble
    naming the node again)."""
    import onnx
    from onnx import TensorProto as T, helper, numpy_helper

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)
    nodes = [helper.make_node("Slice", ["X", "zero", "end", "h", "two"], ["even"]),
             helper.make_node("Slice", ["X", "one", "end", "h", "two"], ["odd"]),
             helper.make_node("Concat", ["even", "odd"], ["c"], axis=1, name="merge"),
             helper.make_node("Resize", ["c", "", "s"], ["Y"], name="r", mode="nearest")]
    inits = [i64("zero", [0]), i64("one", [1]), i64("end", [1 << 30]), i64("h", [2]), i64("two", [2]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 1, "h", "w"])],
                              [helper.make_tensor_value_info("Y", T.FLOAT, None)], inits)
    src = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), src)
    assert main(["verify", src, "--input-shapes", "X:[1,1,7,4]"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("resample-bridge: error: node 'merge', field 'op': onnxruntime cannot run it"), line
    assert "more characters" not in line and "Status Message" not in line and "of 3 and 4" in line, line


def test_a_node_read_through_a_no_op_cast_is_observed(tmp_path, capsys):
    """A GridSample whose output reaches the model output through a Cast to its own type (kornia's random affine):
    OpenVINO's importer drops the Cast and the GridSample's tensor name with it; verify listed the node as not
    observable ("the converted model does not expose this node's output"). It judges it by the Cast's output now,
    the same values."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    grid = np.random.default_rng(0).uniform(-1, 1, (1, 5, 6, 2)).astype(np.float32)
    nodes = [helper.make_node("GridSample", ["X", "grid"], ["sampled"], mode="linear", align_corners=0),
             helper.make_node("Cast", ["sampled"], ["Y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 4, 7])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(grid, "grid")])
    src, xml = str(tmp_path / "m.onnx"), str(tmp_path / "m.xml")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), src)
    assert main(["convert", src, "-o", xml]) == 0
    capsys.readouterr()
    assert main(["verify", src, "--converted", xml]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "1 resampling node passed, 0 failed" in out[-1] and "not observable" not in out[-1], out[-1]
