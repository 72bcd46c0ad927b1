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
        for body in _bodies(op):
            yield from all_ops(body)


def _bodies(op) -> list:
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


def compile_f32(ov_model, core=None):
    """``ov_model`` compiled for CPU in f32; calling it returns outputs whose bfloat16 ones are typed so."""
    import openvino as ov

    return Compiled((core or ov.Core()).compile_model(ov_model, "CPU", F32))


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
