"""Small helpers on OpenVINO graphs shared by the rungs, the proof, check and verify. openvino is imported
inside functions, so the package imports without it."""

from __future__ import annotations

import numpy as np

from ...semantics.ir import RUNTIME_FIELDS

# Every run compares with the oracle in f32: the CPU plugin's default hint may compute in bf16 / f16.
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
TAG = "resample_bridge"


def ops():
    import openvino.opset13 as ops13

    return ops13


def tag(node, name: str) -> None:
    """Mark an op so the proof can find it: the frontend renames a converted node's last op to the ONNX
    output name, so friendly names alone do not survive conversion; rt_info does (in memory)."""
    node.get_rt_info()[TAG] = name


def all_ops(ov_model):
    """Every op of ``ov_model``, the bodies of If / Loop / TensorIterator included (a resampling node inside a
    body is converted into the body)."""
    for op in ov_model.get_ops():
        yield op
        for body in bodies(op):
            yield from all_ops(body)


def bodies(op) -> list:
    if hasattr(op, "get_then_body"):
        return [b for b in (op.get_then_body(), op.get_else_body()) if b is not None]
    if op.get_type_name() in ("Loop", "TensorIterator") and hasattr(op, "get_function"):
        try:
            return [op.get_function()]
        except TypeError:
            return [op.get_function(0)]
    return []


def tagged(ov_model) -> dict:
    """tag -> op, for every op of ``ov_model`` (bodies included) carrying one."""
    found = {}
    for op in all_ops(ov_model):
        rt = op.get_rt_info()
        if TAG in rt:
            found[str(rt[TAG].astype(str))] = op
    return found


def dims(out) -> tuple | None:
    """An output's shape, None for an unknown dimension; None when even the rank is unknown."""
    ps = out.get_partial_shape()
    if not ps.rank.is_static:
        return None
    return tuple(d.get_length() if d.is_static else None for d in ps)


# Ops through which a 1-D shape value keeps its entries (an integer Convert, a reshape to 1-D).
_SHAPE_PASS = ("Convert", "Unsqueeze", "Squeeze", "Reshape")
_SHAPE_DEPTH = 12


def shape_entries(out, depth: int = _SHAPE_DEPTH) -> list | None:
    """The entries of a 1-D integer value computed from shapes, as OpenVINO's graph builds it: per entry an int
    (a constant), ("dim", output, axis) (an input's length there: ShapeOf picked by Gather / Slice with constant
    indices) or None (unknown); None when even its length is unknown. The OpenVINO-side twin of the ONNX
    parser's partial values (``translate/onnx_fold.py``), for a node the hook parsed without them."""
    ps = out.get_partial_shape()
    if depth == 0 or not ps.rank.is_static or ps.rank.get_length() > 1 or \
            (ps.rank.get_length() == 1 and not ps[0].is_static):
        return None
    n = ps[0].get_length() if ps.rank.get_length() == 1 else 1
    op, kind = out.get_node(), out.get_node().get_type_name()
    if kind == "Constant":
        return [int(v) for v in np.asarray(op.get_data()).reshape(-1)]
    if kind == "ShapeOf":  # a static length is a constant, whichever tensor it is read from
        src = op.input_value(0).get_partial_shape()
        return [src[k].get_length() if src[k].is_static else ("dim", op.input_value(0), k) for k in range(n)]
    if kind in _SHAPE_PASS and (kind != "Convert" or out.get_element_type().is_integral_number()):
        got = shape_entries(op.input_value(0), depth - 1)
        return got if got is not None and len(got) == n else None
    if kind == "Concat":
        parts = [shape_entries(op.input_value(i), depth - 1) for i in range(op.get_input_size())]
        return None if any(p is None for p in parts) else [e for p in parts for e in p]
    picked = _picked(op, kind)
    if picked is not None:
        src = shape_entries(op.input_value(0), depth - 1)
        if src is not None and all(-len(src) <= k < len(src) for k in picked) and len(picked) == n:
            return [src[k] for k in picked]
    return [None] * n


def _picked(op, kind: str) -> list | None:
    """The indices a Gather (axis 0) or Slice (one axis, constant start / stop / step) reads of a 1-D value."""
    consts = [_small_constant(op.input_value(i)) for i in range(1, op.get_input_size())]
    if any(c is None for c in consts):
        return None
    if kind == "Gather" and int(np.asarray(consts[1]).reshape(-1)[0]) == 0:
        return [int(v) for v in np.asarray(consts[0]).reshape(-1)]
    if kind == "Slice" and all(np.asarray(c).size == 1 for c in consts):
        length = op.input_value(0).get_partial_shape()[0]
        if length.is_static:
            start, stop, step = (int(np.asarray(c).reshape(-1)[0]) for c in consts[:3])
            return list(range(length.get_length()))[slice(start, stop, step)]
    return None


def _small_constant(out, depth: int = 3):
    """A Constant's value, the static shape a ShapeOf reads, or one of these broadcast to another (the ONNX
    frontend's Slice steps: Broadcast(1, ShapeOf(starts))); None for anything else."""
    op, kind = out.get_node(), out.get_node().get_type_name()
    if kind == "Constant":
        return op.get_data()
    if kind == "ShapeOf" and op.input_value(0).get_partial_shape().is_static:
        return np.array(op.input_value(0).get_shape(), np.int64)
    if kind == "Broadcast" and op.get_input_size() == 2 and depth > 0:
        value, shape = (_small_constant(op.input_value(i), depth - 1) for i in (0, 1))
        if value is not None and shape is not None:
            return np.broadcast_to(value, tuple(int(d) for d in np.asarray(shape).reshape(-1)))
    return None


def same_output(a, b) -> bool:
    """Whether two OpenVINO outputs are one tensor (the same node's same port)."""
    return a.get_index() == b.get_index() and a.get_node().get_name() == b.get_node().get_name()


def constant_of(op, port: int):
    src = op.input_value(port).get_node()
    return src.get_data() if src.get_type_name() == "Constant" else None


def consumer(op, type_name: str):
    """The single consumer of ``op``'s output of the given type, or None."""
    users = [i.get_node() for i in op.output(0).get_target_inputs()]
    users = [u for u in users if u.get_type_name() == type_name]
    return users[0] if len(users) == 1 else None


def observing(ov_model, observe: list):
    """``ov_model`` with the named tensors of ``observe`` it holds added as outputs (a clone where any is added):
    how a proof reads a node's own inputs and outputs inside a whole written model."""
    if not observe:
        return ov_model
    m = ov_model.clone()
    have = {n for op in m.get_ops() for o in op.outputs() for n in o.get_names()}
    outs = {n for o in m.outputs for n in o.get_names()}
    extra = [n for n in dict.fromkeys(observe) if n in have and n not in outs]
    if extra:
        m.add_outputs(extra)
    return m


# Measured (OpenVINO 2026.4.1 CPU): an Interpolate in linear_onnx mode on an input above rank 5 aborts the whole
# process at inference ("free(): invalid pointer", SIGABRT: no exception to catch; OpenVINO's own importer writes
# it for a rank-6 linear Resize) or refuses its axes. Nearest, cubic and the older linear mode run there.
MAX_LINEAR_ONNX_RANK = 5


def cpu_aborts(ov_model) -> str | None:
    """Why running ``ov_model`` on OpenVINO's CPU would abort the process (checked before compiling it), or None."""
    for op in all_ops(ov_model):
        if op.get_type_name() == "Interpolate" and op.get_attributes().get("mode") == "linear_onnx":
            rank = op.input_value(0).get_partial_shape().rank
            if rank.is_static and rank.get_length() > MAX_LINEAR_ONNX_RANK:
                return f"OpenVINO's CPU Interpolate in linear_onnx mode aborts the process at inference above rank " \
                       f"{MAX_LINEAR_ONNX_RANK} (here {rank.get_length()}; measured: free(): invalid pointer)"
    return None


def compile_checked(core, ov_model, config: dict):
    """``core.compile_model`` on CPU, refused with RuntimeError (in one sentence) where running it would abort
    the process (``cpu_aborts``)."""
    why = cpu_aborts(ov_model)
    if why is not None:
        raise RuntimeError(why)
    return core.compile_model(ov_model, "CPU", config)


def compile_f32(ov_model, core=None):
    """``ov_model`` compiled for CPU in f32; calling it returns outputs whose bfloat16 ones are typed so."""
    import openvino as ov

    return Compiled(compile_checked(core or ov.Core(), ov_model, F32))


def np_dtype(element_type):
    """The numpy dtype of an OpenVINO element type; bf16 is ml_dtypes' bfloat16 (the binding's to_dtype()
    says float16 for it, and would have its values read as float16 bits)."""
    import openvino as ov

    if element_type == ov.Type.bf16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(element_type.to_dtype())


def typed(port, value) -> np.ndarray:
    """An output ``value`` of ``port`` as an array of the port's element type (bf16 comes back as float16
    bits: viewed as bfloat16, never converted)."""
    value = np.asarray(value)
    want = np_dtype(port.get_element_type())
    return value.view(want) if want != value.dtype and want.itemsize == value.dtype.itemsize else value


class Compiled:
    """A CompiledModel whose results (by index, port or name; ``items()``, ``values()``) are :func:`typed`."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.outputs, self.inputs = compiled.outputs, compiled.inputs

    def __call__(self, feeds):
        return Results(self.compiled(feeds))


class Results:
    def __init__(self, res):
        self._res, self._ports = res, list(res.keys())

    def _port(self, key):
        if isinstance(key, int):
            return self._ports[key]
        if isinstance(key, str):
            return next(p for p in self._ports if key in p.get_names())
        return key

    def __getitem__(self, key):
        return typed(self._port(key), self._res[key])

    def __len__(self):
        return len(self._ports)

    def keys(self):
        return list(self._ports)

    def items(self):
        return [(p, typed(p, v)) for p, v in self._res.items()]

    def values(self):
        return [v for _, v in self.items()]


# A run-time tensor keeps its producer's name in the IR; each framework names it its own way, so the name is
# no difference in semantics.
RUNTIME_SOURCES = tuple(f"{k}.source" for k in RUNTIME_FIELDS)
