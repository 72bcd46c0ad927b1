"""Options as ovc and Polygraphy users spell them (issue 22): ovc's --output names the tensors to keep (the path is
-o / --output_model), an unnamed --input for a one-input model, bounded dimensions, comma lists; Polygraphy's
--inputs as shapes; no overwrite of the source model or of saved arrays without --force."""

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.semantics.reference import run
from resample_bridge.tools.cli import main
from resample_bridge.translate.onnx import parse_model
from tests.helpers.models import resize_model

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _two_stage(path):
    """X -> Resize (linear x2) -> 'resized' -> Relu -> Y."""
    sc = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
    nodes = [helper.make_node("Resize", ["X", "", "sc"], ["resized"], name="r", mode="linear"),
             helper.make_node("Relu", ["resized"], ["Y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 3, 4])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [sc])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)


def test_output_names_the_tensors_to_keep(tmp_path):
    src = tmp_path / "m.onnx"
    _two_stage(src)
    out = tmp_path / "cut.xml"
    assert main(["convert", str(src), "--output", "resized", "-o", str(out)]) == 0
    model = ov.Core().read_model(str(out))
    assert [o.get_any_name() for o in model.outputs] == ["resized"]
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 4)).astype(np.float32)
    got = ov.Core().compile_model(model, "CPU", F32)([x])[0]
    ((_, ir),) = [r for r in parse_model(str(src))]
    np.testing.assert_allclose(got, run(ir, x), rtol=1e-6, atol=1e-6)
    assert not (tmp_path / "resized.xml").exists()


def test_output_names_a_missing_tensor_in_one_line(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    _two_stage(src)
    assert main(["convert", str(src), "--output", "nope", "-o", str(tmp_path / "o.xml")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "field 'output'" in err and "nope" in err
    assert not (tmp_path / "o.xml").exists()


def test_unnamed_input_and_bounded_dims(tmp_path, capsys):
    src = tmp_path / "d.onnx"
    onnx.save(resize_model(["n", 1, "h", "w"], scales=[1, 1, 2, 2], mode="nearest"), src)
    assert main(["convert", str(src), "--input", "[1,1,4,4]", "-o", str(tmp_path / "a.xml")]) == 0
    assert list(ov.Core().read_model(str(tmp_path / "a.xml")).inputs[0].get_partial_shape()) == \
        [ov.Dimension(d) for d in (1, 1, 4, 4)]
    # (--prefer builtin: the model is read here without the extension, which the cost model may take)
    assert main(["convert", str(src), "--input", "X[1,1,2..8,4]", "--prefer", "builtin", "-o",
                 str(tmp_path / "b.xml")]) == 0
    assert not ov.Core().read_model(str(tmp_path / "b.xml")).inputs[0].get_partial_shape()[2].is_static
    two = tmp_path / "two.onnx"
    _two_inputs(two)
    capsys.readouterr()
    assert main(["convert", str(two), "--input", "[1,1,4,4]", "-o", str(tmp_path / "c.xml")]) == 2
    assert "one input" in capsys.readouterr().err


def _two_inputs(path):
    nodes = [helper.make_node("Add", ["A", "B"], ["S"]),
             helper.make_node("Resize", ["S", "", "sc"], ["Y"], name="r", mode="nearest")]
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["n", 1, 4, 4]) for n in ("A", "B")]
    g = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)


def test_extension_list_is_comma_separated(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), src)
    missing = tmp_path / "a.so"
    assert main(["convert", str(src), "--extension", f"{missing},{tmp_path / 'b.so'}", "-o",
                 str(tmp_path / "o.xml")]) == 2
    err = capsys.readouterr().err
    assert f"{missing} is not a file" in err and "," not in err.split("error:", 1)[1].split("is not a file")[0]


def test_force_never_overwrites_the_source(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), src)
    before = src.read_bytes()
    assert main(["convert", str(src), "--target", "onnx", "-o", str(src), "--force"]) == 2
    assert "source" in capsys.readouterr().err and src.read_bytes() == before


def test_verify_inputs_as_shapes_and_saved_arrays_kept(tmp_path, capsys):
    src = tmp_path / "d.onnx"
    onnx.save(resize_model(["n", 1, "h", "w"], scales=[1, 1, 2, 2], mode="nearest"), src)
    ins = tmp_path / "in.npz"
    assert main(["verify", str(src), "--inputs", "X:[1,1,4,5]", "--save-inputs", str(ins)]) == 0
    assert np.load(ins)["X"].shape == (1, 1, 4, 5)
    capsys.readouterr()
    assert main(["verify", str(src), "--inputs", "X:[1,1,4,5]", "--save-inputs", str(ins)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["verify", str(src), "--inputs", "X:[2,1,3,3]", "--save-inputs", str(ins), "--force"]) == 0
    assert np.load(ins)["X"].shape == (2, 1, 3, 3)
    assert main(["verify", str(src), "--inputs", str(ins)]) == 0  # a path is read as --load-inputs
