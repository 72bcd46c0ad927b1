"""The command leaves no process behind: OpenVINO's converter would send a telemetry event per conversion from a
forked child (multiprocessing), which can hang holding the command's pipes; the CLI declines it for its own
process."""

import multiprocessing

import onnx
import pytest

pytest.importorskip("openvino")

import openvino_telemetry  # noqa: E402  (installed with openvino)

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402


def test_convert_and_check_fork_no_telemetry_child(tmp_path, monkeypatch):
    telemetry = openvino_telemetry.Telemetry()
    monkeypatch.setattr(telemetry, "consent", True)  # as on a machine without a consent file, outside CI
    started = []
    monkeypatch.setattr(multiprocessing.Process, "start", lambda self: started.append(self))
    p = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), p)
    assert main(["convert", str(p), "-o", str(tmp_path / "o.xml")]) == 0
    assert main(["check", str(p)]) == 0
    assert telemetry.consent is False
    assert started == []


def _sleep():
    import time

    time.sleep(60)


def test_children_still_running_at_exit_are_ended():
    from resample_bridge.tools.cli import end_children

    p = multiprocessing.Process(target=_sleep, daemon=True)
    p.start()
    end_children()
    p.join(5)
    assert not p.is_alive()
