"""The comparator: one array against a reference, as a typed result (modelled on Polygraphy's
``OutputCompareResult``). The OpenVINO ladder's proof (``probe``, ``frontend``), the ONNX target's proof and
``verify`` compare arrays through it; the tolerance comes from ``semantics.tolerance``. Imports numpy only.

An element is within tolerance when |got - want| <= atol * scale + rtol * |want|. ``scale`` is max(1, max|want|)
for floats by default (float rounding of a weighted sum scales with the summands, bounded by the data's
magnitude) and 1 for integers; a caller that has already scaled atol passes ``atol_scale=1``. NaN equals NaN,
equal infinities are equal, any other non-finite difference is infinite (never within tolerance).

With a per-element ``bound`` (``tolerance.float_bound``: the forward error bound of a float32 evaluation of the
spec's formula) an element is within tolerance when |got - want| <= bound + ``tolerance.BOUND_FLOOR``; atol and
rtol are not used then (the result records the floor as atol, rtol 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .tolerance import BOUND_FLOOR, default_tolerance, float_bound

_STATS = ("max_abs", "mean_abs", "median_abs", "p99_abs", "max_rel", "mean_rel", "median_rel", "p99_rel")


@dataclass(frozen=True)
class CompareResult:
    """``got`` against ``want``. Statistics are plain floats (possibly non-finite: ``non_finite`` names them);
    indices are tuples. ``to_dict`` gives the strict-JSON dict ``verify`` reports."""

    dtype: str
    shape: tuple
    atol: float
    rtol: float
    ok: bool
    shape_mismatch: str | None = None  # "[got shape] vs [want shape]"; no statistics then
    max_abs: float | None = None
    mean_abs: float | None = None
    median_abs: float | None = None
    p99_abs: float | None = None
    max_rel: float | None = None
    mean_rel: float | None = None
    median_rel: float | None = None
    p99_rel: float | None = None
    mismatches: int = 0  # elements beyond tolerance
    worst: tuple | None = None  # where |got - want| is largest (the first such element)
    got: float | None = None  # the values there
    want: float | None = None
    first_mismatch: tuple | None = None  # the first element beyond tolerance, in C order
    non_finite: tuple = ()  # the statistics that are not finite
    both_nan: int = 0  # elements NaN on both sides (counted equal)
    infinite: int = 0  # elements infinite on either side
    max_ratio: float | None = None  # with a per-element bound: the largest |got - want| / (bound + floor)

    @property
    def empty(self) -> bool:
        return self.shape_mismatch is None and self.worst is None

    def to_dict(self) -> dict:
        """The strict-JSON dict: a number that is not finite is None (``non_finite`` says which statistic)."""
        out: dict = {"dtype": self.dtype, "shape": list(self.shape), "atol": self.atol, "rtol": self.rtol}
        if self.shape_mismatch is not None:
            return {**out, "ok": False, "shape_mismatch": self.shape_mismatch, "max_abs": None, "max_rel": None,
                    "worst": None}
        if self.empty:
            return {**out, "ok": True, "max_abs": 0.0, "max_rel": 0.0, "mean_abs": 0.0, "median_abs": 0.0,
                    "p99_abs": 0.0, "mean_rel": 0.0, "median_rel": 0.0, "p99_rel": 0.0, "worst": None}
        out.update({k: _finite(getattr(self, k)) for k in _STATS})
        if self.non_finite:
            out["non_finite"] = list(self.non_finite)
        out.update(ok=self.ok, mismatches=self.mismatches, worst=list(self.worst), got=_finite(self.got),
                   want=_finite(self.want))
        return out


def _finite(x: float):
    return float(x) if math.isfinite(x) else None


def compare(got: np.ndarray, want: np.ndarray, atol: float | None = None, rtol: float | None = None, *,
            atol_scale: float | None = None, bound: np.ndarray | None = None) -> CompareResult:
    """``got`` against ``want``; atol / rtol default to ``tolerance.default_tolerance(want.dtype)``;
    ``atol_scale``: what atol is multiplied by (default: max(1, max|want|) for floats, 1 otherwise);
    ``bound``: a per-element bound (want's shape) instead of atol / rtol."""
    if bound is not None:
        atol, rtol = BOUND_FLOOR, 0.0
    d_atol, d_rtol = default_tolerance(want.dtype)
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    head = {"dtype": str(want.dtype), "shape": tuple(want.shape), "atol": atol, "rtol": rtol}
    if got.shape != want.shape:
        return CompareResult(**head, ok=False, shape_mismatch=f"{list(got.shape)} vs {list(want.shape)}")
    if want.size == 0:
        return CompareResult(**head, ok=True, **{k: 0.0 for k in _STATS})
    a, b, d, both_nan = _distance(got, want)
    with np.errstate(invalid="ignore", over="ignore"):
        rel = d / np.maximum(np.abs(b), 1e-12)
        finite_b = np.where(np.isfinite(b), b, 0.0)
        if atol_scale is None:
            atol_scale = max(1.0, float(np.abs(finite_b).max())) if np.issubdtype(want.dtype, np.floating) else 1.0
        if bound is None:
            bad = d > atol * atol_scale + rtol * np.abs(finite_b)
            ratio = None
        else:
            # Where want is not finite only the same value passes (d is 0 there or infinite).
            allowed = np.where(np.isfinite(b), np.broadcast_to(bound, b.shape), 0.0) + BOUND_FLOOR
            bad = (d > allowed) | np.isinf(d)
            ratio = float((d / allowed).max())
        # infinite distances: their percentiles interpolate inf - inf (NaN, reported in ``non_finite``), which numpy
        # would also print as a warning on stderr
        stats = {"max_abs": d.max(), "mean_abs": d.mean(), "median_abs": np.median(d),
                 "p99_abs": np.percentile(d, 99), "max_rel": rel.max(), "mean_rel": rel.mean(),
                 "median_rel": np.median(rel), "p99_rel": np.percentile(rel, 99)}
    i = np.unravel_index(int(np.argmax(d)), d.shape)
    stats = {k: float(v) for k, v in stats.items()}
    first = np.argwhere(bad)
    return CompareResult(**head, ok=not bool(bad.any()), **stats, mismatches=int(bad.sum()),
                         worst=tuple(int(x) for x in i), got=float(a[i]), want=float(b[i]),
                         first_mismatch=tuple(int(v) for v in first[0]) if len(first) else None,
                         non_finite=tuple(k for k, v in stats.items() if not math.isfinite(v)),
                         both_nan=int(both_nan.sum()), infinite=int((np.isinf(a) | np.isinf(b)).sum()),
                         max_ratio=ratio)


def within_bound(got: np.ndarray, want: np.ndarray, bound: np.ndarray) -> CompareResult:
    """The policy's verdict for floats: ``got`` within the per-element forward error ``bound`` of ``want``
    (``tolerance.float_bound``); integers and nearest have bound 0, so they must be equal."""
    return compare(got, want, bound=bound)


def against_oracle(ir, got: np.ndarray, want: np.ndarray, inputs) -> CompareResult:
    """The policy for one resampling node's output against the oracle's (``want``) on the same ``inputs`` (in
    ``reference.run``'s order): every element within the forward error bound of a float32 evaluation of the
    spec's formula (``tolerance.float_bound``); integers and nearest equal. The proof, check and verify judge
    a node by it."""
    if got.shape != want.shape:
        return compare(got, want, bound=np.zeros(()))
    return compare(got, want, bound=float_bound(ir, *inputs))


def _distance(got: np.ndarray, want: np.ndarray):
    """(got, want as float64, |got - want| per element, where both are NaN): NaN equals NaN, equal infinities
    are equal, any other non-finite difference is infinite."""
    a, b = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(both_nan, 0.0, np.abs(a - b))
        d = np.where(np.isnan(d), np.inf, d)  # one side NaN, or inf - inf
        d = np.where((a == b), 0.0, d)  # equal infinities
    return a, b, d, both_nan


def outside(got: np.ndarray, want: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Where ``got`` is beyond ``bound`` of ``want`` (same shapes; a non-finite ``want`` must be met exactly)."""
    _, b, d, _ = _distance(got, want)
    return (d > np.where(np.isfinite(b), bound, 0.0) + BOUND_FLOOR) | np.isinf(d)


__all__ = ["CompareResult", "compare", "within_bound", "against_oracle", "outside"]
