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

from ..lowering.artifacts import STAGE_PREFIX, check_output_path, refuse_file_parent
from ..lowering.openvino.pinned import take_effect_in_memory
from ..lowering.passes import ConvertOptions
from ..semantics.errors import BridgeError, clip
from .logs import log, step
from .targets import TARGETS, convert_file, entry, lower

# Suffixes of a file no target writes (engines): refused rather than appended to, like another target's.
ENGINE_SUFFIXES = (".engine", ".plan")


def wrong_suffixes(target) -> set[str]:
    """Suffixes of another format than ``target``'s: ``-o m.onnx`` for OpenVINO is a mistake, not m.onnx.xml."""
    known = {x for e in TARGETS.values() for x in (e.lowering().suffix, *e.lowering().companions)}
    return (known | set(ENGINE_SUFFIXES)) - {target.suffix}


def output_path(model_path: str, out: str | None, target: str, force: bool) -> tuple[str, list[str]]:
    """(absolute output path, folders created for it). ``out``: None (``<model stem><tail>`` in the current
    folder), a folder (existing, or ending in a separator), or a file path (the target's suffix appended when
    missing, as ovc does); missing folders are created."""
    t = entry(target).lowering()
    stem = os.path.splitext(os.path.basename(str(model_path)))[0] or "model"
    name = stem + t.default_tail
    if out is None:
        out = name
    elif out.endswith(os.sep) or os.path.isdir(out) and not out.endswith(t.suffix):
        out = os.path.join(out, name)
    elif not out.endswith(t.suffix):
        wrong = os.path.splitext(out)[1].lower()
        if wrong in wrong_suffixes(t):  # another format's file: model.onnx.xml would hide the mistake
            raise BridgeError(f"{clip(out)} ends in {wrong}, not {t.suffix}: --target {target} writes "
                              + " and ".join((t.suffix, *t.companions)) +
                              " (pass a path ending in it, or a folder)", field="output")
        out += t.suffix  # as ovc does: "-o model" writes model.xml / model.bin
    out = os.path.abspath(out)
    created = []
    d = os.path.dirname(out)
    missing = []
    refuse_file_parent(out)
    while d and not os.path.lexists(d):
        missing.append(d)
        d = os.path.dirname(d)
    if missing and out.endswith(t.suffix):
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
        return check_output_path(out, force, t.suffix, t.companions), created
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


def convert_openvino_model(model_path: str, *, fallback: str = "decompose", strict: bool = False,
                           allow_conditional: bool | None = None, extensions=(), prefer: str | None = None):
    """(openvino.Model, records) in memory, through the OpenVINO target (``targets.lower``)."""
    options = ConvertOptions(fallback=fallback, strict=strict, allow_conditional=allow_conditional,
                             extensions=tuple(extensions), prefer=prefer)
    result = lower("openvino", model_path, options, step=step)
    take_effect_in_memory(result.model)  # the f32 marks, for a model compiled without being written first
    return result.model, result.records


def convert_to_openvino(model_path: str, out: str, **options):
    """Write OUT.xml/.bin atomically through the one convert path (``targets.convert_file``); returns the
    per-node records. Nothing is left behind on failure."""
    written, _ = convert_file("openvino", model_path, out, ConvertOptions(**options), step=step)
    return list(written.records)


STALE_SECONDS = 3600


def reap_stale(folder: str, older_than: float = STALE_SECONDS) -> list[str]:
    """Remove staging folders (``.rb-convert-*``) left beside outputs by a killed run more than an hour ago."""
    import time

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
