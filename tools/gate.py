"""``check`` as a CI gate: one summary of check rows for every target (what the target's own importer does,
what resample-bridge does), and the exit status chosen by ``--fail-on``.

Importer outcomes, whatever words the target's row uses:
  exact        the importer computes the model's numbers;
  different    it converts and computes something else (silently);
  refused      it fails loudly (the model does not convert or does not run);
  conditional  it is exact only under a run-time condition;
  unproven     no verdict could be proven (dynamic shapes with no concrete one, unknown rank): the reason says
               why; ``--input`` shapes make it provable. The default gate fails on it.
"""

from __future__ import annotations

from ..semantics.errors import BridgeError, clip
from ..semantics.text import counted

OUTCOMES = ("exact", "different", "refused", "conditional", "unproven")
# A check row that is no resampling node: the model's own index arithmetic (``check_index``), counted apart
INDEX_ROW_OP = "index arithmetic"
DEFAULT_FAIL_ON = ("different", "unproven")
_OUTCOME_OF = {"exact": "exact", "silently different": "different", "refused": "refused", "rejected": "refused",
               "not parsed": "refused", "exact only if": "conditional",
               "unproven": "unproven"}


def importer_verdict(row: dict, key: str) -> dict:
    """The importer's verdict of a check row: ``row[key]``, the key the target's registry entry names
    (``targets.Entry.importer``)."""
    return row.get(key, {})


def importer_outcome(row: dict, key: str) -> str:
    v = importer_verdict(row, key)
    return _OUTCOME_OF.get(v.get("verdict", ""), "refused")


def ours_outcome(row: dict) -> str:
    ours = row.get("resample_bridge", {})
    if ours.get("rung") is None:
        return "refused"
    if ours.get("condition") or ours.get("conditions"):
        return f"rung {ours['rung']} ({ours.get('rung_name', '?')}) conditional"
    return f"rung {ours['rung']} ({ours.get('rung_name', '?')})"


def parse_fail_on(text: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in items if x not in OUTCOMES[1:] + ("none",)]
    if bad:
        raise BridgeError(f"unknown value {clip(bad[0], 40)!r}; expected a comma-separated list of "
                          f"{', '.join(OUTCOMES[1:])} (or none)", field="fail-on")
    return tuple(x for x in items if x != "none")


def summary(rows: list[dict], target: str, key: str, fail_on=DEFAULT_FAIL_ON) -> dict:
    """{"nodes", "importer": {outcome: n}, "resample_bridge": {rung: n}, "gate": {...}} (plain JSON); ``key``:
    the key of each row's importer verdict (``importer_verdict``)."""
    importer = {k: 0 for k in OUTCOMES}
    ours: dict = {}
    failing = []
    for r in rows:
        o = importer_outcome(r, key)
        importer[o] += 1
        k = ours_outcome(r)
        ours[k] = ours.get(k, 0) + 1
        if o in fail_on:
            failing.append({"node": r.get("name"), "outcome": o})
    index = sum(r.get("op") == INDEX_ROW_OP for r in rows)
    return {"target": target, "nodes": len(rows) - index, "index_arithmetic": index, "importer": importer,
            "resample_bridge": dict(sorted(ours.items())),
            "gate": {"fail_on": list(fail_on), "passed": not failing, "failing": failing}}


def format_summary(s: dict) -> str:
    imp = ", ".join(f"{k} {v}" for k, v in s["importer"].items())
    ours = ", ".join(f"{k} {v}" for k, v in s["resample_bridge"].items()) or "nothing to do"
    counts = counted(s["nodes"], "resampling node")
    if s.get("index_arithmetic"):
        counts += f", {counted(s['index_arithmetic'], 'index arithmetic row')}"
    lines = [f"summary: {counts}; {s['target']}'s importer: {imp}; resample-bridge: {ours}"]
    g = s["gate"]
    on = ",".join(g["fail_on"]) or "none"
    if g["passed"]:
        lines.append(f"gate (--fail-on {on}): PASSED")
    else:
        names = ", ".join(clip(f["node"], 60) for f in g["failing"][:5])
        more = f" and {len(g['failing']) - 5} more" if len(g["failing"]) > 5 else ""
        lines.append(f"gate (--fail-on {on}): FAILED: {len(g['failing'])} node(s) {names}{more}")
    return "\n".join(lines)


def format_check_rows(rows: list[dict], importer: str, label: str, importer_lines, ours_lines=lambda ours: []) -> str:
    """``check``'s text for any target: per node the importer's verdict (``rows[i][importer]``; ``label`` names
    the importer) with ``importer_lines(verdict) -> (suffix of the verdict line, lines below it)``, then
    resample-bridge's rung, its condition, and ``ours_lines(ours)`` below it."""
    if not rows:
        return "no resampling nodes in this model"
    out = []
    for r in rows:
        v = r[importer]
        suffix, below = importer_lines(v)
        out.append(f"{clip(r['name'], 80)} ({r['op']}): {label}: {v['verdict']}{suffix}")
        out += below
        ours = r["resample_bridge"]
        if ours["rung"] is None:
            out.append(f"  resample-bridge: refuses: {ours['reason']}")
        else:
            cond = f" [exact if {ours['condition']}]" if ours.get("condition") else ""
            out.append(f"  resample-bridge: rung {ours['rung']} ({ours['rung_name']}): {ours['reason']}{cond}")
            out += ours_lines(ours)
    return "\n".join(out)


def exit_status(s: dict) -> int:
    return 0 if s["gate"]["passed"] else 1
