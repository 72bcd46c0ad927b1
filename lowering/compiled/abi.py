"""The C ABI (``lowering/kernels/rb_kernels.h``, ``lowering/cuda/rb_cuda.h``) from Python: its structs and
every function's signature, declared once here for both libraries, and loading the CPU library."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.schema import ATTRIBUTE_TYPES, KINDS, to_attributes
from .build import CMAKE_ROOT, build_library, project_hash

ABI_VERSION = 3
# The C ABI's dtype codes (rb_kernels.h). The CUDA launchers run the float ones; the CPU library and the
# OpenVINO extension all of them (integers: round half to even and saturate, Resize linear/cubic exactly).
FLOAT_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.float64): 2}
DTYPES = {**FLOAT_DTYPES, np.dtype(np.uint8): 3, np.dtype(np.int8): 4, np.dtype(np.uint16): 5,
          np.dtype(np.int16): 6, np.dtype(np.int32): 7, np.dtype(np.int64): 8}


class Number(ctypes.Structure):
    _fields_ = [("num", ctypes.c_int64), ("den", ctypes.c_int64), ("value", ctypes.c_double)]


class Axis(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("in_len", ctypes.c_int64), ("out_len", ctypes.c_int64),
                ("a", Number), ("b", Number), ("filter_scale", Number), ("nearest", ctypes.c_int32),
                ("stretch_clamp", ctypes.c_int32), ("has_valid", ctypes.c_int32)]


class ResizeSampler(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("antialias", ctypes.c_int32), ("exclude_outside", ctypes.c_int32),
                ("cubic_a", Number)]


class Table(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("in_len", ctypes.c_int64), ("out_len", ctypes.c_int64),
                ("K", ctypes.c_int64), ("index", ctypes.c_void_p), ("weight", ctypes.c_void_p),
                ("extrap", ctypes.c_void_p)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_void_p)]


class ResizeRuntime(ctypes.Structure):
    _fields_ = [("roi", ctypes.c_void_p), ("n_roi", ctypes.c_int64), ("scales", ctypes.c_void_p),
                ("n_scales", ctypes.c_int64), ("sizes", ctypes.c_void_p), ("n_sizes", ctypes.c_int64)]


class GridSampleParams(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("padding", ctypes.c_int32), ("padding_on", ctypes.c_int32),
                ("align_corners", ctypes.c_int32), ("arith", ctypes.c_int32), ("cubic_a", ctypes.c_double)]


class DeformConvParams(ctypes.Structure):
    _fields_ = [("strides", ctypes.c_void_p), ("pads", ctypes.c_void_p), ("dilations", ctypes.c_void_p),
                ("group", ctypes.c_int64), ("offset_group", ctypes.c_int64), ("kind", ctypes.c_int32),
                ("border", ctypes.c_int32), ("cubic_a", ctypes.c_double)]


_P, _I32, _I64, _C = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_char_p
_INT = ctypes.c_int
_ERR = [_P, _I64]  # every int-returning entry point ends with (err, errlen)
_RUN = [_P, _I32, _P, _P]  # (inputs, n_inputs, params, y), then threads (CPU) or stream (CUDA)
SIGNATURES = {
    "rb_abi_version": (_INT, []),
    "rb_vocabulary": (_C, [_I32, _I32]),
    "rb_op_type": (_C, [_I32]),
    "rb_attribute": (_C, [_I32, _I32, ctypes.POINTER(_I32)]),
    "rb_attribute_default": (_C, [_I32, _I32]),
    "rb_tap_count": (_I64, [_P, _P]),
    "rb_build_taps": (_INT, [_P, _P, _I64, _P, _P, _P, *_ERR]),
    "rb_resize_tables": (_INT, [_P, _P, _P, _I32, _P, ctypes.c_double, _I32, *_ERR]),
    "rb_resize_axes": (_INT, [_P, _P, _P, _I32, _P, _P, ctypes.c_double, _I32, *_ERR]),
    "rb_resize_bind": (_INT, [_C, _I32, _P, _P, _P, _P, _P, *_ERR]),
    "rb_resize_ir": (_INT, [_C, _P, _P, _P, _I32, *_ERR]),
    "rb_gridsample": (_INT, [*_RUN, _I32, *_ERR]),
    "rb_deformconv": (_INT, [*_RUN, _I32, *_ERR]),
    "rb_cuda_device_count": (_INT, []),
    "rb_cuda_resize_prepare": (_INT, [_C, _P, _P, _P, _P, ctypes.POINTER(_P), *_ERR]),
    "rb_cuda_resize_enqueue": (_INT, [_P, _P, _P, _P, *_ERR]),
    "rb_cuda_resize_release": (None, [_P]),
    "rb_cuda_resize_ir": (_INT, [_C, _P, _P, _P, _P, *_ERR]),
    "rb_cuda_gridsample": (_INT, [*_RUN, _P, *_ERR]),
    "rb_cuda_deformconv": (_INT, [*_RUN, _P, *_ERR]),
    "rb_cuda_alloc": (_INT, [ctypes.POINTER(ctypes.c_void_p), _I64, *_ERR]),
    "rb_cuda_free": (_INT, [_P]),
    "rb_cuda_copy": (_INT, [_P, _P, _I64, _I32, *_ERR]),
}


def load(path: Path, what: str, cuda: bool = False) -> ctypes.CDLL:
    """A built library with its entry points (``SIGNATURES``: rb_cuda_* for the CUDA launchers) declared."""
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise BridgeError(f"cannot load {what} {path}: {e}") from None
    for name, (res, args) in SIGNATURES.items():
        if name.startswith("rb_cuda_") == cuda:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
    return lib


# ----------------------------------------------------------------------------------------------------------
# The CPU library

_lib = None
lib_lock = threading.Lock()  # guards the loaded libraries (this one and the CUDA launchers)


def library_path() -> Path:
    env = os.environ.get("RESAMPLE_BRIDGE_KERNELS_LIB")
    if env:
        return Path(env)
    return build_library(CMAKE_ROOT, "rb_kernels", key=project_hash(extra=sys.platform))


def library() -> ctypes.CDLL:
    """The loaded kernel library (built on first use)."""
    global _lib
    with lib_lock:
        if _lib is None:
            path = library_path()
            lib = load(path, "the kernel library")
            if lib.rb_abi_version() != ABI_VERSION:
                raise BridgeError(f"{path} has C ABI version {lib.rb_abi_version()}, this module speaks "
                                  f"{ABI_VERSION}")
            _lib = lib
    return _lib


def available() -> str | None:
    """None when the kernels can run here, else why not (for tests to skip with)."""
    try:
        library()
    except BridgeError as e:
        return str(e)
    return None


def vocabulary(field: int) -> tuple[str, ...]:
    """The names the compiled library gives an enumeration (0 kind, 1 nearest, 2 padding, 3 padding_on,
    4 arith, 5 deform border)."""
    lib, out = library(), []
    while (name := lib.rb_vocabulary(field, len(out))) is not None:
        out.append(name.decode())
    return tuple(out)


def op_type(kind: str) -> str:
    """The compiled schema's op type name for an IR kind."""
    return library().rb_op_type(KINDS.index(kind)).decode()


def attribute_fields(kind: str) -> tuple[tuple[str, str], ...]:
    """The compiled schema's attributes for an IR kind (rb/attrs.hpp visit()): ((name, type), ...)."""
    lib, code, out = library(), _I32(), []
    while (name := lib.rb_attribute(KINDS.index(kind), len(out), ctypes.byref(code))) is not None:
        out.append((name.decode(), ATTRIBUTE_TYPES[code.value]))
    return tuple(out)


def attribute_defaults(kind: str) -> tuple[str, ...]:
    """The compiled schema's defaults for an IR kind (rb/attrs.hpp's field initialisers), in the C ABI's text
    form, in ``attribute_fields``' order."""
    lib, out = library(), []
    while (text := lib.rb_attribute_default(KINDS.index(kind), len(out))) is not None:
        out.append(text.decode())
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------
# Arguments


def call(fn, *args) -> None:
    """Call an int-returning entry point, appending the error buffer; BridgeError with its message."""
    err = ctypes.create_string_buffer(1024)
    if fn(*args, err, len(err)):
        raise BridgeError(f"kernel refused: {err.value.decode(errors='replace')}")


def ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data_as(ctypes.c_void_p)


def i64(values) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))


def dtype_code(a: np.ndarray, what: str, floats_only: bool = False) -> int:
    code = (FLOAT_DTYPES if floats_only else DTYPES).get(a.dtype)
    if code is None:
        kinds = "float32, float16 and float64" if floats_only else \
            "float32, float16, float64, uint8, int8, uint16, int16, int32 and int64"
        raise BridgeError(f"{what} has dtype {a.dtype}; the kernels run {kinds}", field=what)
    return code


def tensor(a: np.ndarray | None, data=None, what: str = "X") -> Tensor:
    """``a`` as an rb_tensor (``data``: a device pointer in place of a's own memory; ``what``: its name in a
    dtype error); None: an omitted input. The struct keeps its shape array alive."""
    if a is None:
        return Tensor(None, 0, 0, None)
    shape = i64(a.shape)
    t = Tensor(data if data is not None else ptr(a), dtype_code(a, what), a.ndim, ptr(shape))
    t._keep = shape
    return t


def tensors(arrays, names, data=None):
    """An rb_tensor array for ``arrays`` (``data``: their device pointers) and its length."""
    data = data or [None] * len(arrays)
    items = [tensor(a, d, what) for a, d, what in zip(arrays, data, names)]
    out = (Tensor * len(items))(*items)
    out._keep = items
    return out, len(items)


def number(v) -> Number:
    """An exact fraction as num/den when both fit in int64, else only its double."""
    f = Fraction(v)
    if abs(f.numerator) < 2**63 and f.denominator < 2**63:
        return Number(f.numerator, f.denominator, float(f))
    return Number(0, 0, float(f))


def attributes_text(attrs: dict) -> str:
    """The C ABI's text form of an attribute dict: "name=value" per line, lists space-separated."""
    lines = []
    for k, v in attrs.items():
        if isinstance(v, (list, tuple)):
            v = " ".join(str(int(i)) for i in v)
        elif isinstance(v, float):
            v = repr(v)
        lines.append(f"{k}={v}")
    return "\n".join(lines) + "\n"


def ir_text(ir) -> bytes:
    """The IR's attributes in the C ABI's text form, for the entry points that bind from attributes."""
    return attributes_text(to_attributes(ir)).encode()


def runtime_struct(runtime: dict) -> ResizeRuntime:
    """The run-time roi / scales / sizes (``runtime_values``' dict) as an rb_resize_runtime."""
    arrays = []
    for key, dt in (("roi", np.float64), ("scales", np.float64), ("sizes", np.int64)):
        v = runtime.get(key)
        arrays.append(None if v is None else np.ascontiguousarray(np.asarray(v, dtype=dt).reshape(-1)))
    s = ResizeRuntime(*[x for a in arrays for x in (ptr(a), 0 if a is None else a.size)])
    s._keep = arrays
    return s
