"""Clear ends for every way a run can go wrong, through the real CLI (in-process or as a subprocess): a missing
extra names the pip line, `| head` ends quietly, SIGTERM removes the staged outputs, names and messages are
escaped and capped, -q / -v."""

import os
import re
import signal
import subprocess
import sys

import onnx
import pytest

from resample_bridge.semantics.errors import BridgeError, clip, escape
from resample_bridge.tools.cli import main
from tests.helpers.models import resize_model

CTRL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
ENV = dict(os.environ, CI="true")


def _py(code: str, *args, cwd, stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=ENV, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def test_escape_and_clip():
    evil = "\x1b[2J\x07\x08\u202e\n\t"
    assert escape(evil) == "\\x1b[2J\\x07\\x08\\u202e\\x0a\\x09"
    assert not CTRL.search(escape(evil))
    c = clip("A" * (1 << 20), 200)
    assert len(c) < 260 and c.startswith("A" * 200) and "1048376 more characters" in c
    e = BridgeError("unknown value " + "B" * (1 << 20), node="n" * 5000 + "\x1b", field="mode")
    line = e.line()
    assert len(line) < 300 and not CTRL.search(line) and "field 'mode'" in line
    assert e.to_dict()["message"].endswith("B" * 100) and len(e.to_dict()["message"]) > 1 << 20


def test_a_missing_extra_exits_2_naming_it(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2]), p)
    code = ("import sys; sys.modules['openvino'] = None; from resample_bridge.tools.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    for verb in (["convert", p, "--target", "openvino"], ["check", p], ["verify", p]):
        r = _py(code, *verb, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip() == (f"resample-bridge: error: field 'install': {verb[0]} --target openvino needs "
                                    "openvino, which is not installed: pip install 'resample-bridge[openvino]'")
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_a_closed_pipe_ends_quietly(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 20, 20), sizes=[1, 1, 6, 6], mode="nearest"), p)
    proc = subprocess.Popen([sys.executable, "-m", "resample_bridge.tools.cli", "inspect", str(p)], cwd=tmp_path,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader is gone before the first line is written (`| head -0`)
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == "" and proc.returncode == 141


def test_sigterm_while_writing_removes_the_staged_outputs(tmp_path):
    """SIGTERM arrives while the artifacts sit in the staging folder, just before they are renamed into
    place: the process ends with 143 and leaves neither outputs nor the staging folder."""
    pytest.importorskip("openvino")
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), p)
    code = ("import os, signal, sys\n"
            "import resample_bridge.lowering.openvino.write as c\n"
            "orig = c.publish\n"
            "def publish(moves, force=True):\n"
            "    assert all(os.path.exists(s) for s in moves)\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    orig(moves, force)\n"
            "c.publish = publish\n"
            "from resample_bridge.tools.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    r = _py(code, "convert", p, "-o", "out/m.xml", cwd=tmp_path)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]   # no out/, no .rb-convert-*


def test_names_from_the_model_are_escaped_in_text_output(tmp_path, capsys):
    pytest.importorskip("openvino")
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear", name="\x1b[31mred\x07\u202e\nx"), p)
    for verb in (["inspect", str(p)], ["check", str(p)], ["convert", str(p), "-o", str(tmp_path / "o.xml")]):
        assert main(verb) == 0
        out = capsys.readouterr()
        assert not CTRL.search(out.out + out.err), verb
        assert "\\x1b[31mred\\x07\\u202e\\x0ax" in out.out, verb  # a newline in a name splits no line


def test_quiet_and_verbose(tmp_path, capsys):
    pytest.importorskip("openvino")
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), p)
    assert main(["convert", str(p), "-o", str(tmp_path / "a.xml"), "-v"]) == 0
    err = capsys.readouterr().err
    assert "lowering and proving every resampling node" in err and "done in" in err
    assert main(["convert", str(p), "-o", str(tmp_path / "b.xml"), "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["convert", str(p), "-o", str(tmp_path / "c.xml"), "-q", "--json"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")


def test_a_refusal_is_one_line_even_for_a_huge_name(tmp_path, capsys):
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="bogus", name="N" * 100000), p)
    assert main(["inspect", str(p)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and len(err) < 300 and "field 'mode'" in err


def test_clip_keeps_short_text():
    assert clip("short") == "short"


def test_the_one_line_keeps_the_clause_before_the_advice():
    """A whole-model refusal names its first differing node, then what to do: both clauses stay in the one line
    where they fit beside the message's first words (the node's name was cut away, the advice about it kept)."""
    e = BridgeError("the converted model computes other numbers than the source: output 'out0' differs at "
                    "a[1, 3, 64, 96], b[1, 3, 64, 96]; first differing node: /m/update_block/encoder/convc1/Conv "
                    "(Conv); OpenVINO's own importer computes it so too: where the model runs at fixed lengths, "
                    "convert --input gives them", field="model")
    line = e.line()
    assert len(line) <= 280 and "first differing node: /m/update_block/encoder/convc1/Conv (Conv)" in line, line
    assert line.startswith("field 'model': the converted model") and line.endswith("convert --input gives them")
