"""``verify``'s Polygraphy-style options (``--input-shapes``, ``--seed``, ``--val-range``, ``--load-inputs`` /
``--save-inputs`` as .npz or Polygraphy's JSON, ``--save-outputs`` / ``--load-outputs``, ``--atol`` / ``--rtol``
per output, ``--check-error-stat``, ``--fail-fast``, ``--validate``, ``--save-results``) and the verb itself on
top of ``verify_openvino`` (one run per iteration of the inputs)."""

from __future__ import annotations

import os
import re
import sys

import numpy as np

from ..semantics.errors import BridgeError, clip
from .cli_common import allow_conditional, comma_list, convention_line, emit_json, quiet_or, show
from ..lowering.artifacts import umask_mode
from ..lowering.openvino.target import user_extensions
from ..semantics.compare import compare
from ..translate.onnx_shapes import InputSpecs, parse_ovc_inputs, parse_polygraphy_shapes
from .inputs import prepared
from .logs import log, step
from .polygraphy_json import dump_feeds, dump_results, load_feeds, load_results
from .report import write_verify_report
from .targets import refuse_verify_options
from .verify_openvino import _verdict, format_verify, verify_openvino
from .verify_stats import finish_row, parse_error_stats
from .verify_torch import run_verify_torch
from ..lowering.openvino.torch_source import is_torch_source


def add_options(p) -> None:
    p.add_argument("--load-inputs", dest="inputs", metavar="FILE",
                   help="input arrays by graph input name: .npz, or Polygraphy's .json (a list of feed dicts, one "
                        "iteration each); default: seeded probes")
    p.add_argument("--inputs", dest="inputs_any", nargs="+", metavar="NAME:[d0,...] | NPZ",
                   help="as Polygraphy's --inputs: input shapes NAME:[d0,d1,...] (like --input-shapes); a file "
                        "path is read as --load-inputs")
    p.add_argument("--save-inputs", metavar="FILE", help="write the inputs used: .npz, or .json in Polygraphy's "
                                                         "format (polygraphy run --load-inputs reads it)")
    p.add_argument("--save-outputs", metavar="JSON",
                   help="write the outputs of onnxruntime (the source) and of the converted model as Polygraphy's "
                        "RunResults JSON (polygraphy run --load-outputs reads it)")
    p.add_argument("--load-outputs", metavar="JSON",
                   help="also compare the converted model's outputs with the outputs saved in JSON (Polygraphy's "
                        "--save-outputs, e.g. from TensorRT), per iteration, under --atol / --rtol")
    p.add_argument("--check-error-stat", nargs="+", metavar="[OUT:]STAT",
                   help="as Polygraphy: elemwise (default: every element within tolerance), or max / mean / median: "
                        "that statistic of the abs errors within atol or that of the rel errors within rtol; for "
                        "model outputs, and nodes given an --atol/--rtol (otherwise a node is judged element by "
                        "element under the float32 error bound)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed output, node or iteration")
    p.add_argument("--validate", action="store_true",
                   help="fail an output or node that has NaN or Inf where the reference has a finite value")
    p.add_argument("--force", action="store_true",
                   help="overwrite existing --save-inputs / --save-outputs / --save-results files")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32",
                   help="OpenVINO's inference precision to run the converted model at (default f32, what convert "
                        "proves at; OpenVINO's own default is bf16 on CPUs that have it, f16 on GPU): each node "
                        "judged by the error bound at that precision (values may round, an index may not move)")
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
    if not path.endswith(".npz"):
        raise BridgeError(f"{clip(path)} must end in .npz or .json", field=field)
    _staged(path, lambda f: np.savez(f, **arrays), field)


def save_text(path: str, text: str, field: str) -> None:
    _staged(path, lambda f: f.write(text.encode()), field)


def _staged(path: str, write, field: str) -> None:
    """``write(binary file)`` to a temporary file beside ``path``, renamed into place only when complete."""
    import tempfile

    d = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".rb-", suffix=os.path.splitext(path)[1])
    except OSError as e:
        raise BridgeError(f"cannot write in {clip(d)}: {e.strerror}", field=field) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
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


def _load_feeds(path: str) -> list[dict]:
    """--load-inputs: an .npz (one iteration) or Polygraphy's JSON list of feed dicts (one per iteration)."""

    return load_feeds(path) if path.endswith(".json") else [load_npz(path, "inputs")]


def _save_feeds(path: str, feeds: list[dict]) -> None:
    if path.endswith(".json"):
        save_text(path, dump_feeds(feeds), "save-inputs")
    else:
        save_npz(path, feeds[0], "save-inputs")  # one iteration: run_verify refused more before running


def _against_loaded(report: dict, converted: dict, loaded, i: int, args, atol: dict, rtol: dict,
                    stats: dict) -> None:
    """--load-outputs: the converted model's outputs of iteration ``i`` against every saved runner's (by output
    name), as more output rows (Polygraphy compares each runner with the loaded results the same way)."""

    for runner, its in loaded:
        if i >= len(its):
            continue
        if not set(its[i]) & set(converted):
            raise BridgeError(f"runner {clip(runner, 60)!r} of --load-outputs has no output of this model (it has "
                              f"{', '.join(clip(n, 40) for n in list(its[i])[:8]) or 'none'}; the model: "
                              f"{', '.join(clip(n, 40) for n in list(converted)[:8])})", field="load-outputs")
        for name, want in its[i].items():
            if name not in converted:
                continue
            got = converted[name]
            row = compare(got, want, atol.get(name, atol.get("")), rtol.get(name, rtol.get(""))).to_dict()
            row = finish_row(row, got, want, stats.get(name, stats.get("", "elemwise")), args.validate)
            report["outputs"].append({**row, "name": f"{name} vs {runner} (--load-outputs)"})


def run_verify(args) -> int:
    if is_torch_source(args.model):
        args.extension = user_extensions(comma_list(args.extension))
        return run_verify_torch(args, _show_verify)
    given_shapes, files = split_inputs(args.inputs_any)
    if len(files) + bool(args.inputs) > 1:
        raise BridgeError("give one file of inputs (--load-inputs / --inputs)", field="inputs")
    args.inputs = args.inputs or (files[0] if files else None)
    shapes = parse_polygraphy_shapes(list(args.input_shapes or ()) + given_shapes) \
        if args.input_shapes or given_shapes else None
    atol, rtol = per_name_floats(args.atol, "atol"), per_name_floats(args.rtol, "rtol")
    stats = parse_error_stats(args.check_error_stat)
    ranges = val_ranges(args.val_range)
    for path, flag in ((args.save_inputs, "save-inputs"), (args.save_results, "save-results"),
                       (args.save_outputs, "save-outputs")):
        if path and os.path.lexists(path) and not args.force:
            raise BridgeError(f"{clip(path)} exists; pass --force to overwrite", field=flag)
    if args.save_outputs and not args.save_outputs.endswith(".json"):
        raise BridgeError(f"{clip(args.save_outputs)} must end in .json (Polygraphy's RunResults)", field="save-outputs")
    iterations = _load_feeds(args.inputs) if args.inputs else [None]
    if args.save_inputs and not args.save_inputs.endswith(".json") and len(iterations) > 1:
        raise BridgeError(f"{len(iterations)} iterations of inputs need a .json file (Polygraphy's format), not "
                          f"{clip(args.save_inputs)}", field="save-inputs")

    loaded = load_results(args.load_outputs) if args.load_outputs else []
    refuse_verify_options(args.target, {"extensions": bool(args.extension)})

    args.extension = user_extensions(comma_list(args.extension))
    if args.converted and args.input:
        log.info("--input fixes shapes for a conversion; with --converted it only settles the fed shapes")
    fixed = parse_ovc_inputs(args.input) if args.input else InputSpecs()
    reports, used, results = [], [], {"onnxruntime": [], args.target: []}
    # --input fixes the model before conversion; with --converted the user's file is as written, and the
    # shapes only say what to feed.
    with prepared(args.model, {} if args.converted else fixed) as (path, _):
        for i, feeds in enumerate(iterations):
            with step(f"running onnxruntime, the oracle and the converted model (--target {args.target})" +
                      (f" on {clip(args.converted, 80)}" if args.converted else "") +
                      (f", iteration {i + 1} of {len(iterations)}" if len(iterations) > 1 else "")):
                report = verify_openvino(path, inputs=feeds, fallback=args.fallback, strict=args.strict,
                                         allow_conditional=allow_conditional(args), converted=args.converted,
                                         extensions=args.extension or (), shapes={**fixed.shaped(), **(shapes or {})} or None,
                                         seed=args.seed, val_range=ranges, atol=atol, rtol=rtol, target=args.target,
                                         error_stat=stats, validate=args.validate, fail_fast=args.fail_fast,
                                         precision=args.precision)
            arrays = report.pop("arrays", {})
            _against_loaded(report, arrays.get("converted", {}), loaded, i, args, atol, rtol, stats)
            report = _verdict(report)
            if i == 0 and getattr(args, "report", None):

                page = write_verify_report(args.report, path, report, fallback=args.fallback, strict=args.strict)
                print(f"report: {page}", file=sys.stderr)
            reports.append(report)
            used.append(arrays.get("inputs", {}))
            results["onnxruntime"].append(arrays.get("onnxruntime", {}))
            results[args.target].append(arrays.get("converted", {}))
            if args.fail_fast and not report["ok"]:
                break
    if args.save_inputs:
        _save_feeds(args.save_inputs, used)
    if args.save_results:
        save_npz(args.save_results, {f"{side}/{name}": v for side, its in results.items()
                                     for name, v in its[0].items()}, "save-results")
    if args.save_outputs:

        save_text(args.save_outputs, dump_results(list(results.items())), "save-outputs")
    return _show_verify(args, reports, len(iterations), format_verify)


def _show_verify(args, reports: list[dict], total: int, format_verify) -> int:
    """One report as before; several iterations (Polygraphy's JSON inputs) each in turn, then one verdict line.
    ``-q``: the verdict line only."""
    ok = all(r["ok"] for r in reports) and len(reports) == total
    if len(reports) == 1 and total == 1:
        doc = reports[0]
    else:
        doc = {"iterations": reports, "ok": ok, "verdict": "PASSED" if ok else "FAILED"}
    doc["convention"] = args.onnx_convention
    if args.json:
        emit_json(doc)
        return 0 if ok else 1
    texts = [format_verify(r) for r in reports]
    if len(reports) > 1 or total > 1:
        texts = [f"iteration {i}:\n{t}" for i, t in enumerate(texts)]
        passed = sum(r["ok"] for r in reports)
        stopped = f"; --fail-fast: {total - len(reports)} not run" if len(reports) < total else ""
        texts.append(f"{doc['verdict']}: {passed} of {total} iterations passed{stopped}")
    head = [] if reports[0].get("reference") else [convention_line(args)]  # a PyTorch program has no convention
    show(*quiet_or(args, *head, *texts[:-1], *texts[-1].splitlines()[:-1]),
         texts[-1].splitlines()[-1])
    return 0 if ok else 1


__all__ = ["add_options", "run_verify", "per_name_floats", "val_ranges"]
