"""``verify``: runs the source on onnxruntime (``verify_source``) and the converted model (on the runner of the
target's registry entry, ``targets``: OpenVINO CPU (f32), ``run_openvino``; the ONNX targets: onnxruntime,
``verify_onnx``) and reports per model output and per
resampling node the abs/rel error statistics and where the worst element is.
Each resampling node is also checked against the oracle on the same inputs, since onnxruntime follows a few
conventions of its own (``translate.onnxruntime``).

The converted model is the user's file (``converted=OUT.xml``, its extension library loaded from beside it) or
a conversion made here with the same options as ``convert``. Inputs: given, or seeded probes of shapes that
are never guessed (a dynamic dimension needs ``shapes`` or a static hint in the model), validated in size
before anything is allocated. Everything returned is plain JSON-able data: non-finite numbers never appear
(None with a flag instead).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..lowering.model_check import constants, reference
from ..lowering.model_reference import judged_alone, ort_departure
from ..semantics.compare import BOUND_FLOOR, against_oracle, compare, within_bound
from ..semantics.errors import BridgeError, clip
from ..semantics.opspec import spec
from ..semantics.text import counted
from .verify_inputs import _check_tensor_sizes, input_specs, make_inputs
from .verify_source import OracleAt, run_onnxruntime
from ..semantics.reference import run as oracle
from ..semantics.tolerance import PRECISIONS, default_tolerance, float_bound, precision_tolerance, reduced_bound, \
    rounded_input_bound
from ..translate.onnx import RESAMPLING_OPS, load, node_name, parse_model, resampling_nodes
from ..translate.onnx_shapes import with_value_shapes
from .node_probe import probe_text
from .run_openvino import importer_outputs, precision_run
from .targets import DEFAULT, convert_file, entry, refuse_verify_options
from .verify_stats import finish_row, looser_than_bound


def verify_openvino(model_path: str, *, inputs: dict | None = None, fallback: str = "decompose",
                    strict: bool = False, allow_conditional: bool | None = None, converted: str | None = None,
                    extensions=(), shapes: dict | None = None, seed: int = 0, val_range: dict | None = None,
                    atol: dict | None = None, rtol: dict | None = None, target: str = DEFAULT,
                    error_stat: dict | None = None, validate: bool = False, fail_fast: bool = False,
                    precision: str = "f32") -> dict:
    """Run source (onnxruntime, oracle per node) and converted (on the runner of ``target``'s registry entry,
    ``targets.Runner``: OpenVINO CPU f32, or the converted ONNX on onnxruntime); report the errors.
    ``atol``/``rtol``: {output name or "": tolerance}; ``error_stat``: {output name or "": Polygraphy's
    --check-error-stat} (``verify_stats``); ``validate``: NaN/Inf the reference does not have fail;
    ``fail_fast``: stop comparing at the first failure; ``precision``: OpenVINO's inference precision the
    converted model runs at (f32, bf16 -- this CPU's default where it has bf16 -- or f16), each node judged by
    the policy's bound at that precision (``tolerance.reduced_bound``: values may round, an index may not move).
    Returns a plain dict (strict-JSON values)."""

    model = load(model_path)
    # Bad attributes are refused here, before any runtime sees them; a node whose input rank no shape information
    # gives (kornia's and DPT's dynamic exports) is parsed again below, on the shapes verify feeds.
    irs = dict(parse_model(model, lenient=True))
    given = dict(inputs or {})
    specs = input_specs(model, shapes, given)
    feeds = {**given, **make_inputs(model, seed, [s for s in specs if s["source"] != "given"], val_range)} \
        if any(s["source"] != "given" for s in specs) else given
    for s in specs:
        want = np.dtype(s["dtype"]) if s["source"] != "given" else None
        if want is not None and feeds[s["name"]].dtype != want:
            feeds[s["name"]] = feeds[s["name"]].astype(want)
    _check_tensor_sizes(model, specs)
    report: dict = {"inputs": [{k: v for k, v in s.items()} for s in specs], "outputs": [], "nodes": [],
                    "rungs": [], "converted": converted, "target": target}
    if not model.graph.node:
        report.update(ok=True, note="the graph has no nodes: its outputs are its inputs; nothing to compare")
        report["outputs"] = [{"name": o.name, "ok": True, "note": "the output is an input"} for o in model.graph.output]
        return _verdict(report)
    ort_out = run_onnxruntime(model, feeds)
    if isinstance(ort_out, OracleAt):
        report["note"] = ort_out.note()
    if len(irs) < sum(1 for _ in resampling_nodes(model)):  # the ranks no shape inference gave: as run (never
        irs = dict(parse_model(with_value_shapes(model, ort_out), lenient=True))  # in a Loop body: not observed)
    observe = sorted({n for node in model.graph.node if node.op_type in RESAMPLING_OPS
                      for n in list(node.input) + list(node.output) if n} | {o.name for o in model.graph.output})
    options = {"fallback": fallback, "strict": strict, "allow_conditional": allow_conditional}

    if precision not in PRECISIONS:
        raise BridgeError(f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}", field="precision")
    runner = entry(target, "verify").verify
    refuse_verify_options(target, {"precision": precision != "f32"})
    precision, note = precision_run(precision)
    report.update(precision=precision, **({"precision_note": note} if note else {}))
    ov_out, report["rungs"] = runner.run(model, model_path, feeds, observe, target=target, converted=converted,
                                         extensions=extensions, precision=precision,
                                         convert_file=partial(convert_file, target, follow_up=False), **options)
    if runner.note is not None:
        report["note"] = runner.note()
    atol, rtol, stats = atol or {}, rtol or {}, error_stat or {}  # {tensor name or "" (all): ...}; nodes by
    # their output tensor
    judged = {o.name for o in model.graph.output} | {n for node in model.graph.node for n in node.output[:1]}
    for field, tol in (("atol", atol), ("rtol", rtol), ("check-error-stat", stats)):
        unknown = [n for n in tol if n and n not in judged]
        if unknown:
            raise BridgeError(f"{clip(unknown[0], 80)!r} is neither a model output nor a node's output",
                              field=field)
    consts = constants(model)
    deviating: set[str] = set()
    looser: list[str] = []  # the user's tolerances that judge more leniently than the defaults
    judged: set = set()  # the main graph's resampling nodes; those in If / Loop / Scan bodies are listed after
    for i, node in enumerate(model.graph.node):
        if node.op_type not in RESAMPLING_OPS or node.domain not in ("", "ai.onnx"):
            continue
        name = node_name(node, i)
        judged.add(name)
        if name not in irs:
            report["nodes"].append(_unobserved(name, "no shape information gives its input's rank, even as run"))
            continue
        args = [None if not n else (consts[n] if n in consts else ort_out.get(n, feeds.get(n)))
                for n in node.input]
        # (a float16 node onnxruntime ran in float32 in the model: judged alone)
        exact = oracle(irs[name], *args)
        ort_dev, judged_ort = judged_alone(model, node, irs[name], ort_out[node.output[0]], exact, args)
        ort_dev = ort_dev.to_dict()
        if not ort_dev["ok"]:
            deviating.add(node.output[0])
            ort_dev["departure"] = _departure(irs[name], judged_ort, exact, args)
        # The node alone: the oracle fed what OpenVINO fed the node (upstream differences, such as weights
        # compressed to f16, are the model outputs' business, not this node's).
        ov_args = [a if not n or n in consts or n not in ov_out else ov_out[n] for n, a in zip(node.input, args)]
        want = oracle(irs[name], *ov_args)
        got = ov_out.get(_exposed_as(model, node.output[0], ov_out, ort_out))
        if got is None:
            report["nodes"].append(_unobserved(name, "the converted model does not expose this node's output",
                                               ort_dev))
            continue
        arrays = node.input[:len(spec(irs[name]).arrays)]  # the data the oracle reads, not Resize's roi/sizes
        unseen = [n for n in arrays if n and n not in consts and n not in ov_out]
        if precision != "f32" and unseen:
            # At a reduced precision the layers above round the node's input: fed onnxruntime's float32 copy of
            # it, the oracle would charge their rounding to this node (a nearest Gather after a bf16 Conv: 474
            # elements "beyond the bound", each a bf16 step of the Conv's output). The model outputs judge it.
            report["nodes"].append(_unobserved(name, (
                f"its input {clip(unseen[0], 60)} is not a tensor of the converted model: at {precision} the "
                "layers above round it, so the node is judged through the model outputs"), ort_dev))
            continue
        t = node.output[0]
        # The node against the oracle under the policy (the float32 error bound), unless the user set a
        # tolerance for this tensor or for every one.
        given = [d[k] for d in (atol, rtol) for k in (t, "") if k in d]
        if given:
            e = compare(got, want, atol.get(t, atol.get("")), rtol.get(t, rtol.get(""))).to_dict()
        else:
            bound = rounded_input_bound(irs[name], float_bound(irs[name], *ov_args), ov_args)
            if precision != "f32":
                bound = reduced_bound(irs[name], want, bound, ov_args, precision)
            e = within_bound(np.asarray(got), want, bound).to_dict() if np.shape(got) == np.shape(want) else \
                against_oracle(irs[name], got, want, ov_args).to_dict()
        e = finish_row(e, got, want, stats.get(t, stats.get("", "elemwise")) if given else "elemwise", validate)
        if given and looser_than_bound(irs[name], want, ov_args, e["atol"], e["rtol"]):
            looser.append(f"node {clip(name, 60)} by atol {e['atol']:g} rtol {e['rtol']:g}, not the float32 "
                          "error bound")
        e.update(name=name, onnxruntime_vs_oracle=ort_dev, judged_by=tolerance_text(e))
        report["nodes"].append(e)
        if fail_fast and e["ok"] is False:
            report["stopped"] = f"--fail-fast: stopped at the first failure (node {name})"
            break
    if not report.get("stopped"):
        report["nodes"] += [_unobserved(name, "inside a control-flow body (If / Loop / Scan): onnxruntime exposes "
                                        "none of its tensors, so the model outputs judge it")
                            for name, _ in resampling_nodes(model) if name not in judged]
    # onnxruntime is the reference for model outputs, except where a resampling node's IR names a deviation of
    # onnxruntime's own there: then the oracle's output replaces onnxruntime's at that node and everything below
    # is computed again (``model_check.reference``). onnxruntime differing from a node's IR with no named
    # deviation means the graph around it was read wrong: the outputs below it fail.
    ref_out, ref_note, misread = ort_out, None, None
    if deviating:
        ref = reference(model, feeds, irs, consts=consts)
        if ref is None:
            misread = "onnxruntime cannot run the source with the oracle's values fed below the deviating nodes"
        elif ref.misread:
            misread = ref.misread
        else:
            ref_out = ref.values
            ref_note = ("against the oracle-corrected reference (onnxruntime with the oracle's output at "
                        + ", ".join(clip(n, 60) for n in ref.corrected) + ")") if ref.corrected else None
    for node in model.graph.node:
        if any(n in deviating for n in node.input):
            deviating.update(node.output)
    importer: dict = {}  # OpenVINO's own importer's outputs at the reduced precision, run once where asked
    for o in model.graph.output if not report.get("stopped") else ():
        if o.name not in ov_out:
            report["outputs"].append({"name": o.name, "ok": False, "missing": "not an output of the converted model"})
            continue
        want = ref_out[o.name] if o.name in deviating else ort_out[o.name]
        reduced = precision_tolerance(precision) or (None, None)
        e = compare(ov_out[o.name], want, atol.get(o.name, atol.get("", reduced[0])),
                    rtol.get(o.name, rtol.get("", reduced[1]))).to_dict()
        e["name"] = o.name
        default = reduced if reduced[0] is not None else default_tolerance(want.dtype)
        if e["atol"] > default[0] or e["rtol"] > default[1]:
            looser.append(f"output {clip(o.name, 60)} by atol {e['atol']:g} rtol {e['rtol']:g} (default "
                          f"{default[0]:g} / {default[1]:g})")
        e = finish_row(e, ov_out[o.name], want, stats.get(o.name, stats.get("", "elemwise")), validate)
        if o.name in deviating and misread:
            e.update(ok=False, note=misread)
        elif o.name in deviating and ref_note:
            e["note"] = ref_note
        if e["ok"] is False and (precision != "f32" or want.dtype == np.float16) and not e.get("note"):
            e = _beside_importer(e, want, model, feeds, precision, importer)
        report["outputs"].append(e)
        if fail_fast and e["ok"] is False:
            report["stopped"] = f"--fail-fast: stopped at the first failure (output {o.name})"
            break
    if looser:
        report["looser"] = looser
    report["arrays"] = {"onnxruntime": {o.name: ort_out[o.name] for o in model.graph.output if o.name in ort_out},
                        "converted": {o.name: ov_out[o.name] for o in model.graph.output if o.name in ov_out},
                        "inputs": feeds}
    return _verdict(report)


def _beside_importer(e: dict, want, model, feeds: dict, precision: str, importer: dict) -> dict:
    """A model output that fails at a reduced precision, or of a float16 network, with OpenVINO's own importer's
    error there where it is as large: the network's own rounding (a deep transformer's bf16: Mask2Former 0.53 off,
    the importer as far; a float16 RT-DETR's query TopK, 0.24 off at f32, the importer's output ours bit for bit),
    not the resampling nodes, which the node rows judge. The verdict stays the tolerance's."""
    if "run" not in importer:
        importer["run"] = importer_outputs(model, feeds, precision)
    theirs = (importer["run"] or {}).get(e["name"])
    if theirs is None or np.shape(theirs) != np.shape(want):
        return e
    base = compare(theirs, want, e["atol"], e["rtol"]).to_dict()
    if base["ok"] or not base["max_abs"] >= e["max_abs"] / 2:  # (not as far off, or either NaN: nothing said)
        return e
    why = f"at {precision}" if precision != "f32" else "in float16, which onnxruntime and OpenVINO evaluate apart"
    return {**e, "note": f"OpenVINO's own importer at {precision} is as far off: abs max {base['max_abs']:.3g}, "
                         f"{base.get('mismatches', '?')} elements beyond the tolerance (the network's own rounding "
                         f"{why})"}


def _exposed_as(model, tensor: str, ov_out: dict, ort_out: dict) -> str:
    """The name the converted model gives ``tensor``: its own, or, where OpenVINO's importer dropped the no-op
    Identity / Cast to the same type that alone reads it (kornia's random affine: a GridSample, then a Cast to
    float32, the model output), that op's output's (the same values: onnxruntime's have the same type)."""
    while tensor not in ov_out:
        readers = [n for n in model.graph.node if tensor in n.input]
        if len(readers) != 1 or readers[0].op_type not in ("Identity", "Cast"):
            return tensor
        out = readers[0].output[0]
        if tensor not in ort_out or out not in ort_out or ort_out[tensor].dtype != ort_out[out].dtype:
            return tensor
        tensor = out
    return tensor


def _departure(ir, got, exact, args) -> str | None:
    """The rule of onnxruntime's own by which it computes the node otherwise (``model_reference.ort_departure``),
    None where none is named or the oracle cannot run onnxruntime's reading."""
    try:
        return ort_departure(ir, got, exact, args)
    except Exception:  # noqa: BLE001 -- onnxruntime's reading refused by the oracle: nothing named
        return None


def _unobserved(name: str, why: str, ort_dev: dict | None = None) -> dict:
    """The report row of a resampling node verify cannot judge alone (the model outputs still judge it), with
    onnxruntime's deviation from the oracle there where it was measured."""
    row = {"name": name, "ok": None, "observable": False, "note": why}
    return row if ort_dev is None else {**row, "onnxruntime_vs_oracle": ort_dev}


def _verdict(report: dict) -> dict:
    outs, nodes = report["outputs"], report["nodes"]
    counts = {"outputs_passed": sum(1 for r in outs if r.get("ok") is True),
              "outputs_failed": sum(1 for r in outs if r.get("ok") is False),
              "outputs_not_judged": sum(1 for r in outs if r.get("ok") is None),
              "nodes_passed": sum(1 for r in nodes if r.get("ok") is True),
              "nodes_failed": sum(1 for r in nodes if r.get("ok") is False),
              "nodes_not_observed": sum(1 for r in nodes if r.get("ok") is None)}
    report["counts"] = counts
    # Nothing passes unjudged: an output not compared (no reference for it) is not a pass.
    report["ok"] = counts["outputs_failed"] == 0 and counts["nodes_failed"] == 0 and \
        counts["outputs_not_judged"] == 0
    report["verdict"] = "PASSED" if report["ok"] else "FAILED"
    return report


def _num(x, fmt=".3g") -> str:
    return "n/a" if x is None else format(x, fmt)


def format_verify(report: dict) -> str:
    lines = []
    if report.get("inputs"):
        lines.append("inputs:")
        lines += [f"  {clip(s['name'], 80)}: {s['dtype']} {s['shape']} ({s['source']})" for s in report["inputs"]]
    if report.get("converted"):
        lines.append(f"converted model: {clip(report['converted'])}")
    if report.get("rungs"):
        lines += ["lowering:"] + [f"  {r}" for r in report["rungs"]]

    def row(kind, r):
        head = f"  {kind} {clip(r['name'], 80)}: "
        if r.get("shape_mismatch"):
            # A shape that differs where the peer departs from the ONNX semantics is not judged, not a mismatch.
            tail = "MISMATCH" if r.get("ok") is not None else "differs, not judged: " + r.get("not_judged", "")
            return head + f"SHAPE {r['shape_mismatch']} {tail}"
        if r.get("missing"):
            return head + f"{r['missing']} MISMATCH"
        if "max_abs" not in r:
            return head + (r.get("note") or "not compared")
        w = f"; worst at {r['worst']} ({_num(r.get('got'), '.7g')} vs {_num(r.get('want'), '.7g')})" \
            if r.get("worst") is not None and r.get("max_abs") else ""
        why = (f"{r['error_stat']} abs error over atol {r['atol']:g} and {r['error_stat']} rel error over rtol "
               f"{r['rtol']:g}" if r.get("error_stat") else
               f"{r.get('mismatches', '?')} elements beyond {tolerance_text(r)}")
        if r.get("note") and r["ok"] is False and not r.get("mismatches") and not r.get("validate"):
            why = "no reference: see below"
        verdict = {True: "ok", False: f"MISMATCH ({r['validate'] if r.get('validate') else why})",
                   None: "not judged: " + r.get("not_judged", "")}[r["ok"]]
        stats = (f"abs max {_num(r['max_abs'])} mean {_num(r.get('mean_abs'))} median {_num(r.get('median_abs'))} "
                 f"p99 {_num(r.get('p99_abs'))}; rel max {_num(r['max_rel'])} p99 {_num(r.get('p99_rel'))}")
        return head + stats + w + " " + verdict

    for key in ("note", "precision_note"):
        if report.get(key):
            lines.append(report[key])
    runner = runner_name(report.get("target", DEFAULT))
    if report.get("precision", "f32") != "f32":
        runner = runner.replace(" f32", f" {report['precision']}")
    lines.append(f"model outputs ({runner} vs {report.get('reference', 'the source on onnxruntime')}):")
    for r in report["outputs"]:
        lines.append(row("output", r))
        if r.get("note") and ("max_abs" in r or r.get("shape_mismatch")):
            lines.append(f"      ({r['note']})")
    if report["nodes"]:
        lines.append(f"resampling nodes ({runner} vs the oracle on the same inputs; check and the report judge "
                     "each node cut out, on its own probe input):")
    for r in report["nodes"]:
        lines.append(row("node", r))
        if r.get("note") and "max_abs" in r:
            lines.append(f"      ({r['note']})")
        if r.get("probe"):

            p = r["probe"]
            imp = _num(p.get("importer_max_error")) if p.get("importer_max_error") is not None else \
                (p.get("importer_note") or "n/a").split(":")[0]
            lines.append(f"      on its probe input {probe_text(p.get('input'))}: OpenVINO importer {imp}, "
                         f"resample-bridge {_num(p.get('resample_bridge_max_error'))}")
        o = r.get("onnxruntime_vs_oracle", {})
        why = o.get("departure") or "by no rule of its own that resample-bridge names"
        if o.get("shape_mismatch"):
            lines.append(f"      (onnxruntime's output shape differs from this node's IR: {o['shape_mismatch']}; "
                         f"{why})")
        elif o.get("ok") is False:  # beyond the bound: a float16 node's one step within it is no departure
            lines.append(f"      (onnxruntime itself differs from the ONNX semantics here by {_num(o.get('max_abs'))}: "
                         f"{why})")
    c = report["counts"]
    tail = (f"{counted(c['outputs_passed'], 'output')} passed, {c['outputs_failed']} failed, {c['outputs_not_judged']} not "
            f"judged; {counted(c['nodes_passed'], 'resampling node')} passed, {c['nodes_failed']} failed"
            + (f", {c['nodes_not_observed']} not observable" if c["nodes_not_observed"] else ""))
    if report.get("stopped"):
        lines.append(report["stopped"])
    if report.get("looser"):
        lines.append("judged under tolerances looser than the defaults: " + "; ".join(report["looser"]))
    lines.append(f"{report['verdict']}: {tail}")
    return "\n".join(lines)


def tolerance_text(r: dict) -> str:
    """What a row was judged by, in words: integers exactly, a float node by the error bound (whose atol is only
    the bound's floor), else the atol / rtol in force."""
    integer = not np.issubdtype(np.dtype(r.get("dtype") or "float32"), np.floating)
    if r.get("atol") == BOUND_FLOOR and not r.get("rtol"):
        return "exact (integers are compared exactly)" if integer else "the float32 error bound"
    if integer and not r.get("atol") and not r.get("rtol"):
        return "exact"
    return f"atol {r['atol']:g} rtol {r['rtol']:g}"


def runner_name(target: str) -> str:
    """The runtime ``target``'s converted model runs on, as verify's lines name it (its registry entry's)."""
    return entry(target, "verify").verify.name
