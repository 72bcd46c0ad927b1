"""Writing what a target produced: one place for every verb and target.

Every artifact (.xml + .bin + extension library, or .onnx) is first written into one temporary folder beside
the output, proven from there, then renamed into place together; a failure leaves nothing behind, nothing of
the user's is replaced without ``force``, and files get the mode the umask gives (mkstemp/mkdtemp would give
0600). Signals end the process through ``SystemExit`` (``tools/cli.py``), so the ``finally`` here runs on
SIGTERM/SIGINT too; while the files are renamed into place those two are held back, and land after the last.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
import signal
import tempfile

from ..semantics.errors import BridgeError, clip

STAGE_PREFIX = ".rb-convert-"


def check_output_path(out: str, force: bool, suffix: str, companions: tuple[str, ...] = ()) -> str:
    """The absolute output path, refused early (before any work) when it cannot or must not be written:
    wrong suffix, missing or read-only directory, a directory in the way, or an existing file (or companion
    such as .bin) without --force."""
    out = os.path.abspath(out)
    if not out.endswith(suffix):
        also = f" (the {', '.join(companions)} is written beside it)" if companions else ""
        raise BridgeError(f"output {out} must end in {suffix}{also}", field="output")
    d = os.path.dirname(out)
    refuse_file_parent(out)
    if not os.path.isdir(d):
        raise BridgeError(f"output directory {d} does not exist", field="output")
    if not os.access(d, os.W_OK):
        raise BridgeError(f"output directory {d} is not writable", field="output")
    for p in (out,) + tuple(out[:-len(suffix)] + c for c in companions):
        if os.path.isdir(p):
            raise BridgeError(f"{p} is a directory", field="output")
        if os.path.lexists(p) and not force:
            raise BridgeError(f"{p} exists; pass --force to overwrite", field="output")
    return out


def refuse_file_parent(out: str) -> None:
    """``-o a/file.onnx/x.xml``: the nearest existing parent is a file, which no mkdir can mend."""
    d = os.path.dirname(out)
    while d and not os.path.lexists(d) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    if d and os.path.lexists(d) and not os.path.isdir(d):
        raise BridgeError(f"{clip(d)} is a file, not a folder, so {clip(out)} cannot be written there (choose "
                          "another output path)", field="output")


def umask_mode() -> int:
    """The mode a plain ``open(..., 'w')`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def staged(out: str):
    """A temporary folder beside ``out`` for the artifacts; removed on exit whatever happens. OSError inside
    becomes one line naming the output."""
    tmp = tempfile.mkdtemp(dir=os.path.dirname(out), prefix=STAGE_PREFIX)
    try:
        yield tmp
    except OSError as e:
        raise BridgeError(f"cannot write {out}: {e.strerror or e}", field="output") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def publish(moves: dict[str, str], force: bool = True) -> None:
    """Rename staged files (source -> destination) into place, each with the umask's mode. Destinations were
    checked by ``check_output_path``; ``force=False`` re-checks companions such as the extension library,
    which is only known to be needed after lowering (an identical copy already there is fine: several models
    converted into one folder share it)."""
    mode = umask_mode()
    for src, dst in moves.items():
        if os.path.isdir(dst):
            raise BridgeError(f"{dst} is a directory", field="output")
        if not force and os.path.lexists(dst) and not filecmp.cmp(src, dst, shallow=False):
            raise BridgeError(f"{dst} exists; pass --force to overwrite", field="output")
    with _signals_held():
        for src, dst in moves.items():
            os.chmod(src, mode)
            os.replace(src, dst)


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM held back inside the block: a Ctrl-C between two renames would leave an .xml without its
    .bin; held, the first one received is raised again right after the last rename, with every file in place.
    By handler, not by signal mask: a masked signal is delivered to another of the process's threads (OpenVINO's)
    and its Python handler still runs here. Outside the main thread, handlers cannot be set: nothing is held."""
    got: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    try:
        old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in held}
    except ValueError:  # not the main thread
        old = {}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        if got:
            signal.raise_signal(got[0])


def write_proven_onnx(model, out: str, prove) -> None:
    """Write ONNX ``model`` to ``out`` for any target that writes ONNX: staged, re-read and handed to ``prove``
    (model -> failures), published only when proven."""
    import onnx

    with staged(out) as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        failures = prove(onnx.load(path))
        if failures:
            raise BridgeError("the written model could not prove itself: " + "; ".join(failures))
        publish({path: out})
