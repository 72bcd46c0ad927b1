"""``check --target tensorrt``: per resampling node, what onnx-tensorrt's importer would do with it — ``exact``,
``silently different`` (with the fields), or ``rejected`` (with its message) — predicted from the importer's
rules (``translate.onnx_tensorrt``; no TensorRT needed), and what resample-bridge does instead (its rung). A
verdict that rests on undocumented TensorRT behaviour lists it, each line ending "unverified on TensorRT".
Also the conformance table (importer verdict vs rung per case).
"""

from __future__ import annotations

from ..lowering.passes import Policy
from .gate import format_check_rows
from ..lowering.tensorrt.plan import plan_model
from ..lowering.tensorrt.target import lower_checked
from ..translate.tensorrt import UNVERIFIED
from ..translate.onnx import load


def check_rows(model, *, strict: bool = False) -> list[dict]:
    """One row per resampling node: {"name", "op", "tensorrt": importer verdict, "resample_bridge": rung}.
    The rung is what ``convert --target tensorrt`` takes: the same plan, rewrite and proof (``lower_checked``)."""

    records = lower_checked(load(model), Policy(allow_conditional=not strict)).records
    rows = []
    for r in records:
        imp = dict(r.extra.get("importer", {}))
        imp.pop("settings", None)
        rows.append({"name": r.node, "op": r.op, "tensorrt": imp or {"verdict": "not parsed", "fields": [],
                                                                      "assumptions": [], "notes": []},
                     "resample_bridge": {"rung": r.rung, "rung_name": r.rung_name, "reason": r.reason,
                                         "field": r.field if r.rung is None else None,
                                         "assumptions": list(r.assumptions)}})
    return rows


def _bare(a: str) -> str:
    return a.replace(f" ({UNVERIFIED})", "").replace(f"; {UNVERIFIED})", ")")


def unverified_lines(assumptions) -> list[str]:
    return [f"    {UNVERIFIED}: {_bare(a)}" for a in assumptions]


def _importer_lines(v: dict) -> tuple[str, list[str]]:
    suffix = ""
    if v["verdict"] == "rejected":
        suffix = f" at {v.get('stage', 'import')}: {v['message']}" + ("" if v.get("quoted", True) else " (paraphrased)")
    elif v.get("assumptions"):
        suffix = f" ({UNVERIFIED})"
    lines = [f"    {f}" for f in v.get("fields", [])] + unverified_lines(v.get("assumptions", []))
    lines += [f"    importer: {n}" for n in v.get("notes", [])]
    if v.get("decided"):
        lines.append(f"    ({v['decided']})")
    return suffix, lines


def _counts(values) -> str:
    counts: dict = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def format_check(rows: list[dict]) -> str:
    out = [format_check_rows(rows, "tensorrt", "onnx-tensorrt importer", _importer_lines,
                             lambda ours: unverified_lines(ours.get("assumptions", [])))]
    unverified = sum(1 for r in rows if r["tensorrt"].get("assumptions") and r["tensorrt"]["verdict"] == "exact")
    if unverified:  # the counts themselves are the gate's summary line (tools/gate.py), printed after this
        out.append(f"{unverified} of onnx-tensorrt's exact verdicts are {UNVERIFIED}")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------------------
# The ONNX conformance cases: onnx-tensorrt's predicted outcome vs resample-bridge's rung

_SHORT = {1: "native", 2: "rewrite", 3: "decompose", 4: "plugin", None: "refused"}


def conformance_rows(cases, *, strict: bool = False) -> list[dict]:
    """Per (case name, one-node model): onnx-tensorrt's predicted verdict (and whether it rests on undocumented
    behaviour) and resample-bridge's rung."""
    rows = []
    for name, model in cases:
        _, (r,) = plan_model(model, strict=strict)
        imp = r.extra["importer"]
        rows.append({"case": name, "op": r.op, "importer": imp["verdict"],
                     "importer_unverified": bool(imp.get("assumptions")) and imp["verdict"] != "rejected",
                     "why": imp.get("message") or "; ".join(imp.get("fields", [])), "rung": r.rung,
                     "rung_name": r.rung_name, "unverified": bool(r.assumptions)})
    return rows


def format_conformance_table(rows: list[dict]) -> str:
    w = max(len(r["case"]) for r in rows)
    out = [f"{'case':<{w}}  {'onnx-tensorrt (predicted)':<30}  resample-bridge",
           f"{'-' * w}  {'-' * 30}  {'-' * 15}"]
    for r in rows:
        imp = r["importer"] + (" (unverified)" if r["importer_unverified"] else "")
        ours = f"rung {r['rung']} {_SHORT[r['rung']]}" + (" (unverified)" if r["unverified"] else "")
        out.append(f"{r['case']:<{w}}  {imp:<30}  {ours}")
    out.append("onnx-tensorrt: " + _counts(r["importer"] for r in rows) +
               f" ({sum(r['importer_unverified'] and r['importer'] == 'exact' for r in rows)} of the exact ones rest "
               "on undocumented behaviour)")
    out.append("resample-bridge: " + _counts(_SHORT[r["rung"]] for r in rows) +
               f" ({sum(r['unverified'] for r in rows)} rest on undocumented behaviour; strict=True sends those to "
               "the plugin)")
    return "\n".join(out)


__all__ = ["check_rows", "format_check", "conformance_rows", "format_conformance_table", "unverified_lines"]
