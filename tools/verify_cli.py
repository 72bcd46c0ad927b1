"""``verify``'s Polygraphy-style options (``--input-shapes``, ``--seed``, ``--val-range``, ``--load-inputs`` /
``--save-inputs``, ``--atol`` / ``--rtol`` per output, ``--save-results``) and the verb itself on top of
``verify_openvino``."""

from __future__ import annotations

import os
import re
import sys

import numpy as np

from ..semantics.errors import BridgeError, clip
from .cli_common import allow_conditional, comma_list, convention_line, emit_json, show


def add_options(p) -> None:
    p.add_argument("--load-inputs", dest="inputs", metavar="NPZ",
                   help="input arrays by graph input name (.npz); default: seeded probes")
    p.add_argument("--inputs", dest="inputs_any", nargs="+", metavar="NAME:[d0,...] | NPZ",
                   help="as Polygraphy's --inputs: input shapes NAME:[d0,d1,...] (like --input-shapes); a file "
                        "path is read as --load-inputs")
    p.add_argument("--save-inputs", metavar="NPZ", help="write the inputs used to NPZ")
    p.add_argument("--force", action="store_true", help="overwrite existing --save-inputs / --save-results files")
    p.add_argument("--input-shapes", nargs="+", metavar="NAME:[d0,d1,...]",
                   help="shapes of the fed inputs (needed for every dynamic dimension; never guessed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--val-range", nargs="+", metavar="[NAME:][LOW,HIGH]",
                   help="value range of generated data inputs, for all or per input, e.g. [0,1] x:[-3,3]")
    p.add_argument("--atol", nargs="+", metavar="[OUT:]TOL",
                   help="absolute tolerance for model outputs, for all or per output (e.g. out1:1e-3 1e-5); "
                        "default: 1e-5 for f32, 1e-2 for f16, 0 for integers")
    p.add_argument("--rtol", nargs="+", metavar="[OUT:]TOL", help="relative tolerance, as --atol (default 1e-4 f32)")
    p.add_argument("--save-results", metavar="NPZ",
                   help="write onnxruntime's and OpenVINO's outputs to NPZ (keys onnxruntime/NAME, openvino/NAME)")
    p.add_argument("--json", action="store_true", help="strict JSON on stdout (no NaN / Infinity)")


def per_name_floats(items, field: str) -> dict:
    """``["out1:1e-3", "1e-5"]`` -> {"out1": 1e-3, "": 1e-5} (the last colon separates name and value)."""
    out = {}
    for item in items or ():
        name, _, val = item.rpartition(":")
        try:
            v = float(val)
        except ValueError:
            v = float("nan")
        if not np.isfinite(v) or v < 0:
            raise BridgeError(f"{clip(item, 60)!r} is not [NAME:]TOLERANCE with a finite tolerance >= 0",
                              field=field)
        out[name] = v
    return out


_RANGE = re.compile(r"\s*(?:(.+?):)?\s*\[?\s*([^,\[\]]+?)\s*,\s*([^,\[\]]+?)\s*\]?\s*")


def val_ranges(items) -> dict:
    """``["[0,1]", "x:[-3,3]"]`` -> {"": (0, 1), "x": (-3, 3)}."""
    out = {}
    for item in items or ():
        m = _RANGE.fullmatch(item)
        try:
            lo, hi = float(m.group(2)), float(m.group(3))
        except (AttributeError, ValueError):
            lo = hi = float("nan")
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise BridgeError(f"{clip(item, 60)!r} is not [NAME:][LOW,HIGH] with finite LOW <= HIGH",
                              field="val-range")
        out[m.group(1) or ""] = (lo, hi)
    return out


def load_npz(path: str, field: str) -> dict:
    from .logs import log

    try:
        if not os.path.isfile(path):
            raise OSError("not a regular file")
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:
        raise BridgeError(f"cannot read {clip(path)} as .npz: {clip(getattr(e, 'strerror', None) or e, 120)}",
                          field=field) from None
    log.debug(f"loaded {len(arrays)} arrays from {clip(path)}")
    return arrays


def save_npz(path: str, arrays: dict, field: str) -> None:
    import tempfile

    from ..lowering.artifacts import umask_mode

    d = os.path.dirname(os.path.abspath(path)) or "."
    if not path.endswith(".npz"):
        raise BridgeError(f"{clip(path)} must end in .npz", field=field)
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".rb-", suffix=".npz")
    except OSError as e:
        raise BridgeError(f"cannot write in {clip(d)}: {e.strerror}", field=field) from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise BridgeError(f"cannot write {clip(path)}: {e.strerror or e}", field=field) from None
        raise


def split_inputs(items) -> tuple[list[str], list[str]]:
    """Polygraphy's ``--inputs``: (shape items NAME:[d0,...], file paths)."""
    shapes, files = [], []
    for item in items or ():
        (shapes if re.fullmatch(r"\s*.+?:\s*\[[^\]]*\]\s*", item) else files).append(item)
    return shapes, files


def run_verify(args) -> int:
    from .verify_openvino import format_verify, verify_openvino
    from ..translate.onnx_shapes import parse_ovc_inputs, parse_polygraphy_shapes
    from .inputs import prepared
    from .logs import log, step

    given_shapes, files = split_inputs(args.inputs_any)
    if len(files) + bool(args.inputs) > 1:
        raise BridgeError("give one file of inputs (--load-inputs / --inputs)", field="inputs")
    args.inputs = args.inputs or (files[0] if files else None)
    shapes = parse_polygraphy_shapes(list(args.input_shapes or ()) + given_shapes) \
        if args.input_shapes or given_shapes else None
    atol, rtol = per_name_floats(args.atol, "atol"), per_name_floats(args.rtol, "rtol")
    ranges = val_ranges(args.val_range)
    for path, flag in ((args.save_inputs, "save-inputs"), (args.save_results, "save-results")):
        if path and os.path.lexists(path) and not args.force:
            raise BridgeError(f"{clip(path)} exists; pass --force to overwrite", field=flag)
    inputs = load_npz(args.inputs, "inputs") if args.inputs else None
    from ..lowering.openvino.target import user_extensions

    args.extension = user_extensions(comma_list(args.extension))
    if args.converted and args.input:
        log.info("--input fixes shapes for a conversion; with --converted it only settles the fed shapes")
    fixed = parse_ovc_inputs(args.input) if args.input else {}
    # --input fixes the model before conversion; with --converted the user's file is as written, and the
    # shapes only say what to feed.
    with prepared(args.model, {} if args.converted else fixed) as (path, _):
        with step("running onnxruntime, the oracle and OpenVINO CPU" +
                  (f" on {clip(args.converted, 80)}" if args.converted else "")):
            report = verify_openvino(path, inputs=inputs, fallback=args.fallback, strict=args.strict,
                                     allow_conditional=allow_conditional(args), converted=args.converted,
                                     extensions=args.extension or (), shapes={**fixed, **(shapes or {})} or None,
                                     seed=args.seed, val_range=ranges, atol=atol, rtol=rtol)
        if getattr(args, "report", None):
            from .report import write_verify_report

            page = write_verify_report(args.report, path, report, fallback=args.fallback, strict=args.strict)
            print(f"report: {page}", file=sys.stderr)
    arrays = report.pop("arrays", {})
    if args.save_inputs:
        save_npz(args.save_inputs, arrays.get("inputs", {}), "save-inputs")
    if args.save_results:
        save_npz(args.save_results, {f"{side}/{name}": v for side in ("onnxruntime", "openvino")
                                     for name, v in arrays.get(side, {}).items()}, "save-results")
    report["convention"] = args.onnx_convention
    if args.json:
        emit_json(report)
    else:
        show(convention_line(args), format_verify(report))
    return 0 if report["ok"] else 1


__all__ = ["add_options", "run_verify", "per_name_floats", "val_ranges"]
