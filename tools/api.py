"""The Python API (imported as ``resample_bridge.api``): the CLI's verbs as functions returning typed records.

    from resample_bridge import api

    rows = api.inspect("model.onnx")                  # [InspectRow]: the IR of every resampling node
    result = api.check("model.onnx")                  # CheckResult: what OpenVINO's own importer does, per node
    conv = api.convert("model.onnx", "out/model.xml") # Conversion: files written, one NodeRecord per node
    report = api.verify("model.onnx", converted=conv.output)  # VerifyResult: errors per output and per node

Saving is exact: an ``openvino.Model`` converted here holds tap tables and coordinates as f32 constants, and
``openvino.save_model`` compresses every constant to f16 by default, which rounds them (errors around 1e-3
instead of 1e-7). ``convert`` and ``save`` never do that; ``compress_to_fp16=True`` compresses only the
constants whose rounding changes no value. Call ``openvino.save_model(model, path, compress_to_fp16=False)`` if
you save a model yourself.

Every function takes a path or an ``onnx.ModelProto`` and ``convention`` (``"spec"``, the default, or
``"reference"``: see ``--onnx-convention``). Bad input raises ``BridgeError`` (``.node``, ``.field``,
``.message``). openvino / onnxruntime are imported when a function needs them.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any

from ..lowering.passes import ConvertOptions, NodeRecord
from ..semantics.errors import BridgeError
from .api_terms import api_terms
from .check_source import SourceCheck, check_source
from .check_torch_openvino import check_openvino_frontend
from ..lowering.artifacts import check_output_path
from ..lowering.openvino.write import save as save_openvino
from ..semantics import text
from ..translate.onnx import DEFAULT_CONVENTION, onnx_convention, parse_model
from .convert import convert_openvino_model, output_path, reap_stale, remove_created
from .convert_torch import convert_torch, torch_source
from .verify_torch import verify_torch
from ..lowering.openvino.torch_source import is_torch_source
from .gate import importer_outcome, importer_verdict, summary
from .inputs import prepared
from .logs import step
from .report import write_check_report
from .targets import convert_file, entry, names, refuse_options
from .verify_openvino import verify_openvino

__all__ = ["inspect", "check", "convert", "convert_model", "save", "verify", "InspectRow", "CheckRow",
           "CheckResult", "Conversion", "ErrorStats", "VerifyResult", "NodeRecord", "BridgeError"]


class ParameterError(BridgeError, TypeError):
    """A keyword a function does not take: a TypeError as Python raises it, and a BridgeError as all bad input."""


# ----------------------------------------------------------------------------------------------------------
# Typed results


@dataclass(frozen=True)
class InspectRow:
    """One resampling node's canonical semantics."""

    name: str
    op: str
    ir: Any  # ResizeIR / GridSampleIR / DeformConvIR (semantics.ir)
    text: tuple[str, ...]  # the IR in words, one line per axis
    ties: dict  # axis -> output indices on a rounding boundary


@dataclass(frozen=True)
class CheckRow:
    """What the target's own importer does with one node, and the rung resample-bridge takes instead."""

    name: str
    op: str
    importer: str  # "exact", "silently different", "refused", "exact only if" (the row's words)
    outcome: str  # the same as one of "exact", "different", "refused", "conditional", "unproven" (no verdict
    #               provable: dynamic shapes without a concrete one, unknown rank; the reason says why)
    fields: tuple[str, ...]  # "field: the model's value vs the importer's"
    max_error: float | None  # on a probe input, where the importer's model ran
    reason: str  # the importer's own message when it refuses
    conditions: tuple[str, ...]  # for "exact only if"
    rung: int | None  # resample-bridge's rung; None: refused
    rung_name: str
    rung_reason: str
    raw: dict = field(repr=False, compare=False, default_factory=dict)  # the row as --json prints it


@dataclass(frozen=True)
class CheckResult:
    target: str
    rows: tuple[CheckRow, ...]
    summary: dict  # counts per outcome and the gate, as ``check --json`` prints them

    @property
    def passed(self) -> bool:
        """The CI gate (``check`` exits 1 when False): no node the importer gets silently different."""
        return bool(self.summary.get("gate", {}).get("passed", True))


@dataclass(frozen=True)
class Conversion:
    """What ``convert`` wrote: ``output`` (and ``files``: xml, bin, extension library) and one record per
    resampling node."""

    target: str
    output: str
    files: dict
    records: tuple[NodeRecord, ...]
    kept_f32: tuple[str, ...] = ()  # under compress_to_fp16: constants left in f32 because f16 changes them
    extra: dict = field(default_factory=dict, repr=False)  # the report as ``convert --json`` prints it (TensorRT:
    # plugins, what is unverified, the trtexec / polygraphy commands)

    @property
    def extension(self) -> str | None:
        """The resample-bridge extension library beside the model, when a node needs it (load it with
        ``openvino.Core().add_extension(path)`` before ``read_model``)."""
        return self.files.get("extension")


@dataclass(frozen=True)
class ErrorStats:
    """Errors of one model output or one resampling node (``raw`` has mean / median / p99 and the worst
    element too)."""

    name: str
    ok: bool | None  # None: not judged (``not_judged`` says why)
    max_abs: float | None  # None where there is nothing to compare (see ``shape_mismatch``)
    max_rel: float | None
    shape: tuple | None = None  # of the expected output
    shape_mismatch: str | None = None
    not_judged: str | None = None
    raw: dict = field(repr=False, compare=False, default_factory=dict)


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    outputs: tuple[ErrorStats, ...]  # the converted model vs onnxruntime
    nodes: tuple[ErrorStats, ...]  # each resampling node vs the oracle on the same inputs
    raw: dict = field(repr=False, compare=False, default_factory=dict)  # everything verify reports

    @property
    def not_judged(self) -> int:
        return sum(o.ok is None for o in self.outputs)


# ----------------------------------------------------------------------------------------------------------
# Model arguments


@contextlib.contextmanager
def _model_file(model, convention: str | None):
    """A path for ``model`` (written to a temporary file when it is a ModelProto), under ``convention``."""

    with onnx_convention(convention or DEFAULT_CONVENTION):
        if isinstance(model, (str, os.PathLike)):
            yield os.fspath(model)
            return
        import onnx

        if not isinstance(model, onnx.ModelProto):
            raise BridgeError(f"expected a path or an onnx.ModelProto, got {type(model).__name__}", field="model")
        with tempfile.TemporaryDirectory(prefix="resample-bridge-") as d:
            path = os.path.join(d, (model.graph.name or "model") + ".onnx")
            onnx.save(model, path)
            yield path


# ----------------------------------------------------------------------------------------------------------
# The verbs


@api_terms
def inspect(model, *, convention: str | None = None, input_shapes: dict | None = None) -> list[InspectRow]:
    """The canonical semantics of every resampling node, in graph order (``input_shapes`` as :func:`check`'s)."""

    with _model_file(model, convention) as given, \
            (prepared(given, input_shapes) if input_shapes else contextlib.nullcontext((given, None))) as (path, _):
        return [InspectRow(name, ir.origin, ir, tuple(text.describe(ir)), dict(text.ties(ir)))
                for name, ir in parse_model(path)]


@api_terms
def check(model, *, target: str = "openvino", convention: str | None = None,
          fail_on: tuple[str, ...] = ("different", "unproven"), input_shapes: dict | None = None,
          report: str | None = None, progress=None, source=None, example_inputs=None):
    """Per resampling node, what the target's own importer does with it (OpenVINO: converted and run on a
    probe; TensorRT: predicted from onnx-tensorrt's rules) and the rung resample-bridge takes instead.
    ``input_shapes``: as ovc's ``--input``; ``report``: a folder for the HTML report (OpenVINO); ``progress``:
    called as ``progress(done, total)`` while nodes are judged (the CLI's progress lines).

    ``source`` (a .pt2 path, a torch.export program, or an nn.Module with ``example_inputs``): instead, each
    node against the PyTorch call it was exported from (``tools/check_source.py``), a ``SourceCheck``; with
    ``model`` None, each call through OpenVINO's own PyTorch frontend (``tools/check_torch_openvino.py``)."""
    if source is not None:
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__
        if model is None:
            rows = check_openvino_frontend(source, example_inputs)
            return SourceCheck(name, tuple(rows), tuple(fail_on), against="OpenVINO")
        with _model_file(model, convention) as path:
            rows = check_source(path, source, example_inputs, input_shapes)
        return SourceCheck(name, tuple(rows), tuple(fail_on))

    e = entry(target, "check")
    if report and not e.report:
        raise BridgeError(f"--report draws OpenVINO CPU runs; it needs --target {' / '.join(names('report'))}",
                          field="report")
    with _model_file(model, convention) as given, prepared(given, input_shapes) as (path, _):
        rows = e.check(path, progress=progress)
        gate = summary(rows, target, e.importer, tuple(fail_on))
        if report:
            import sys

            print(f"report: {write_check_report(report, path, rows, summary=gate)}", file=sys.stderr)
    typed = []
    for r in rows:
        v, ours = importer_verdict(r, e.importer), r.get("resample_bridge") or {}
        typed.append(CheckRow(
            name=r.get("name", ""), op=r.get("op", ""), importer=v.get("verdict", ""),
            outcome=importer_outcome(r, e.importer),
            fields=tuple(map(str, v.get("fields", ()))), max_error=v.get("max_error"),
            reason=str(v.get("reason", "")), conditions=tuple(map(str, v.get("conditions", ()))),
            rung=ours.get("rung"), rung_name=str(ours.get("rung_name", "refused")),
            rung_reason=str(ours.get("reason", "")), raw=r))
    return CheckResult(target, tuple(typed), gate)


@api_terms
def convert_model(model, *, fallback: str = "decompose", strict: bool = False, extensions=(),
                  convention: str | None = None, prefer: str | None = None, input_shapes: dict | None = None,
                  outputs=(), example_inputs=None):
    """(``openvino.Model``, [NodeRecord]) in memory, every resampling node lowered and proven (``prefer``,
    ``input_shapes`` and ``outputs`` as :func:`convert`; ``model`` a PyTorch program too, as there). Save it with
    :func:`save`, not with ``openvino.save_model``'s defaults (they round the tap tables to f16)."""

    if is_torch_source(model):
        source = torch_source(model, example_inputs, input_shapes=input_shapes, outputs=outputs)
        return convert_openvino_model(source, fallback=fallback, strict=strict, extensions=extensions, prefer=prefer)
    with _model_file(model, convention) as given, prepared(given, input_shapes, outputs) as (path, _):
        return convert_openvino_model(path, fallback=fallback, strict=strict, extensions=extensions,
                                      prefer=prefer)


@api_terms
def save(ov_model, records, output: str, *, force: bool = False, compress_to_fp16: bool = False,
         extensions=()) -> Conversion:
    """Write a model from :func:`convert_model` to ``output`` (.xml, the .bin beside it, the extension library
    when a node needs it): no f16 rounding of what must stay exact, re-read and proven from disk, renamed
    into place only then."""

    out = check_output_path(os.fspath(output), force, ".xml", (".bin",))
    files, kept = save_openvino(ov_model, list(records), out, force=force, extensions=extensions,
                                compress_to_fp16=compress_to_fp16)
    return Conversion("openvino", out, dict(files), tuple(records), tuple(kept))


@api_terms
def convert(model, output: str | None = None, *, target: str = "openvino", fallback: str = "decompose",
            strict: bool = False, force: bool = False, compress_to_fp16: bool = False, extensions=(),
            convention: str | None = None, prefer: str | None = None, allow_conditional: bool | None = None,
            input_shapes: dict | None = None, outputs=(), source: str | None = None,
            trt_shapes: dict | None = None, decompose_gridsample: bool = False, example_inputs=None) -> Conversion:
    """Convert and write, as ``resample-bridge convert``: ``output`` None writes ``<model stem>.xml`` (OpenVINO)
    in the current folder; a folder is accepted and missing folders are created. ``target``: "openvino"
    (OpenVINO IR), "onnx" (portable ONNX, plain ops only) or "tensorrt" (TensorRT-ready ONNX). ``prefer``
    (OpenVINO): "builtin" (None, the default: only OpenVINO's standard opsets wherever an exact in-graph form
    exists; the extension only for a node with none) or "fastest" (also the extension where the cost model
    estimates it at least 1.25x faster: a library beside the model, CPU only, this OpenVINO release).
    ``input_shapes``: {input name: shape} fixed before anything else (ovc's ``--input``); ``outputs``: tensor
    names the converted model keeps as its outputs (ovc's ``--output``); ``source``: the user's model where a
    follow-up command names it (default: ``model``); ``trt_shapes`` (TensorRT): {input name: {"min" | "opt" |
    "max": [d0, ...]}}, the optimization profile the printed trtexec / polygraphy commands carry (the fixed
    ``input_shapes`` fill it where it names no input); ``decompose_gridsample`` (TensorRT): every GridSample as
    standard ONNX ops where that is exact.

    ``model`` may also be a PyTorch program: a .pt2 file (``torch.export.save``), an ExportedProgram, or an
    nn.Module with ``example_inputs``: converted through OpenVINO's PyTorch frontend with every resampling call on
    resample-bridge's ladder, and proven against the module in eager PyTorch (``tools/convert_torch.py``)."""

    if entry(target).input_profile and input_shapes:
        fixed = {n: {k: list(d) for k in ("min", "opt", "max")} for n, d in input_shapes.items() if d is not None}
        trt_shapes = {**fixed, **(trt_shapes or {})}
    options = ConvertOptions(trt_shapes=trt_shapes or None, fallback=fallback, strict=strict, allow_conditional=allow_conditional, prefer=prefer,
                             force=force, compress_to_fp16=compress_to_fp16, extensions=tuple(extensions or ()),
                             source=source, decompose_gridsample=decompose_gridsample)
    refuse_options(target, options)
    if is_torch_source(model):
        out, written, report = convert_torch(model, output, options, target=target, example_inputs=example_inputs,
                                             input_shapes=input_shapes, outputs=outputs)
        return Conversion(target, out, dict(written.files), tuple(written.records),
                          tuple(written.report.get("kept_f32", ())), extra=report)
    stem_of = model if isinstance(model, (str, os.PathLike)) else "model"
    out, created = output_path(os.fspath(stem_of), None if output is None else os.fspath(output), target, force)
    if isinstance(model, (str, os.PathLike)) and os.path.exists(out) and os.path.samefile(model, out):
        remove_created(created)
        raise BridgeError(f"{out} is the model being converted; --force never overwrites the source (choose "
                          "another -o)", field="output")
    reap_stale(os.path.dirname(out))
    try:
        with _model_file(model, convention) as given, prepared(given, input_shapes, outputs) as (path, _):
            if options.source is None:
                options = replace(options, source=os.fspath(model) if isinstance(model, (str, os.PathLike))
                                  else path)
            written, report = convert_file(target, path, out, options, step=step)
    except BaseException:
        remove_created(created)
        raise
    return Conversion(target, out, dict(written.files), tuple(written.records),
                      tuple(written.report.get("kept_f32", ())), extra=report)


@api_terms
def verify(model, converted: str | None = None, *, target: str = "openvino", inputs: dict | None = None,
           fallback: str = "decompose", strict: bool = False, convention: str | None = None,
           atol: float | dict | None = None, rtol: float | dict | None = None, **options) -> VerifyResult:
    """Run the source (onnxruntime; each resampling node also through the oracle) and the converted model
    (``target`` "openvino": OpenVINO CPU in f32; "onnx" / "tensorrt": the converted ONNX on onnxruntime, a
    TensorRT plugin node refused) on the same inputs. ``converted``: the file ``convert`` wrote (an .xml with
    its extension library beside it, or an .onnx); None converts ``model`` first with ``fallback`` /
    ``strict``. ``inputs``: arrays by graph input name (default: seeded inputs chosen by what reads them).
    ``atol`` / ``rtol``: a tolerance for every output (a float) or per output / node output tensor ({name:
    tolerance}, "" for the rest), as ``--atol`` / ``--rtol``: meant to be stricter than the defaults (1e-5 /
    1e-4 for f32 outputs, each node the float32 error bound); a looser one is said beside the verdict
    (``raw["looser"]``). Further ``options``: ``seed``, ``shapes``, ``val_range``, ``extensions``,
    ``precision``, ``error_stat``, ``validate``, ``fail_fast``, ``allow_conditional`` (as verify's flags).
    ``model`` may be a PyTorch program (a .pt2, an ExportedProgram, a module with ``example_inputs``): then the
    reference is its module in eager PyTorch, on seeded inputs (``tools/verify_torch.py``)."""
    import inspect as _inspect

    entry(target, "verify")
    if is_torch_source(model):
        return _verify_torch(model, converted, target=target, inputs=inputs, fallback=fallback, strict=strict,
                             atol=atol, rtol=rtol, **options)
    allowed = [k for k in _inspect.signature(verify_openvino).parameters
               if k not in ("model_path", "inputs", "fallback", "strict", "target", "converted", "atol", "rtol")]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise ParameterError(f"verify() got an unexpected keyword argument {unknown[0]!r}; it takes model, "
                             f"converted, target, inputs, fallback, strict, convention, atol, rtol, "
                             f"{', '.join(allowed)}", field=unknown[0])
    kw = {"inputs": inputs, "fallback": fallback, "strict": strict, "target": target,
          "atol": _per_name(atol, "atol"), "rtol": _per_name(rtol, "rtol"),
          "converted": None if converted is None else os.fspath(converted), **options}
    with _model_file(model, convention) as path:
        rep = verify_openvino(path, **kw)
    return VerifyResult(bool(rep.get("ok")), tuple(_stats(r) for r in rep.get("outputs", [])),
                        tuple(_stats(r) for r in rep.get("nodes", [])), rep)


def _verify_torch(model, converted, *, target: str, inputs, atol, rtol, **options) -> VerifyResult:
    """``verify`` of a PyTorch program (a .pt2 path, an ExportedProgram, or a module with ``example_inputs``):
    the converted model against the module in eager PyTorch (``tools/verify_torch.py``)."""
    import inspect as _inspect

    if target != "openvino":
        raise BridgeError(f"a PyTorch program is verified on target openvino only, not {target}", field="target")
    for name, value in (("inputs", inputs), ("atol", atol), ("rtol", rtol)):
        if value is not None:
            raise BridgeError(f"{name} applies to an ONNX source; a PyTorch program is run on seeded inputs of its "
                              f"example shape and dynamic lengths", field=name)
    allowed = [k for k in _inspect.signature(verify_torch).parameters if k not in ("model", "converted")]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise ParameterError(f"verify() of a PyTorch program got an unexpected keyword argument {unknown[0]!r}; it "
                             f"takes model, converted, {', '.join(allowed)}", field=unknown[0])
    rep = verify_torch(model, converted=None if converted is None else os.fspath(converted), **options)
    return VerifyResult(bool(rep.get("ok")), tuple(_stats(r) for r in rep.get("outputs", [])),
                        tuple(_stats(r) for r in rep.get("nodes", [])), rep)


def _per_name(tol, name: str) -> dict | None:
    """A tolerance as verify's {tensor name or "": value}: a float is for every tensor."""
    if tol is None or isinstance(tol, dict):
        return tol
    try:
        value = float(tol)
    except (TypeError, ValueError):
        raise BridgeError(f"{name} must be a number or {{tensor name: number}}, not {type(tol).__name__}",
                          field=name) from None
    if not math.isfinite(value) or value < 0:
        raise BridgeError(f"{name} must be a finite number >= 0, not {tol!r}", field=name)
    return {"": value}


def _stats(r: dict) -> ErrorStats:
    def num(v):
        return None if v is None or not math.isfinite(v) else float(v)

    shape = r.get("shape")
    return ErrorStats(name=str(r.get("name", "")), ok=r.get("ok"), max_abs=num(r.get("max_abs")),
                      max_rel=num(r.get("max_rel")), shape=tuple(shape) if isinstance(shape, (list, tuple)) else None,
                      shape_mismatch=r.get("shape_mismatch"), not_judged=r.get("not_judged"), raw=r)
