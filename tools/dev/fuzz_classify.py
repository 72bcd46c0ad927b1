"""Classifying one CLI call of a fuzz case, and the numbers of a converted model.

Outcomes, worst first: SILENTLY-WRONG (a written model, or verify, disagrees with the oracle, or the oracle is
disputed by onnxruntime and onnx.reference together), ORT-UNEXPLAINED (onnxruntime differs from the oracle
and no IR field or known runtime deviation explains it), COMPILE-FAIL (the written model does not compile or
kills OpenVINO), SELF-REFUSED (a valid case refused because a node of the model we wrote computed other numbers
than its oracle: a rung's proof let it through and only the whole-model check caught it), HANG (timeout),
INTERNAL-ERROR (exit 3, traceback), CLOBBERED (a user's file changed without --force), ACCEPTED-INVALID
(exit 0/1 where only a refusal is right), LEFTOVER (partial outputs, temporary folders, files left in $TMPDIR),
BAD-EXIT (an exit status the contract does not have), BAD-MODE (written files ignore the umask), BAD-MESSAGE (not
one clean line: several lines, longer than the CLI's cap (MAX_LINE), raw control characters, a source path or raw
exception text, no node/field named, other libraries' log lines).
Good: exact, refused-ok, ok.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import stat
from dataclasses import dataclass

from ...semantics.errors import LINE_CAP

GOOD = ("exact", "refused-ok", "ok")
SEVERITY = ("SILENTLY-WRONG", "ORT-UNEXPLAINED", "COMPILE-FAIL", "SELF-REFUSED", "HANG", "INTERNAL-ERROR",
            "CLOBBERED", "ACCEPTED-INVALID", "LEFTOVER", "BAD-EXIT", "BAD-MODE", "BAD-MESSAGE")
BAD = SEVERITY
# The whole-model check's words for a node of the written model that is not its oracle's output on its own inputs
# (``lowering.model_check``): whatever else differs, that node's rung was wrong, not the case.
SELF_CAUGHT = "of the written model is not its oracle's output"
ORDER = GOOD + SEVERITY
OV_TOUCHING = ("check-ov", "convert-ov", "verify-ov", "numbers")
LIB = "libresample_bridge_openvino.so"
THIRD_PARTY_TMP = {os.path.join("tmp", ".ses")}

# C0/C1 controls except \t and \n, bidi and zero-width format characters.
CTRL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
SOURCE = re.compile(r"(?<![\w./-])[\w./-]{1,200}\.(?:cpp|cc|cxx|hpp|h|py)\b(?::\d+)?|"
                    r"Traceback \(most recent|Exception from |Check '[^']*' failed")
# The one-line refusal: the prefix, errors.LINE_CAP characters and the "... (N more characters)" note.
MAX_LINE = len("resample-bridge: error: ") + LINE_CAP + 40


@dataclass
class CallResult:
    verb: str
    argv: list
    rc: int | None
    out: str
    err: str
    hung: bool
    seconds: float
    outcome: str = "ok"
    detail: str = ""


def snapshot(root: str) -> dict:
    """{relative path: (type, size, digest, mode)}; FIFOs and devices are never opened."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            kind, digest = "other", ""
            if stat.S_ISDIR(st.st_mode):
                kind = "dir"
            elif stat.S_ISLNK(st.st_mode):
                kind, digest = "link", os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                kind = "file"
                if st.st_size <= 64 << 20:
                    with open(p, "rb") as f:
                        digest = hashlib.sha1(f.read()).hexdigest()
                else:
                    digest = str(st.st_mtime_ns)
            snap[rel] = (kind, st.st_size if kind == "file" else 0, digest, stat.S_IMODE(st.st_mode))
    return snap


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _files(case, call, before: dict, after: dict) -> list[tuple[str, str]]:
    """LEFTOVER / CLOBBERED / BAD-MODE findings of one call, from the case folder before and after."""
    found = []
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after)
                     if before[k][:3] != after[k][:3] and not (before[k][0] == after[k][0] == "dir"))
    allowed = set()
    if call.verb == "convert-ov" and call.rc == 0:
        x = os.path.normpath(case.out_xml)
        allowed = {x, x[:-4] + ".bin", os.path.join(os.path.dirname(x), LIB)}
    elif call.verb == "convert-trt" and call.rc == 0:
        allowed = {os.path.normpath(case.out_onnx)}
    for path in list(allowed):  # folders convert created for its outputs (as ovc does)
        while os.path.dirname(path):
            path = os.path.dirname(path)
            allowed.add(path)
    forced = "--force" in case.convert_flags
    # $TMPDIR/.ses is OpenVINO telemetry's session id file, kept on purpose by a third-party library.
    tmp = [k for k in new if k.startswith("tmp" + os.sep) and k not in THIRD_PARTY_TMP]
    if tmp:
        found.append(("LEFTOVER", f"left in $TMPDIR: {tmp[:3]}"))
    temps = [k for k in new if ".rb-" in os.path.basename(k) or os.path.basename(k).startswith("build-")]
    if temps:
        found.append(("LEFTOVER", f"temporary files left: {temps[:3]}"))
    stray = [k for k in new if k not in allowed and k not in tmp and k not in temps
             and not k.startswith("tmp" + os.sep)]
    if stray:
        found.append(("LEFTOVER", f"{'partial output' if call.rc else 'unexpected files'} left: {stray[:4]}"))
    protected = set(os.path.normpath(p) for p in case.protect)
    for k in gone:
        found.append(("CLOBBERED", f"{k} was removed"))
    for k in changed:
        if k in allowed and (forced or k not in before):
            continue
        what = "overwritten without --force" if k in allowed or k in protected else "changed"
        found.append(("CLOBBERED", f"{k} {what}"))
    want = 0o044 & ~_umask()
    for k in (new + changed):
        if k in allowed and after[k][0] == "file" and (after[k][3] & 0o044) != want:
            found.append(("BAD-MODE", f"{k} written with mode {after[k][3]:04o} (umask {_umask():03o})"))
    return found


def message_problems(line_text: str, need_node: bool) -> list[str]:
    lines = [ln for ln in line_text.splitlines() if ln.strip()]
    if not lines:
        return ["exit 2 with nothing on stderr"]
    probs = []
    if len(lines) > 1:
        probs.append(f"{len(lines)} lines")
    line = lines[0]
    if not line.startswith("resample-bridge: error: "):
        probs.append("not a 'resample-bridge: error:' line")
    if len(line_text) > MAX_LINE:
        probs.append(f"{len(line_text)} characters")
    m = SOURCE.search(line_text[:4000])  # a 1 MB line would make this regex quadratic
    if m:
        probs.append(f"source path or raw exception text {m.group(0)[:60]!r}")
    if need_node and "node " not in line:
        probs.append("names no node")
    if need_node and "field " not in line:
        probs.append("names no field")
    return probs


def _short(text: str, n: int = 200) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = CTRL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", line)
    return line[:n] + ("..." if len(line) > n else "")


def classify_call(case, call: CallResult, before: dict, after: dict, d: str, convert_rc) -> None:
    call.outcome, call.detail = _classify(case, call, before, after, convert_rc)


def _classify(case, call, before, after, convert_rc) -> tuple[str, str]:
    if call.hung:
        return "HANG", f"no answer in {call.seconds:.0f} s"
    rc = call.rc
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return ("COMPILE-FAIL" if call.verb in OV_TOUCHING else "INTERNAL-ERROR"), f"killed by {name}"
    if rc == 3 or "Traceback (most recent call last)" in call.out + call.err:
        return "INTERNAL-ERROR", f"exit {rc}: {_short(call.err or call.out)}"
    fs = _files(case, call, before, after)
    if fs:
        return min(fs, key=lambda f: SEVERITY.index(f[0]))
    for stream, text in (("stdout", call.out), ("stderr", call.err)):
        m = CTRL.search(text)
        if m:
            return "BAD-MESSAGE", f"raw control character U+{ord(m.group(0)):04X} on {stream}: {_short(text)}"
    if rc == 2 and SELF_CAUGHT in call.err and case.kind == "valid":
        return "SELF-REFUSED", _short(call.err)
    if rc == 2:
        probs = message_problems(call.err, case.need_node)
        if probs:
            return "BAD-MESSAGE", "; ".join(probs) + f": {_short(call.err)}"
        if case.kind == "outpath" and case.expect_rc == 0:
            return "BAD-EXIT", f"refused a legitimate output: {_short(call.err)}"
        return "refused-ok", _short(call.err)
    if rc in (0, 1):
        stray = [ln for ln in call.err.splitlines() if ln.strip() and not ln.startswith("resample-bridge:")]
        if stray:
            return "BAD-MESSAGE", f"other output on stderr with exit {rc}: {_short(stray[0])}"
        long = max((len(ln) for ln in call.out.splitlines()), default=0)
        if long > 2000:
            return "BAD-MESSAGE", f"a {long}-character line on stdout"
        if case.kind == "invalid" or (case.kind == "outpath" and case.expect_rc == 2):
            return "ACCEPTED-INVALID", f"exit {rc}: {_short(call.out)}"
        if rc == 1:
            if call.verb.startswith("check-") and "gate (--fail-on" in call.out:
                return "ok", "check's gate failed: the target's importer gets a node wrong (exit 1 by design)"
            if call.verb != "verify-ov":
                return "BAD-EXIT", f"exit 1 from {call.verb}: {_short(call.err or call.out)}"
            if convert_rc == 0 and case.kind == "valid":
                bad = next((ln for ln in call.out.splitlines() if "MISMATCH" in ln), call.out)
                return "SILENTLY-WRONG", f"verify reports a mismatch on a model convert wrote as proven: {_short(bad)}"
        return "ok", ""
    return "BAD-EXIT", f"exit {rc}: {_short(call.err or call.out)}"


def classify_numbers(out: str, err: str, rc, hung) -> tuple[str, str, str]:
    """(outcome, detail, onnxruntime summary) from fuzz_exec's JSON lines."""
    recs = []
    for ln in out.splitlines():
        try:
            recs.append(json.loads(ln))
        except ValueError:
            pass
    stage = next((r for r in reversed(recs) if "stage" in r), {}).get("stage", "start")
    orts = [r["onnxruntime"] for r in recs if "onnxruntime" in r]
    ort = next((o for o in orts if o.startswith("UNEXPLAINED")), None) or \
        next((o for o in orts if o != "agree"), None) or (orts[0] if orts else "")
    ov = [r for r in recs if "openvino" in r]
    bad = [r for r in ov if not r["openvino"]["ok"]]
    if bad:
        r = bad[0]
        c = r["openvino"]
        what = c.get("shape") or (f"max abs {c['max_abs']:.4g} ({c['n_bad']} elements), worst at {c['worst']}: "
                                  f"{c['got']:.9g} vs oracle {c['want']:.9g}")
        return "SILENTLY-WRONG", f"OpenVINO vs oracle, probe {r['probe']}: {what}", ort
    for r in recs:
        if "openvino_error" in r:
            return "COMPILE-FAIL", _short(r["openvino_error"], 240), ort
        if "oracle_error" in r:
            if r["oracle_error"].startswith("BridgeError"):
                return "ok", "oracle refused: " + r["oracle_error"][:200], ort
            return "INTERNAL-ERROR", "oracle: " + r["oracle_error"][:200], ort
    if hung:
        return ("HANG" if stage in ("openvino", "oracle") else "ok"), f"numbers check hung in {stage}", ort
    if rc is not None and rc < 0:
        if stage == "openvino":
            return "COMPILE-FAIL", f"OpenVINO killed by {signal.Signals(-rc).name} running the written model", ort
        if stage == "oracle":
            return "INTERNAL-ERROR", f"oracle killed by signal {-rc}", ort
        return "ok", f"{stage} crashed (signal {-rc})", ort or f"crashed in {stage}"
    if rc not in (0, None):
        return "INTERNAL-ERROR", f"numbers check failed: {_short(err)}", ort
    disputed = [r for r in recs if r.get("disputed")]
    if disputed:
        r = disputed[0]
        v = r["reference_value"]
        return "SILENTLY-WRONG", (f"oracle disputed, probe {r['probe']}: onnxruntime and onnx.reference agree on "
                                  f"{v.get('got', float('nan')):.9g} at {v.get('worst')} where the oracle (and "
                                  f"OpenVINO) give {v.get('want', float('nan')):.9g}"), ort
    if not ov:
        return "ok", "no output compared", ort
    if ort.startswith("UNEXPLAINED"):
        return "ORT-UNEXPLAINED", f"OpenVINO equals the oracle; onnxruntime differs: {ort}", ort
    return "exact", "", ort


def worst(res) -> tuple[str, str]:
    bad = [c for c in res.calls if c.outcome in SEVERITY]
    if bad:
        c = min(bad, key=lambda c: SEVERITY.index(c.outcome))
        more = f" (+{len(bad) - 1} more bad calls)" if len(bad) > 1 else ""
        return c.outcome, f"{c.verb}: {c.detail}{more}"
    if any(c.outcome == "exact" for c in res.calls):
        return "exact", ""
    if any(c.outcome == "refused-ok" and (c.verb == "convert-ov" or res.case.kind == "invalid") for c in res.calls):
        return "refused-ok", ""
    return "ok", ""
