"""The registry of targets: the one place the CLI and the API look a target up.

A target is its lowering package (``lowering/<name>/``: a ``passes.Target`` that lowers, proves and writes) plus,
here, what the verbs add to it: the text ``convert`` prints, a follow-up after writing (TensorRT: how the model
becomes an engine), and, where the target has an importer of its own, ``check`` (what that importer does with
each node) and ``verify`` (running the written model). A new target is its own folder and one line below (or,
outside the package, one ``register`` call: the toy target of the tests is such a target and edits nothing here).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Callable

from ..lowering.passes import CUSTOM, ConvertOptions, Target, Written
from ..lowering.record_format import format_records, summary_counts
from ..lowering.onnx.target import OnnxTarget, format_convert_onnx
from ..lowering.openvino.target import OPENVINO
from ..lowering.tensorrt.target import TARGET
from ..semantics.errors import BridgeError, clip
from . import check_openvino, check_tensorrt, run_openvino
from .finish_tensorrt import finish, format_convert
from .verify_onnx import ONNX_NAME, TENSORRT_NAME, run_converted_onnx, tensorrt_note


@dataclass(frozen=True)
class Runner:
    """How ``verify`` runs a target's converted model. ``name``: the runtime, as verify's lines name it;
    ``run(source, path, feeds, observe, *, target, converted, extensions, precision, convert_file, fallback,
    strict, allow_conditional) -> (every observed tensor by name, the conversion's rung lines)`` (``source``:
    the ONNX model at ``path``; ``convert_file(path, out, options)``: the registry's conversion for the target);
    ``takes``: verify's options only this runner honours (``refuse_verify_options``); ``note() -> str``: what
    the report says about every run (None: nothing)."""

    name: str
    run: Callable
    takes: frozenset = frozenset()
    note: Callable[[], str] | None = None


@dataclass(frozen=True)
class Entry:
    """One target as the verbs see it. ``check(path, progress) -> rows`` and ``format_check(rows) -> text``:
    what the target's own importer does (None: no such verb); ``importer``: the key of check's rows that holds
    that importer's verdict (``gate``); ``check_requires``: the modules check needs; ``verify``: how ``verify``
    runs the written model (a ``Runner``: OpenVINO CPU, ``run_openvino``; the ONNX targets on onnxruntime,
    ``verify_onnx``); ``report``: ``--report`` pages; ``input_profile``: the lengths fixed by ``--input`` fill the
    target's optimization profile (``trt_shapes``) where it names no input; ``torch_source``: how the target
    converts a PyTorch program (None: it converts ONNX only)."""

    name: str
    target: Callable[[], Target]
    describe: Callable[..., str] = None  # (records, the report ``convert --json`` prints, quiet=) -> convert's
    #                                      text; quiet (``-q``): without the per-node lines; None: the records'
    #                                      lines and the files written (``describe_written``)
    follow_up: Callable[[Written, ConvertOptions], dict] | None = None
    check: Callable | None = None
    format_check: Callable | None = None
    importer: str | None = None
    check_requires: tuple[str, ...] = ()
    verify: Runner | str | None = None  # a Runner: verify runs the written model; a string: why it cannot here
    verify_requires: tuple[str, ...] = ("onnxruntime",)  # the modules verify needs (onnxruntime runs the source)
    report: bool = False
    input_profile: bool = False
    torch_source: str | None = None

    def lowering(self) -> Target:
        return self.target()

    def text(self, records, report: dict, quiet: bool = False) -> str:
        return (self.describe or describe_written)(records, report, quiet=quiet)


def describe_written(records, rep: dict, quiet: bool = False) -> str:
    """What a target without words of its own prints after ``convert``: the records (or their summary) and
    the files it wrote."""

    lines = [f"summary: {summary_counts(records)}" if quiet and records else format_records(records)]
    lines += [f"[ SUCCESS ] {kind} file: {path}" for kind, path in rep.get("files", {"output": rep["output"]}).items()]
    return "\n".join(x for x in lines if x)


# -- what each target adds for the verbs ----------------------------------------------------------------------


def _openvino_target():
    return OPENVINO


def _openvino_describe(records, rep: dict, quiet: bool = False) -> str:
    files, out = rep["files"], rep["output"]
    lines = [f"summary: {summary_counts(records)}" if quiet and records else format_records(records)]
    if rep["compress_to_fp16"]:
        lines.append(f"compress_to_fp16: {len(rep['kept_f32'])} constants of resampling nodes kept in f32 "
                     f"(their f16 rounding would change results); the written model proven again from disk")
    if any(r.rung == CUSTOM for r in records):
        import openvino as ov

        lib = files["extension"]
        needs = ", ".join(r.node for r in records if r.rung == CUSTOM)
        lines.append(f"uses the resample-bridge extension {lib} (for {clip(needs, 160)}): it runs on CPU only and "
                     f"loads only into OpenVINO {ov.get_version().split('-')[0]}; load it first: "
                     f"core = openvino.Core(); core.add_extension({lib!r}); core.read_model({out!r})")
    for node, g in rep.get("grid_f32", {}).items():
        if not g["ops"] and not g["stops"]:
            continue  # nothing computes those inputs in the graph (a graph input, a shape): nothing was kept
        lines.append(f"{clip(node, 80)}: {g['input']} producer kept in f32: {g['ops']} ops" + (
            f"; {', '.join(g['stops'])} and above stay at the model's precision, as the importer's"
            if g["stops"] else ""))
    if rep.get("index_arithmetic"):
        lines.append(f"index arithmetic of the model's own (from shapes): {rep['index_arithmetic']} (OpenVINO's "
                     "Divide computes a * (1 / b); its bf16 default would round indices)")
    if records:
        lines.append("proven at OpenVINO's f32 inference precision (INFERENCE_PRECISION_HINT=f32); at its bf16 / f16 "
                     "defaults values may round: verify --precision bf16 judges that")
    lines.append(f"[ SUCCESS ] XML file: {files['xml']}")
    lines.append(f"[ SUCCESS ] BIN file: {files['bin']}")
    return "\n".join(lines)


def _openvino_check(path: str, progress=None) -> list[dict]:
    return check_openvino.check_openvino(path, progress=progress)


def _openvino_format_check(rows: list[dict]) -> str:
    return check_openvino.format_check(rows)


def _onnx_target():
    return OnnxTarget()


def _onnx_describe(records, rep: dict, quiet: bool = False) -> str:
    lines = format_convert_onnx(rep).split("\n")[len(rep["lines"]) if quiet else 0:]
    return "\n".join(lines) + f"\n[ SUCCESS ] ONNX file: {rep['output']}"


def _tensorrt_target():
    return TARGET


def _tensorrt_describe(records, rep: dict, quiet: bool = False) -> str:
    return format_convert(rep, quiet=quiet) + f"\n[ SUCCESS ] ONNX file: {rep['output']}"


def _tensorrt_follow_up(written: Written, options: ConvertOptions) -> dict:
    """How the written model becomes an engine: built here where TensorRT imports, else the trtexec /
    polygraphy commands (polygraphy compares against ``options.source``, the user's model)."""

    source = os.path.abspath(options.source) if isinstance(options.source, (str, os.PathLike)) else None
    return finish(written.output, written.report["plugin_library"] is not None, source=source,
                  trt_shapes=options.trt_shapes)


def _tensorrt_check(path: str, progress=None) -> list[dict]:
    return check_tensorrt.check_rows(path)


def _tensorrt_format_check(rows: list[dict]) -> str:
    return check_tensorrt.format_check(rows)


TARGETS = {e.name: e for e in (
    Entry("openvino", _openvino_target, _openvino_describe, check=_openvino_check,
          format_check=_openvino_format_check, importer="openvino", check_requires=("openvino",),
          verify=Runner(run_openvino.NAME, run_openvino.openvino_outputs, run_openvino.TAKES),
          verify_requires=("openvino", "onnxruntime"), report=True,
          torch_source="through OpenVINO's PyTorch frontend"),
    Entry("onnx", _onnx_target, _onnx_describe, verify=Runner(ONNX_NAME, run_converted_onnx)),
    # verify runs the TensorRT-ready ONNX on onnxruntime (TensorRT is not installable here; verify_onnx says so).
    Entry("tensorrt", _tensorrt_target, _tensorrt_describe, follow_up=_tensorrt_follow_up, check=_tensorrt_check,
          format_check=_tensorrt_format_check, importer="tensorrt",
          verify=Runner(TENSORRT_NAME, run_converted_onnx, note=tensorrt_note), input_profile=True),
)}
DEFAULT = "openvino"


def register(e: Entry) -> Entry:
    """Add a target (a package outside this one, or a test's): the one line a new target needs."""
    if e.name in TARGETS:
        raise BridgeError(f"target {e.name!r} is already registered", field="target")
    TARGETS[e.name] = e
    return e


def names(verb: str = "convert") -> list[str]:
    """The targets a verb takes (``--target``'s choices)."""
    if verb == "convert":
        return list(TARGETS)
    return [n for n, e in TARGETS.items() if getattr(e, verb)]


def entry(name: str, verb: str = "convert") -> Entry:
    """The registry's entry of ``name``; BridgeError when no such target takes ``verb`` (or, for a verb the
    target offers but cannot run here, why)."""
    e = TARGETS.get(name)
    if e is not None and isinstance(getattr(e, verb, None), str):
        raise BridgeError(getattr(e, verb), field="target")
    if e is None or (verb != "convert" and not getattr(e, verb)):
        expected = names(verb)
        listed = f"{', '.join(expected[:-1])} or {expected[-1]}" if len(expected) > 1 else expected[0]
        raise BridgeError(f"unknown target {name!r}; expected {listed}", field="target")
    return e


# The command-line flag of an option, where its name is not the flag's.
_FLAGS = {"extensions": "extension", "allow_conditional": "allow-conditional", "trt_shapes": "trt-*-shapes",
          "decompose_gridsample": "decompose-gridsample"}


def refuse_options(name: str, options: ConvertOptions) -> None:
    """BridgeError naming the first option given that target ``name`` does not take (and the targets that do)."""
    target = TARGETS[name].lowering()
    for option, unset in ConvertOptions.OPTIONAL.items():
        if option not in target.takes and getattr(options, option) != unset:
            _refuse(option, [n for n, e in TARGETS.items() if option in e.lowering().takes])


def refuse_verify_options(name: str, given: dict) -> None:
    """BridgeError naming the first of verify's runner options set in ``given`` ({option: whether it is set})
    that target ``name``'s runner does not take (and the targets whose runner does)."""
    for option, on in given.items():
        if on and option not in TARGETS[name].verify.takes:
            _refuse(option, [n for n, e in TARGETS.items()
                             if isinstance(e.verify, Runner) and option in e.verify.takes])


def _refuse(option: str, taking: list) -> None:
    flag = _FLAGS.get(option, option)
    raise BridgeError(f"--{flag} applies to --target {' / '.join(taking)} only", field=flag)


def lower(name: str, path: str, options: ConvertOptions = ConvertOptions(), step=None):
    """The in-memory conversion (nothing written): target ``name``'s lowered model, every node proven and the
    whole model checked against the source (``passes.Target.lower_file``)."""
    refuse_options(name, options)
    t = entry(name).lowering()
    with (step(t.steps[0]) if step is not None and t.steps[0] else contextlib.nullcontext()):
        return t.lower_file(path, options)


def convert_file(name: str, path: str, out: str, options: ConvertOptions = ConvertOptions(),
                 step=None, follow_up: bool = True) -> tuple[Written, dict]:
    """The one convert-and-write path: target ``name``'s ``convert_file`` (``out`` checked first; lowered,
    proven, written and proven again from disk), then its follow-up (``follow_up`` False: none, for a
    conversion that is only read back, as verify's). Returns (what was written, the report
    ``convert --json`` prints: the target's report and the follow-up's)."""
    e = entry(name)
    refuse_options(name, options)
    written = e.lowering().convert_file(path, out, options, step=step)
    follow = e.follow_up(written, options) if e.follow_up and follow_up else {}
    return written, {**written.report, **follow}


__all__ = ["Runner", "Entry", "TARGETS", "DEFAULT", "names", "entry", "register", "refuse_options",
           "refuse_verify_options", "lower", "convert_file", "describe_written"]
