"""``resample-bridge``: inspect | check | convert | verify | demo.

Every refusal is one line naming the node and field, exit status 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from ..semantics.errors import BridgeError, clip, first_line
from ..translate.onnx import CONVENTIONS, DEFAULT_CONVENTION, current_convention
from . import api, targets
from .. import __version__
from . import check_source as source_check
from .signals import Terminated, exit_status_kept, install_signal_handlers, signalled
from .cli_common import (EXTRAS, allow_conditional, comma_list, command_context, convention_line, emit_json,
                         missing_module, quiet_or, report_needs, require, shapes, show)
from .targets import DEFAULT, names
from ..semantics.ir import to_dict
from ..semantics.messages import without_source
from ..translate.onnx_shapes import parse_polygraphy_shapes
from ..lowering.openvino.torch_source import is_torch_source
from .demo import run_demo
from .gate import format_summary, parse_fail_on
from .logs import Progress, setup
from .tensorrt import add_build_plugin
from .trt_profile import requested
from .verify_cli import add_options, run_verify


def inspect_rows(model, input_shapes: dict | None = None) -> list[dict]:
    """``api.inspect``'s rows as ``inspect --json`` prints them: name, op, the IR (text and JSON), tie indices."""

    return [{"name": r.name, "op": r.op, "text": list(r.text), "ties": r.ties, "ir": to_dict(r.ir)}
            for r in api.inspect(model, convention=current_convention(), input_shapes=input_shapes)]


def format_rows(rows: list[dict]) -> str:
    if not rows:
        return "no resampling nodes (Resize, Upsample, GridSample, DeformConv) in this model"

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
    rows = inspect_rows(args.model, shapes(args))
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        show(format_rows(rows))
    return 0


def cmd_demo(args) -> int:
    require("openvino", "onnxruntime", why="demo")
    return run_demo(save=args.save, quiet=getattr(args, "quiet", False))


def cmd_convert(args) -> int:
    e = targets.entry(args.target)
    if args.allow_conditional:
        allow_conditional(args)  # --strict with it: refused
    torch_source = is_torch_source(args.model)
    require(*(e.lowering().requires or ("onnx",)), *["torch"] * torch_source, why=f"convert --target {args.target}")
    conv = api.convert(args.model, args.output_model, target=args.target, fallback=args.fallback,
                       strict=args.strict, force=args.force, compress_to_fp16=args.compress_to_fp16,
                       extensions=comma_list(args.extension), convention=args.onnx_convention, prefer=args.prefer,
                       allow_conditional=True if args.allow_conditional else None, input_shapes=shapes(args),
                       outputs=comma_list(args.output), source=args.model, trt_shapes=trt_shapes(args),
                       decompose_gridsample=args.decompose_gridsample)
    report = {**conv.extra, "convention": args.onnx_convention}
    if args.json:
        emit_json(report)
    else:
        head = [] if torch_source else [convention_line(args)]  # a PyTorch program has no ONNX convention
        show(*quiet_or(args, *head), e.text(conv.records, conv.extra, quiet=args.quiet))
    return 0


def trt_shapes(args) -> dict | None:
    """TensorRT's optimization profile asked for: ``--trt-min/opt/max-shapes`` over ``--input``'s lengths and
    ranges (``--input`` counts for --target tensorrt only; the explicit options on another target are refused)."""

    explicit = {k: parse_polygraphy_shapes(v, field=f"trt-{k}-shapes")
                for k, v in (("min", args.trt_min_shapes), ("opt", args.trt_opt_shapes), ("max", args.trt_max_shapes))
                if v}
    return requested(args.input if targets.entry(args.target).input_profile else None, explicit) or None


def cmd_check(args) -> int:
    fail_on = parse_fail_on(args.fail_on)
    if args.source:
        return check_source(args, fail_on)
    if args.model is None:
        raise BridgeError("check needs a model (or --source alone: OpenVINO's PyTorch frontend)", field="model")
    report_needs(args)
    e = targets.entry(args.target, "check")
    require(*e.check_requires, why=f"check --target {args.target}")
    result = api.check(args.model, target=args.target, convention=args.onnx_convention, fail_on=fail_on,
                       input_shapes=shapes(args), report=args.report,
                       progress=Progress("check: distinct node configurations judged"))
    rows = [r.raw for r in result.rows]
    if args.json:
        emit_json({"target": args.target, "convention": args.onnx_convention, "nodes": rows, "summary": result.summary})
    else:
        show(*quiet_or(args, convention_line(args), e.format_check(rows)), format_summary(result.summary))
    return 0 if result.passed else 1


def check_source(args, fail_on) -> int:
    """``check --source``: the ONNX model's nodes against the PyTorch program they were exported from."""
    require("torch", why="check --source")
    if args.model is None:
        require("openvino", why="check --source without a model (OpenVINO's PyTorch frontend)")
    result = api.check(args.model, convention=args.onnx_convention, fail_on=fail_on, input_shapes=shapes(args),
                       source=args.source)
    if args.json:
        emit_json(result.to_dict())
    else:
        show(*quiet_or(args, "\n".join(source_check.format_rows(result))), source_check.format_summary(result))
    return 0 if result.passed else 1


def cmd_verify(args) -> int:
    e = targets.entry(args.target, "verify")
    require(*e.verify_requires, *["torch"] * is_torch_source(args.model), why=f"verify --target {args.target}")
    report_needs(args)
    return run_verify(args)


def _common(p) -> None:
    """Options every verb takes."""
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more detail on stderr (-v also shows other libraries' own log lines; -vv debug)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="errors only on stderr; on stdout the verdict lines only (no per-node lines)")
    p.add_argument("--onnx-convention", choices=CONVENTIONS, default=DEFAULT_CONVENTION,
                   help="where onnx.reference departs from the ONNX spec text: 'spec' (default) as "
                        "onnxruntime, OpenVINO and PyTorch compute it; 'reference' as onnx.reference and "
                        "the conformance data")


def _input_option(p, fed: bool = False) -> None:
    """The input-shape options every verb that reads a model takes (``fed``: verify, whose --input-shapes are
    the shapes it feeds)."""
    p.add_argument("--input", metavar="SHAPES",
                   help="fix input shapes before anything else, as ovc spells it: NAME[1,3,224,224] with '?' "
                        "for a dynamic dimension, several inputs comma-separated, NAME alone to name an input "
                        "without changing its shape, NAME[...]{f32} to state its type (the model's own; no "
                        "cast); or as trtexec does: NAME:1x3x224x224")
    p.add_argument("--input-shapes", nargs="+", metavar="NAME:[d0,d1,...]",
                   help="shapes of the fed inputs as Polygraphy spells them (needed for every dynamic dimension; "
                        "never guessed)" if fed else
                   "as Polygraphy spells --input: NAME:[d0,d1,...] items, one per input")


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
    return __version__


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="resample-bridge",
                                description="Resampling ops with one meaning across ONNX, OpenVINO and TensorRT.")
    p.add_argument("--version", action="version", version=f"resample-bridge {version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("inspect", help="show the canonical semantics of every resampling node")
    pi.add_argument("model", help="an ONNX model file")
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    _input_option(pi)
    pi.set_defaults(func=cmd_inspect)
    pk = sub.add_parser("check", help="what the target's own importer does with each resampling node (a CI gate: "
                                      "exit 1 when a node would be silently different)")
    pk.add_argument("model", nargs="?", help="an ONNX model file (omit with --source: OpenVINO's own PyTorch "
                                            "frontend on each call of the program)")
    pk.add_argument("--target", default=DEFAULT, choices=names("check"),
                    help="whose importer to judge: openvino (converted and run on a probe, default) or tensorrt "
                         "(predicted from onnx-tensorrt's rules)")
    pk.add_argument("--json", action="store_true", help="JSON on stdout (rows, summary, gate)")
    pk.add_argument("--fail-on", default="different,unproven", metavar="LIST",
                    help="importer outcomes that fail the gate (exit 1): comma-separated of different, refused, "
                         "conditional, unproven (no verdict provable without concrete shapes: give --input), or "
                         "none (default: different,unproven)")
    _input_option(pk)
    pk.add_argument("--report", metavar="DIR", help="also write DIR/index.html: per node the IR differences, the "
                                                   "importer's output next to the exact one, error heatmaps")
    pk.add_argument("--source", metavar="PT2", help="the PyTorch program the model was exported from "
                                                   "(torch.export.save, .pt2): each node against its call instead; "
                                                   "without a model, what OpenVINO's PyTorch frontend makes of "
                                                   "each call")
    pk.set_defaults(func=cmd_check)
    pc = sub.add_parser("convert", help="convert to a target, proving every resampling node")
    pc.add_argument("model", help="an ONNX model file, or a PyTorch program (.pt2: OpenVINO's PyTorch frontend)")
    pc.add_argument("--target", default=DEFAULT, choices=names(),
                    help="openvino (IR .xml/.bin, default), onnx (portable ONNX), tensorrt (TensorRT-ready ONNX)")
    pc.add_argument("-o", "--output_model", "--output-model", dest="output_model", default=None,
                    help="output file or folder (created when missing); default: <model stem>.xml in the current "
                         "folder (.portable.onnx / .tensorrt.onnx for the ONNX targets); a name without the "
                         "target's suffix gets it, as with ovc; another format's suffix is refused (--output, as "
                         "ovc's, names tensors, not a file)")
    pc.add_argument("--output", action="append", metavar="NAMES",
                    help="as ovc: the tensors the converted model keeps as its outputs (comma-separated or "
                         "repeated); the model is cut there (default: the model's own outputs)")
    _lowering_options(pc)
    pc.add_argument("--prefer", choices=["fastest", "builtin"], default=None,
                    help="builtin (the default): only OpenVINO's standard opsets wherever an exact in-graph form "
                         "exists (the model runs on any CPU, device and release); the extension library only for a "
                         "node with none; fastest: also the extension where a cost model calibrated on this machine "
                         "estimates it at least 1.25x faster (a library beside the model: CPU only, this OpenVINO "
                         "release) (OpenVINO)")
    pc.add_argument("--decompose-gridsample", action="store_true",
                    help="--target tensorrt: write every GridSample as standard ONNX ops (no IGridSampleLayer, no "
                         "plugin), where the decomposition is exact")
    pc.add_argument("--force", action="store_true", help="overwrite an existing output")
    pc.add_argument("--compress_to_fp16", "--compress-to-fp16", dest="compress_to_fp16", nargs="?", const=True,
                    default=False, type=_bool,
                    help="store weights in f16 as ovc does, keeping in f32 every constant of a resampling node "
                         "whose rounding would change results (default: False: everything f32)")
    pc.add_argument("--extension", action="append", metavar="LIB",
                    help="OpenVINO extension libraries for the model's other custom ops (comma-separated or "
                         "repeated, as ovc)")
    pc.add_argument("--json", action="store_true", help="JSON report on stdout")
    _input_option(pc)
    for kind in ("min", "opt", "max"):
        pc.add_argument(f"--trt-{kind}-shapes", nargs="+", metavar="NAME:[d0,...]",
                        help=f"(--target tensorrt) the {kind} shapes of TensorRT's optimization profile for the "
                             "printed trtexec / polygraphy commands, as Polygraphy spells them (default: from "
                             "--input: a length gives min = opt = max, a range 1..4 min 1, opt = max = 4)")
    pc.set_defaults(func=cmd_convert)
    pv = sub.add_parser("verify", help="run the source (onnxruntime + oracle) and the converted model, report "
                                       "errors; exit 1 when they differ")
    pv.add_argument("model", help="the source ONNX model file, or a PyTorch program (.pt2, torch.export.save): "
                                  "then the reference is its module in eager PyTorch")
    pv.add_argument("--target", default=DEFAULT, choices=names("verify"),
                    help="the converted model's runtime: openvino (OpenVINO CPU, default), onnx or tensorrt (the "
                         "converted ONNX on onnxruntime)")
    pv.add_argument("--converted", metavar="XML", help="the converted model to check (default: convert MODEL "
                                                        "with the same options as convert, in memory)")
    pv.add_argument("--extension", action="append", metavar="LIB",
                    help="an extra OpenVINO extension library for the converted model's other custom ops")
    _lowering_options(pv)
    _input_option(pv, fed=True)

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

    add_build_plugin(sub, _common)  # build-plugin: the TensorRT plugin library (tools/tensorrt.py)
    return p


def _json_error(args, err: dict) -> None:
    if getattr(args, "json", False):
        with contextlib.suppress(Exception):
            print(json.dumps({"ok": False, "error": err}, indent=1))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    setup(-1 if getattr(args, "quiet", False) else getattr(args, "verbose", 0))
    install_signal_handlers()
    try:
        try:
            with command_context(args):
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
        if signalled():  # another library's words for our interrupt (e.g. "could not convert"): not an error
            return signalled()
        _json_error(args, e.to_dict())
        # One line, capped for a terminal; -v and --json ask for the whole message (still escaped, one line).
        full = getattr(args, "verbose", 0) or getattr(args, "json", False)
        _stderr(f"resample-bridge: error: {e.line(20000) if full else e.line()}")
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): end quietly; flushing stdout again would raise once more.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130
    except Terminated as e:
        return int(e.code)
    except Exception as e:  # a bug, not bad input: still one line, with a way to get the traceback
        if signalled():
            return signalled()
        if os.environ.get("RESAMPLE_BRIDGE_DEBUG"):
            raise

        _json_error(args, {"message": f"internal error: {type(e).__name__}", "node": None, "field": None})
        _stderr(f"resample-bridge: internal error: {type(e).__name__}: {clip(without_source(first_line(str(e)[:2000])), 200)} "
                f"(set RESAMPLE_BRIDGE_DEBUG=1 for a traceback)")
        return 3


def _stderr(line: str) -> None:
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)
        sys.stderr.flush()


def finish(rc: int) -> None:
    """End the command: no child process left (``end_children``), then exit at once when other libraries'
    non-daemon threads would keep the interpreter waiting. OpenVINO's converter sends telemetry on such threads
    (without a network the interpreter waited out their timeouts at exit: check on a 50-node model, 2.7 s of
    work, 7.2 s to exit); everything of ours is finished and flushed by then."""
    import logging
    import threading

    end_children()
    waiting = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if not waiting or "openvino_telemetry" not in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(rc)


def end_children() -> None:
    """Kill the multiprocessing children still running (OpenVINO's telemetry senders): killed, not
    terminated, so that none prints a traceback of its own on our stderr."""
    if "multiprocessing" not in sys.modules:
        return
    import multiprocessing

    for p in multiprocessing.active_children():
        with contextlib.suppress(Exception):
            p.kill()
            p.join(1.0)


def entry() -> None:
    """``python -m resample_bridge.tools.cli``; console scripts installed before the entry moved to ``command``."""
    status = main()
    finish(status)
    exit_status_kept()
    sys.exit(status)


if __name__ == "__main__":
    entry()
