"""What a fuzz case is, and the small ONNX-building helpers every generator shares.

A case is data, not behaviour: the model (or hostile file) to hand to the CLI, the verbs to run on it, what a
good outcome is (``kind``), and for valid models the inputs on which the converted model must equal the
oracle. ``tools/dev/fuzz.py`` runs and classifies cases; ``fuzz_valid.py`` / ``fuzz_bad.py`` generate them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# Verbs, as the runner spells them: each is one CLI call.
VERBS = ("inspect", "check-ov", "convert-ov", "verify-ov", "check-trt", "convert-trt")
ALL_VERBS = list(VERBS)
OV_VERBS = ("check-ov", "convert-ov", "verify-ov")

# kind: what counts as a good outcome.
#   valid    exit 0 (convert: the written model equals the oracle) or a clean one-line refusal (exit 2)
#   invalid  only a clean one-line refusal (exit 2); ``need_node`` says whether it must name node and field
#   any      exit 0/1/2 are all fine as long as nothing crashes, hangs, leaks or prints unsafe text
#   outpath  the convert verbs must exit ``expect_rc``; ``protect`` files must be left untouched
KINDS = ("valid", "invalid", "any", "outpath")


@dataclass
class Case:
    family: str
    label: str                      # short description, shown in reports
    kind: str = "valid"
    model: object = None            # onnx.ModelProto, saved as model.onnx
    raw: bytes | None = None        # or these bytes, saved as model.onnx
    setup: Callable | None = None   # setup(case_dir) -> model path (str); makes FIFOs, external data, dirs ...
    verbs: list = field(default_factory=lambda: list(ALL_VERBS))
    feeds: list = field(default_factory=list)   # [{input name: array}], one dict per probe
    need_node: bool = True          # refusals must name node and field (model-content faults)
    out_xml: str = "out/model.xml"  # relative to the case dir (the runner makes out/ unless setup did)
    out_onnx: str = "out/model_trt.onnx"
    convert_flags: list = field(default_factory=list)
    expect_rc: int | None = None    # outpath: the exit status convert must give
    protect: list = field(default_factory=list)  # outpath: relative paths that must not change
    timeout: float | None = None    # per call, overrides --timeout when smaller
    note: str = ""                  # e.g. which checker confirms an invalid model is invalid
    index: int = 0
    name: str = ""                  # family-index, set by the campaign


# ----------------------------------------------------------------------------------------------------------
# ONNX helpers


def vi(name, elem, shape):
    from onnx import helper
    return helper.make_tensor_value_info(name, elem, shape)


def out_vi(name, elem, rank):
    """An output of known rank and unknown lengths (the ONNX checker wants a shape on every output)."""
    return vi(name, elem, [f"{name}_{i}" for i in range(rank)])


def const_init(name, arr):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(arr), name)


def const_node(name, arr):
    from onnx import helper, numpy_helper
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name),
                            name=f"const_{name}")


def make_model(nodes, inputs, outputs, inits=(), opset=19, ir_version=10, name="fuzz"):
    """IR version 10: onnxruntime 1.3x refuses the IR version onnx 1.23 writes by default."""
    from onnx import helper
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version,
                             producer_name="resample-bridge-fuzz")


ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "float16": 10, "float64": 11}


def elem(dtype) -> int:
    return ELEM[np.dtype(dtype).name]


def f32(x) -> float:
    return float(np.float32(x))


# ----------------------------------------------------------------------------------------------------------
# Data: random, plus the values where implementations part ways


def random_shape(rng: random.Random, rank: int) -> list[int]:
    """A small random shape: N and C mostly 1, spatial lengths up to 7 (5 in 5-D)."""
    if rank == 2:
        return [rng.randint(1, 6), rng.randint(1, 7)]
    lead = [rng.choice([1, 1, 2]), rng.choice([1, 1, 2, 3])]
    return lead + [rng.randint(1, 7 if rank == 4 else 5) for _ in range(rank - 2)]


def fmt_floats(vals) -> str:
    return "[" + ",".join(f"{v:.4g}" for v in vals) + "]"


def data(rng: random.Random, shape, dtype, style: str | None = None) -> np.ndarray:
    """Input data for ``shape``/``dtype``. Styles: normal, boundary (integers near 2^24 / extremes, so
    float32 paths and saturation show), halves (small integers whose interpolations land on .5)."""
    nrng = np.random.default_rng(rng.getrandbits(32))
    dt = np.dtype(dtype)
    style = style or rng.choice(["normal", "normal", "boundary", "halves"])
    n = int(np.prod(shape)) if len(shape) else 1
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        if style == "boundary":
            if dt == np.int32 and rng.random() < 0.6:
                v = 2**24 + nrng.integers(-3, 4, n)          # float32 cannot hold 2^24 + 1
            else:
                v = nrng.choice([info.min, info.max, info.min + 1, info.max - 1, 0], n)  # cubic overshoot
        elif style == "halves":
            v = nrng.integers(0, 6, n) + (0 if info.min == 0 else -3)
        else:
            lo, hi = max(info.min, -1000), min(info.max, 1000)
            v = nrng.integers(lo, hi + 1, n)
        return np.asarray(v, dtype=np.int64).clip(info.min, info.max).astype(dt).reshape(shape)
    if style == "boundary":
        v = 2.0**24 + nrng.integers(-4, 5, n) * rng.choice([1.0, 0.5])
    elif style == "halves":
        v = nrng.integers(-4, 5, n) * 0.5
    else:
        v = nrng.standard_normal(n) * rng.choice([1.0, 1.0, 100.0])
    if dt == np.float16:
        v = np.clip(v, -6e4, 6e4)
    return np.asarray(v).astype(dt).reshape(shape)


def tie_values(length: int, align_corners: bool) -> list[float]:
    """Normalised grid coordinates whose unnormalised source coordinate is exactly k + 1/2 (a nearest tie)
    on an axis of ``length``, for GridSample's two normalisations."""
    out = []
    for k in range(-1, length):
        x = k + 0.5
        if align_corners:
            if length > 1:
                out.append(2 * x / (length - 1) - 1)
        else:
            out.append((2 * x + 1) / length - 1)
    return out


def grid_values(rng: random.Random, n: int, length: int, align_corners: bool, dtype) -> np.ndarray:
    """Grid coordinates for one axis: uniform, at ties (rounded to the grid dtype, so next to the exact
    tie), one ulp either side of them, the corners, and far outside."""
    dt = np.dtype(dtype)
    ties = tie_values(length, align_corners) or [0.0]
    vals = []
    for _ in range(n):
        r = rng.random()
        if r < 0.45:
            vals.append(dt.type(rng.uniform(-1.25, 1.25)))
        elif r < 0.75:
            vals.append(dt.type(rng.choice(ties)))
        elif r < 0.88:
            t = dt.type(rng.choice(ties))
            vals.append(np.nextafter(t, dt.type(rng.choice([-math.inf, math.inf]))))
        elif r < 0.96:
            vals.append(dt.type(rng.choice([-1.0, 1.0, 0.0])))
        else:
            vals.append(dt.type(rng.choice([-3.0, 2.5, -1.5])))
    return np.array(vals, dtype=dt)
