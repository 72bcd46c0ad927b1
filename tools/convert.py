"""``convert``: the output path settled and checked before any work (ovc's rules: ``-o`` optional, a folder
accepted, missing folders created), then the target converts, proves and writes.

``--compress_to_fp16`` (OpenVINO): OpenVINO's own compression would round every float constant, tap weights
and scales included; here each constant of a resampling node whose f16 rounding would change a value is
marked ``precise`` (OpenVINO's disable_fp16_compression runtime info) before compressing, and the written
model is proven again from disk like any other.
"""

from __future__ import annotations

import os
import shutil

from ..lowering.artifacts import check_output_path
from ..semantics.errors import BridgeError, clip
from .logs import log, step

SUFFIX = {"openvino": ".xml", "onnx": ".onnx", "tensorrt": ".onnx"}
DEFAULT_TAIL = {"openvino": ".xml", "onnx": ".portable.onnx", "tensorrt": ".tensorrt.onnx"}
COMPANIONS = {"openvino": (".bin",), "onnx": (), "tensorrt": ()}
# Suffixes of another format: refused rather than appended to (``-o m.onnx`` for OpenVINO is a mistake).
WRONG_SUFFIXES = {"openvino": (".onnx", ".bin", ".engine", ".plan"), "onnx": (".xml", ".bin", ".engine", ".plan"),
                  "tensorrt": (".xml", ".bin", ".engine", ".plan")}


def output_path(model_path: str, out: str | None, target: str, force: bool) -> tuple[str, list[str]]:
    """(absolute output path, folders created for it). ``out``: None (``<model stem><tail>`` in the current
    folder), a folder (existing, or ending in a separator), or a file path (the target's suffix appended when
    missing, as ovc does); missing folders are created."""
    stem = os.path.splitext(os.path.basename(str(model_path)))[0] or "model"
    name = stem + DEFAULT_TAIL[target]
    if out is None:
        out = name
    elif out.endswith(os.sep) or os.path.isdir(out) and not out.endswith(SUFFIX[target]):
        out = os.path.join(out, name)
    elif not out.endswith(SUFFIX[target]):
        wrong = os.path.splitext(out)[1].lower()
        if wrong in WRONG_SUFFIXES[target]:  # another format's file: model.onnx.xml would hide the mistake
            raise BridgeError(f"{clip(out)} ends in {wrong}, not {SUFFIX[target]}: --target {target} writes "
                              f"{SUFFIX[target]}" + (" and .bin" if target == "openvino" else "") +
                              " (pass a path ending in it, or a folder)", field="output")
        out += SUFFIX[target]  # as ovc does: "-o model" writes model.xml / model.bin
    out = os.path.abspath(out)
    created = []
    d = os.path.dirname(out)
    missing = []
    while d and not os.path.lexists(d):
        missing.append(d)
        d = os.path.dirname(d)
    if missing and out.endswith(SUFFIX[target]):
        for m in reversed(missing):
            try:
                os.mkdir(m)
            except OSError as e:
                remove_created(created)
                raise BridgeError(f"output directory {clip(m)} does not exist and cannot be created: "
                                  f"{e.strerror or e}",
                                  field="output") from None
            created.append(m)
    try:
        return check_output_path(out, force, SUFFIX[target], COMPANIONS[target]), created
    except BridgeError:
        remove_created(created)
        raise


def remove_created(created: list[str]) -> None:
    """Remove the folders ``output_path`` created (innermost first) when they are still empty."""
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            break


def check_extensions(paths) -> list[str]:
    """The user's ``--extension`` libraries as absolute paths, each an existing file that OpenVINO loads."""
    out = []
    for p in paths or ():
        a = os.path.abspath(p)
        if not os.path.isfile(a):
            raise BridgeError(f"{clip(p)} is not a file", field="extension")
        try:
            import openvino as ov

            ov.Core().add_extension(a)
        except ImportError:
            raise
        except Exception as e:
            from ..lowering.openvino.frontend import openvino_error_reason

            raise BridgeError(f"OpenVINO cannot load {clip(p)}: {clip(openvino_error_reason(str(e)), 160)}",
                              field="extension") from None
        out.append(a)
    return out


def convert_openvino_model(model_path: str, *, fallback: str = "decompose", strict: bool = False,
                           allow_conditional: bool | None = None, extensions=(), prefer: str = "builtin"):
    """(openvino.Model, records) through ``lowering.openvino.convert``."""
    from ..lowering.openvino import convert

    with step("lowering and proving every resampling node (OpenVINO's ONNX frontend)"):
        return convert(model_path, fallback=fallback, strict=strict, allow_conditional=allow_conditional,
                       extensions=list(extensions), prefer=prefer)


def convert_to_openvino(model_path: str, out: str, *, fallback: str = "decompose", strict: bool = False,
                        force: bool = False, **kw):
    """Write OUT.xml/.bin atomically; returns the per-node records. Nothing is left behind on failure."""
    return convert_openvino_file(model_path, out, fallback=fallback, strict=strict, force=force, **kw)["records"]


def convert_openvino_file(model_path: str, out: str, *, fallback: str = "decompose", strict: bool = False,
                          force: bool = False, allow_conditional: bool | None = None, extensions=(),
                          compress_to_fp16: bool = False, prefer: str = "builtin") -> dict:
    """Write OUT.xml/.bin (and the extension library when a node needs it) atomically; returns the report
    (plain dict: records, files, kept-f32 constants). Nothing is left behind on failure."""
    from ..lowering.openvino.write import save

    out = check_output_path(out, force, ".xml", (".bin",))
    extensions = check_extensions(extensions)
    ov_model, records = convert_openvino_model(model_path, fallback=fallback, strict=strict,
                                               allow_conditional=allow_conditional, extensions=extensions,
                                               prefer=prefer)
    with step("writing and proving the written model again from disk"):
        files, kept = save(ov_model, records, out, force=force, extensions=extensions,
                                    compress_to_fp16=compress_to_fp16)
    return {"target": "openvino", "records": records, "files": files, "kept_f32": kept,
            "compress_to_fp16": compress_to_fp16}


STALE_SECONDS = 3600


def reap_stale(folder: str, older_than: float = STALE_SECONDS) -> list[str]:
    """Remove staging folders (``.rb-convert-*``) left beside outputs by a killed run more than an hour ago."""
    import time

    from ..lowering.artifacts import STAGE_PREFIX

    gone = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return gone
    now = time.time()
    for e in entries:
        try:
            if e.name.startswith(STAGE_PREFIX) and e.is_dir(follow_symlinks=False) and \
                    now - e.stat(follow_symlinks=False).st_mtime > older_than:
                shutil.rmtree(e.path, ignore_errors=True)
                gone.append(e.path)
        except OSError:
            continue
    if gone:
        log.debug(f"removed {len(gone)} stale staging folder(s) in {clip(folder)}")
    return gone
