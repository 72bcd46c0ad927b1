"""The tolerance policy: how far a computed array may stand from the oracle's (or a reference runtime's) and
still count as the same numbers. Imports numpy and the semantics package.

Exact, for floating point, means: every element within the forward error bound of a float32 evaluation of the
spec's formula -- the coordinate map, the tap weights and the weighted sum each rounded to float32 --
computed per element from the oracle's own taps, weights and values (``float_bound``, ``error_bound.py``).
Integers are bit-exact and nearest picks the same element (bound 0). bfloat16 is a float32 evaluation rounded
once to bfloat16: the result must be the rounding of a value within that bound of the exact one, i.e. the exact
value rounded once, or its neighbour where the exact value lies within the bound of a midpoint
(``_bfloat16_bound``). This is how every resampling node is
judged against the oracle: the OpenVINO proof by numbers (``lowering/openvino/probe.py``, ``frontend.py``), the
ONNX target's proof (``lowering/onnx/prove.py``), ``check`` (the importer's output) and ``verify`` (each node),
through ``compare.against_oracle``.

Where no per-element bound exists -- a whole model's outputs against onnxruntime's (``verify``), or the report's
heatmap floor -- fixed (atol, rtol) pairs apply, named below."""

from __future__ import annotations

import numpy as np

from . import error_bound
from .opspec import PerOp
from .reference import round_to_bfloat16, run

# verify's threshold for model outputs (converted model vs onnxruntime), the default of ``compare``: float32
# rounding of a weighted sum, atol per unit of the data's magnitude (``compare`` scales it by max(1, max|want|)).
FLOAT = (1e-5, 1e-4)
# A whole model's outputs against the source on onnxruntime, at convert time (``lowering.model_check``): two
# runtimes that order a deep network's float sums differently (oneDNN, MLAS) drift apart by more than one
# weighted sum does (measured on the real-model corpus: within 1e-4 of the data's magnitude); a model read wrong
# (a frozen size, a shifted map) is off by far more.
MODEL = (1e-4, 1e-4)
# The same for float16 outputs: a few of its ulps (2^-11 relative) at unit magnitude.
FLOAT16_REPORT = (1e-2, 1e-3)
# The policy in one sentence, for reports.
POLICY = ("a node is exact when every output element lies within the forward error bound of a float32 evaluation "
          "of the spec's formula (coordinate, tap weights and weighted sum each rounded to float32), computed per "
          "element by the oracle; integers and nearest must match bit for bit, bfloat16 must be that evaluation "
          f"rounded once; model outputs against onnxruntime: atol {FLOAT[0]:g} (times max(1, max|expected|)) and "
          f"rtol {FLOAT[1]:g}")

# The report's heatmaps: errors below this share of max(1, max|exact|) stay dark (float32 rounding noise).
REPORT_FLOOR = FLOAT[1]


# The bound's absolute floor: a few float32 subnormals' worth (2^-126 is the smallest normal), so that an
# implementation that flushes subnormal products to zero is not refused on values that are 0 to float32.
BOUND_FLOOR = 16 * 2.0**-126


def float_bound(ir, *inputs) -> np.ndarray:
    """Per output element: how far a float32 evaluation of ``ir``'s formula may land from the oracle's output
    on these inputs (the oracle's inputs, in ``reference.run``'s order); 0 for integers and nearest."""
    if inputs and getattr(inputs[0], "dtype", None) is not None and inputs[0].dtype.name == "bfloat16":
        return _bfloat16_bound(ir, *inputs)
    return error_bound.bound(ir, *inputs)


def _bfloat16_bound(ir, x, *rest) -> np.ndarray:
    """bfloat16: the float32 evaluation rounded once to bfloat16, against the exact value rounded once. The
    result may be the rounding of any value within the float32 bound b of the exact y, so it lies between
    rnd(y - b) and rnd(y + b): 0 apart from the oracle's rnd(y) unless y is within b of a rounding midpoint,
    one bfloat16 step there (a policy of eps * |y|, as float16's, would accept a step anywhere: an op that
    rounds to bfloat16 between passes). Inputs of X's type are taken as float64 (exactly)."""
    wide = [a.astype(np.float64) if a is not None and getattr(a, "dtype", None) == x.dtype else a
            for a in (x, *rest)]
    y = np.asarray(run(ir, *wide), dtype=np.float64)
    b = error_bound.bound(ir, *wide)
    want = round_to_bfloat16(y)
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(np.maximum(round_to_bfloat16(y + b) - want, want - round_to_bfloat16(y - b)),
                             nan=0.0)


def default_tolerance(dtype) -> tuple[float, float]:
    """(atol, rtol) of ``verify`` (and ``compare``'s default): FLOAT for floats, FLOAT16_REPORT for float16,
    bit-exact for integers and bools."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        return FLOAT16_REPORT
    if np.issubdtype(dt, np.floating):
        return FLOAT
    return 0.0, 0.0


# OpenVINO's inference precisions and their unit roundoff: the default on CPUs with bf16 (AMX / AVX-512 BF16) is
# bf16, on GPU f16; resample-bridge proves at f32 and ``verify --precision`` judges at the others (issue 43).
PRECISIONS = {"f32": 0.0, "bf16": 2.0**-8, "f16": 2.0**-11}


def reduced_bound(ir, exact: np.ndarray, f32_bound: np.ndarray, inputs, precision: str) -> np.ndarray:
    """Per element, what an evaluation at ``precision`` may add to the float32 bound: values rounded, never an
    index moved. Each tap value and weight and the sum rounded once more (u per term of sum |w| |x|, K taps), and the
    result rounded (u |y|); sum |w| |x| is the float32 bound's own (``error_bound.magnitude``), twice over. Not the
    oracle on |X|: cubic's negative weights cancel there, and an exact bicubic (OpenVINO's Interpolate, measured
    0.0058 off at a value of 2.13 under bf16) was judged against a bound of 0.00044. A nearest read of another
    element is off by the difference of two elements, far beyond u |x| on probe data."""
    u = PRECISIONS[precision]
    if not u:
        return f32_bound
    scale = error_bound.magnitude(ir, *inputs).reshape(np.shape(exact))
    sampler = getattr(ir, "sampler", None)
    taps = error_bound.ir_taps(sampler) ** max(1, len(getattr(ir, "axes", ())) or getattr(ir, "spatial_rank", 1))
    return f32_bound + u * (np.abs(exact) + 2 * (taps + 3) * scale)


def _grid_share(ir, x, grid, step: float) -> np.ndarray:
    return error_bound.bound_gridsample(ir, x, grid, grid_step=step).e


# What coordinates read from a rounded tensor add to ``rounded_input_bound``: a grid's; Resize reads none (its
# lengths are integers); DeformConv's offsets are not covered yet (its bound takes no error in them).
_COORDINATE_SHARE = PerOp("coordinates read from a rounded tensor", resize=lambda ir, *a, step: 0.0,
                          gridsample=_grid_share, deformconv=lambda ir, *a, step: 0.0)


def rounded_input_bound(ir, f32_bound: np.ndarray, inputs) -> np.ndarray:
    """Per element, the float32 bound plus what rounding the node's data to its own reduced float type (float16,
    bfloat16) may move the result: a runtime that runs a float16 model's nodes in float32 (OpenVINO's CPU;
    onnxruntime where a neighbour has no float16 kernel) computes a node from values the model's tensor of that
    name holds only rounded, half a step each, so the node judged on that tensor may be off by sum |w| |x| half
    steps, a grid's coordinates their share (measured: a float16 U-Net's bilinear Resize, one float16 step off on
    its own tensors; a float16 grid_sample on a computed grid, 0.0006). Nearest adds 0: it picks an element, whose
    rounding is the output's own."""
    x = np.asarray(inputs[0]) if inputs and inputs[0] is not None else None
    if x is None or x.dtype.name not in ("float16", "bfloat16") or \
            getattr(getattr(ir, "sampler", None), "kind", "") == "nearest":
        return f32_bound
    step, normal = (2.0 ** -11, 2.0 ** -14) if x.dtype.name == "float16" else (2.0 ** -8, 2.0 ** -126)
    wide = x.astype(np.float64)
    rest = [np.asarray(a).astype(np.float64) if a is not None and np.issubdtype(np.asarray(a).dtype, np.floating)
            else a for a in inputs[1:]]
    # each value off by half a step of max(|v|, the smallest normal): below it the steps are absolute
    extra = step * error_bound.magnitude(ir, np.where(np.abs(wide) < normal, normal, wide), *rest)
    extra = extra + _COORDINATE_SHARE.of(ir)(ir, wide, *rest, step=step)
    return f32_bound + np.nan_to_num(extra, nan=0.0, posinf=np.inf).reshape(np.shape(f32_bound))


def precision_tolerance(precision: str) -> tuple[float, float] | None:
    """(atol, rtol) of a model output computed at ``precision`` against the source on onnxruntime (float32): a
    few roundings at that precision, None for f32 (the defaults)."""
    u = PRECISIONS[precision]
    return (4 * u, 4 * u) if u else None


def model_tolerance(dtype) -> tuple[float, float]:
    """(atol, rtol) of a whole model's output against the source on onnxruntime (``lowering.model_check``): MODEL
    for floats, float16's own for float16, bit-exact for integers and bools."""
    dt = np.dtype(dtype)
    return default_tolerance(dt) if dt == np.float16 or not np.issubdtype(dt, np.floating) else MODEL


def report_floor(exact: np.ndarray) -> float:
    """The error the report's heatmaps start at (REPORT_FLOOR of the exact output's magnitude)."""
    return REPORT_FLOOR * max(1.0, float(np.abs(exact).max(initial=0)))


__all__ = ["POLICY", "FLOAT", "MODEL", "FLOAT16_REPORT", "REPORT_FLOOR", "BOUND_FLOOR", "float_bound", "default_tolerance", "model_tolerance",
           "PRECISIONS", "reduced_bound", "rounded_input_bound", "precision_tolerance",
           "report_floor"]
