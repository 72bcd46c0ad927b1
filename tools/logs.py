"""Logging and progress for the CLI: one logger tree "resample_bridge", messages and progress on stderr (stdout
stays for results, and for JSON only under ``--json``), other libraries' log lines kept off the terminal unless
``-v``."""

from __future__ import annotations

import contextlib
import logging
import sys
import time

from ..semantics.errors import clip

LOGGER = "resample_bridge"
log = logging.getLogger(LOGGER)


class _Escaped(logging.Formatter):
    """Every line escaped: a log line may carry a node name or a relayed message."""

    def format(self, record):
        return "\n".join(clip(line, 400) for line in super().format(record).split("\n"))


def setup(verbosity: int = 0) -> None:
    """``verbosity``: -1 (``-q``: errors only), 0 (progress on a terminal, warnings), 1 (``-v``: progress
    and details anywhere, and other libraries' own log lines), 2 (``-vv``: with logger names)."""
    # Progress by default only where a person watches (stderr a terminal): in pipes and CI logs a refusal
    # stays the one line on stderr; -v asks for it anywhere.
    default = logging.INFO if _is_tty(sys.stderr) else logging.WARNING
    level = {-1: logging.ERROR, 0: default, 1: logging.DEBUG}.get(min(verbosity, 1), logging.DEBUG)
    root = logging.getLogger(LOGGER)
    for h in list(root.handlers):
        if getattr(h, "_resample_bridge", False):
            root.removeHandler(h)
    h = logging.StreamHandler(sys.stderr)
    h._resample_bridge = True
    h.setFormatter(_Escaped("%(message)s" if verbosity < 2 else "%(name)s: %(message)s"))
    root.addHandler(h)
    root.setLevel(level)
    root.propagate = False
    quiet_other_libraries(verbosity >= 1)


def _is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def quiet_other_libraries(loud: bool) -> None:
    """onnxruntime's coloured warnings stay off the terminal unless ``-v`` (verify's sessions also set their
    own log_severity_level), and OpenVINO's converter sends no telemetry from this process; neither library is
    imported for this."""
    ort = sys.modules.get("onnxruntime")
    if ort is not None:
        with contextlib.suppress(Exception):
            ort.set_default_logger_severity(1 if loud else 4)  # errors reach the user as our one line
    quiet_openvino_telemetry()


def quiet_openvino_telemetry() -> None:
    """OpenVINO's converter (``openvino.tools.ovc``, imported with openvino) sends an event per conversion from
    a forked child process: a child forked while another thread holds a lock can hang with our stdout still
    open (a convert once hung 300 s that way), and a killed run printed the children's tracebacks. The
    command line declines it for this process only (the user's consent file is left as it is): telemetry is
    initialised as ``convert_model`` initialises it (else its first call would initialise it again and ask
    the consent file anew), then declined."""
    if "openvino_telemetry" not in sys.modules:
        return
    with contextlib.suppress(Exception):
        from openvino.tools.ovc.telemetry_utils import init_ovc_telemetry

        init_ovc_telemetry().consent = False


class _NotTelemetry(logging.Filter):
    """OpenVINO's telemetry package warns through the root logger where HOME is not writable ("Failed to create
    directory for openvino_telemetry file", several times a conversion): not our output."""

    def filter(self, record) -> bool:
        return "openvino_telemetry" not in (record.pathname or "")


def decline_openvino_telemetry() -> None:
    """Before openvino is imported: its import sends an event from a forked child too (``quiet_openvino_
    telemetry`` covers the conversions). Creating the telemetry singleton first, declined, with the name the
    import gives it, leaves the import nothing to send; the user's consent file is left as it is."""
    logging.getLogger().addFilter(_NotTelemetry())
    if "openvino" in sys.modules:
        quiet_openvino_telemetry()
        return
    with contextlib.suppress(Exception):
        import openvino_telemetry as tm

        tm.Telemetry(tid="declined", app_name="OpenVINO", backend="ga4", enable_opt_in_dialog=False,
                     disable_in_ci=True).consent = False


def verbose() -> bool:
    return log.isEnabledFor(logging.DEBUG)


@contextlib.contextmanager
def step(message: str, level: int = logging.INFO):
    """Log ``message ...`` now and ``message: done in N s`` at the end (long work: builds, probing, runs)."""
    log.log(level, f"{message} ...")
    t0 = time.perf_counter()
    yield
    log.log(level, f"{message}: done in {time.perf_counter() - t0:.1f} s")


class Progress:
    """``label: i/n`` lines on stderr, at most one every ``every`` seconds (the last always)."""

    def __init__(self, label: str, total: int | None = None, every: float = 1.0):
        self.label, self.total, self.every = label, total, every
        self.t0 = self.last = time.perf_counter()

    def __call__(self, done: int, total: int | None = None, what: str = "") -> None:
        total = self.total if total is None else total
        now = time.perf_counter()
        if (total is None or done < total) and now - self.last < self.every:
            return
        self.last = now
        tail = f" ({clip(what, 60)})" if what else ""
        log.info(f"{self.label}: {done}/{total if total is not None else '?'}{tail} [{now - self.t0:.1f} s]")
