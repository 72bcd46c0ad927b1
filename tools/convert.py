"""``convert``: the output path settled and checked before any work (ovc's rules: ``-o`` optional, a folder
accepted, missing folders created), then the target converts, proves and writes.

``--compress_to_fp16`` (OpenVINO): OpenVINO's own compression would round every float constant, tap weights
and scales included; here each constant of a resampling node whose f16 rounding would change a value is
marked ``precise`` (OpenVINO's disable_fp16_compression runtime info) before compressing, and the written
model is proven again from disk like any other.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil

from ..lowering.artifacts import check_output_path, publish, staged
from ..semantics.errors import BridgeError, clip
from .logs import log, step

SUFFIX = {"openvino": ".xml", "onnx": ".onnx", "tensorrt": ".onnx"}
DEFAULT_TAIL = {"openvino": ".xml", "onnx": ".portable.onnx", "tensorrt": ".tensorrt.onnx"}
COMPANIONS = {"openvino": (".bin",), "onnx": (), "tensorrt": ()}


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


def _accepts(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


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
                           allow_conditional: bool | None = None, extensions=()):
    """(openvino.Model, records) through ``lowering.openvino.convert``; ``allow_conditional`` is passed where
    the ladder's policy takes it."""
    from ..lowering.openvino import convert

    kw = {"fallback": fallback, "strict": strict}
    if extensions:
        kw["extensions"] = list(extensions)
    if allow_conditional is not None and _accepts(convert, "allow_conditional"):
        kw["allow_conditional"] = allow_conditional
    with step("lowering and proving every resampling node (OpenVINO's ONNX frontend)"):
        return convert(model_path, **kw)


def convert_to_openvino(model_path: str, out: str, *, fallback: str = "decompose", strict: bool = False,
                        force: bool = False, **kw):
    """Write OUT.xml/.bin atomically; returns the per-node records. Nothing is left behind on failure."""
    return convert_openvino_file(model_path, out, fallback=fallback, strict=strict, force=force, **kw)["records"]


def convert_openvino_file(model_path: str, out: str, *, fallback: str = "decompose", strict: bool = False,
                          force: bool = False, allow_conditional: bool | None = None, extensions=(),
                          compress_to_fp16: bool = False) -> dict:
    """Write OUT.xml/.bin (and the extension library when a node needs it) atomically; returns the report
    (plain dict: records, files, kept-f32 constants). Nothing is left behind on failure."""
    out = check_output_path(out, force, ".xml", (".bin",))
    extensions = check_extensions(extensions)
    ov_model, records = convert_openvino_model(model_path, fallback=fallback, strict=strict,
                                               allow_conditional=allow_conditional, extensions=extensions)
    with step("writing and proving the written model again from disk"):
        files, kept = save_openvino(ov_model, records, out, force=force, extensions=extensions,
                                    compress_to_fp16=compress_to_fp16)
    return {"target": "openvino", "records": records, "files": files, "kept_f32": kept,
            "compress_to_fp16": compress_to_fp16}


# ----------------------------------------------------------------------------------------------------------
# Saving, with fp16 compression that keeps what must stay exact.

PRECISE = '<rt_info>\n\t\t\t\t<attribute name="precise" version="0" />\n\t\t\t</rt_info>'


def _f16_changes(values) -> bool:
    import numpy as np

    v = np.asarray(values)
    if v.dtype not in (np.float32, np.float64) or v.size == 0:
        return False
    with np.errstate(over="ignore"):
        return not np.array_equal(v.astype(np.float16).astype(v.dtype), v, equal_nan=True)


def _ident(op) -> tuple:
    """A stable key of an op (Python wrappers are recreated on each access, so ``id`` is not one)."""
    return op.get_type_name(), op.get_friendly_name()


def _constant_only(op, memo: dict) -> bool:
    """The op's value depends on constants only (no Parameter, no state)."""
    key = _ident(op)
    if key in memo:
        return memo[key]
    t = op.get_type_name()
    if t == "Constant":
        memo[key] = True
    elif t in ("Parameter", "ReadValue") or op.get_input_size() == 0:
        memo[key] = False
    else:
        memo[key] = False  # cycles cannot occur; provisional value while recursing
        memo[key] = all(_constant_only(op.input_value(i).get_node(), memo) for i in range(op.get_input_size()))
    return memo[key]


def _constants_above(op, memo: dict, out: dict) -> None:
    """Every Constant in the constant-only subgraphs feeding ``op``."""
    stack = [op.input_value(i).get_node() for i in range(op.get_input_size())]
    while stack:
        n = stack.pop()
        if not _constant_only(n, memo):
            continue
        if n.get_type_name() == "Constant":
            out[n.get_friendly_name()] = n
        else:
            stack += [n.input_value(i).get_node() for i in range(n.get_input_size())]


# How far below a resampling node's tagged op its own constants sit: the decomposition's weights
# (Gather -> Reshape -> Multiply), masks and extrapolation values (Select), integer rounding (Clamp).
_BELOW = 6


def precise_constants(ov_model) -> dict:
    """Friendly name -> Constant, for every float constant of a resampling node whose f16 rounding changes a
    value: the constant-only inputs of each op resample-bridge produced and of the few ops right below it."""
    from ..lowering.openvino.graph import tagged

    memo: dict = {}
    found: dict = {}
    seen = set()
    frontier = [(op, 0) for op in tagged(ov_model).values()]
    while frontier:
        op, depth = frontier.pop()
        if _ident(op) in seen:
            continue
        seen.add(_ident(op))
        _constants_above(op, memo, found)
        if depth < _BELOW:
            for o in op.outputs():
                frontier += [(i.get_node(), depth + 1) for i in o.get_target_inputs()]
    return {k: c for k, c in found.items() if _f16_changes(c.get_data())}


def _mark_precise(xml_path: str, names) -> int:
    """Add OpenVINO's ``precise`` runtime info (what disable_fp16_compression writes) to the named Const
    layers of a saved IR; returns how many were marked."""
    from xml.sax.saxutils import quoteattr

    with open(xml_path, encoding="utf-8") as f:
        text = f.read()
    marked = 0
    for name in names:
        pat = re.compile(r'(<layer id="\d+" name=' + re.escape(quoteattr(name)) +
                         r' type="Const"[^>]*>\s*<data [^>]*/>)(\s*<rt_info>)?')
        m = pat.search(text)
        if not m:
            continue
        if m.group(2):
            insert = m.end(2)
            text = text[:insert] + '\n\t\t\t\t<attribute name="precise" version="0" />' + text[insert:]
        else:
            text = text[:m.end(1)] + "\n\t\t\t" + PRECISE + text[m.end(1):]
        marked += 1
    with open(xml_path, "w", encoding="utf-8") as f:
        f.write(text)
    return marked


def _save_model(ov_model, path: str, compress: bool, out: str) -> None:
    """``openvino.save_model``; its C++ stream errors (disk full: "basic_ios::clear") as one line."""
    import openvino as ov

    try:
        ov.save_model(ov_model, path, compress_to_fp16=compress)
    except Exception as e:
        free = shutil.disk_usage(os.path.dirname(path)).free
        why = "the disk is full" if free < (1 << 20) else f"OpenVINO could not save it ({clip(str(e), 120)})"
        raise BridgeError(f"cannot write {clip(out)}: {why}", field="output") from None


def save_openvino(ov_model, records: list, out: str, *, force: bool = False, extensions=(),
                  compress_to_fp16: bool = False) -> tuple[dict, list[str]]:
    """``lowering.openvino.write.save`` with the user's extensions loaded for the re-read and optional fp16
    compression; returns ({"xml", "bin", "extension"?}, names of constants kept in f32)."""
    import openvino as ov

    from ..lowering.openvino.prove import prove
    from ..lowering.openvino.write import EXTENSION_NAME, extension_path
    from ..lowering.passes import CUSTOM

    uses_extension = any(r.rung == CUSTOM for r in records)
    kept: list[str] = []
    keep = precise_constants(ov_model) if compress_to_fp16 else {}
    with staged(out) as tmp:
        xml = os.path.join(tmp, "model.xml")
        _save_model(ov_model, xml, False, out)
        core = ov.Core()
        for e in extensions:
            core.add_extension(e)
        moves = {xml: out, os.path.join(tmp, "model.bin"): out[:-4] + ".bin"}
        files = {"xml": out, "bin": out[:-4] + ".bin"}
        if uses_extension:
            from ..lowering.compiled import openvino_extension

            lib = os.path.join(tmp, EXTENSION_NAME)
            with step("building / locating the resample-bridge OpenVINO extension"):
                shutil.copy2(openvino_extension(), lib)
            core.add_extension(lib)
            moves[lib] = files["extension"] = extension_path(out)
        if compress_to_fp16:
            _mark_precise(xml, keep)
            marked = core.read_model(xml)
            kept = sorted(keep)
            f16 = os.path.join(tmp, "f16.xml")
            _save_model(marked, f16, True, out)
            os.replace(f16, xml)
            os.replace(os.path.join(tmp, "f16.bin"), os.path.join(tmp, "model.bin"))
            log.debug(f"compress_to_fp16: {len(kept)} constants of resampling nodes kept in f32")
        failures = prove(core.read_model(xml), records)
        if failures:
            raise BridgeError("the written model could not prove itself: " + "; ".join(failures))
        publish(moves, force=force)
    return files, kept


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
