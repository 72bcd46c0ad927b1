"""The proof by numbers of the run-time scale window (``scale_taps``): the window subgraph of one axis, compiled
alone on CPU, run over a grid of (L, s) against the oracle's output length (``lengths.output_length``) and taps
(``window_form.oracle_table``). The grid: every length to 10 and a few long ones with round scales, powers of two,
the scales k/L and their float32 neighbours (the products just below and above an integer) and the model's own
static scales; where the produced model holds its scale as a constant (a static scale on run-time lengths), that
scale with every length to 64 and longer ones. Verdicts are cached per machine and OpenVINO release."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...semantics.coords import axis_roi, box_past, crop_inside_range
from ...semantics.lengths import output_length
from ...semantics.ir import ResizeIR, RuntimeValue
from ...semantics.window_form import one_axis_bound, oracle_outside, oracle_table
from ..compiled.build import cache_root, project_hash
from ..index_form import Verdicts, version_of
from .antialias_taps import GRID, tap_layout, taps_mismatch
from .index_ops import cached_verdict, signature


class _Verdicts(Verdicts):
    """The verdict store of this form's grid proofs, in a file of its own hashed from the sources they rest on."""

    def _file(self):
        from pathlib import Path

        if self.sources is None:
            here = Path(__file__).resolve().parent
            self.sources = project_hash(here.parents[1] / "semantics", here / "scale_taps.py", here / "scale_grid.py",
                                        here / "scale_length.py", here / "scale_source.py", here / "pinned.py",
                                        extra=f"scale grid {self.runtime()}")
        return cache_root() / f"scale-grid-{self.sources}.json"


VERDICTS = _Verdicts(version_of("openvino"))


def static_scale(ir: ResizeIR, axis: int) -> float | None:
    """The float32 scale of ``axis`` where the IR fixes it, else None (fed at run time)."""
    if isinstance(ir.scales, RuntimeValue) or ir.scales is None:
        return None
    return float(np.float32(float(ir.scales[list(ir.axes).index(axis)])))


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers of the window subgraph, over a grid of (L, s)


def _neighbours(s: float) -> list[float]:
    v = np.float32(s)
    return [float(np.nextafter(v, np.float32(0))), float(v), float(np.nextafter(v, np.float32(np.inf)))]


# The scales every length is tried with: round ones (0.7f: 10 * 0.7f rounds up to 7 in float32), powers of two,
# 1, and one far below any useful scale; each with its float32 neighbours.
_SCALES = (0.1, 0.25, 0.3, 1 / 3, 0.5, 0.6, 0.7, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.7, 8.0, 2 ** -20)
_LENGTHS = tuple(range(1, 11)) + (17, 31, 100, 1000)
# A scale the model fixes is tried with every length to 64 and longer ones whose products land on all residues
_FIXED_LENGTHS = tuple(range(1, 65)) + (97, 100, 127, 128, 255, 256, 1000, 1023, 4096, 65535)
FULL_CHECK = 160  # pairs with more outputs than this have their length checked, not their taps (the oracle's
# Fraction tables take ~0.1 ms per output): the coordinates of long axes are the probes' part


def grid(length: int | None = None, scales: tuple = ()) -> list[tuple[int, float]]:
    """(L, s) pairs: every L of ``_LENGTHS`` (or the one ``length``) with ``_SCALES``, the scales k/L and the
    model's own static ``scales``, each with its float32 neighbours (the products just below and above an
    integer)."""
    pairs = set()
    for L in (length,) if length else _LENGTHS:
        ks = range(1, 2 * L + 1, max(1, L // 6))
        for s in _SCALES + tuple(k / L for k in ks) + tuple(scales):
            pairs.update((L, v) for v in _neighbours(s))
    return sorted(pairs)


def fixed_scale_grid(s: float, length: int | None = None) -> list[tuple[int, float]]:
    """(L, s) for one scale the produced model holds as a constant: every L of ``_FIXED_LENGTHS`` (or the one
    ``length``)."""
    return [(L, s) for L in ((length,) if length else _FIXED_LENGTHS)]


def _static_scales(ir: ResizeIR) -> tuple:
    """The IR's static scales (float32 values), () where they are fed at run time."""
    scales = [static_scale(ir, a) for a in ir.axes]
    return () if None in scales else tuple(sorted(set(scales)))


def grid_verdict(model, ir: ResizeIR, taps_axis: int = 0, fixed_len: int | None = None,
                 fixed_scale: float | None = None, roi=None) -> str | None:
    """None when ``model`` (parameters: L i64 unless ``fixed_len`` gives it, s f32 unless ``fixed_scale`` does;
    outputs: index and weight [K, out], [out, K] where ``taps_axis`` is 1) gives the oracle's output length and
    taps of one axis of ``ir`` (with the axis' crop box ``roi``: ``coords.axis_roi``) on OpenVINO CPU for every
    (L, s) of ``grid`` with the IR's static scales (``fixed_scale_grid`` where the scale is fixed), else where it
    does not."""
    key = (signature(model), ir.sampler, ir.coord, ir.exclude_outside, ir.equal_length_identity,
           ir.unit_scale_identity, taps_axis, fixed_len, fixed_scale, _static_scales(ir), roi, _sampled(ir))
    return cached_verdict(VERDICTS, key, model, "scale window",
                          lambda run: _grid_mismatch(run, ir, taps_axis, fixed_len, fixed_scale, roi))


def _grid_mismatch(run, ir: ResizeIR, taps_axis: int, fixed_len: int | None,
                   fixed_scale: float | None, roi=None) -> str | None:
    pairs = grid(fixed_len, _static_scales(ir)) if fixed_scale is None else fixed_scale_grid(fixed_scale, fixed_len)
    if box_past(roi) and fixed_scale is None:
        pairs = pairs + [(fixed_len or L, s) for L, s in _LONG_SCALES]
    pairs = _sample(pairs, ir)
    for L, s in pairs:
        want_len = output_length(L, Fraction(s), ir.size_rule)
        feeds = ([] if fixed_len else [np.array(L, np.int64)]) + ([] if fixed_scale else [np.array(s, np.float32)])
        index, weight, outside = _window(run, feeds, taps_axis)
        if index.shape != weight.shape or index.shape[0] != want_len:
            return f"the output length is {index.shape[0]}, not {want_len}, at L={L}, s={s!r}"
        if want_len == 0:
            continue
        why = _axis_mismatch(index, weight, outside, ir, L, want_len, Fraction(s), roi, f"L={L}, s={s!r}")
        if why is not None:
            return why
    return None


def _window(run, feeds, taps_axis: int):
    """(index, weight) [out, K] of the window subgraph run on ``feeds``, and its outside mask [out] (None where it
    has none: ``scale_taps.window_graph``)."""
    run.infer(feeds)
    index, weight = (run.get_output_tensor(k).data for k in (0, 1))
    outside = run.get_output_tensor(2).data.reshape(-1).copy() if len(run.model_outputs) > 2 else None
    return ((index.T, weight.T) if taps_axis == 0 else (index, weight)) + (outside,)


def _axis_mismatch(index, weight, outside, ir: ResizeIR, L: int, out: int, scale, roi, where: str) -> str | None:
    """``_taps_mismatch`` on an axis the oracle's tables can take (``FULL_CHECK`` outputs), else only its outside
    mask (``_long_outside_mismatch``)."""
    if out > FULL_CHECK:
        return _long_outside_mismatch(outside, ir, L, out, scale, roi, where)
    return _taps_mismatch(index, weight, outside, ir, L, out, scale, roi, where)


def _taps_mismatch(index, weight, outside, ir: ResizeIR, L: int, out: int, scale, roi, where: str) -> str | None:
    """Why a window's taps (read inside the input) are not the oracle's taps of one axis of ``ir`` from L to out
    (given, or of ``scale``; the axis' crop box ``roi``), within the error bound's allowance per weight; with its
    outside mask (a crop box past [0, 1]), why that mask is not the oracle's, the taps compared where it is not."""
    if index.min() < 0 or index.max() >= L:
        return f"the window subgraph reads outside the input at {where}"
    want, allow = oracle_table(ir, L, out, scale, roi)
    if outside is not None:
        oracle = oracle_outside(ir, L, out, scale, roi)
        if not np.array_equal(outside, oracle):
            return _mask_mismatch(outside, oracle, where)
        keep = ~oracle
        if not keep.any():
            return None
        index, weight, want, allow = index[keep], weight[keep], want[keep], allow[keep]
    return taps_mismatch(index, weight, L, want, allow, where)


# A crop box past [0, 1]: its outside outputs are decided per output length, up to ``scale_source.CROP_MAX_OUT``
# (2^21): long axes by scale and by given length, to 2^20 (each costs its window's length; the bound itself:
# tests/lowering/test_crop_outside.py)
_LONG_SCALES = [(5, 3201.0), (300, 3000.0)]
_LONG_SIZES = [(5, 16005), (3, 1000003)]


def _sampled(ir: ResizeIR) -> bool:
    """Whether the node has more than two axis windows to prove (a crop box of its own on three or more axes): each
    then runs every third pair of its grid (their oracle tables, cubic antialias' above all, took 70 s for four
    axes, past the fuzz campaign's minute: seed 16910 case 116), the probes run the whole node as ever."""
    return len({(tap_layout(ir.rank, a), axis_roi(ir, a)) for a in ir.axes}) > 2


def _sample(pairs: list, ir: ResizeIR) -> list:
    """``pairs``, or every third of them (the long ones kept) where ``_sampled``."""
    return [p for k, p in enumerate(pairs) if k % 3 == 0 or p[1] > 1000] if _sampled(ir) else pairs


def _long_outside_mismatch(outside, ir: ResizeIR, L: int, out: int, scale, roi, where: str) -> str | None:
    """On an axis too long for the oracle's tables: why the window's outside mask (a crop box past [0, 1]) is not
    the outputs outside ``coords.crop_inside_range`` (the oracle's map, ``tests/semantics/test_crop_range.py``),
    none where the oracle copies the axis or it has one element; None without a mask."""
    if outside is None:
        return None
    lo, hi = crop_inside_range(tuple(roi), out)
    o = np.arange(out)
    copied = L == 1 or not one_axis_bound(ir, L, out, scale, roi).axes
    want = np.zeros(out, bool) if copied else (o < lo) | (o > hi)
    return None if np.array_equal(outside, want) else _mask_mismatch(outside, want, where)


def _mask_mismatch(outside, want, where: str) -> str:
    """The first output the window's outside mask places otherwise than the oracle, in words."""
    k = int(np.argmax(outside != want))
    side = lambda v: "outside" if v else "inside"  # noqa: E731
    return f"output {k} is {side(outside[k])} the input at {where}, the oracle says {side(want[k])}"


# (in, out) of the window from given output lengths: every pair to 16, extreme ratios both ways (the integer
# window's ``antialias_taps.GRID``) and longer ones near 1 and 1.5x either way
SIZES_GRID = GRID + [(100, 150), (150, 100), (159, 160), (160, 159), (64, 63)]


def sizes_grid_verdict(model, ir: ResizeIR, taps_axis: int = 0, fixed_len: int | None = None,
                       fixed_out: int | None = None, roi=None) -> str | None:
    """``grid_verdict`` for the window given its output length (parameters: in, then out, i64, each unless
    ``fixed_len`` / ``fixed_out`` gives it): the oracle's taps for every (in, out) of ``SIZES_GRID``."""
    key = ("sizes", signature(model), ir.sampler, ir.coord, ir.exclude_outside, taps_axis, fixed_len, fixed_out, roi,
           _sampled(ir))
    return cached_verdict(VERDICTS, key, model, "sizes window",
                          lambda run: _sizes_mismatch(run, ir, taps_axis, fixed_len, fixed_out, roi))


def _sizes_mismatch(run, ir: ResizeIR, taps_axis: int, fixed_len, fixed_out, roi) -> str | None:
    pairs = SIZES_GRID + (_LONG_SIZES if box_past(roi) else [])
    for L, out in _sample(sorted({(fixed_len or i, fixed_out or o) for i, o in pairs}), ir):
        if out == 0 or L == 0 or (out > FULL_CHECK and not box_past(roi)):
            continue
        index, weight, outside = _window(run, [np.array(v, np.int64) for v, f in ((L, fixed_len), (out, fixed_out))
                                               if f is None], taps_axis)
        if index.shape != weight.shape or index.shape[0] != out:
            return f"the window has {index.shape[0]} rows, not {out}, at in={L}, out={out}"
        why = _axis_mismatch(index, weight, outside, ir, L, out, None, roi, f"in={L}, out={out}")
        if why is not None:
            return why
    return None
