"""Signals at several moments of a real ``convert`` (issue 22): Ctrl-C exits 130, SIGTERM 143, with no
traceback and no false error on stderr, and nothing half-written beside the output (no staging folder, no
.xml without its .bin). A run that finished before the signal exits 0 with both files."""

import os
import signal
import subprocess
import sys
import time

import onnx
import pytest

pytest.importorskip("openvino")

from resample_bridge.tools.examples import tricky_model  # noqa: E402

pytestmark = pytest.mark.slow

MOMENTS = [(1.0, signal.SIGINT), (2.0, signal.SIGTERM), (3.0, signal.SIGINT), (4.5, signal.SIGTERM)]  # after startup


@pytest.mark.parametrize("delay,sig", MOMENTS, ids=[f"{s.name}-{d}s" for d, s in MOMENTS])
def test_signal_during_convert(tmp_path, delay, sig):
    src = tmp_path / "tricky.onnx"
    onnx.save(tricky_model(), src)
    out = tmp_path / "out" / "tricky.xml"
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # OpenVINO's telemetry as on a user's machine
    proc = subprocess.Popen([sys.executable, "-m", "resample_bridge.tools.command", "convert", str(src), "-o",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    time.sleep(delay)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr and "could not convert" not in stderr, stderr
    # Finished first: exit 0, or the signal's own default action when it landed in the interpreter's shutdown,
    # after the command's handlers were gone (seen once on a busy machine: -2, nothing on stderr). The outputs are
    # renamed into place whole, so they are there or absent.
    if proc.returncode == 0 or (proc.returncode == -sig and out.is_file()):
        assert out.is_file() and out.with_suffix(".bin").is_file()
        return
    assert proc.returncode == 128 + sig, (proc.returncode, stderr)
    assert stderr.strip() == "", stderr
    left = sorted(p.name for p in (tmp_path / "out").iterdir()) if (tmp_path / "out").exists() else []
    assert not [n for n in left if n.startswith(".rb-") or n.endswith((".xml", ".bin"))], left
