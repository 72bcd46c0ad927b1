"""Signals as exceptions, and a record of them: a signal ends the command with 128 + its number (130 for
Ctrl-C, 143 for SIGTERM) and nothing half-written, because the handler raises and staged outputs are removed by
their ``finally``. A signal can arrive inside a library that turns the exception into its own error (OpenVINO's
frontend calls our conversion extensions from C++ and reports "could not convert"): ``signalled()`` says a
signal came first, and the CLI exits by it instead of relaying that error."""

from __future__ import annotations

import contextlib
import signal

_SIGNALS: list[int] = []  # the signals received, in order


class Terminated(SystemExit):
    """SIGTERM (and other terminating signals) as an exception: ``finally`` blocks run on the way out."""


def signalled() -> int | None:
    """The exit status a received signal asks for (128 + its number), None when none arrived."""
    return 128 + _SIGNALS[0] if _SIGNALS else None


def exit_status_kept() -> None:
    """Let the process end with the status the command chose. CPython marks an interrupt that escapes an exec()
    of source text (dataclasses, namedtuple and others build their functions that way at import) and, at exit,
    kills itself with SIGINT if the mark is set, even though the command caught the interrupt later: the caller
    saw "killed by SIGINT" instead of 130 (measured: a Ctrl-C during the CLI's imports, about 1 run in 10). The
    mark is cleared when an exec() of source text starts, so one empty exec() keeps our exit status."""
    exec("pass")  # a constant: its only effect is clearing the interrupt mark


def install_signal_handlers() -> None:
    def on_int(signum, frame):
        _SIGNALS.append(signum)
        raise KeyboardInterrupt

    def on_term(signum, frame):
        _SIGNALS.append(signum)
        raise Terminated(128 + signum)

    with contextlib.suppress(ValueError, OSError):  # not the main thread: leave the handlers alone
        signal.signal(signal.SIGINT, on_int)
        signal.signal(signal.SIGTERM, on_term)
