"""``check --target openvino``: per resampling node, what OpenVINO's own ONNX importer does with it, and what
resample-bridge does instead.

Each node is cut out into a one-node model (its constant inputs kept as initializers, everything else a
graph input of the inferred shape), converted by ``openvino.convert_model`` alone, and what OpenVINO produced
is parsed back into IR (``translate.openvino``: what the CPU plugin computes) and compared with the
source IR. The verdict is one of:

* ``exact``: same numbers (the IR values bind to equal tap tables);
* (ties) where the two differ only in how coordinates are computed (exact vs float32), the output indices on
  or near a rounding boundary are checked by running the probe: which element a resize reads does not depend
  on the data, so equal outputs on distinct probe values prove the ties resolve the same way on this shape;
* ``silently different``: converts, computes something else — the fields that differ, both values, and the
  max error measured on a probe input (OpenVINO CPU f32 vs the oracle);
* ``refused``: OpenVINO's importer fails, with its message;
* ``unproven``: no verdict can be proven (a dynamic input shape and no concrete one where the importer's op
  differs in a field with the same numbers on every shape tried, an unknown rank): the reason says why;
  ``--input`` shapes make it provable. On a dynamic shape, a field difference that changes numbers on some
  shape the dynamic dimensions admit is ``silently different`` without any concrete shape.
"""

from __future__ import annotations

import tempfile

import numpy as np

from .check_index import index_rows
from .gate import format_check_rows
from ..translate.onnx import load
from .check_openvino_batch import config_key, native_batch, ours_batch
from .check_openvino_node import IN_BODY, _ours_row, single_node_models
from .node_probe import probe_note, probe_text
from ..lowering.openvino.target import convert
from ..semantics.errors import BridgeError
from .check_openvino_verdict import BODY_HINT, INPUT_HINT, _unproven


def check_openvino(model_path, progress=None) -> list[dict]:
    """One row per resampling node: OpenVINO's importer's verdict, and the rung resample-bridge takes.
    ``progress(done, total)``: called as nodes are judged."""
    nodes, unproven, order = [], {}, {}
    model = load(model_path)  # read once: the per-node cuts and the index arithmetic's sweep both read it
    for name, ir, one, feeds in single_node_models(model, unproven=True):
        order.setdefault(name, len(order))
        if one is None:
            unproven[name] = (ir, feeds)
        else:
            nodes.append((name, ir, one, feeds))
    first_of: dict = {}
    key_of = []
    for name, ir, one, feeds in nodes:
        key_of.append(first_of.setdefault(config_key(one), len(first_of)))
    unique = {}
    for i, (name, ir, one, feeds) in enumerate(nodes):
        unique.setdefault(key_of[i], (ir, one, feeds))
    irs = {k: v[0] for k, v in unique.items()}
    items = [(k, one, feeds) for k, (ir, one, feeds) in unique.items()]
    done = [0]

    def tick(n):
        done[0] += n
        if progress:
            progress(min(done[0], len(items)), len(items))

    with tempfile.TemporaryDirectory() as d:
        # One importer batch per op kind: a kind the importer has no rule for (DeformConv, say) fails its own
        # batch only, instead of splitting every batch down to single nodes.
        native = {}
        for kind in sorted({irs[k].kind for k, _, _ in items}):
            group = [it for it in items if irs[it[0]].kind == kind]
            native.update(native_batch(d, group, irs, tick))
        whole = _whole_model_rungs(model_path)
        todo = [it for it in items if any(key_of[i] == it[0] and nodes[i][0] not in whole
                                          for i in range(len(nodes)))]
        ours = ours_batch(d, todo) if todo else {}
    rows = []
    for i, (name, ir, one, feeds) in enumerate(nodes):
        k = key_of[i]
        mine = whole.get(name) or ours[k]
        row = {"name": name, "op": ir.origin, "openvino": dict(native[k]), "resample_bridge": dict(mine),
               "probe": probe_note(one, feeds)}
        same = [nodes[j][0] for j in range(len(nodes)) if key_of[j] == k and j != i]
        if same:
            row["same_config_as"] = same[:20]
        rows.append(row)
    if unproven:
        rows += _unproven_rows(model_path, unproven, whole)
        rows.sort(key=lambda r: order.get(r["name"], len(order)))  # graph order
    return rows + index_rows(model)


def _whole_model_rungs(model_path) -> dict:
    """node name -> the rung ``convert`` takes for it in the whole model (its own shapes, constant folding,
    run-time values), or {} where the whole model does not convert (each node is then converted alone)."""

    try:
        _, records = convert(model_path)
    except BridgeError:
        return {}
    return {r.node: _ours_row(r) for r in records}


def _unproven_rows(model_path, unproven: dict, whole: dict) -> list[dict]:
    """Rows for the nodes no one-node model can be cut out for (an input of unknown rank): the importer's
    verdict unproven, the rung the whole model's conversion takes (as ``convert`` does)."""

    ours, refusal = whole, None
    if not whole:
        try:
            _, records = convert(model_path)
            ours = {r.node: _ours_row(r) for r in records}
        except BridgeError as e:
            refusal = e
    rows = []
    for name, (ir, why) in unproven.items():
        if name in ours:
            mine = ours[name]
        elif refusal is not None and refusal.node in (None, name):
            mine = {"rung": None, "reason": refusal.message}
        else:
            mine = {"rung": None, "reason": "not judged: another node stops the whole model's conversion"}
        op = ir if isinstance(ir, str) else ir.origin  # the op type where no IR could be read (unknown rank)
        hint = BODY_HINT if why.startswith(IN_BODY) else INPUT_HINT
        rows.append({"name": name, "op": op, "openvino": _unproven(why, hint=hint), "resample_bridge": mine})
    return rows


def format_check(rows: list[dict]) -> str:
    # A probe whose dynamic dimensions took defaults is said under the verdict (its error is on that shape).
    shown = [{**r, "openvino": {**r["openvino"], "probe": r["probe"]}} if (r.get("probe") or {}).get("defaults")
             else r for r in rows]
    return format_check_rows(shown, "openvino", "OpenVINO importer", _importer_lines)


def _importer_lines(v: dict) -> tuple[str, list[str]]:
    suffix = ""
    if v["verdict"] == "refused":
        suffix = f": {v['reason']}"
    elif v["verdict"] == "unproven":
        suffix = f": {v['reason']}"
    elif v["verdict"] == "silently different" and v.get("data_dependent"):
        suffix = " (on some input values; the probe's do not show it)"
    elif v["verdict"] == "silently different" and v.get("shape"):
        err = v.get("max_error")
        suffix = f" (on input shape {v['shape']}, one the model's dynamic dimensions admit" + \
            (f"; max error {err:.3g} on a probe input)" if err is not None else ")")
    elif v["verdict"] == "silently different":
        err = v.get("max_error")
        suffix = f" (max error {err:.3g} on a probe input)" if err is not None and np.isfinite(err) else \
            " (output shape differs)"
    lines = [f"    {f}" for f in v.get("fields", [])] + [f"    {c}" for c in v.get("conditions", [])]
    lines += [f"    {ax}: output indices {idx} read another element (fp32 coordinates at a rounding boundary)"
              for ax, idx in v.get("ties", {}).items()]
    lines += [f"    {ax}: output indices {idx} sit at a rounding boundary; OpenVINO's fp32 coordinates resolve "
              f"them as the exact ones on this shape (measured)" for ax, idx in v.get("ties_resolved", {}).items()]
    if v.get("probe"):
        lines.append(f"    probe input: {probe_text(v['probe'])}")
    return suffix, lines
