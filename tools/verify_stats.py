"""How ``verify`` judges a compared tensor beyond the element-wise tolerance: Polygraphy's ``--check-error-stat``
(max, mean or median of the errors against the tolerances, per output or for all) and ``--validate`` (NaN or Inf
the reference does not have fails the tensor, judged or not)."""

from __future__ import annotations

import numpy as np

from ..semantics.compare import BOUND_FLOOR
from ..semantics.errors import BridgeError, clip
from ..semantics.tolerance import float_bound

ERROR_STATS = ("elemwise", "max", "mean", "median")


def parse_error_stats(items) -> dict:
    """``["max", "out1:mean"]`` -> {"": "max", "out1": "mean"} (Polygraphy's ``--check-error-stat``)."""
    out = {}
    for item in items or ():
        name, _, stat = item.rpartition(":")
        if stat not in ERROR_STATS:
            raise BridgeError(f"{clip(item, 60)!r} is not [NAME:]STAT with STAT one of {', '.join(ERROR_STATS)}",
                              field="check-error-stat")
        out[name] = stat
    return out


def judge_by_stat(row: dict, stat: str) -> dict:
    """``row`` (``CompareResult.to_dict``) judged as Polygraphy's ``--check-error-stat STAT`` does: for max, mean
    or median the tensor fails when that statistic of the absolute errors exceeds atol *and* that of the relative
    errors exceeds rtol (a statistic that is not finite fails); elemwise keeps the per-element verdict."""
    if stat == "elemwise" or row.get("shape_mismatch") or "max_abs" not in row:
        return row

    def over(value, tol):
        return value is None or value > tol

    failed = over(row.get(f"{stat}_abs"), row["atol"]) and over(row.get(f"{stat}_rel"), row["rtol"])
    return {**row, "ok": not failed if row.get("ok") is not None else None, "error_stat": stat}


def non_finite_introduced(got, want) -> int:
    """Elements NaN or infinite in ``got`` where ``want`` is finite (0 when the shapes differ)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or not np.issubdtype(got.dtype, np.inexact):
        return 0
    return int((~np.isfinite(got) & np.isfinite(want)).sum())


def finish_row(row: dict, got, want, stat: str = "elemwise", validate: bool = False) -> dict:
    """``row`` with ``--check-error-stat`` applied and, under ``--validate``, failed when ``got`` has NaN/Inf
    that ``want`` has not (even where the row is not judged)."""
    row = judge_by_stat(row, stat)
    bad = non_finite_introduced(got, want) if validate else 0
    if bad:
        row = {**row, "ok": False, "validate": f"{bad} NaN/Inf elements the reference does not have"}
    return row


__all__ = ["ERROR_STATS", "parse_error_stats", "judge_by_stat", "non_finite_introduced", "finish_row"]


def looser_than_bound(ir, want, args, atol: float, rtol: float) -> bool:
    """Whether a node judged by ``atol`` / ``rtol`` (as ``compare`` applies them) admits an error somewhere that
    the policy's float32 error bound on the same inputs would not (the verdict then says so)."""
    b = np.where(np.isfinite(want), np.abs(want), 0.0).astype(np.float64)
    scale = max(1.0, float(b.max(initial=0.0))) if np.issubdtype(want.dtype, np.floating) else 1.0
    return bool(np.any(atol * scale + rtol * b > float_bound(ir, *args) + BOUND_FLOOR))
