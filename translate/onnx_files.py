"""Reading an ONNX file as untrusted input: regular files only, sizes checked before anything is allocated,
external data resolved inside the model's folder. Every refusal is one line naming the file and, where
there is one, the tensor."""

from __future__ import annotations

import os
import stat

import numpy as np
import onnx
from onnx.external_data_helper import load_external_data_for_model

from ..semantics.errors import BridgeError

PROTOBUF_LIMIT = 2**31 - 1  # protobuf cannot parse a message this large; ONNX moves weights to external data


def read_model(path: str):
    st = _stat_regular(path, what="ONNX model")
    if st.st_size == 0:
        raise BridgeError(f"{path} is empty, not an ONNX model", field="model")
    if st.st_size > PROTOBUF_LIMIT:
        raise BridgeError(f"{path} is {st.st_size} bytes, over protobuf's 2 GiB limit (ONNX keeps the weights of "
                          f"such models in external data files)", field="model")
    with open(path, "rb") as f:
        data = f.read(PROTOBUF_LIMIT + 1)
    try:
        model = onnx.load_from_string(data)
    except Exception as e:  # protobuf raises DecodeError and friends
        raise BridgeError(f"{path} is not an ONNX model ({type(e).__name__})", field="model") from None
    base = os.path.dirname(os.path.abspath(path))
    external = False
    for where, t in _tensors(model.graph):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            _check_external(t, where, base)
            external = True
        else:
            _check_inline(t, where)
    if external:
        try:
            load_external_data_for_model(model, base)
        except Exception as e:
            raise BridgeError(f"{path}: external data could not be read ({type(e).__name__})", field="model") \
                from None
    return model


def _stat_regular(path: str, what: str) -> os.stat_result:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BridgeError(f"no such file: {path}") from None
    except OSError as e:
        raise BridgeError(f"{path} cannot be read ({e.strerror or type(e).__name__})") from None
    if stat.S_ISDIR(st.st_mode):
        raise BridgeError(f"{path} is a directory, not an {what}")
    if not stat.S_ISREG(st.st_mode):
        raise BridgeError(f"{path} is not a regular file (a FIFO, socket or device), not an {what}")
    return st


def _tensors(graph, prefix: str = ""):
    """(where, TensorProto) for every tensor stored in ``graph`` and its subgraphs."""
    for t in graph.initializer:
        yield f"{prefix}initializer {t.name!r}", t
    for i, node in enumerate(graph.node):
        label = node.name or f"{node.op_type}_{i}"
        for a in node.attribute:
            if a.HasField("t"):
                yield f"{prefix}node {label!r} attribute {a.name!r}", a.t
            for t in a.tensors:
                yield f"{prefix}node {label!r} attribute {a.name!r}", t
            if a.HasField("g"):
                yield from _tensors(a.g, f"{prefix}{label}/")
            for g in a.graphs:
                yield from _tensors(g, f"{prefix}{label}/")


def _nbytes(t) -> int | None:
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    except Exception:
        return None  # strings and unknown types: no fixed size
    if t.data_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4):
        return None
    n = 1
    for d in t.dims:
        if d < 0:
            raise BridgeError(f"dims {list(t.dims)} has a negative length", field="model")
        n *= d
    return n * itemsize


def check_inline_tensors(graph) -> None:
    """Every tensor stored in ``graph`` (and its bodies) carries the data its dims claim."""
    for where, t in _tensors(graph):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            _check_inline(t, where)


# The typed field that holds a tensor's values when it has no raw_data, and values per element.
_TYPED = {"float_data": ("FLOAT",), "double_data": ("DOUBLE",), "int64_data": ("INT64",),
          "uint64_data": ("UINT32", "UINT64"), "string_data": ("STRING",),
          "int32_data": ("INT32", "INT16", "INT8", "UINT16", "UINT8", "BOOL", "FLOAT16", "BFLOAT16")}


def _check_typed(t, where: str) -> None:
    kind = onnx.TensorProto.DataType.Name(t.data_type) if t.data_type in onnx.TensorProto.DataType.values() \
        else None
    field = next((f for f, kinds in _TYPED.items() if kind in kinds), None)
    if field is None:
        return  # complex, float8, 4-bit...: left to the runtime
    n = 1
    for d in t.dims:
        if d < 0:
            raise BridgeError(f"{where}: dims {list(t.dims)} has a negative length", field="model")
        n *= d
    have = len(getattr(t, field))
    if have != n:
        raise BridgeError(f"{where}: dims {list(t.dims)} need {n} values, the tensor has {have}", field="model")


def _check_inline(t, where: str) -> None:
    """Dims that claim more data than the tensor carries (a 1 GiB tensor with 16 bytes of data)."""
    if not t.HasField("raw_data"):
        _check_typed(t, where)
        return
    need = _nbytes(t)
    if need is not None and need != len(t.raw_data):
        raise BridgeError(f"{where}: dims {list(t.dims)} need {need} bytes, the data has {len(t.raw_data)}",
                          field="model")


def _check_external(t, where: str, base: str) -> None:
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    if not loc or os.path.isabs(loc):
        raise BridgeError(f"{where}: external data location {loc!r} must be a path relative to the model's "
                          f"folder", field="model")
    full = os.path.realpath(os.path.join(base, loc))
    if os.path.commonpath([full, os.path.realpath(base)]) != os.path.realpath(base):
        raise BridgeError(f"{where}: external data {loc!r} is outside the model's folder", field="model")
    st = _stat_regular(full, what="external data file")
    try:
        offset, length = int(info.get("offset", 0)), info.get("length")
    except ValueError:
        raise BridgeError(f"{where}: external data offset {info.get('offset')!r} is not a number",
                          field="model") from None
    need = _nbytes(t)
    length = int(length) if length is not None else (need if need is not None else st.st_size - offset)
    if offset < 0 or length < 0 or offset + length > st.st_size:
        raise BridgeError(f"{where}: external data {loc!r} has {st.st_size} bytes; the tensor claims bytes "
                          f"{offset} to {offset + length}", field="model")
    if need is not None and need != length:
        raise BridgeError(f"{where}: dims {list(t.dims)} need {need} bytes, the external data has {length}",
                          field="model")
