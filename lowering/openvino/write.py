"""Writing a converted model: OUT.xml/.bin written to a temporary directory beside OUT, re-read and proven again
from disk (so nothing the save step does, such as FP16 weight compression, slips through), then renamed into
place with the extension library beside it when a node needs it. A failure leaves nothing behind."""

from __future__ import annotations

import logging
import os
import re
import shutil

from ...semantics.errors import BridgeError, clip
from ..artifacts import publish, staged
from ..passes import CUSTOM
from .graph import tagged
from .prove import prove
from ..compiled import openvino_extension

EXTENSION_NAME = "libresample_bridge_openvino.so"
_log = logging.getLogger("resample_bridge")


def extension_path(out_xml: str) -> str:
    """Where a converted model's extension library goes: beside the .xml."""
    return os.path.join(os.path.dirname(os.path.abspath(out_xml)), EXTENSION_NAME)


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


REQUIRES_KEY = "resample_bridge_requires"  # model rt_info: what a model with the extension needs to run


def record_requirements(ov_model, library: str) -> None:
    """The model's rt_info says what it needs beside it (issue 42): the library's file name and SHA-256, the
    OpenVINO release it loads into, the device that runs it."""
    import hashlib

    import openvino as ov

    with open(library, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    for key, value in (("library", EXTENSION_NAME), ("sha256", digest),
                       ("openvino", ov.get_version().split("-")[0]), ("device", "CPU")):
        ov_model.set_rt_info(value, [REQUIRES_KEY, key])


def save(ov_model, records: list, out: str, *, force: bool = False, extensions=(),
         compress_to_fp16: bool = False, check=None) -> tuple[dict, list[str]]:
    """Write ``ov_model`` to ``out`` (an absolute path ending in .xml, its directory writable) atomically and
    prove it again from disk, with the user's ``extensions`` loaded for the re-read. ``compress_to_fp16``:
    OpenVINO's f16 weight compression, with every constant of a resampling node whose f16 rounding would change
    a value kept in f32 (``precise`` runtime info). An existing extension library beside ``out`` is replaced
    only with ``force``. Returns ({"xml", "bin", "extension"?}, names of constants kept in f32)."""
    import openvino as ov

    uses_extension = any(r.rung == CUSTOM for r in records)
    kept: list[str] = []
    keep = precise_constants(ov_model) if compress_to_fp16 else {}
    if uses_extension:

        built = openvino_extension()
        record_requirements(ov_model, built)
    with staged(out) as tmp:
        xml = os.path.join(tmp, "model.xml")
        _save_model(ov_model, xml, False, out)
        core = ov.Core()
        for e in extensions:
            core.add_extension(e)
        moves = {xml: out, os.path.join(tmp, "model.bin"): out[:-4] + ".bin"}
        files = {"xml": out, "bin": out[:-4] + ".bin"}
        if uses_extension:
            lib = os.path.join(tmp, EXTENSION_NAME)
            shutil.copy2(built, lib)
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
            _log.debug(f"compress_to_fp16: {len(kept)} constants of resampling nodes kept in f32")
        written = core.read_model(xml)
        failures = prove(written, records)
        if failures:
            raise BridgeError("the written model could not prove itself: " + "; ".join(failures))
        if check is not None and not compress_to_fp16:
            # The whole-model postcondition on what was written (read back: OpenVINO's CPU plugin has compiled the
            # re-read IR of a shape chain otherwise than the model in memory, measured). BridgeError if it fails.
            check(written)
        publish(moves, force=force)
    return files, kept
