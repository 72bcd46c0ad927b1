"""The one probe input of a resampling node, shared by ``check`` (its verdict's max error), the HTML report and
the demo (their pictures and numbers) and ``verify`` (the seeded inputs it makes for a model's inputs): the same
values for the same shape, dtype and seed, so the same node shows the same error wherever it is printed.

Shape rule: the model's own dimensions, or ``--input``'s; a dimension left dynamic gets a stated default --
1 for the batch (axis 0) and the channels (axis 1 of the data), ``DEFAULT_LENGTH`` (16, the representative
length convert and check prove dynamic Resize axes on) for every other axis of the data and of a GridSample
grid -- never a 1x1 picture.

Values: data is a picture -- a ramp over the last two axes, a fine checkerboard (reading a neighbouring
element shows as a full-contrast error), a small offset per channel -- plus seeded noise, which makes every
value distinct (a wrong tap reads a different number); grids reach outside [-1, 1], offsets a few pixels, masks
[0, 1], run-time Resize parameters a fractional up-scale (x1.7) and an off-centre roi.
"""

from __future__ import annotations

import numpy as np

from ..lowering.openvino.length_free import REPRESENTATIVE_LENGTH

PROBE_SEED = 0
DEFAULT_LENGTH = REPRESENTATIVE_LENGTH
NOISE = 0.1  # of the picture's [0, 1.5] range: texture, not snow


def dynamic_length(ir=None):
    """The default length of a dynamic dimension of the node's data input, per axis (the module docstring's
    rule); a resized axis of a Resize always gets DEFAULT_LENGTH, the length check's tie proof runs on."""
    resized = set(getattr(ir, "axes", ()))  # only a Resize has resized axes
    return lambda ax: DEFAULT_LENGTH if ax >= 2 or ax in resized else 1


def dims(vi, dyn=None) -> list[int]:
    """The static dims of ``vi``; a dynamic one is ``dyn(axis)`` (1 without ``dyn``)."""
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else (dyn(ax) if dyn else 1)
            for ax, d in enumerate(vi.type.tensor_type.shape.dim)]


def probe_image(shape, dtype, seed: int = PROBE_SEED) -> np.ndarray:
    """The data probe (module docstring): the same array for the same shape, dtype and seed."""
    shape = tuple(int(s) for s in shape)
    if not shape:
        return np.zeros((), dtype)
    idx = np.indices(shape, dtype=np.float64)
    h, w = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
    i = idx[-2] if len(shape) >= 2 else np.zeros(shape)
    j = idx[-1]
    v = 0.5 * (i / max(h, 1) + j / max(w, 1)) + 0.5 * ((i + j) % 2)
    for k in range(len(shape) - 2):  # channels, depth: a small offset each, so slices differ
        v = v + 0.05 * idx[k]
    v = v + NOISE * np.random.default_rng(seed).standard_normal(shape)
    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        scale = min(100.0, info.max / 2.0)  # int8's image stays inside its range
        return np.clip(np.round(v * scale), info.min, info.max).astype(dt)
    return v.astype(dt)


def probe_input(op_type: str, pos: int, vi, rng, x_info=None, dyn=None, seed: int = PROBE_SEED) -> np.ndarray:
    """The probe for input ``pos`` of a node ``op_type`` (its value info ``vi``; ``x_info``: the data input's,
    for run-time Resize sizes); ``rng`` draws the grids, offsets and masks, ``seed`` the data's noise: the op's
    own probe (``INPUT_PROBES``) where it has one for the input, else the picture."""
    import onnx

    dt = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
    made = None if pos == 0 or op_type not in INPUT_PROBES else INPUT_PROBES[op_type](pos, vi, dt, rng, x_info, dyn)
    return probe_image(dims(vi, dyn) if pos == 0 else dims(vi), dt, seed) if made is None else made


def _resize_input(pos: int, vi, dt, rng, x_info, dyn):
    """roi, scales, sizes: a crop, and 1.7x on the last two axes."""
    if pos not in PARAMETER_INPUTS["Resize"]:
        return None
    shape = dims(vi)
    n = shape[0] if shape else 0
    lens = dims(x_info, dyn)[-n:] if x_info is not None and n else [1] * n
    spatial = [i >= n - 2 for i in range(n)]  # the last two axes
    if pos == 1:
        k = n // 2
        return np.array([0.1] * k + [0.85] * k, dtype=dt)
    if pos == 2:
        return np.array([1.7 if s else 1.0 for s in spatial], dtype=dt)
    return np.array([int(L * 1.7) if s else L for L, s in zip(lens, spatial)], dtype=dt)


def _grid_input(pos: int, vi, dt, rng, x_info, dyn):
    """The grid, a little beyond [-1, 1]; [N, *output spatial, D] with the output lengths the default and N the
    data's (a batch known on one side only: multi-scale deformable attention's data is batch x heads, its grid's
    batch a symbol; a grid of another batch does not run, which check once blamed on OpenVINO's importer)."""
    if pos != 1:
        return None
    batch = dims(x_info, dyn)[0] if x_info is not None and x_info.type.tensor_type.HasField("shape") and \
        x_info.type.tensor_type.shape.dim else 1
    shape = dims(vi, lambda ax: batch if ax == 0 else DEFAULT_LENGTH) if dyn is not None else dims(vi, lambda ax: batch)
    return rng.uniform(-1.2, 1.2, shape).astype(dt)


def _deformconv_input(pos: int, vi, dt, rng, x_info, dyn):
    """Offsets of a few pixels, a mask in [0, 1], normal weights and bias."""
    shape = dims(vi)
    if pos == 2:
        return rng.normal(0, 2.0, shape).astype(dt)
    if pos == 4:
        return rng.uniform(0, 1, shape).astype(dt)
    if pos in (1, 3):
        return rng.standard_normal(shape).astype(dt)
    return None


# Each op's probes for its inputs other than the data (ONNX op type -> generator; None: the picture).
INPUT_PROBES = {"Resize": _resize_input, "GridSample": _grid_input, "DeformConv": _deformconv_input}
# The inputs that steer an op rather than carry data: a value range given for the data does not apply to them.
PARAMETER_INPUTS = {"Resize": (1, 2, 3), "GridSample": (1,)}


def parameter_input(op_type: str, pos: int) -> bool:
    return pos in PARAMETER_INPUTS.get(op_type, ())


def probe_note(one, feeds: dict) -> dict:
    """What the probe of the one-node model ``one`` was: {"input", "shape", "seed", "defaults": {axis: length}
    for the dimensions the model leaves dynamic}."""
    x = one.graph.node[0].input[0]
    vi = next((v for v in one.graph.input if v.name == x), None)
    arr = feeds.get(x)
    if arr is None:
        return {"input": x, "shape": None, "seed": PROBE_SEED, "defaults": {}}
    declared = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                for d in vi.type.tensor_type.shape.dim] if vi is not None else [None] * arr.ndim
    defaults = {str(ax): int(n) for ax, (d, n) in enumerate(zip(declared, arr.shape)) if d is None}
    return {"input": x, "shape": [int(n) for n in arr.shape], "seed": PROBE_SEED, "defaults": defaults}


def probe_text(note: dict) -> str:
    """``X [1, 3, 16, 16] (seed 0; dynamic dims given defaults: axis 2 = 16, axis 3 = 16)``."""
    if not note or note.get("shape") is None:
        return "no probe input"
    d = note.get("defaults") or {}
    tail = ("; dynamic dims given defaults: " + ", ".join(f"axis {a} = {n}" for a, n in d.items())) if d else ""
    return f"{note['input']} {note['shape']} (seed {note['seed']}{tail})"
