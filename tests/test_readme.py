"""Every code block of README.md runs, in order, in one scratch folder: ``sh`` blocks with bash (the venv's
``resample-bridge`` first on PATH), ``python`` blocks with the venv's Python. A ``text`` block right after a code
block is that block's output, copied from a real run: each of its lines must appear in the actual output, in
order (a line ``...`` skips any number of lines; ``...`` inside a line matches anything). A block preceded by
``<!-- skip: reason -->`` is not run, and must say why."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"(?:<!--\s*skip:(?P<skip>[^>]*)-->\s*\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)\n```\n", re.S)


def blocks() -> list[dict]:
    """The fenced blocks in order: lang, body, skip reason, and the output block that follows, if any."""
    text = README.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        found.append({"lang": m["lang"], "body": m["body"], "skip": m["skip"], "start": m.start(), "end": m.end()})
    for a, b in zip(found, found[1:]):
        if b["lang"] == "text" and a["lang"] in ("sh", "python") and not text[a["end"]:b["start"]].strip():
            a["expect"] = b["body"]
            b["is_output"] = True
    return found


def _run(block: dict, cwd: Path) -> str:
    env = {**os.environ, "CI": "true", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COLUMNS": "120"}
    if block["lang"] == "sh":
        cmd = ["bash", "-c", block["body"]]
    else:
        cmd = [sys.executable, "-c", block["body"]]
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    out = p.stdout
    assert p.returncode == 0, f"README block exited {p.returncode}:\n{block['body']}\n--- output ---\n{out[-3000:]}"
    return out


def _matches(expected: str, actual: str) -> str | None:
    """None when every expected line appears in ``actual`` in order, else the first line that does not."""
    lines = [ln.rstrip() for ln in actual.splitlines()]
    i = 0
    for want in expected.splitlines():
        want = want.rstrip()
        if want.strip() == "...":
            continue
        pattern = re.compile("^" + ".*".join(map(re.escape, want.split("..."))) + "$")
        while i < len(lines) and not pattern.match(lines[i]):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None


def test_readme_structure():
    bs = blocks()
    langs = {b["lang"] for b in bs}
    assert langs <= {"sh", "python", "text"}, langs  # every block is run, checked, or plain text
    for b in bs:
        if b["skip"] is not None:
            assert len(b["skip"].strip()) > 10, "a skipped block says why"
    text = README.read_text(encoding="utf-8")
    for must in ("make demo", "make test", "pip install", "--onnx-convention", "lowering/passes.py"):
        assert must in text, must


@pytest.mark.slow
def test_every_block_runs_and_its_output_is_real(tmp_path):
    ran = 0
    for b in blocks():
        if b["lang"] not in ("sh", "python") or b["skip"] is not None:
            continue
        out = _run(b, tmp_path)
        ran += 1
        if "expect" in b:
            missing = _matches(b["expect"], out)
            assert missing is None, (f"README output line not produced by\n{b['body']}\n--- missing ---\n{missing}"
                                     f"\n--- actual ---\n{out[-4000:]}")
    assert ran >= 5


@pytest.mark.parametrize("expected, actual, ok", [
    ("a\n...\nc", "a\nb\nc", True),
    ("a\nc", "c\na", False),  # order matters
    ("x ... z", "x y z", True),
    ("x ... z", "x y", False),
])
def test_output_matching(expected, actual, ok):
    assert (_matches(expected, actual) is None) == ok
