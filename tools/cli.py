"""``resample-bridge``: inspect | check | convert | verify | demo.

Every refusal is one line naming the node and field, exit status 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from ..semantics.errors import BridgeError
from ..translate.onnx import CONVENTIONS, DEFAULT_CONVENTION, onnx_convention


def inspect_model(model_or_path) -> list[dict]:
    """One row per resampling node: name, op, the IR (text and JSON), and tie indices."""
    from ..semantics import text
    from ..semantics.ir import to_dict
    from ..translate.onnx import parse_model

    rows = []
    for name, ir in parse_model(model_or_path):
        rows.append({"name": name, "op": ir.origin, "text": text.describe(ir), "ties": text.ties(ir),
                     "ir": to_dict(ir)})
    return rows


def format_rows(rows: list[dict]) -> str:
    if not rows:
        return "no resampling nodes (Resize, Upsample, GridSample, DeformConv) in this model"
    from ..semantics.errors import clip

    names = [clip(r["name"], 80) for r in rows]  # names come from the model: escaped, capped
    wn = max(max(len(n) for n in names), 4)
    wo = max(max(len(r["op"]) for r in rows), 2)
    out = [f"{'node':<{wn}}  {'op':<{wo}}  semantics", f"{'-' * wn}  {'-' * wo}  {'-' * 9}"]
    for r, name in zip(rows, names):
        lines = list(r["text"])
        for ax, idx in r["ties"].items():
            lines.append(f"ties: {ax} output indices {idx} sit exactly on a rounding boundary")
        for i, line in enumerate(lines):
            head = (name, r["op"]) if i == 0 else ("", "")
            out.append(f"{head[0]:<{wn}}  {head[1]:<{wo}}  {line}")
    return "\n".join(out)


def cmd_inspect(args) -> int:
    rows = inspect_model(args.model)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        show(format_rows(rows))
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(save=args.save, quiet=getattr(args, "quiet", False))


def _target(args, verb: str) -> None:
    if args.target == "tensorrt" and verb == "verify":
        raise BridgeError("verify --target tensorrt needs the TensorRT runtime, which is not installed here; "
                          "convert --target tensorrt prints the trtexec / polygraphy command that finishes the job",
                          field="target")


# What each verb needs beyond the core install, and the extra that brings it.
EXTRAS = {"openvino": "openvino", "onnxruntime": "runtime", "matplotlib": "report", "tensorrt": "tensorrt"}


def require(*modules: str, why: str = "") -> None:
    """Exit 2 with the ``pip install`` line when a module the verb needs is missing (before any work)."""
    import importlib

    from .logs import quiet_other_libraries, verbose

    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError:
            raise missing_module(mod, why) from None
    quiet_other_libraries(verbose())  # onnxruntime's default logger, now that it may be imported


def missing_module(mod: str, why: str = "") -> BridgeError:
    extra = EXTRAS.get(mod)
    fix = f"pip install 'resample-bridge[{extra}]'" if extra else f"pip install {mod}"
    return BridgeError(f"{why or 'this verb'} needs {mod}, which is not installed: {fix}", field="install")


def _shapes(args) -> dict:
    from ..translate.onnx_shapes import parse_ovc_inputs

    return parse_ovc_inputs(args.input) if getattr(args, "input", None) else {}


def _allow_conditional(args) -> bool | None:
    """--allow-conditional / --strict as the policy's allow_conditional (None: the ladder's default)."""
    if getattr(args, "allow_conditional", False):
        if getattr(args, "strict", False):
            raise BridgeError("--strict and --allow-conditional contradict each other; give one",
                              field="allow-conditional")
        return True
    return False if getattr(args, "strict", False) else None


def show(*texts: str) -> None:
    """Text for a terminal: every line escaped (names and messages come from the model and other libraries)
    and capped."""
    from ..semantics.errors import clip

    for text in texts:
        for line in str(text).split("\n"):
            print(clip(line, 1900))


def emit_json(obj) -> None:
    """Strict JSON on stdout: no NaN/Infinity (``jsonable`` turns them into null beside a flag)."""
    print(json.dumps(jsonable(obj), indent=1, allow_nan=False))


def jsonable(x):
    """Plain JSON values; non-finite floats become None (the caller says why beside them)."""
    import math

    import numpy as np

    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (str, int, bool)):
        return x
    if hasattr(x, "to_dict"):
        return jsonable(x.to_dict())
    return str(x)


def _convention_line(args) -> str:
    return f"ONNX convention: {args.onnx_convention}" + \
        (" (the spec text, as onnxruntime, OpenVINO and PyTorch compute it)" if args.onnx_convention == "spec"
         else " (onnx.reference and the conformance data)")


def cmd_convert(args) -> int:
    from .convert import output_path, reap_stale, remove_created
    from .inputs import prepared

    _target(args, "convert")
    if args.target != "openvino":
        for flag, given in (("compress_to_fp16", args.compress_to_fp16), ("extension", args.extension),
                            ("fallback", args.fallback != "decompose"), ("allow-conditional", args.allow_conditional),
                            ("prefer", args.prefer != "builtin")):
            if given:
                raise BridgeError(f"--{flag} applies to --target openvino only", field=flag)
    require({"openvino": "openvino", "onnx": "onnxruntime"}.get(args.target, "onnx"),
            why=f"convert --target {args.target}")
    out, created = output_path(args.model, args.output, args.target, args.force)
    reap_stale(os.path.dirname(out))
    try:
        with prepared(args.model, _shapes(args)) as (path, _):
            report = _convert(args, path, out)
    except BaseException:
        remove_created(created)
        raise
    report["convention"] = args.onnx_convention
    if args.json:
        report.pop("text")
        emit_json(report)
    else:
        show(_convention_line(args), report.pop("text"))
    return 0


def _convert(args, path: str, out: str) -> dict:
    if args.target == "tensorrt":
        from .tensorrt import convert_to_tensorrt, format_convert_tensorrt

        rep = convert_to_tensorrt(path, out, force=args.force, strict=args.strict, source=args.model)
        return {**rep, "text": format_convert_tensorrt(rep) + f"\n[ SUCCESS ] ONNX file: {out}"}
    if args.target == "onnx":
        from ..lowering.onnx import convert_to_onnx, format_convert_onnx

        rep = convert_to_onnx(path, out, force=args.force, strict=args.strict)
        return {**rep, "text": format_convert_onnx(rep) + f"\n[ SUCCESS ] ONNX file: {out}"}
    from ..lowering.passes import CUSTOM, format_records, records_json
    from .convert import convert_openvino_file

    rep = convert_openvino_file(path, out, fallback=args.fallback, strict=args.strict, force=args.force,
                              allow_conditional=_allow_conditional(args), extensions=args.extension or (),
                              prefer=args.prefer,
                              compress_to_fp16=args.compress_to_fp16)
    records = rep.pop("records")
    files = rep["files"]
    lines = [format_records(records)]
    if rep["compress_to_fp16"]:
        lines.append(f"compress_to_fp16: {len(rep['kept_f32'])} constants of resampling nodes kept in f32 "
                     f"(their f16 rounding would change results); the written model proven again from disk")
    if any(r.rung == CUSTOM for r in records):
        lib = files["extension"]
        lines.append(f"uses the resample-bridge extension {lib}; load it first: core = openvino.Core(); "
                     f"core.add_extension({lib!r}); core.read_model({out!r})")
    lines.append(f"[ SUCCESS ] XML file: {files['xml']}")
    lines.append(f"[ SUCCESS ] BIN file: {files['bin']}")
    return {**rep, "output": out, "nodes": records_json(records), "text": "\n".join(lines)}


def cmd_check(args) -> int:
    from .gate import exit_status, format_summary, parse_fail_on, summary
    from .inputs import prepared

    _target(args, "check")
    fail_on = parse_fail_on(args.fail_on)
    report_needs(args)
    if args.target == "openvino":
        require("openvino", why="check --target openvino")
    with prepared(args.model, _shapes(args)) as (path, _):
        if args.target == "tensorrt":
            from .tensorrt import check_tensorrt, format_check_tensorrt

            rows = check_tensorrt(path)
            text = format_check_tensorrt(rows)
        else:
            from .check_openvino import check_openvino, format_check

            from .logs import Progress

            rows = check_openvino(path, progress=Progress("check: distinct node configurations judged"))
            text = format_check(rows)
            if args.report:
                from .report import write_check_report

                print(f"report: {write_check_report(args.report, path, rows)}", file=sys.stderr)
    s = summary(rows, args.target, fail_on)
    if args.json:
        emit_json({"target": args.target, "convention": args.onnx_convention, "nodes": rows, "summary": s})
    else:
        show(_convention_line(args), text, format_summary(s))
    return exit_status(s)


def cmd_verify(args) -> int:
    from .verify_cli import run_verify

    _target(args, "verify")
    require("openvino", "onnxruntime", why="verify --target openvino")
    report_needs(args)
    return run_verify(args)


def report_needs(args) -> None:
    """``--report DIR``: OpenVINO only, and matplotlib checked before any work (exit 2 naming the extra)."""
    if getattr(args, "report", None):
        if args.target != "openvino":
            raise BridgeError("--report draws OpenVINO CPU runs; it needs --target openvino", field="report")
        require("matplotlib", why="--report")


def _common(p) -> None:
    """Options every verb takes."""
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more detail on stderr (-v also shows other libraries' own log lines; -vv debug)")
    p.add_argument("-q", "--quiet", action="store_true", help="errors only on stderr")
    p.add_argument("--onnx-convention", choices=CONVENTIONS, default=DEFAULT_CONVENTION,
                   help="where onnx.reference departs from the ONNX spec text: 'spec' (default) as "
                        "onnxruntime, OpenVINO and PyTorch compute it; 'reference' as onnx.reference and "
                        "the conformance data")


def _input_option(p) -> None:
    p.add_argument("--input", metavar="SHAPES",
                   help="fix input shapes before anything else, as ovc spells it: NAME[1,3,224,224] with '?' "
                        "for a dynamic dimension, several inputs comma-separated")


def _lowering_options(p) -> None:
    p.add_argument("--fallback", choices=["decompose", "extension"], default="decompose",
                   help="decompose: where no native op is exact, the tap-table decomposition (static shapes), "
                        "else the resample-bridge extension op; extension: the extension op for every node")
    p.add_argument("--strict", action="store_true",
                   help="refuse exactness that holds only under a run-time condition; take the next rung")
    p.add_argument("--allow-conditional", action="store_true",
                   help="accept a native op that is exact only under a stated run-time condition "
                        "(printed, and recorded in the model)")


def _bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1", "yes", "on"):
        return True
    if t in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected True or False, not {text[:40]!r}")


def version() -> str:
    try:
        from importlib.metadata import version as _v

        return _v("resample-bridge")
    except Exception:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="resample-bridge",
                                description="Resampling ops with one meaning across ONNX, OpenVINO and TensorRT.")
    p.add_argument("--version", action="version", version=f"resample-bridge {version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("inspect", help="show the canonical semantics of every resampling node")
    pi.add_argument("model", help="an ONNX model file")
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    pi.set_defaults(func=cmd_inspect)
    pk = sub.add_parser("check", help="what the target's own importer does with each resampling node (a CI gate: "
                                      "exit 1 when a node would be silently different)")
    pk.add_argument("model")
    pk.add_argument("--target", default="openvino", choices=["openvino", "tensorrt"])
    pk.add_argument("--json", action="store_true", help="JSON on stdout (rows, summary, gate)")
    pk.add_argument("--fail-on", default="different", metavar="LIST",
                    help="importer outcomes that fail the gate (exit 1): comma-separated of different, refused, "
                         "conditional, or none (default: different)")
    _input_option(pk)
    pk.add_argument("--report", metavar="DIR", help="also write DIR/index.html: per node the IR differences, the "
                                                   "importer's output next to the exact one, error heatmaps")
    pk.set_defaults(func=cmd_check)
    pc = sub.add_parser("convert", help="convert to a target, proving every resampling node")
    pc.add_argument("model")
    pc.add_argument("--target", default="openvino", choices=["openvino", "onnx", "tensorrt"],
                    help="openvino (IR .xml/.bin, default), onnx (portable ONNX), tensorrt (TensorRT-ready ONNX)")
    pc.add_argument("-o", "--output", "--output_model", dest="output", default=None,
                    help="output file or folder (created when missing); default: <model stem>.xml in the current "
                         "folder (.portable.onnx / .tensorrt.onnx for the ONNX targets); a name without the "
                         "target's suffix gets it, as with ovc; another format's suffix is refused")
    _lowering_options(pc)
    pc.add_argument("--prefer", choices=["builtin", "fastest"], default="builtin",
                    help="builtin: the lowest exact rung (nothing to ship where a built-in op is exact); fastest: "
                         "the extension op where a cost model calibrated on this machine estimates it faster, "
                         "reorders included (OpenVINO)")
    pc.add_argument("--force", action="store_true", help="overwrite an existing output")
    pc.add_argument("--compress_to_fp16", "--compress-to-fp16", dest="compress_to_fp16", nargs="?", const=True,
                    default=False, type=_bool,
                    help="store weights in f16 as ovc does, keeping in f32 every constant of a resampling node "
                         "whose rounding would change results (default: False: everything f32)")
    pc.add_argument("--extension", action="append", metavar="LIB",
                    help="an OpenVINO extension library for the model's other custom ops (repeatable)")
    pc.add_argument("--json", action="store_true", help="JSON report on stdout")
    _input_option(pc)
    pc.set_defaults(func=cmd_convert)
    pv = sub.add_parser("verify", help="run the source (onnxruntime + oracle) and the converted model, report "
                                       "errors; exit 1 when they differ")
    pv.add_argument("model")
    pv.add_argument("--target", default="openvino", choices=["openvino", "tensorrt"])
    pv.add_argument("--converted", metavar="XML", help="the converted model to check (default: convert MODEL "
                                                        "with the same options as convert, in memory)")
    pv.add_argument("--extension", action="append", metavar="LIB",
                    help="an extra OpenVINO extension library for the converted model's other custom ops")
    _lowering_options(pv)
    _input_option(pv)
    from .verify_cli import add_options

    add_options(pv)
    pv.add_argument("--report", metavar="DIR", help="also write DIR/index.html: the errors and, per node on a "
                                                   "probe image, the importer's output and ours next to the exact "
                                                   "one with error heatmaps")
    pv.set_defaults(func=cmd_verify)
    for verb in (pi, pk, pc, pv):
        _common(verb)
    pd = sub.add_parser("demo", help="check -> convert -> verify on the built-in example model of tricky cases")
    pd.add_argument("--save", metavar="PATH", help="write the example model to PATH (and run the demo on it)")
    pd.set_defaults(func=cmd_demo)
    _common(pd)
    from .tensorrt import add_build_plugin

    add_build_plugin(sub, _common)  # build-plugin: the TensorRT plugin library (tools/tensorrt.py)
    return p


class _Terminated(SystemExit):
    pass


def _install_signal_handlers() -> None:
    """SIGTERM/SIGINT end the process through exceptions, so staged outputs are removed by their ``finally``."""
    import signal

    def on_term(signum, frame):
        raise _Terminated(128 + signum)

    try:
        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):  # not the main thread: leave the handlers alone
        pass


def _json_error(args, err: dict) -> None:
    if getattr(args, "json", False):
        with contextlib.suppress(Exception):
            print(json.dumps({"ok": False, "error": err}, indent=1))


def main(argv=None) -> int:
    from .logs import setup

    args = build_parser().parse_args(argv)
    setup(-1 if getattr(args, "quiet", False) else getattr(args, "verbose", 0))
    _install_signal_handlers()
    try:
        try:
            with onnx_convention(getattr(args, "onnx_convention", DEFAULT_CONVENTION)):
                return args.func(args)
        except ModuleNotFoundError as e:
            root = (e.name or "").split(".")[0]
            if root not in EXTRAS:
                raise
            raise missing_module(root, f"{args.cmd} --target {getattr(args, 'target', '')}".strip()) from None
        except MemoryError:
            raise BridgeError("not enough memory for this model and these inputs", field="model") from None
        except OSError as e:
            if isinstance(e, BrokenPipeError):
                raise
            # Disk full, permissions and the like while writing: one line, no traceback.
            where = f" {e.filename}" if getattr(e, "filename", None) else ""
            raise BridgeError(f"cannot read or write{where}: {e.strerror or type(e).__name__}",
                              field="output") from None
    except BridgeError as e:
        _json_error(args, e.to_dict())
        _stderr(f"resample-bridge: error: {e.line()}")
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): end quietly; flushing stdout again would raise once more.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    except _Terminated as e:
        return int(e.code)
    except Exception as e:  # a bug, not bad input: still one line, with a way to get the traceback
        if os.environ.get("RESAMPLE_BRIDGE_DEBUG"):
            raise
        from ..semantics.errors import clip, without_source

        _json_error(args, {"message": f"internal error: {type(e).__name__}", "node": None, "field": None})
        _stderr(f"resample-bridge: internal error: {type(e).__name__}: {clip(without_source(str(e)[:2000].splitlines()[0]) if str(e) else '', 200)} "
                f"(set RESAMPLE_BRIDGE_DEBUG=1 for a traceback)")
        return 3


def _stderr(line: str) -> None:
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)
        sys.stderr.flush()


def entry() -> None:
    """The ``resample-bridge`` command: ``main``, then exit without waiting for OpenVINO's telemetry sends.
    ``openvino.convert_model`` (check's importer runs) queues them on non-daemon threads; without a network the
    interpreter waited out their timeouts at exit (check on a 50-node model: 2.7 s of work, 7.2 s to exit).
    Everything of ours is finished and flushed by then."""
    import logging
    import threading

    rc = main()
    waiting = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if not waiting or "openvino_telemetry" not in sys.modules:
        sys.exit(rc)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(rc)


if __name__ == "__main__":
    entry()
