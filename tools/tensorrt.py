"""``check --target tensorrt`` and ``convert --target tensorrt``, plus a runner for TensorRT-ready ONNX without
TensorRT.

check: per resampling node, what onnx-tensorrt's importer would do with it — ``exact``, ``silently
different`` (with the fields), or ``rejected`` (with its message) — predicted from the importer's rules
encoded in ``translate/tensorrt.py`` (no TensorRT needed), and what resample-bridge does instead (the rung of
``lowering/tensorrt.py``). A verdict that rests on undocumented TensorRT behaviour lists it, each line ending
"unverified on TensorRT".

convert: writes the TensorRT-ready ONNX atomically (a temporary file beside the output, re-read and proven
again, then renamed into place), names the plugin library the plugin nodes need, and — where the tensorrt
package is absent — the one trtexec command that builds the engine with the plugin loaded.

run_tensorrt_ready: executes a TensorRT-ready model node by node on this machine: ordinary nodes on
onnxruntime (one-node sessions), plugin nodes by the oracle on the IR their attributes carry, so a rewrite can
be checked to change no number.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ..semantics.errors import BridgeError
from .conformance import conformance_cases, frozen_case
from .convert import check_output_path


# ----------------------------------------------------------------------------------------------------------
# check


def check_tensorrt(model_path, *, strict: bool = False) -> list[dict]:
    """One row per resampling node: {"name", "op", "tensorrt": importer verdict, "resample_bridge": rung}."""
    from ..lowering import tensorrt as low
    from ..translate.onnx import load

    _, plans = low.plan_model(load(model_path), strict=strict)
    rows = []
    for p in plans:
        imp = dict(p.importer)
        imp.pop("settings", None)
        rows.append({"name": p.name, "op": p.op, "tensorrt": imp or {"verdict": "not parsed", "fields": [],
                                                                      "assumptions": [], "notes": []},
                     "resample_bridge": {"rung": p.rung, "rung_name": p.rung_name, "reason": p.reason,
                                         "assumptions": list(p.assumptions)}})
    return rows


def _bare(a: str) -> str:
    from ..translate.tensorrt import UNVERIFIED

    return a.replace(f" ({UNVERIFIED})", "").replace(f"; {UNVERIFIED})", ")")


def format_check_tensorrt(rows: list[dict]) -> str:
    from ..translate.tensorrt import UNVERIFIED

    if not rows:
        return "no resampling nodes in this model"
    out = []
    for r in rows:
        v = r["tensorrt"]
        line = f"{r['name']} ({r['op']}): onnx-tensorrt importer: {v['verdict']}"
        if v["verdict"] == "rejected":
            line += f" at {v.get('stage', 'import')}: {v['message']}" + ("" if v.get("quoted", True) else
                                                                        " (paraphrased)")
        elif v.get("assumptions"):
            line += f" ({UNVERIFIED})"
        out.append(line)
        for f in v.get("fields", []):
            out.append(f"    {f}")
        for a in v.get("assumptions", []):
            out.append(f"    {UNVERIFIED}: {_bare(a)}")
        for n in v.get("notes", []):
            out.append(f"    importer: {n}")
        if v.get("decided"):
            out.append(f"    ({v['decided']})")
        ours = r["resample_bridge"]
        if ours["rung"] is None:
            out.append(f"  resample-bridge: refuses: {ours['reason']}")
        else:
            out.append(f"  resample-bridge: rung {ours['rung']} ({ours['rung_name']}): {ours['reason']}")
            for a in ours.get("assumptions", []):
                out.append(f"    {UNVERIFIED}: {_bare(a)}")
    counts: dict = {}
    rungs: dict = {}
    for r in rows:
        counts[r["tensorrt"]["verdict"]] = counts.get(r["tensorrt"]["verdict"], 0) + 1
        k = r["resample_bridge"]["rung_name"]
        rungs[k] = rungs.get(k, 0) + 1
    unverified = sum(1 for r in rows if r["tensorrt"].get("assumptions") and r["tensorrt"]["verdict"] == "exact")
    out.append("summary: onnx-tensorrt " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
               (f" ({unverified} of the exact ones {UNVERIFIED})" if unverified else "") +
               "; resample-bridge " + ", ".join(f"{k} {v}" for k, v in sorted(rungs.items())))
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------------------
# convert


def convert_to_tensorrt(model_path, out_path: str, force: bool = False, *, strict: bool = False) -> dict:
    """Write the TensorRT-ready ONNX of ``model_path`` to ``out_path`` (atomically; nothing is left behind on
    failure) and return the report: per-node rungs, plugins and their library, what is unverified on
    TensorRT, and either the engine built (tensorrt importable) or the trtexec command that builds it."""
    import onnx

    from ..lowering import tensorrt as low
    from ..translate.onnx import load

    out = check_output_path(out_path, force, ".onnx")
    model, plans = low._tensorrt_ready(load(model_path), strict=strict)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), prefix=".rb-", suffix=".onnx.tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        failures = low.prove(onnx.load(tmp), plans)
        if failures:
            raise BridgeError("the written model could not prove itself: " + "; ".join(failures))
        os.replace(tmp, out)
    except OSError as e:
        raise BridgeError(f"cannot write {out}: {e.strerror}", field="output") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    rep = low.report(plans)
    needs_plugin = rep["plugin_library"] is not None
    rep["output"] = out
    rep["plugin_library_path"] = low.plugin_library_path() if needs_plugin else None
    rep["command"] = low.trtexec_command(out, needs_plugin)
    rep["polygraphy_command"] = low.polygraphy_command(out, needs_plugin)  # runs it and compares, if preferred
    why = low.tensorrt_available()
    rep["tensorrt"] = why or "available"
    if why is None:
        engine = out[:-5] + ".engine"
        try:
            rep["engine"] = low.build_engine(out, engine, rep["plugin_library_path"])
        except BridgeError as e:
            rep["engine_error"] = e.message
    return rep


def format_convert_tensorrt(rep: dict) -> str:
    from ..translate.tensorrt import UNVERIFIED

    lines = []
    for n in rep["nodes"]:
        lines.append(f"{n['name']}: rung {n['rung']} ({n['rung_name']}): {n['reason']}")
        for a in n["assumptions"]:
            lines.append(f"    {UNVERIFIED}: {_bare(a)}")
    lines.append(f"wrote {rep['output']} ({len(rep['nodes'])} resampling nodes, each proven against its source IR)")
    if rep["plugin_library"]:
        lines.append(f"plugin nodes {', '.join(rep['plugins'])} need {rep['plugin_library']} "
                     f"(built from lowering/tensorrt_plugin into {rep['plugin_library_path']})")
    if rep.get("engine"):
        lines.append(f"built {rep['engine']['engine']} with TensorRT")
    else:
        if rep.get("engine_error"):
            lines.append(f"TensorRT could not build the engine here: {rep['engine_error']}")
        else:
            lines.append(f"TensorRT is not available here ({rep['tensorrt']}); to finish on a machine with it:")
        lines.append(f"  {rep['command']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------
# Running a TensorRT-ready model without TensorRT


_TRT_SPELLINGS = {"bilinear": "linear", "bicubic": "cubic"}


def _ort_node(node, values: dict, opset_imports, ir_version: int):
    """Run one ordinary node on onnxruntime (a one-node model of its inputs' shapes and types)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    inputs, inits, feeds = [], [], {}
    for name in node.input:
        if not name or name in feeds:
            continue
        arr = values[name]
        inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
        feeds[name] = arr
    outs = [onnx.ValueInfoProto(name=o) for o in node.output if o]
    default = [o for o in opset_imports if o.domain in ("", "ai.onnx")]
    model = helper.make_model(helper.make_graph([node], "one", inputs, outs, inits), opset_imports=default,
                              ir_version=min(ir_version, 10))
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    res = sess.run(None, feeds)
    return [r for r in res]


def _plugin_inputs(node, values):
    return [values[n] if n else None for n in node.input]


def run_tensorrt_ready(model, feeds: dict, *, resampling: str = "onnxruntime") -> dict:
    """Execute a TensorRT-ready ONNX model node by node; returns every tensor by name.

    Plugin nodes run on the oracle (``semantics.reference``) with the IR their attributes carry. Ordinary
    nodes run on onnxruntime; a GridSample that carries TensorRT's parser spelling (``bilinear`` /
    ``bicubic`` in an opset-20+ model, which onnxruntime refuses) is given back the opset's own name for the
    same mode first. ``resampling="tensorrt"`` instead runs every ordinary resampling node as onnx-tensorrt
    would build it (``translate.tensorrt.import_node``, then the oracle): what TensorRT computes per the
    encoded rules; ``resampling="oracle"`` runs them as the ONNX specification says (``translate.onnx``, then
    the oracle): the reference for a source model."""
    import copy

    import onnx
    from onnx import numpy_helper

    from ..lowering import tensorrt as low
    from ..semantics.reference import run
    from ..translate import tensorrt as ttrt
    from ..translate.onnx import NodeView, _Graph, parse_view

    if resampling not in ("onnxruntime", "tensorrt", "oracle"):
        raise BridgeError(f"resampling={resampling!r}: expected onnxruntime, tensorrt or oracle", field="resampling")
    model = onnx.load_from_string(model.SerializeToString()) if not isinstance(model, onnx.ModelProto) else model
    g = _Graph(model) if resampling != "onnxruntime" else None
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values.update({k: np.asarray(v) for k, v in feeds.items()})
    for node in model.graph.node:
        if low.is_plugin_node(node):
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            ins = _plugin_inputs(node, values)
            ir = low.ir_from_plugin(node.op_type, attrs, ins[0].shape, ins[0].dtype.name,
                                    sizes_source=node.input[1] if len(node.input) > 1 else None)
            if ir.kind == "resize":
                y = run(ir, ins[0], None, None, ins[1]) if len(ins) > 1 else run(ir, ins[0])
            elif ir.kind == "deformconv":  # compacted inputs: [X, W, offset] (+ B) (+ mask)
                rest = list(ins[3:])
                b = rest.pop(0) if ir.has_bias else None
                mask = rest.pop(0) if ir.has_mask else None
                y = run(ir, ins[0], ins[1], ins[2], b, mask)
            else:
                y = run(ir, *ins)
            values[node.output[0]] = y
            continue
        if node.domain not in ("", "ai.onnx"):
            raise BridgeError(f"node {node.name!r} is in domain {node.domain!r}, which neither onnxruntime nor the "
                              "oracle runs", node.name)
        if resampling != "onnxruntime" and node.op_type in ("Resize", "Upsample", "GridSample", "DeformConv"):
            view = NodeView.from_proto(node, g, node.name)
            shapes = {n: values[n].shape for n in node.input if n and n in values}
            view._shapes = dict(view._shapes, **shapes)
            ins = [values[n] if n else None for n in node.input]
            if resampling == "oracle":
                ir = parse_view(view, opset)
                values[node.output[0]] = run(ir, *ins)
                continue
            imp = ttrt.import_node(view, opset)
            if imp.rejected or imp.ir is None:
                raise BridgeError(f"onnx-tensorrt would not build node {node.name!r}: {imp.message or imp.fields}",
                                  node.name)
            if imp.ir.kind == "resize":
                y = run(imp.ir, ins[0])
            elif imp.ir.kind == "deformconv":
                y = run(imp.ir, *(ins + [None] * (5 - len(ins))))
            else:
                y = run(imp.ir, *ins)
            values[node.output[0]] = y
            continue
        n = node
        if node.op_type == "GridSample" and opset >= 20:
            mode = next((a for a in node.attribute if a.name == "mode"), None)
            if mode is not None and mode.s.decode() in _TRT_SPELLINGS:
                n = copy.deepcopy(node)
                for a in n.attribute:
                    if a.name == "mode":
                        a.s = _TRT_SPELLINGS[a.s.decode()].encode()
        for name, v in zip([o for o in node.output if o], _ort_node(n, values, model.opset_import, model.ir_version)):
            values[name] = v
    return values


# ----------------------------------------------------------------------------------------------------------
# The ONNX conformance cases: onnx-tensorrt's predicted outcome vs resample-bridge's rung


def conformance_rows(*, strict: bool = False) -> list[dict]:
    """Per conformance case: onnx-tensorrt's predicted verdict (and whether it rests on undocumented behaviour)
    and resample-bridge's rung."""
    from ..lowering import tensorrt as low

    rows = []
    for case in conformance_cases():
        model, _, _ = frozen_case(case)
        _, (p,) = low.plan_model(model, strict=strict)
        imp = p.importer
        rows.append({"case": case.name, "op": p.op, "importer": imp["verdict"],
                     "importer_unverified": bool(imp.get("assumptions")) and imp["verdict"] != "rejected",
                     "why": imp.get("message") or "; ".join(imp.get("fields", [])), "rung": p.rung,
                     "rung_name": p.rung_name, "unverified": bool(p.assumptions)})
    return rows


def format_conformance_table(rows: list[dict]) -> str:
    w = max(len(r["case"]) for r in rows)
    out = [f"{'case':<{w}}  {'onnx-tensorrt (predicted)':<30}  resample-bridge",
           f"{'-' * w}  {'-' * 30}  {'-' * 15}"]
    for r in rows:
        imp = r["importer"] + (" (unverified)" if r["importer_unverified"] else "")
        ours = f"rung {r['rung']} {_SHORT[r['rung']]}" + (" (unverified)" if r["unverified"] else "")
        out.append(f"{r['case']:<{w}}  {imp:<30}  {ours}")
    counts: dict = {}
    for r in rows:
        counts[r["importer"]] = counts.get(r["importer"], 0) + 1
    rungs: dict = {}
    for r in rows:
        rungs[_SHORT[r["rung"]]] = rungs.get(_SHORT[r["rung"]], 0) + 1
    out.append("onnx-tensorrt: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
               f" ({sum(r['importer_unverified'] and r['importer'] == 'exact' for r in rows)} of the exact ones rest "
               "on undocumented behaviour)")
    out.append("resample-bridge: " + ", ".join(f"{k} {v}" for k, v in sorted(rungs.items())) +
               f" ({sum(r['unverified'] for r in rows)} rest on undocumented behaviour; strict=True sends those to "
               "the plugin)")
    return "\n".join(out)


_SHORT = {1: "native", 2: "rewrite", 4: "plugin", None: "refused"}


__all__ = ["check_tensorrt", "format_check_tensorrt", "convert_to_tensorrt", "format_convert_tensorrt",
           "run_tensorrt_ready", "conformance_rows", "format_conformance_table"]
