"""``resample-bridge demo`` (``make demo``): the main job on the built-in example (``tools/examples.py``).

1. check: which nodes OpenVINO's own ONNX importer gets wrong, the field, and the error it causes;
2. convert: the rung each node takes, the model written and proven from disk;
3. verify: on the same probe image, the importer's error next to ours (exact), then the written model run
   against onnxruntime and the oracle;
then the commands to try on one's own model. Results on stdout, progress on stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import textwrap
import threading
import time

from ..lowering.artifacts import umask_mode
from ..semantics.errors import BridgeError, clip
from ..semantics.text import counted
from ..lowering.compiled import openvino_extension
from ..translate.onnx import is_resampling
from . import api
from .examples import tricky_model
from .gate import format_summary
from .report import compare_nodes

log = logging.getLogger("resample_bridge.demo")

TRY_THESE = """\
Try it on your own model:
  resample-bridge check   MODEL.onnx --target openvino               # exit 1 if the importer gets a node wrong
  resample-bridge convert MODEL.onnx --target openvino -o out/       # writes out/MODEL.xml, .bin (+ extension)
  resample-bridge verify  MODEL.onnx --converted out/MODEL.xml       # the written file vs onnxruntime + oracle
  resample-bridge check   MODEL.onnx --target openvino --report rep/ # rep/index.html: pictures and heatmaps"""


# The demo's three words of art, said once before they are used.
WORDS = ("words used below: the oracle = resample-bridge's exact evaluation of the ONNX semantics "
         "(semantics/reference.py);",
         "  a rung = how a node is lowered: 0 folded to a constant, 1 the target's own op, 2 its own op after an exact "
         "rewrite, 3 a decomposition into plain ops, 4 the extension op;",
         "  not judged = an output onnxruntime itself computes otherwise than the ONNX semantics, so it is no "
         "reference there.")


@contextlib.contextmanager
def ticking(message: str, every: float = 5.0):
    """``message ...`` on stderr now, ``still working (N s)`` every ``every`` seconds, and the duration at the
    end: the first use builds the C++ extension, which takes a while on a small machine."""
    t0 = time.perf_counter()
    log.info("%s ...", message)
    done = threading.Event()

    def tick():
        while not done.wait(every):
            log.info("  %s: still working (%.0f s)", message, time.perf_counter() - t0)

    t = threading.Thread(target=tick, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()
    log.info("%s: done in %.1f s", message, time.perf_counter() - t0)


def _ensure_logging(quiet: bool) -> None:
    """The demo's progress lines go to stderr unless ``quiet``: the demo is for someone watching, also where
    the CLI shows progress only on a terminal; and when it is called from Python without the CLI's setup."""
    if not quiet:
        log.setLevel(logging.INFO)
    root = logging.getLogger("resample_bridge")
    if not root.handlers:
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(h)
        root.setLevel(logging.INFO)
        root.propagate = False


def _table(rows: list[list[str]], head: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    fmt = "  " + "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    return [fmt.format(*head).rstrip()] + [fmt.format(*map(str, r)).rstrip() for r in rows]


def _err(v: float | None) -> str:
    if v is None:
        return "-"
    return "shape differs" if v == float("inf") else f"{v:.3g}"


def check_lines(rows: list[dict], gate: dict) -> list[str]:
    """Step 1: per node the importer's verdict, the error it causes, and why (the fields that differ, the
    model's value first, or the importer's own message) on the lines below; then ``gate``, check's summary."""
    lines = []
    width = max([len(r.get("name", "?")) for r in rows] + [4])
    for r in rows:
        v = r.get("openvino") or {}
        verdict = v.get("verdict", "?")
        err = f"  (max error {_err(v.get('max_error'))} on a probe input)" if verdict == "silently different" else ""
        lines.append(f"  {r.get('name', '?'):<{width}}  {verdict}{err}")
        if verdict == "refused":
            why = [v.get("reason", "")]
        elif verdict == "exact only if":
            why = list(v.get("conditions", []))
        else:
            why = list(v.get("fields", []))
            why += [f"{ax}: output indices {idx} read another element" for ax, idx in (v.get("ties") or {}).items()]
        for w in why:
            lines += textwrap.wrap(clip(w, 300), 110, initial_indent="      ", subsequent_indent="        ")

    lines += ["  " + ln for ln in format_summary(gate).splitlines()]
    return lines


def convert_lines(records, out_xml: str, extension: str | None) -> list[str]:
    """Step 2: the rung each node takes."""
    rows = []
    for r in records:
        cond = " (exact if the run-time values meet the printed conditions)" if r.conditions else ""
        rows.append([r.node, f"{r.rung} {r.rung_name}{cond}"])
    lines = _table(rows, ["node", "resample-bridge rung"])
    lines.append(f"  wrote {out_xml} and its .bin (in the demo's temporary folder, removed at the end: the command "
                 f"above writes your own); every node re-read from disk and proven")
    if extension:
        lines.append(f"  (nodes on rung 4 need the extension library written beside it: {extension})")
    return lines


def verify_lines(views, report: dict) -> list[str]:
    """Step 3: per node on one probe image, the importer's error next to ours; then the written model's
    verify verdict."""
    rows = []
    for v in views:
        imp = _err(v.importer_error) if v.importer is not None else v.importer_note.split(":")[0]
        rows.append([v.name, imp, _err(v.ours_error)])
    lines = _table(rows, ["node", "OpenVINO importer", "resample-bridge"])
    lines.append("  (max |output - exact| on each node's probe input, the one check judges it on; OpenVINO CPU in f32)")
    nodes, outs = report.get("nodes", []), report.get("outputs", [])
    judged = [o for o in outs if o.get("ok") is not None]
    lines.append(f"  the written model on verify's seeded inputs (the probe input, for a node reading the model's "
                 f"input): {sum(bool(n.get('ok')) for n in nodes)}/{len(nodes)} nodes match the oracle,")
    lines.append(f"  {sum(bool(o.get('ok')) for o in judged)}/{len(judged)} judged outputs match onnxruntime "
                 f"({len(outs) - len(judged)} not judged: onnxruntime departs from the ONNX semantics upstream)")
    lines.append("  verify: " + ("PASSED" if report.get("ok") else "FAILED"))
    return lines


def run_demo(save: str | None = None, out=None, quiet: bool = False) -> int:
    """The whole demo; returns the exit status (0 when verify passes)."""

    out = out or sys.stdout
    _ensure_logging(quiet)

    def say(*lines):
        print("\n".join(lines), file=out, flush=True)

    model = tricky_model()
    with tempfile.TemporaryDirectory(prefix="resample-bridge-demo-") as d:
        path = save or os.path.join(d, "tricky.onnx")
        _write(path, model.SerializeToString())
        say(f"resample-bridge demo: the main job on the built-in example ({path}, built by tools/examples.py:",
            f"{counted(sum(map(is_resampling, model.graph.node)), 'resampling node')}, each named after the trap it sets)",
            *WORDS, "")
        with ticking("preparing the resample-bridge OpenVINO extension (compiled on first use only)"):

            openvino_extension()

        say(f"[1/3] resample-bridge check {os.path.basename(path)} --target openvino",
            "      what OpenVINO's own ONNX importer does with each node (fields: the model's value vs the "
            "importer's):")
        with ticking("check: converting and probing each node with OpenVINO's importer"):
            checked = api.check(path)
        say(*check_lines([r.raw for r in checked.rows], checked.summary), "")

        # The converted model goes to the demo's temporary folder (removed at the end, --save or not): the
        # command shown writes the user's own.
        out_xml = os.path.join(d, "out", "tricky.xml")
        say(f"[2/3] resample-bridge convert {os.path.basename(path)} --target openvino -o out/tricky.xml")
        with ticking("convert: lowering, proving and writing"):
            written = api.convert(path, out_xml)
        ext = written.files.get("extension")
        say(*convert_lines(written.records, "out/tricky.xml", ext and "out/" + os.path.basename(ext)), "")

        say(f"[3/3] resample-bridge verify {os.path.basename(path)} --converted out/tricky.xml",
            "      the importer's error next to resample-bridge's, against the exact result:")
        with ticking("verify: running every node three ways, then the written model"):
            views = compare_nodes(path)
            report = api.verify(path, converted=out_xml).raw
        say(*verify_lines(views, report), "", TRY_THESE)
    return 0 if report.get("ok") else 1


def _write(path: str, data: bytes) -> None:
    """Beside ``path`` first, then renamed: a failure leaves no half-written model."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise BridgeError(f"directory {d} does not exist", field="save")
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".rb-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(Exception):
            os.unlink(tmp)
        raise BridgeError(f"cannot write {path}: {e.strerror or e}", field="save") from None

