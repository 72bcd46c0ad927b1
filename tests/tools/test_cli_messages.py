"""A refusal is one line, capped for a terminal; -v and --json print the whole message (issue 22: the fix at the
end of a long message was hidden behind "... (N more characters)")."""

import onnx
from onnx import TensorProto, helper

from resample_bridge.tools.cli import main


def _many_inputs(path, n=40):
    ins = [helper.make_tensor_value_info(f"an_input_with_a_long_name_{i:02d}", TensorProto.FLOAT, [1]) for i in
           range(n)]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    node = helper.make_node("Identity", [ins[0].name], ["y"])
    onnx.save(helper.make_model(helper.make_graph([node], "g", ins, [out])), path)


def test_long_refusal_whole_under_verbose_and_json(tmp_path, capsys):
    p = tmp_path / "m.onnx"
    _many_inputs(p)
    assert main(["convert", str(p), "--input", "nope[1]", "-o", str(tmp_path / "o.onnx"), "--target", "tensorrt"]) == 2
    short = capsys.readouterr().err.strip()
    assert "more characters)" in short and "_07)" not in short
    for flag in ("-v", "--json"):
        assert main(["convert", str(p), "--input", "nope[1]", "-o", str(tmp_path / "o.onnx"), "--target", "tensorrt",
                     flag]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "an_input_with_a_long_name_07)" in err and "more characters)" not in err
