"""The ``resample-bridge`` command's entry point, kept light: signals are handled from the first moment (before
the CLI's imports of onnx, numpy, openvino; ``signals``), OpenVINO's import-time telemetry is declined before
openvino is imported, and when the command ends no child process is left behind."""

from __future__ import annotations

import contextlib
import sys

from .signals import Terminated, exit_status_kept, install_signal_handlers, signalled


def entry() -> None:
    """Run the CLI's ``main``; exit by a received signal, else by ``main``'s status (without waiting for other
    libraries' non-daemon threads, see ``cli.finish``)."""
    install_signal_handlers()
    try:
        from .logs import decline_openvino_telemetry

        decline_openvino_telemetry()
        from .cli import finish, main

        rc = main()
    except KeyboardInterrupt:
        rc = 130
    except Terminated as e:
        rc = int(e.code)
    rc = signalled() or rc
    with contextlib.suppress(Exception):
        finish(rc)
    exit_status_kept()
    sys.exit(rc)


if __name__ == "__main__":
    entry()
