"""Reproducers and failure summaries of a fuzz campaign."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat

from .fuzz_classify import BAD, CTRL


def _safe(text: str, limit: int = 4000) -> str:
    text = CTRL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _copy_regular(src: str, dest: str) -> list[str]:
    """Copy regular files, folders and symlinks (as links); never open a FIFO or device. Returns notes on
    what could not be copied."""
    notes = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        for name in dirnames + filenames:
            p, q = os.path.join(dirpath, name), os.path.join(dest, rel, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(p), q)
                if name in dirnames:
                    dirnames.remove(name)
            elif stat.S_ISREG(st.st_mode):
                shutil.copy2(p, q)
            elif not stat.S_ISDIR(st.st_mode):
                notes.append(f"{os.path.join(rel, name)} is a {'FIFO' if stat.S_ISFIFO(st.st_mode) else 'special file'}"
                             f" (recreate it, e.g. mkfifo)")
    return notes


def confirm_invalid(model) -> str:
    """Which of onnx.checker (full_check) and onnxruntime refuse ``model``."""
    import numpy as np
    import onnx
    said = []
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        said.append(f"onnx.checker: {str(e).splitlines()[0][:160]}")
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.log_severity_level = 4
        m = onnx.ModelProto()
        m.CopyFrom(model)
        m.ir_version = min(m.ir_version, 10)
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in s.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            if int(np.prod(shape)) > 1 << 24:
                raise ValueError("input too large to try")
            feeds[i.name] = np.ones(shape, np.float32 if "float" in i.type else np.int64)
        s.run(None, feeds)
    except Exception as e:
        said.append(f"onnxruntime: {str(e).strip().splitlines()[0][-160:]}")
    return "; ".join(said) or "neither onnx.checker nor onnxruntime refuses it"


def write_reproducer(r, src: str, dest_root: str, seed: int, cli: list[str]) -> str:
    case = r.case
    dest = os.path.join(dest_root, case.name)
    if os.path.exists(dest):
        shutil.rmtree(dest)
    notes = _copy_regular(src, dest)
    exe = os.path.basename(cli[0]) if len(cli) == 1 else " ".join(cli)
    lines = [f"# {case.name}: {r.outcome}", "",
             f"case:    {_safe(case.label, 300)}", f"family:  {case.family} (kind {case.kind})",
             f"verdict: {_safe(r.detail, 1000)}",
             f"rerun:   python -m resample_bridge.tools.dev.fuzz --seed {seed} --only {case.index} "
             f"--families {case.family} --keep-failures DIR", ""]
    if case.kind == "invalid" and case.model is not None:
        lines += [f"invalid because: {_safe(confirm_invalid(case.model), 400)}", ""]
    lines += [f"note: {n}" for n in notes]
    lines += ["commands (run in this folder; feeds_*.npz are the inputs the numbers were checked on):", ""]
    for c in r.calls:
        if c.verb == "numbers":
            cmd = "python -m resample_bridge.tools.dev.fuzz_exec " + " ".join(shlex.quote(a) for a in c.argv)
        else:
            cmd = exe + " " + " ".join(shlex.quote(a) for a in c.argv)
        lines += [f"$ {_safe(cmd, 600)}",
                  f"# exit {c.rc}{' (timed out)' if c.hung else ''} after {c.seconds:.1f} s -> {c.outcome}"
                  + (f": {_safe(c.detail, 600)}" if c.detail else ""),
                  "## stdout", _safe(c.out), "## stderr", _safe(c.err), ""]
    with open(os.path.join(dest, "REPRODUCE.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return dest


_NUM = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def signature(detail: str) -> str:
    """A failure's class: its detail with numbers, quoted names and paths blanked out."""
    s = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", detail)
    s = _NUM.sub("#", s)
    return re.sub(r"\[[^\]]*\]", "[…]", s)[:110]


def summary(results, per_class: int = 1) -> str:
    groups: dict = {}
    for r in results:
        if r.outcome in BAD:
            groups.setdefault((r.outcome, signature(r.detail)), []).append(r)
    out = []
    for (outcome, sig), rs in sorted(groups.items(), key=lambda kv: (BAD.index(kv[0][0]), -len(kv[1]))):
        ex = min(rs, key=lambda r: (len(r.case.label), r.case.index))
        out.append(f"{outcome:<16} x{len(rs):<3} {sig}")
        out.append(f"{'':<21} e.g. {ex.case.name}: {_safe(ex.case.label, 150)}")
    return "\n".join(out)
