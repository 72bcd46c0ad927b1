"""Probe inputs for proving a lowered node by numbers, on any target: arrays chosen to expose what a wrong
candidate gets wrong, each set in the node's ONNX input order (``semantics.reference.run`` takes them as is).

Per input role: data gets random values, distinct values (a wrong tap reads a different number), the dtype's
extremes (saturation for u8/i8, values past 2^24 for int32, where float32 arithmetic loses the last bit) and,
for integer dtypes, neighbours differing by odd amounts so that averages land on .5 (round half to even);
GridSample grids get random points inside and outside [-1, 1], points at and one float32 step either side
of the .5 ties of the unnormalised coordinate, and points far outside (many reflections); DeformConv offsets land on half pixels; run-time scales/sizes/
roi get several values (only one, the condition's easiest case, for a candidate exact under conditions).

numpy and ``semantics`` only: no framework.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..semantics.coords import bind_resize, unnormalize
from ..semantics.ir import GridSampleIR, ResizeIR, RuntimeValue, pinned_positions
from ..semantics.opspec import PerOp

# Representative lengths for an unknown dimension: a small one, a prime, an even one. Several, because a
# candidate that claims exactness for every length must show it on more than one.
DYNAMIC_LENGTHS = (5, 7, 12)
DYNAMIC_BATCH = (1, 2, 3)
FAR_GRID = 40.0  # grid values up to +-40: far outside [-1, 1]
INTEGER_DRAWS, INTEGER_BUDGET = 128, 1 << 16  # full-range integer draws: at most 128, at most 64 Ki elements


@dataclass(frozen=True)
class ProbeSet:
    """One run: ``arrays`` in ONNX input order (None: omitted or a constant of the model, which the caller
    supplies); ``what``: a few words for a refusal ("int32 extremes", "grid ties")."""

    arrays: tuple
    what: str


def roles(ir) -> tuple[str, ...]:
    """What each ONNX input of the node is, in order."""
    return ROLES.of(ir)(ir)


def _resize_roles(ir: ResizeIR) -> tuple[str, ...]:
    return ("data", "scales") if ir.origin.startswith(("Upsample", "Resize-10")) else ("data", "roi", "scales", "sizes")


ROLES = PerOp("input roles", resize=_resize_roles, gridsample=lambda ir: ("data", "grid"),
              deformconv=lambda ir: ("data", "weight", "offset", "bias", "mask"))


def concrete_shapes(shape, count: int = len(DYNAMIC_LENGTHS)) -> list[tuple[int, ...]]:
    """Concrete shapes for a partly unknown one (None: unknown dimension; axis 0 gets batch-like lengths).
    A static shape is its only concrete shape."""
    shape = tuple(shape)
    if all(d is not None for d in shape):
        return [shape]
    out = []
    for k in range(count):
        out.append(tuple(d if d is not None else (DYNAMIC_BATCH if i == 0 else DYNAMIC_LENGTHS)[k]
                         for i, d in enumerate(shape)))
    return out


def data_probes(shape, dtype, rng) -> list[tuple[np.ndarray, str]]:
    """(array, what) for a data input of ``shape`` and ``dtype``."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape)) if len(shape) else 1
    out = []
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        out.append((rng.integers(max(lo, -1000), min(hi, 1000) + 1, n), "random integers"))
        # Results within float rounding of a .5 are rare per element: many draws over the whole range (as many
        # as keep the oracle cheap) find the ones a float32 path rounds the wrong way.
        for k in range(max(1, min(INTEGER_DRAWS, INTEGER_BUDGET // max(n, 1)))):
            out.append((rng.integers(lo, hi, n, endpoint=True), f"random {dt.name} values (draw {k + 1})"))
        # Alternating extremes: cubic overshoot beyond the range must saturate, not wrap.
        out.append((np.where(np.arange(n) % 2 == 0, lo, hi), f"{dt.name} extremes"))
        # Odd neighbours: a 1/2 (or 1/4, 3/4) weight lands on .5, which rounds half to even.
        out.append((np.arange(n) % 4 + np.arange(n) // 4 % 2, "values that average to .5"))
        if info.bits >= 32:
            base = 2**24 + 2 * np.arange(n) + 1  # odd: not representable in float32
            out.append((np.minimum(base, hi), "values past 2^24"))
            out.append((hi - (np.arange(n) % 7), "values near the top of the range"))
        return [(v.astype(dt).reshape(shape), w) for v, w in out]
    out.append((rng.standard_normal(n), "random values"))
    # float16 tops out at 65504: past it a permutation / 7 turned to inf (a 1x16x160x200 input), and Interpolate's
    # float16 path then read NaN where the oracle's taps were finite -- a probe of infinities no float32 node gets.
    step = 1 / 7.0 if dt != np.float16 or n / 7.0 < 6e4 else 6e4 / n
    out.append((rng.permutation(n) * step + 0.25, "distinct values"))
    big = 1e4 if dt == np.float16 else 1e6  # cubic overshoot stays inside float16
    out.append((rng.uniform(-big, big, n), "large values"))
    return [(v.astype(dt).reshape(shape), w) for v, w in out]


def grid_probes(ir: GridSampleIR, x_shape, grid_shape, dtype, rng) -> list[tuple[np.ndarray, str]]:
    """Grids: random points reaching outside [-1, 1]; points whose unnormalised coordinate is a .5 tie, and
    one float32 step either side of it (nearest reads one pixel or the next there)."""
    dt = np.dtype(dtype)
    shape = tuple(grid_shape)
    n = int(np.prod(shape))
    out = [(rng.uniform(-1.2, 1.2, n).astype(dt).reshape(shape), "random grid points")]
    D = shape[-1]
    lengths = [int(L) for L in x_shape[2:]][::-1]  # grid[..., 0] is the last spatial axis
    ties = np.empty(shape, dtype=np.float64)
    flat = ties.reshape(-1, D)
    for d in range(D):
        L = lengths[d]
        # g with unnormalize(g) = k + 1/2 for each k (and one past each end), solved from the same formula.
        ks = np.arange(-1, L) + 0.5
        p0, p1 = unnormalize(np.float64(-1.0), L, ir.align_corners), unnormalize(np.float64(1.0), L, ir.align_corners)
        if p1 == p0:  # align_corners over length 1: every grid value reads index 0, no tie to aim at
            g = np.zeros_like(ks)
        else:
            g = -1.0 + 2.0 * (ks - p0) / (p1 - p0)
        flat[:, d] = np.resize(g, flat.shape[0])
    t32 = ties.astype(np.float32)
    for name, arr in (("grid points on .5 ties", t32), ("grid points one step above ties",
                                                         np.nextafter(t32, np.float32(np.inf))),
                      ("grid points one step below ties", np.nextafter(t32, np.float32(-np.inf)))):
        out.append((arr.astype(dt), name))
    # Far outside: tens of reflections on small lengths, every tap padded.
    out.append((rng.uniform(-FAR_GRID, FAR_GRID, n).astype(dt).reshape(shape), "grid points far outside [-1, 1]"))
    return out


def runtime_probes(ir: ResizeIR, role: str, x_shape, dtype, conditional: bool) -> list[tuple[np.ndarray, str]]:
    """Values for a run-time scales / sizes / roi input: an integer up-scale first (the easiest case of every
    stated condition), then fractional up- and down-scales when the candidate claims every value."""
    dt = np.dtype(dtype)
    axes = list(ir.axes)
    value = getattr(ir, role, None)
    pinned = pinned_positions(value)
    # The last two listed axes, but where the graph pins one to X's own length (sizes = Concat(Shape(X)[:2], S) on
    # a rank-3 input pins its channel axis): no value the model computes resizes it, and a probe that did would
    # fail a candidate that reads the pin (the index form of nearest align_corners took the extension so).
    last_two = [i >= len(axes) - 2 for i in range(len(axes))]
    spatial = [s and i not in pinned for i, s in enumerate(last_two)]
    factors = [2.0] if conditional else [2.0, 1.5, 0.75, 0.5, 1.05]  # 1.05: a length kept, scale not 1
    rows = [(f, spatial, "") for f in factors]
    # The other listed axes may be resized too unless the graph pins them to X's own length: a batch or channel
    # axis is where a runtime's op may resize differently or not at all (OpenVINO's CPU cubic read out of bounds
    # there; a candidate exact only where they keep their length says so in a condition). One probe doubles them
    # all, the last two kept (a rank-6 input doubled everywhere is 64x its size).
    outer = [not s and i not in pinned for i, s in enumerate(last_two)]
    if any(outer) and not conditional:
        rows.append((2.0, outer, " on the outer axes"))
    out = []
    if role == "scales":
        for f, which, what in rows:
            out.append((np.array([f if s else 1.0 for s in which], dtype=dt), f"scales x{f}{what}"))
    elif role == "sizes":
        lens = [x_shape[a] for a in axes]
        for f, which, what in rows:
            out.append((np.array([max(1, int(L * f)) if s else L for L, s in zip(lens, which)], dtype=dt),
                        f"sizes x{f}{what}"))
    elif role == "roi":
        k = len(axes)
        out.append((np.array([0.0] * k + [1.0] * k, dtype=dt), "full roi"))
        if not conditional:
            out.append((np.array([0.1] * k + [0.85] * k, dtype=dt), "off-centre roi"))
    return out


def sizes_of_scales(ir: ResizeIR, x_shape, dt) -> np.ndarray:
    """The value the model's graph gives a sizes input that the IR reads as static scales
    (``ResizeIR.scales_from_sizes``): the output lengths, on the axes the sizes lists."""
    out = bind_resize(ir, tuple(x_shape)).out_shape
    return np.array([out[a] for a in ir.scales_from_sizes], dtype=dt)


def probe_sets(ir, shapes: list, dtypes: list, fed: list, *, conditional: bool = False,
               seed: int = 0) -> list[ProbeSet]:
    """Probe sets for a node whose inputs have ``shapes`` (concrete) and ``dtypes`` (numpy names, None for an
    omitted input); ``fed[i]``: input i is fed at run time (else it is a constant of the model and stays None
    here). Each set varies one input's probes while the others keep their first (random) probe."""
    rng = np.random.default_rng(seed)
    kinds = roles(ir)
    per_input: list[list[tuple[np.ndarray, str]]] = []
    for i, (role, shape, dt) in enumerate(zip(kinds, shapes, dtypes)):
        if dt is None or not fed[i]:
            per_input.append([])
            continue
        if role in ("scales", "sizes", "roi"):
            if isinstance(getattr(ir, role), RuntimeValue):
                per_input.append(runtime_probes(ir, role, shapes[0], dt, conditional))
            elif role == "sizes" and ir.scales_from_sizes:
                per_input.append([(sizes_of_scales(ir, shapes[0], dt), "sizes the graph computes")])
            else:
                per_input.append([(np.zeros(shape, dtype=dt), role)])
        elif role == "grid":
            per_input.append(grid_probes(ir, shapes[0], shape, dt, rng))
        elif role == "offset":
            v = rng.normal(0, 2.0, shape)
            per_input.append([(v.astype(dt), "random offsets"), ((np.round(v) + 0.5).astype(dt), "half-pixel offsets")])
        elif role == "mask":
            per_input.append([(rng.uniform(0, 1, shape).astype(dt), "random mask")])
        elif role in ("weight", "bias"):
            per_input.append([(rng.standard_normal(shape).astype(dt), f"random {role}")])
        else:
            per_input.append(data_probes(shape, dt, rng))
    base = [p[0][0] if p else None for p in per_input]
    sets = [ProbeSet(tuple(base), " / ".join(p[0][1] for p in per_input if p) or "no inputs")]
    for i, probes in enumerate(per_input):
        for arr, what in probes[1:]:
            arrays = list(base)
            arrays[i] = arr
            sets.append(ProbeSet(tuple(arrays), what))
    return sets
