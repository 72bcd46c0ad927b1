"""OpenVINO model loading and what the op parsers read of a node: attributes checked against their allowed
values, input shapes and element types, and parameter inputs as values.

Parameters come from Constants (and what the CPU folds before running: ShapeOf of a static shape, Convert of
a Constant -- ``save_model``'s default fp16 compression stores Interpolate scales that way, rounded to
float16); anything else is a ``RuntimeValue`` naming its producer.
"""

from __future__ import annotations

import os

import numpy as np

from ..semantics.errors import BridgeError, first_line
from ..semantics.ir import RuntimeValue


def _ov():
    # The one import of the optional openvino package: the translate modules import without it.
    import openvino

    return openvino


def load(model_or_path):
    """An ``openvino.Model`` from a Model, or an IR ``.xml`` path (the ``.bin`` next to it)."""
    ov = _ov()
    if isinstance(model_or_path, ov.Model):
        return model_or_path
    if isinstance(model_or_path, (str, os.PathLike)):
        path = os.fspath(model_or_path)
        if not os.path.exists(path):
            raise BridgeError(f"no such file: {path}")
        if os.path.isdir(path):
            raise BridgeError(f"{path} is a directory, not an OpenVINO model")
        try:
            return ov.Core().read_model(path)
        except Exception as e:  # RuntimeError with OpenVINO's multi-line message
            first = first_line(e)
            raise BridgeError(f"{path} could not be read as an OpenVINO model ({first})") from None
    raise BridgeError(f"expected an openvino.Model or a path to an IR .xml, got {type(model_or_path).__name__}")


def node_name(node) -> str:
    return node.get_friendly_name()


def op_version(node) -> int:
    """The op's version number: ``opset4`` -> 4."""
    vid = node.get_type_info().version_id
    digits = "".join(c for c in vid if c.isdigit())
    if not digits:
        raise BridgeError(f"unknown op version {vid!r}", node_name(node), "version")
    return int(digits)


def supported_version(node, supported: tuple[int, ...]) -> int:
    """``op_version``, refused unless one of ``supported``."""
    version = op_version(node)
    if version not in supported:
        raise BridgeError(f"{node.get_type_name()}-{version} is not supported "
                          f"({', '.join(map(str, supported))} are)", node_name(node), "version")
    return version


def _fold(out, depth: int = 0):
    """The value of an output when it is computable before run time -- a Constant, the ShapeOf of a static
    shape, or an op of such values (the CPU plugin folds them at compile time; ``save_model``'s default
    compress_to_fp16 turns a float Constant into Constant(f16) -> Convert) -- else None."""
    ov = _ov()
    src = out.get_node()
    kind = src.get_type_name()
    if kind == "Constant":
        return np.asarray(src.get_data())
    if kind == "ShapeOf":
        ps = src.get_input_partial_shape(0)
        if ps.is_static:
            return np.array(list(ps.to_shape()), dtype=src.get_output_element_type(0).to_dtype())
        return None
    if depth >= 8 or kind in ("Parameter", "Result") or src.get_output_size() != 1 or \
            not src.get_output_partial_shape(0).is_static:
        return None
    args = []
    for j in range(src.get_input_size()):
        v = _fold(src.input_value(j), depth + 1)
        if v is None:
            return None
        args.append(ov.Tensor(np.ascontiguousarray(v)))
    try:
        res = [ov.Tensor(src.get_output_element_type(0), src.get_output_partial_shape(0).to_shape())]
        if not src.evaluate(res, args):
            return None
        return np.array(res[0].data)
    except Exception:
        return None


def input_value(node, i: int):
    """Input ``i`` as a numpy array when it is known before run time (see _fold), else a RuntimeValue naming
    its producer, None when the node has no such input."""
    if i >= node.get_input_size():
        return None
    out = node.input_value(i)
    v = _fold(out)
    if v is not None:
        return v
    src = out.get_node()
    name = src.get_friendly_name()
    if src.get_output_size() > 1:
        name += f":{out.get_index()}"
    return RuntimeValue(name)


def input_shape(node, i: int) -> tuple[int | None, ...] | None:
    ps = node.get_input_partial_shape(i)
    if ps.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in ps)


def input_dtype(node, i: int) -> str | None:
    try:
        return np.dtype(node.get_input_element_type(i).to_dtype()).name
    except Exception:
        return None


def choice(attrs: dict, name: str, allowed, node: str) -> str:
    v = str(attrs.get(name, "")).lower()
    if v not in allowed:
        raise BridgeError(f"unsupported value {attrs.get(name)!r}; expected one of {', '.join(allowed)}", node,
                          name)
    return v


def flat(v):
    if v is None or isinstance(v, RuntimeValue):
        return v
    return np.asarray(v).reshape(-1).tolist()
