"""One formatter of conversion records for every target: the lines ``convert`` prints and the JSON it writes."""

from __future__ import annotations

from typing import Iterable

from .passes import NodeRecord


def format_records(records: Iterable[NodeRecord]) -> str:
    records = list(records)
    if not records:
        return "no resampling nodes in this model"
    lines = [r.summary() for r in records]
    lines.append("summary: " + summary_counts(records))
    return "\n".join(lines)


def summary_counts(records: Iterable[NodeRecord]) -> str:
    counts: dict = {}
    for r in records:
        key = "refused" if r.rung is None else f"rung {r.rung} ({r.rung_name})"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))


def records_json(records: Iterable[NodeRecord]) -> list[dict]:
    return [r.to_dict() for r in records]
