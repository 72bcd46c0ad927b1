"""``verify model.pt2`` (issue 44): a PyTorch program's converted model (``--converted OUT.xml``, or converted here
through OpenVINO's PyTorch frontend as ``convert`` does) run on OpenVINO CPU at ``--precision`` against the
program's module in eager PyTorch, in the report and verdict format of ``verify`` for an ONNX source.

Model outputs: seeded inputs at the example shape and the other lengths of dynamic axes
(``torch_model_check.probes``), each output within the whole-model tolerance at f32 or the reduced-precision
tolerance at bf16 / f16 (``tolerance``), as verify judges an ONNX source. Resampling calls: at the example shape,
each call's converted output against the oracle on the converted model's own inputs of that call (the float32
error bound, or the reduced bound at bf16 / f16: values may round, an index may not move); the call in eager
PyTorch against the same oracle says whether the call was read right. A converted model that computes another
call (nearest where the module has bilinear) fails both ways.
"""

from __future__ import annotations

import numpy as np

from ..lowering.compiled import openvino_extension
from ..lowering.openvino.graph import F32
from ..lowering.openvino.torch_source import load_source, runner
from ..lowering.passes import CUSTOM
from ..lowering.torch_model_check import _call_arrays, _resize_sizes, eager, node_values, oracle_agrees, probes
from ..semantics.compare import against_oracle, compare, within_bound
from ..semantics.errors import BridgeError, clip
from ..semantics.reference import run as oracle
from ..semantics.tolerance import PRECISIONS, float_bound, model_tolerance, precision_tolerance, reduced_bound
from ..translate.torch import user_inputs
from .cli_common import allow_conditional as conditional_of
from .convert import convert_openvino_model
from .run_openvino import _ov_reason, _read_converted, precision_run
from .verify_openvino import _verdict, format_verify
from .verify_stats import finish_row

REFERENCE = "the module in eager PyTorch"


def verify_torch(model, *, converted: str | None = None, example_inputs=None, fallback: str = "decompose",
                 strict: bool = False, allow_conditional: bool | None = None, extensions=(), seed: int = 0,
                 precision: str = "f32", prefer: str | None = None) -> dict:
    """The report of ``verify_openvino``'s shape for a PyTorch source (``model``: a .pt2 path, an
    ExportedProgram, or a module with ``example_inputs``); ``converted``: the user's .xml (default: converted
    here with ``fallback`` / ``strict`` / ``allow_conditional`` / ``prefer``)."""
    if precision not in PRECISIONS:
        raise BridgeError(f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}",
                          field="precision")
    precision, precision_note = precision_run(precision)
    source = load_source(model, example_inputs)
    core, ov_model, rungs = _converted(source, converted, extensions, fallback=fallback, strict=strict,
                                       allow_conditional=allow_conditional, prefer=prefer)
    run = runner(_compiler(core, precision), ov_model)
    shots = probes(source.program, seed)
    report: dict = {"inputs": [], "outputs": [], "nodes": [], "rungs": rungs, "converted": converted,
                    "target": "openvino", "precision": precision, "reference": REFERENCE,
                    **({"precision_note": precision_note} if precision_note else {})}
    for k, (at, arrays) in enumerate(shots):
        want = eager(source.program, arrays)
        if want is None:
            if k == 0:
                raise BridgeError(f"PyTorch cannot run the program at its example shape {at}", field="model")
            continue
        if k == 0:
            report["inputs"] = [{"name": n.name, "dtype": str(a.dtype), "shape": list(a.shape), "source": "seeded"}
                                for n, a in zip(user_inputs(source.program), arrays)]
        got, _ = run(arrays, [])
        if len(got) != len(want):
            raise BridgeError(f"the converted model has {len(got)} outputs, the module {len(want)}",
                              field="converted")
        for i, (g, w) in enumerate(zip(got, want)):
            tol = precision_tolerance(precision) or model_tolerance(w.dtype)
            row = finish_row(compare(np.asarray(g), w, *tol).to_dict(), g, w)
            report["outputs"].append({**row, "name": f"output {i}" + (f" at {at}" if len(shots) > 1 else "")})
        if k == 0:
            report["nodes"] = _call_rows(source, arrays, run, precision)
    return _verdict(report)


def _converted(source, converted, extensions, **options):
    """(Core, openvino.Model, the conversion's rung lines): the user's .xml, or converted here."""
    import openvino as ov

    if converted is not None:
        return (*_read_converted(converted, extensions), [])
    ov_model, records = convert_openvino_model(source, extensions=extensions, **options)
    core = ov.Core()
    if any(r.rung == CUSTOM for r in records):
        core.add_extension(openvino_extension())
    for lib in extensions:
        core.add_extension(lib)
    return core, ov_model, [r.summary() for r in records]


def _compiler(core, precision: str):
    def compile_model(m):
        try:
            return core.compile_model(m, "CPU", {**F32, "INFERENCE_PRECISION_HINT": precision})
        except Exception as e:  # noqa: BLE001 -- the plugin's refusal, in its own words
            raise BridgeError(f"OpenVINO cannot compile the converted model: {_ov_reason(e)}",
                              field="converted") from None
    return compile_model


def _call_rows(source, arrays: list, run, precision: str) -> list[dict]:
    """One row per resampling call: its converted output against the oracle on the converted model's own
    inputs of the call (those the model exposes; placeholders and weights are the same arrays)."""
    gm = source.kept.module()
    eager_values = node_values(gm, arrays)
    nodes = {n.name: n for n in gm.graph.nodes}
    observe = sorted({f"{n}:0" for c in source.calls if c.name in nodes
                      for n in [c.name, *(a.name for a in nodes[c.name].all_input_nodes)]})
    _, observed = run(arrays, observe)
    given = {n.name: eager_values[n.name] for n in gm.graph.nodes
             if n.op in ("placeholder", "get_attr") and n.name in eager_values}
    got_values = {**given, **{k.removesuffix(":0"): np.asarray(v) for k, v in observed.items()}}
    fed = _fed(gm)
    rows = []
    for call in source.calls:
        node = nodes.get(call.name)
        row = {"name": call.name, "call": clip(call.describe(), 200)}
        args = _call_arrays(node, call, got_values) if node is not None else None
        if args is None or call.name not in got_values:
            folded = node is not None and call.name not in fed
            rows.append({**row, "ok": None, "observable": False,
                         "note": "a call on constants alone: folded into a constant of the converted model (the "
                                 "outputs judge it)" if folded else
                                 "the converted model does not expose this call's output or inputs"})
            continue
        got = got_values[call.name]
        args = _resize_sizes(call, args, got)
        want = oracle(call.ir, *args)
        if precision == "f32":
            e = against_oracle(call.ir, got, want, args).to_dict()
        else:
            bound = reduced_bound(call.ir, want, float_bound(call.ir, *args), args, precision)
            e = within_bound(np.asarray(got), want, bound).to_dict()
        e = {**finish_row(e, got, want), **row, "judged_by": "the float32 error bound" if precision == "f32"
             else f"the {precision} bound"}
        read = oracle_agrees(node, call, eager_values, call.name)
        if read is False:
            e.update(ok=False, note="PyTorch computes this call otherwise than its IR says: the call was read wrong")
        rows.append(e)
    return rows


def _fed(gm) -> set[str]:
    """The names of the nodes whose value depends on a program input (the others are constants)."""
    fed: set[str] = set()
    for n in gm.graph.nodes:
        if n.op == "placeholder" or any(a.name in fed for a in n.all_input_nodes):
            fed.add(n.name)
    return fed


# Options that name ONNX tensors or files of them: a PyTorch source takes none (its inputs are seeded probes of
# the program's example shape and dynamic lengths).
_ONNX_ONLY = {"inputs": "load-inputs", "inputs_any": "inputs", "input_shapes": "input-shapes", "input": "input",
              "save_inputs": "save-inputs", "save_outputs": "save-outputs", "load_outputs": "load-outputs",
              "save_results": "save-results", "atol": "atol", "rtol": "rtol", "check_error_stat": "check-error-stat",
              "val_range": "val-range", "report": "report"}


def run_verify_torch(args, show_verify) -> int:
    """``verify model.pt2``'s CLI: refuses the ONNX-only options by name, then one report."""
    if args.target != "openvino":
        raise BridgeError(f"a PyTorch program is verified on --target openvino only, not {args.target}",
                          field="target")
    for key, flag in _ONNX_ONLY.items():
        if getattr(args, key, None):
            raise BridgeError(f"--{flag} applies to an ONNX source; a PyTorch program is run on seeded inputs of "
                              f"its example shape and dynamic lengths", field=flag)
    report = verify_torch(args.model, converted=args.converted, fallback=args.fallback, strict=args.strict,
                          allow_conditional=conditional_of(args), extensions=args.extension, seed=args.seed,
                          precision=args.precision)
    return show_verify(args, [report], 1, format_verify)
