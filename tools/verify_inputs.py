"""``verify``'s inputs: shapes never guessed (a dynamic dimension needs ``--input-shapes`` or a static hint in
the model), sizes checked before anything is allocated, seeded values chosen by what reads each input."""

from __future__ import annotations

import math

import numpy as np

from ..semantics.errors import BridgeError, clip
from .node_probe import parameter_input, probe_input
from ..translate.onnx_shapes import declared_shape, graph_inputs, with_input_shapes

MAX_INPUT_BYTES = 1 << 30  # per input: what verify will allocate for a probe
MAX_TOTAL_BYTES = 2 << 30


def input_specs(model, shapes: dict | None = None, given: dict | None = None) -> list[dict]:
    """Per fed graph input: {"name", "dtype", "shape"} with every dimension settled: from ``shapes``
    (``--input-shapes``), from ``given`` arrays, or the model's static dims; a dynamic dimension with none of
    these is refused (it is never silently 1)."""
    import onnx

    shapes, given = shapes or {}, given or {}
    feeds = graph_inputs(model)
    names = [vi.name for vi in feeds]  # the model's order: the message names them alike on every run
    for n in list(shapes) + list(given):
        if n not in names:
            field = "input-shapes" if n in shapes else "inputs"
            raise BridgeError(f"the model has no input {clip(n, 80)!r} (its inputs: "
                              f"{', '.join(clip(x, 40) for x in names[:8]) or 'none'})", field=field)
    specs, total = [], 0
    for vi in feeds:
        t = vi.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) if t.elem_type else None
        if dtype is None:
            raise BridgeError(f"input {clip(vi.name, 80)!r} has no tensor element type", field="inputs")
        if vi.name in given:
            arr = given[vi.name]
            _check_given(vi.name, arr, np.dtype(dtype), declared_shape(vi))
            specs.append({"name": vi.name, "dtype": str(arr.dtype), "shape": list(arr.shape), "source": "given"})
            continue
        decl = declared_shape(vi)
        want = shapes.get(vi.name)
        if decl is None and want is None:
            raise BridgeError(f"input {clip(vi.name, 80)!r} has no declared shape; give it with "
                              f"--input-shapes {clip(vi.name, 40)}:[d0,d1,...]", field="input-shapes")
        if want is not None and decl is not None and len(want) != len(decl):
            raise BridgeError(f"input {clip(vi.name, 80)!r} has rank {len(decl)}; {len(want)} dimensions given",
                              field="input-shapes")
        dims = []
        for i, d in enumerate(want if want is not None else decl):
            if d is None or isinstance(d, str):
                hint = decl[i] if decl is not None and isinstance(decl[i], int) and decl[i] > 0 else None
                if hint is None:
                    sym = f" ({clip(decl[i], 40)!r})" if decl is not None and isinstance(decl[i], str) else ""
                    raise BridgeError(f"input {clip(vi.name, 80)!r} dimension {i}{sym} is dynamic; verify never "
                                      f"guesses it: give the shape with --input-shapes "
                                      f"{clip(vi.name, 40)}:[d0,d1,...] or --inputs FILE.npz", field="input-shapes")
                d = hint
            if not isinstance(d, int) or d <= 0:
                raise BridgeError(f"input {clip(vi.name, 80)!r} dimension {i} is {d}; verify needs a positive "
                                  f"length (give it with --input-shapes)", field="input-shapes")
            dims.append(d)
        nbytes = math.prod(dims) * np.dtype(dtype).itemsize
        total += nbytes
        if nbytes > MAX_INPUT_BYTES or total > MAX_TOTAL_BYTES:
            raise BridgeError(f"input {clip(vi.name, 80)!r} of shape {dims} would take {nbytes / 2**30:.3g} GiB; "
                              f"verify feeds at most {MAX_INPUT_BYTES >> 30} GiB per input "
                              f"({MAX_TOTAL_BYTES >> 30} GiB in all): give smaller --input-shapes",
                              field="input-shapes")
        specs.append({"name": vi.name, "dtype": np.dtype(dtype).name, "shape": dims,
                      "source": "--input-shapes" if want is not None else "model"})
    return specs


MAX_TENSOR_BYTES = 2 << 30


def _check_tensor_sizes(model, specs: list[dict]) -> None:
    """Refuse before running anything when shape inference on the fed shapes gives a tensor over
    ``MAX_TENSOR_BYTES`` (a resize by 1000x would otherwise be allocated by onnxruntime and OpenVINO)."""
    import onnx

    try:
        fixed = with_input_shapes(model, {s["name"]: s["shape"] for s in specs})
        inferred = onnx.shape_inference.infer_shapes(fixed, strict_mode=False, data_prop=True)
    except Exception:
        return  # shape inference has nothing to say: the runtimes' own errors will
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape") or not t.elem_type:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if any(d is None for d in dims):
            continue
        try:
            nbytes = math.prod(dims) * np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)).itemsize
        except (TypeError, KeyError, ValueError):
            continue
        if nbytes > MAX_TENSOR_BYTES:
            raise BridgeError(f"tensor {clip(vi.name, 80)!r} would have shape {dims} ({nbytes / 2**30:.3g} GiB) on "
                              f"these inputs; verify runs at most {MAX_TENSOR_BYTES >> 30} GiB per tensor: give "
                              f"smaller --input-shapes", field="input-shapes")


def _check_given(name: str, arr, dtype, decl) -> None:
    """A given input array must have the model's dtype and its static dimensions."""
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype:
        got = arr.dtype if isinstance(arr, np.ndarray) else type(arr).__name__
        raise BridgeError(f"input {clip(name, 80)!r} is {got}; the model takes {dtype}", field="inputs")
    if decl is not None and (len(decl) != arr.ndim or any(isinstance(d, int) and d > 0 and d != n
                                                           for d, n in zip(decl, arr.shape))):
        raise BridgeError(f"input {clip(name, 80)!r} has shape {list(arr.shape)}; the model declares "
                          f"{[d if isinstance(d, int) and d > 0 else '?' for d in decl]}", field="inputs")


def make_inputs(model, seed: int = 0, specs: list[dict] | None = None, val_range: dict | None = None) -> dict:
    """Seeded inputs for every graph input, chosen by what reads them (``check``'s probes: a noisy picture, grids
    reaching outside [-1, 1], offsets of a few pixels, masks in [0, 1], sensible run-time scales/sizes/roi).
    ``specs``: settled shapes (``input_specs``); ``val_range``: {name or "": (low, high)} for data inputs."""

    if specs is not None:
        model = with_input_shapes(model, {s["name"]: s["shape"] for s in specs if s.get("source") != "given"})
    rng = np.random.default_rng(seed)
    infos = {vi.name: vi for vi in model.graph.input}
    readers = {}
    for node in model.graph.node:
        for pos, name in enumerate(node.input):
            readers.setdefault(name, (node.op_type, pos, infos.get(node.input[0])))
    feeds = {}
    val_range = val_range or {}
    for vi in graph_inputs(model):
        op_type, pos, x_info = readers.get(vi.name, ("", 0, None))
        rr = val_range.get(vi.name, val_range.get(""))
        parameter = parameter_input(op_type, pos)
        if rr is not None and not (parameter and vi.name not in val_range):
            feeds[vi.name] = _in_range(vi, rng, rr)
        else:
            feeds[vi.name] = probe_input(op_type, pos, vi, rng, x_info, seed=seed)
    return feeds


def _in_range(vi, rng, rr):
    import onnx

    t = vi.type.tensor_type
    dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type))
    shape = [d.dim_value for d in t.shape.dim]
    lo, hi = rr
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        lo, hi = max(int(math.ceil(lo)), info.min), min(int(math.floor(hi)), info.max)
        return rng.integers(lo, hi, shape, endpoint=True, dtype=np.int64).astype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(lo, hi, shape).astype(dt)
