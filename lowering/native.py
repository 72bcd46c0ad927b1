"""The shared C++ kernels from Python: build on first use, load with ctypes, run an IR value.

``lowering/kernels/`` holds header-only templates (host and CUDA device code) and a small C ABI
(``rb_kernels.h``); this module builds that library with CMake into a cache directory keyed by the sources'
hash (``$RESAMPLE_BRIDGE_CACHE`` or ``~/.cache/resample_bridge``), or loads ``$RESAMPLE_BRIDGE_KERNELS_LIB``
when set. A machine without CMake or a C++17 compiler gets a BridgeError saying so; nothing else in the
package depends on this module.

Entry points take exactly the oracle's arguments (``semantics.reference.run``):

* ``resize(ir, x, *onnx_inputs, tables="python")``: binds the IR with ``semantics.coords.bind_resize``; with
  ``tables="python"`` the kernel applies the oracle's own tap tables (``semantics.taps.axis_taps``), with
  ``tables="native"`` the C++ port of the tap rules builds them from the bound axes (a, b, lengths, sampler).
* ``gridsample(ir, x, grid)``, ``deformconv(ir, x, w, offset, b=None, mask=None)``.
  ``tables="ir"`` does everything in C++ from the op's attributes, binding included (the port of
  ``bind_resize`` that the OpenVINO op runs for run-time shapes and scales).
* ``gridsample(ir, x, grid)``, ``deformconv(ir, x, w, offset, b=None, mask=None)``.
* ``tap_table(axis, sampler, exclude_outside)``, ``bind_native(ir, shape)``: the C++ ports, for comparison.

Element types: float32, float16, float64 (float64 accumulation throughout, as the oracle).

The op attribute schema (``onnx_attributes`` / ``openvino_attributes`` / ``parse_attributes``; C++ side
``kernels/rb/attrs.hpp``) is shared by the custom-domain ONNX nodes (``onnx_node``, domain ``resample_bridge``)
and the OpenVINO extension (``openvino_extension()`` builds ``lowering/openvino_ext``; ``openvino_node`` makes
an op from Python). ``cuda_library()`` / ``cuda_run`` build and run ``lowering/cuda`` where nvcc and a device are.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..semantics.coords import BoundAxis, bind_resize
from ..semantics.errors import BridgeError
from ..semantics.ir import (ARITH, GRID_PADDINGS, NEAREST_MODES, PADDING_ON, SAMPLER_KINDS, DeformConvIR,
                            GridSampleIR, ResizeIR, RuntimeValue, Sampler)
from ..semantics.reference import deformconv_out_shape, runtime_values
from ..semantics.taps import TapTable, axis_taps

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE / "kernels"
DEFORM_BORDERS = ("zero_taps", "clamp_in_range")  # DeformConvIR.border, in the C ABI's order
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.float64): 2}
_SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".txt", ".cmake", ".in")


# ----------------------------------------------------------------------------------------------------------
# Build on first use, into a cache keyed by the sources.


def cache_root() -> Path:
    env = os.environ.get("RESAMPLE_BRIDGE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "resample_bridge"


def source_hash(*dirs: Path, extra: str = "") -> str:
    """Hash of every source file under ``dirs`` (names and contents) plus ``extra``: the cache key."""
    h = hashlib.sha256(extra.encode())
    for d in dirs:
        for p in sorted(d.rglob("*")):
            if p.is_file() and p.suffix in _SOURCE_SUFFIXES:
                h.update(str(p.relative_to(d.parent)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def missing_tools() -> str | None:
    """Why nothing can be built here, or None."""
    if not shutil.which("cmake"):
        return "CMake is not installed (https://cmake.org, or `pip install cmake`)"
    if not _compiler():
        return "no C++17 compiler was found (install g++ or clang++, or set CXX)"
    return None


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock across processes (pytest-xdist workers, two notebooks) while one of them builds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: builds are still atomic by rename
            pass
        yield


def build_library(src: Path, target: str, *, key: str, cmake_args: tuple[str, ...] = (),
                  what: str = "the resample-bridge kernels") -> Path:
    """``lib<target>.so`` built from the CMake project ``src`` into ``cache_root()/<target>-<key>/``,
    reusing an earlier build with the same key. Older builds of the same target beyond the newest few are
    removed (a process that loaded one keeps its mapping)."""
    out_dir = cache_root() / f"{target}-{key}"
    lib = out_dir / f"lib{target}.so"
    if lib.exists():
        return lib
    why = missing_tools()
    if why:
        raise BridgeError(f"{what} must be compiled on first use, but {why}")
    with _locked(out_dir / ".lock"):
        if lib.exists():
            return lib
        build = Path(tempfile.mkdtemp(prefix="build-", dir=out_dir))
        log = out_dir / "build.log"
        jobs = os.environ.get("RESAMPLE_BRIDGE_BUILD_JOBS") or str(max(1, min(4, os.cpu_count() or 1)))
        cmds = [["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_CXX_COMPILER={_compiler()}", *cmake_args],
                ["cmake", "--build", str(build), "-j", jobs]]
        try:
            with open(log, "w") as fh:
                for cmd in cmds:
                    fh.write("$ " + " ".join(cmd) + "\n")
                    fh.flush()
                    if subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode:
                        fh.flush()
                        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
                        raise BridgeError(f"building {what} failed (log: {log}):\n{tail}")
            built = next(build.rglob(f"lib{target}.so"), None)
            if built is None:
                raise BridgeError(f"building {what} produced no lib{target}.so (log: {log})")
            tmp = out_dir / f".lib{target}.so.{os.getpid()}"
            shutil.copy2(built, tmp)
            os.replace(tmp, lib)  # atomic: a concurrent reader sees no library or the finished one
        finally:
            shutil.rmtree(build, ignore_errors=True)
    _prune(target, keep=out_dir)
    return lib


def _prune(target: str, keep: Path, newest: int = 3) -> None:
    dirs = sorted((d for d in cache_root().glob(f"{target}-*") if d.is_dir() and d != keep),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for d in dirs[newest - 1:]:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------------------------
# The op attribute schema (Python side; the C++ side is kernels/rb/attrs.hpp): IR fields as attributes of the
# custom-domain ONNX nodes and of the OpenVINO ops. Exact rationals as text ("3/2"), lists space-separated;
# scales / sizes / roi: "" absent, "input" fed at run time (ONNX Resize input 1 roi, 2 scales, 3 sizes).

DOMAIN = "resample_bridge"
DOMAIN_VERSION = 1
ONNX_OP_TYPES = {"resize": "Resize", "gridsample": "GridSample", "deformconv": "DeformConv"}
OPENVINO_OP_TYPES = {"resize": "ResampleBridgeResize", "gridsample": "ResampleBridgeGridSample",
                     "deformconv": "ResampleBridgeDeformConv"}


def _fractions(values) -> str:
    return " ".join(str(Fraction(v)) for v in values)


def _maybe_runtime(value, text) -> str:
    if value is None:
        return ""
    if isinstance(value, RuntimeValue):
        return "input"
    return text(value)


def onnx_attributes(ir) -> dict:
    """The IR's fields as node attributes (ints for booleans), for ``onnx.helper.make_node`` and, through
    ``openvino_attributes``, for the OpenVINO op."""
    s = ir.sampler
    cubic_a = str(s.cubic_a) if s.cubic_a is not None else "-3/4"
    if isinstance(ir, ResizeIR):
        return dict(
            rank=ir.rank, axes=list(ir.axes), scales=_maybe_runtime(ir.scales, _fractions),
            sizes=_maybe_runtime(ir.sizes, lambda v: " ".join(str(int(i)) for i in v)),
            roi=_maybe_runtime(ir.roi, _fractions), coord=ir.coord, sampler=s.kind,
            nearest=s.nearest or "round_prefer_floor", cubic_a=cubic_a, antialias=int(s.antialias),
            exclude_outside=int(ir.exclude_outside), extrapolation_value=float(ir.extrapolation_value),
            aspect_policy=ir.aspect_policy, size_rule=ir.size_rule, scale_source=ir.scale_source,
            formula_length=ir.formula_length, length1=ir.length1, arith=ir.arith, pads=list(ir.pads),
            equal_length_identity=int(ir.equal_length_identity), filter_stretch=ir.filter_stretch)
    if isinstance(ir, GridSampleIR):
        return dict(spatial_rank=ir.spatial_rank, sampler=s.kind, nearest=s.nearest or "half_even", cubic_a=cubic_a, padding=ir.padding,
                    align_corners=int(ir.align_corners), padding_on=ir.padding_on, arith=ir.arith)
    if isinstance(ir, DeformConvIR):
        return dict(kernel_shape=list(ir.kernel_shape or ()), strides=list(ir.strides), pads=list(ir.pads),
                    dilations=list(ir.dilations), group=ir.group, offset_group=ir.offset_group, sampler=s.kind,
                    cubic_a=cubic_a, border=ir.border, offset_layout=ir.offset_layout)
    raise BridgeError(f"not an IR value: {type(ir).__name__}")


def parse_attributes(op_type: str, attrs: dict):
    """The IR value an op's attributes spell (the inverse of ``onnx_attributes`` / ``openvino_attributes``):
    ``op_type`` is the ONNX op type or the OpenVINO type name; ``attrs`` as ``Node.get_attributes()`` or the
    ONNX attributes. Shapes and dtypes are not attributes, so they are None; run-time fields come back as
    RuntimeValue(<field name>). For proving a lowered node: compare with ``semantics.equivalence.diff``."""
    kind = {v: k for k, v in {**ONNX_OP_TYPES, **{k + "/ov": v for k, v in OPENVINO_OP_TYPES.items()}}.items()}
    kind = kind.get(op_type, "").split("/")[0]
    if not kind:
        raise BridgeError(f"{op_type!r} is not a resample-bridge op")

    def rats(key, text):
        if text == "":
            return None
        if text == "input":
            return RuntimeValue(key)
        return tuple(Fraction(w) for w in text.split())

    def sampler(antialias=False, nearest_default=None):
        k = attrs.get("sampler", "linear")
        if k == "nearest":
            return Sampler("nearest", nearest=attrs.get("nearest", nearest_default), antialias=antialias)
        if k == "cubic":
            return Sampler("cubic", cubic_a=Fraction(attrs.get("cubic_a", "-3/4")), antialias=antialias)
        return Sampler(k, antialias=antialias)

    if kind == "resize":
        sizes = attrs.get("sizes", "")
        return ResizeIR(
            rank=int(attrs["rank"]), axes=tuple(int(a) for a in attrs["axes"]), scales=rats("scales", attrs["scales"]),
            sizes=None if sizes == "" else RuntimeValue("sizes") if sizes == "input" else
            tuple(int(w) for w in sizes.split()), roi=rats("roi", attrs.get("roi", "")), coord=attrs["coord"],
            sampler=sampler(bool(attrs.get("antialias", False)), "round_prefer_floor"),
            exclude_outside=bool(attrs["exclude_outside"]), extrapolation_value=float(attrs["extrapolation_value"]),
            aspect_policy=attrs["aspect_policy"], size_rule=attrs["size_rule"], scale_source=attrs["scale_source"],
            formula_length=attrs["formula_length"], length1=attrs["length1"], arith=attrs["arith"],
            pads=tuple(int(p) for p in attrs.get("pads", ())),
            equal_length_identity=bool(attrs["equal_length_identity"]), filter_stretch=attrs["filter_stretch"],
            origin=f"resample_bridge::{ONNX_OP_TYPES[kind]}")
    if kind == "gridsample":
        return GridSampleIR(spatial_rank=int(attrs["spatial_rank"]),
                            sampler=sampler(nearest_default="half_even"), padding=attrs["padding"],
                            align_corners=bool(attrs["align_corners"]), padding_on=attrs["padding_on"],
                            arith=attrs["arith"], origin=f"resample_bridge::{ONNX_OP_TYPES[kind]}")
    ks = tuple(int(k) for k in attrs.get("kernel_shape", ()))
    strides = tuple(int(v) for v in attrs["strides"])
    return DeformConvIR(spatial_rank=len(strides), kernel_shape=ks or None, strides=strides,
                        pads=tuple(int(v) for v in attrs["pads"]), dilations=tuple(int(v) for v in attrs["dilations"]),
                        group=int(attrs["group"]), offset_group=int(attrs["offset_group"]),
                        has_bias=bool(attrs.get("has_bias", False)), has_mask=bool(attrs.get("has_mask", False)),
                        sampler=sampler(), border=attrs["border"], offset_layout=attrs["offset_layout"],
                        origin=f"resample_bridge::{ONNX_OP_TYPES[kind]}")


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


# ----------------------------------------------------------------------------------------------------------
# The C ABI (rb_kernels.h).


class _Number(ctypes.Structure):
    _fields_ = [("num", ctypes.c_int64), ("den", ctypes.c_int64), ("value", ctypes.c_double)]


class _Axis(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("in_len", ctypes.c_int64), ("out_len", ctypes.c_int64),
                ("a", _Number), ("b", _Number), ("filter_scale", _Number), ("nearest", ctypes.c_int32),
                ("stretch_clamp", ctypes.c_int32), ("has_valid", ctypes.c_int32)]


class _ResizeSampler(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("antialias", ctypes.c_int32), ("exclude_outside", ctypes.c_int32),
                ("cubic_a", _Number)]


class _Table(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("in_len", ctypes.c_int64), ("out_len", ctypes.c_int64),
                ("K", ctypes.c_int64), ("index", ctypes.c_void_p), ("weight", ctypes.c_void_p),
                ("extrap", ctypes.c_void_p)]


ABI_VERSION = 1
_lib = None
_lib_lock = threading.Lock()


def library_path() -> Path:
    env = os.environ.get("RESAMPLE_BRIDGE_KERNELS_LIB")
    if env:
        return Path(env)
    return build_library(KERNELS_DIR, "rb_kernels", key=source_hash(KERNELS_DIR, extra=sys.platform))


def library() -> ctypes.CDLL:
    """The loaded kernel library (built on first use)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                raise BridgeError(f"cannot load the kernel library {path}: {e}") from None
            _declare(lib)
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


def _declare(lib) -> None:
    P, I32, I64, D = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_double
    sig = {
        "rb_abi_version": (ctypes.c_int, []),
        "rb_vocabulary": (ctypes.c_char_p, [I32, I32]),
        "rb_tap_count": (I64, [P, P]),
        "rb_build_taps": (ctypes.c_int, [P, P, I64, P, P, P, P, I64]),
        "rb_resize_tables": (ctypes.c_int, [I32, P, P, I32, P, P, I32, P, D, I32, P, I64]),
        "rb_resize_axes": (ctypes.c_int, [I32, P, P, I32, P, P, I32, P, P, D, I32, P, I64]),
        "rb_resize_bind": (ctypes.c_int, [ctypes.c_char_p, I32, P, P, I64, P, I64, P, I64, P, P, P, P, I64]),
        "rb_resize_ir": (ctypes.c_int, [I32, P, P, I64, ctypes.c_char_p, I32, P, P, I64, P, I64, P, I64, I32, P,
                                        I64]),
        "rb_gridsample": (ctypes.c_int, [I32, I32, P, P, P, I32, P, P, I32, D, I32, I32, I32, I32, I32, P, I64]),
        "rb_deformconv": (ctypes.c_int, [I32, P, P, P, P, P, P, I32, P, P, P, P, P, I64, I64, I32, D, I32, I32, P,
                                         I64]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def vocabulary(field: int) -> tuple[str, ...]:
    """The names the compiled library gives an enumeration (0 kind, 1 nearest, 2 padding, 3 padding_on,
    4 arith, 5 deform border)."""
    lib, out, i = library(), [], 0
    while (name := lib.rb_vocabulary(field, i)) is not None:
        out.append(name.decode())
        i += 1
    return tuple(out)


def _call(fn, *args) -> None:
    err = ctypes.create_string_buffer(1024)
    if fn(*args, err, len(err)):
        raise BridgeError(f"kernel refused: {err.value.decode(errors='replace')}")


def _ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data_as(ctypes.c_void_p)


def _i64(values) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))


def _dtype_code(a: np.ndarray, what: str) -> int:
    code = DTYPES.get(a.dtype)
    if code is None:
        raise BridgeError(f"{what} has dtype {a.dtype}; the kernels run float32, float16 and float64", field=what)
    return code


def _threads(threads: int | None) -> int:
    return 0 if threads is None else int(threads)


# ----------------------------------------------------------------------------------------------------------
# Resize


def number(v) -> _Number:
    """An exact fraction as num/den when both fit in int64, else only its double."""
    f = Fraction(v)
    if abs(f.numerator) < 2**63 and f.denominator < 2**63:
        return _Number(f.numerator, f.denominator, float(f))
    return _Number(0, 0, float(f))


def _sampler(sampler: Sampler, exclude_outside: bool) -> _ResizeSampler:
    a = sampler.cubic_a if sampler.cubic_a is not None else Fraction(-3, 4)
    return _ResizeSampler(SAMPLER_KINDS.index(sampler.kind), int(sampler.antialias), int(exclude_outside),
                          number(a))


def _axis(ax: BoundAxis) -> _Axis:
    if ax.valid is not None and ax.valid != (0, ax.in_len - 1):
        raise BridgeError(f"valid range {ax.valid} on axis {ax.axis} is not [0, in_len - 1]", field="roi")
    nearest = NEAREST_MODES.index(ax.nearest) if ax.nearest in NEAREST_MODES[:5] else 0
    return _Axis(ax.axis, ax.in_len, ax.out_len, number(ax.a), number(ax.b), number(ax.filter_scale), nearest,
                 int(ax.stretch_clamp), int(ax.valid is not None))


def tap_table(axis: BoundAxis, sampler: Sampler, exclude_outside: bool) -> TapTable:
    """The table of one bound axis as the C++ port of ``semantics.taps.axis_taps`` builds it."""
    lib = library()
    ca, cs = _axis(axis), _sampler(sampler, exclude_outside)
    K = lib.rb_tap_count(ctypes.byref(ca), ctypes.byref(cs))
    if K < 1:
        raise BridgeError("the kernel library could not count the taps")
    index = np.zeros((axis.out_len, K), dtype=np.int64)
    weight = np.zeros((axis.out_len, K), dtype=np.float64)
    extrap = np.zeros(axis.out_len, dtype=np.uint8)
    _call(lib.rb_build_taps, ctypes.byref(ca), ctypes.byref(cs), K, _ptr(index), _ptr(weight), _ptr(extrap))
    return TapTable(index, weight, extrap.astype(bool) if axis.valid is not None else None)


def _runtime_arrays(runtime: dict):
    """(roi, scales, sizes) as contiguous arrays for the C ABI, None where not fed."""
    out = []
    for key, dt in (("roi", np.float64), ("scales", np.float64), ("sizes", np.int64)):
        v = runtime.get(key)
        out.append(None if v is None else np.ascontiguousarray(np.asarray(v, dtype=dt).reshape(-1)))
    return out


def _runtime_args(arrays):
    args = []
    for a in arrays:
        args += [_ptr(a), 0 if a is None else a.size]
    return args


def bind_native(ir: ResizeIR, in_shape, runtime: dict | None = None):
    """The C++ port of ``bind_resize`` on ``ir``'s attributes: (out_shape, [BoundAxis-like dicts])."""
    lib = library()
    rank = len(in_shape)
    out_shape = np.zeros(rank, dtype=np.int64)
    n_axes = ctypes.c_int32(0)
    axes = (_Axis * (rank + 1))()
    _call(lib.rb_resize_bind, attributes_text(onnx_attributes(ir)).encode(), rank, _ptr(_i64(in_shape)),
          *_runtime_args(_runtime_arrays(runtime or {})), _ptr(out_shape), ctypes.byref(n_axes), axes)

    def value(n: _Number):
        return Fraction(n.num, n.den) if n.den > 0 else n.value

    bound = [dict(axis=a.axis, in_len=a.in_len, out_len=a.out_len, a=value(a.a), b=value(a.b),
                  filter_scale=value(a.filter_scale), nearest=NEAREST_MODES[a.nearest],
                  stretch_clamp=bool(a.stretch_clamp), has_valid=bool(a.has_valid)) for a in axes[:n_axes.value]]
    return tuple(int(d) for d in out_shape), bound


def resize(ir: ResizeIR, x, *onnx_inputs, tables: str = "python", threads: int | None = None) -> np.ndarray:
    """Run a ResizeIR with the kernel library. ``onnx_inputs``: what the node receives after X (roi, scales,
    sizes; or scales for Upsample), as for ``semantics.reference.run``.

    ``tables``: "python" applies ``semantics.taps`` tables to ``bind_resize``'s axes; "native" builds the tables
    in C++ from those bound axes; "ir" does everything in C++ from the op's attributes (binding included), which
    is what the OpenVINO op runs."""
    if tables not in ("python", "native", "ir"):
        raise BridgeError(f"tables must be 'python', 'native' or 'ir', not {tables!r}")
    lib = library()
    x = np.ascontiguousarray(x)
    code = _dtype_code(x, "X")
    runtime = runtime_values(ir, (x, *onnx_inputs))
    if tables == "ir":
        out_shape, _ = bind_native(ir, x.shape, runtime)
        y = np.zeros(out_shape, dtype=x.dtype)
        _call(lib.rb_resize_ir, code, _ptr(x), _ptr(y), y.size, attributes_text(onnx_attributes(ir)).encode(),
              x.ndim, _ptr(_i64(x.shape)), *_runtime_args(_runtime_arrays(runtime)), _threads(threads))
        return y
    bound = bind_resize(ir, x.shape, runtime)
    y = np.zeros(bound.out_shape, dtype=x.dtype)
    if y.size == 0 or x.size == 0:
        return y
    shape = _i64(x.shape)
    pads = _i64(bound.pads) if bound.pads else None
    n = len(bound.axes)
    if tables == "python":
        keep = []  # the arrays must outlive the call
        arr = (_Table * max(n, 1))()
        for i, ax in enumerate(bound.axes):
            t = axis_taps(ax, bound.sampler, bound.exclude_outside)
            idx = np.ascontiguousarray(t.index, dtype=np.int64)
            w = np.ascontiguousarray(t.weight, dtype=np.float64)
            ex = None if t.extrapolate is None else np.ascontiguousarray(t.extrapolate, dtype=np.uint8)
            keep += [idx, w, ex]
            arr[i] = _Table(ax.axis, ax.in_len, ax.out_len, idx.shape[1], idx.ctypes.data, w.ctypes.data,
                            None if ex is None else ex.ctypes.data)
        _call(lib.rb_resize_tables, code, _ptr(x), _ptr(y), x.ndim, _ptr(shape), _ptr(pads), n, arr,
              float(bound.extrapolation_value), _threads(threads))
    else:
        arr = (_Axis * max(n, 1))(*[_axis(ax) for ax in bound.axes])
        cs = _sampler(bound.sampler, bound.exclude_outside)
        _call(lib.rb_resize_axes, code, _ptr(x), _ptr(y), x.ndim, _ptr(shape), _ptr(pads), n, arr,
              ctypes.byref(cs), float(bound.extrapolation_value), _threads(threads))
    return y


# ----------------------------------------------------------------------------------------------------------
# GridSample and DeformConv


def gridsample(ir: GridSampleIR, x, grid, threads: int | None = None) -> np.ndarray:
    x = np.ascontiguousarray(x)
    grid = np.ascontiguousarray(grid)
    D = ir.spatial_rank
    if D != x.ndim - 2 or grid.ndim != x.ndim or grid.shape[-1] != D or grid.shape[0] != x.shape[0]:
        raise BridgeError(f"X {x.shape} and grid {grid.shape} do not fit a {D}-D GridSample", field="grid")
    if ir.sampler.kind == "nearest" and ir.sampler.nearest not in (None, "half_even"):
        raise BridgeError(f"GridSample nearest rounds half to even; rule {ir.sampler.nearest!r} is not implemented",
                          field="nearest")
    out_sp = grid.shape[1:-1]
    y = np.zeros(x.shape[:2] + out_sp, dtype=x.dtype)
    if y.size == 0:
        return y
    a = float(ir.sampler.cubic_a) if ir.sampler.cubic_a is not None else -0.75
    _call(library().rb_gridsample, _dtype_code(x, "X"), _dtype_code(grid, "grid"), _ptr(x), _ptr(grid), _ptr(y),
          D, _ptr(_i64(x.shape)), _ptr(_i64(out_sp)), SAMPLER_KINDS.index(ir.sampler.kind), a,
          GRID_PADDINGS.index(ir.padding), PADDING_ON.index(ir.padding_on), int(ir.align_corners),
          ARITH.index(ir.arith), _threads(threads))
    return y


def deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None, threads: int | None = None) -> np.ndarray:
    x = np.ascontiguousarray(x)
    code = _dtype_code(x, "X")
    w, offset = (np.ascontiguousarray(a, dtype=x.dtype) for a in (w, offset))
    b = None if b is None else np.ascontiguousarray(b, dtype=x.dtype)
    mask = None if mask is None else np.ascontiguousarray(mask, dtype=x.dtype)
    D = ir.spatial_rank
    if ir.offset_layout != DeformConvIR.offset_layout:
        raise BridgeError(f"offset layout {ir.offset_layout!r} is not the kernels' {DeformConvIR.offset_layout!r}",
                          field="offset_layout")
    if x.ndim != D + 2 or w.ndim != D + 2:
        raise BridgeError(f"X {x.shape} and W {w.shape} do not fit a {D}-D DeformConv", field="X")
    kernel = tuple(w.shape[2:])
    if ir.kernel_shape and tuple(ir.kernel_shape) != kernel:
        raise BridgeError(f"W has kernel {kernel}, the op says {tuple(ir.kernel_shape)}", field="kernel_shape")
    out_sp = deformconv_out_shape(ir, x.shape[2:], kernel)
    K = math.prod(kernel)
    N, OG = x.shape[0], ir.offset_group
    if offset.shape != (N, OG * K * D) + out_sp:
        raise BridgeError(f"offset has shape {offset.shape}, expected {(N, OG * K * D) + out_sp}", field="offset")
    if mask is not None and mask.shape != (N, OG * K) + out_sp:
        raise BridgeError(f"mask has shape {mask.shape}, expected {(N, OG * K) + out_sp}", field="mask")
    if b is not None and b.shape != (w.shape[0],):
        raise BridgeError(f"B has shape {b.shape}, expected {(w.shape[0],)}", field="B")
    if any(o <= 0 for o in out_sp):
        raise BridgeError(f"output spatial shape {out_sp} is empty", field="pads")
    y = np.zeros((N, w.shape[0]) + out_sp, dtype=x.dtype)
    if y.size == 0:
        return y
    a = float(ir.sampler.cubic_a) if ir.sampler.cubic_a is not None else -0.75
    _call(library().rb_deformconv, code, _ptr(x), _ptr(w), _ptr(offset), _ptr(b), _ptr(mask), _ptr(y), D,
          _ptr(_i64(x.shape)), _ptr(_i64(w.shape)), _ptr(_i64(ir.strides)), _ptr(_i64(ir.pads)),
          _ptr(_i64(ir.dilations)), ir.group, ir.offset_group, SAMPLER_KINDS.index(ir.sampler.kind), a,
          DEFORM_BORDERS.index(ir.border), _threads(threads))
    return y


def run(ir, *inputs, **kw) -> np.ndarray:
    """Dispatch like ``semantics.reference.run``."""
    if isinstance(ir, ResizeIR):
        return resize(ir, *inputs, **kw)
    if isinstance(ir, GridSampleIR):
        return gridsample(ir, *inputs, **kw)
    if isinstance(ir, DeformConvIR):
        return deformconv(ir, *inputs, **kw)
    raise BridgeError(f"not an IR value: {type(ir).__name__}")


# ----------------------------------------------------------------------------------------------------------
# OpenVINO extension (lowering/openvino_ext): the ops and their ONNX-frontend mappings, same build cache.

OPENVINO_EXT_DIR = HERE / "openvino_ext"
_BOOL_ATTRS = {"antialias", "exclude_outside", "equal_length_identity", "align_corners", "has_bias", "has_mask"}
_factory = None


def openvino_extension() -> str:
    """Path of the OpenVINO extension library, built on first use against the installed openvino wheel: for
    ``openvino.convert_model(onnx_path, extension=path)``, ``Core().add_extension(path)`` and
    ``NodeFactory().add_extension(path)``."""
    env = os.environ.get("RESAMPLE_BRIDGE_OPENVINO_EXT")
    if env:
        return env
    try:
        import openvino
    except ImportError:
        raise BridgeError("the OpenVINO extension needs the openvino package (pip install openvino)") from None
    ov_cmake = Path(openvino.__file__).parent / "cmake"
    if not (ov_cmake / "OpenVINOConfig.cmake").exists():
        raise BridgeError(f"openvino {openvino.__version__} has no cmake/OpenVINOConfig.cmake to build against")
    key = source_hash(KERNELS_DIR, OPENVINO_EXT_DIR, extra=f"{sys.platform} openvino {openvino.__version__}")
    return str(build_library(OPENVINO_EXT_DIR, "resample_bridge_openvino", key=key,
                             cmake_args=(f"-DOpenVINO_DIR={ov_cmake}",),
                             what="the resample-bridge OpenVINO extension"))


def openvino_attributes(ir, n_inputs: int | None = None) -> dict:
    """The OpenVINO op's attributes: the ONNX node's, booleans as bool; DeformConv also says which optional
    inputs follow (has_bias, has_mask) from the IR."""
    attrs = {k: (bool(v) if k in _BOOL_ATTRS else v) for k, v in onnx_attributes(ir).items()}
    if isinstance(ir, DeformConvIR):
        attrs.update(has_bias=bool(ir.has_bias), has_mask=bool(ir.has_mask))
    return attrs


def resize_inputs(ir: ResizeIR, inputs: list) -> list:
    """A resize node's inputs as (X, roi, scales, sizes): Upsample and Resize-10 list (X, scales)."""
    inputs = list(inputs)
    if ir.origin.startswith(("Upsample", "Resize-10")):
        empty = "" if inputs and isinstance(inputs[0], str) else None
        return [inputs[0], empty, inputs[1] if len(inputs) > 1 else empty, empty]
    return inputs


def openvino_inputs(ir, inputs: list) -> list:
    """The op's inputs from the node's inputs in ONNX order (None for omitted ones): Resize keeps X and the
    roi / scales / sizes fed at run time; DeformConv drops omitted B / mask."""
    if isinstance(ir, ResizeIR):
        inputs = resize_inputs(ir, inputs)
        keep = [inputs[0]]
        for i, key in enumerate(("roi", "scales", "sizes"), start=1):
            if isinstance(getattr(ir, key), RuntimeValue) and (key != "roi" or ir.coord == "tf_crop_and_resize"):
                if i >= len(inputs) or inputs[i] is None:
                    raise BridgeError(f"{key} is fed at run time but the node has no such input", field=key)
                keep.append(inputs[i])
        return keep
    return [v for v in inputs if v is not None]


def openvino_node(ir, inputs: list):
    """An OpenVINO node of the extension op for ``ir`` (``inputs``: openvino Outputs in ONNX order, None for
    omitted ones), through NodeFactory; usable inside a Python ConversionExtension."""
    global _factory
    if _factory is None:
        from openvino._pyopenvino import NodeFactory

        # Kept for the life of the process: the factory holds the loaded library, which the nodes it created
        # run their code from.
        _factory = NodeFactory()
        _factory.add_extension(openvino_extension())
    attrs = openvino_attributes(ir)
    if isinstance(ir, ResizeIR) and isinstance(ir.roi, RuntimeValue) and ir.coord != "tf_crop_and_resize":
        attrs["roi"] = ""  # only tf_crop_and_resize reads roi
    if isinstance(ir, DeformConvIR):
        attrs.update(has_bias=len(inputs) > 3 and inputs[3] is not None,
                     has_mask=len(inputs) > 4 and inputs[4] is not None)
    return _factory.create(OPENVINO_OP_TYPES[ir.kind], openvino_inputs(ir, inputs), attrs)


def onnx_node(ir, inputs: list[str], outputs: list[str], name: str | None = None):
    """The custom-domain ONNX node (domain ``resample_bridge``, version 1) computing ``ir``: ``inputs`` in the
    source op's order ("" for omitted ones; the custom Resize takes X, roi, scales, sizes, and an Upsample's
    (X, scales) is placed so). The model must import the domain:
    ``onnx.helper.make_opsetid(native.DOMAIN, native.DOMAIN_VERSION)``."""
    from onnx import AttributeProto, helper

    attrs = onnx_attributes(ir)
    if isinstance(ir, ResizeIR):
        inputs = resize_inputs(ir, inputs)
        while inputs and inputs[-1] == "":
            inputs.pop()
    if isinstance(ir, ResizeIR) and isinstance(ir.roi, RuntimeValue) and ir.coord != "tf_crop_and_resize":
        attrs["roi"] = ""
    node = helper.make_node(ONNX_OP_TYPES[ir.kind], list(inputs), list(outputs), name=name, domain=DOMAIN)
    for k, v in attrs.items():
        if isinstance(v, list):  # empty lists carry no type of their own
            node.attribute.append(helper.make_attribute(k, v, attr_type=AttributeProto.INTS))
        else:
            node.attribute.append(helper.make_attribute(k, v))
    return node



# ----------------------------------------------------------------------------------------------------------
# CUDA launchers (lowering/cuda): built where nvcc is found; run where a device is.

CUDA_DIR = HERE / "cuda"
_cuda = None


def _nvcc() -> str | None:
    for cand in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def cuda_library() -> ctypes.CDLL:
    """The CUDA launcher library (sm_80 and sm_90), built on first use; BridgeError where nvcc is missing."""
    global _cuda
    with _lib_lock:
        if _cuda is None:
            nvcc = _nvcc()
            if nvcc is None:
                raise BridgeError("the CUDA launchers need nvcc (the CUDA toolkit), which was not found")
            version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
            key = source_hash(KERNELS_DIR, CUDA_DIR, extra=f"{sys.platform} {version}")
            path = build_library(CUDA_DIR, "rb_cuda", key=key, cmake_args=(f"-DCMAKE_CUDA_COMPILER={nvcc}",),
                                 what="the resample-bridge CUDA launchers")
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                raise BridgeError(f"cannot load the CUDA launchers {path}: {e}") from None
            P, I32, I64, D = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_double
            for name, res, args in (
                    ("rb_cuda_device_count", ctypes.c_int, []),
                    ("rb_cuda_resize_ir", ctypes.c_int, [I32, P, P, I64, ctypes.c_char_p, I32, P, P, I64, P, I64, P,
                                                         I64, P, P, I64]),
                    ("rb_cuda_gridsample", ctypes.c_int, [I32, I32, P, P, P, I32, P, P, I32, D, I32, I32, I32, I32,
                                                          P, P, I64]),
                    ("rb_cuda_deformconv", ctypes.c_int, [I32, P, P, P, P, P, P, I32, P, P, P, P, P, I64, I64, I32,
                                                          D, I32, P, P, I64]),
                    ("rb_cuda_alloc", ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), I64, P, I64]),
                    ("rb_cuda_free", ctypes.c_int, [P]),
                    ("rb_cuda_copy", ctypes.c_int, [P, P, I64, I32, P, I64])):
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = res, args
            _cuda = lib
    return _cuda


def cuda_device_count() -> int:
    return int(cuda_library().rb_cuda_device_count())


class _OnDevice:
    """Host arrays copied to device memory for one call, the output copied back; freed on exit."""

    def __init__(self, lib):
        self.lib, self.ptrs = lib, []

    def put(self, a: np.ndarray | None):
        if a is None:
            return None
        p = ctypes.c_void_p()
        _call(self.lib.rb_cuda_alloc, ctypes.byref(p), max(a.nbytes, 1))
        self.ptrs.append(p)
        if a.nbytes:
            _call(self.lib.rb_cuda_copy, p, _ptr(a), a.nbytes, 1)
        return p

    def get(self, p, out: np.ndarray) -> np.ndarray:
        if out.nbytes:
            _call(self.lib.rb_cuda_copy, _ptr(out), p, out.nbytes, 0)
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.ptrs:
            self.lib.rb_cuda_free(p)


def cuda_run(ir, *inputs) -> np.ndarray:
    """Run an IR value on the GPU from host arrays (tests; float32 / float16 / float64): the same arguments as
    ``run``. Resize binds and builds its tables from the op's attributes on the host, as the OpenVINO op does."""
    lib = cuda_library()
    if cuda_device_count() == 0:
        raise BridgeError("no CUDA device")
    x = np.ascontiguousarray(inputs[0])
    code = _dtype_code(x, "X")
    with _OnDevice(lib) as dev:
        if isinstance(ir, ResizeIR):
            runtime = runtime_values(ir, (x, *inputs[1:]))
            out_shape, _ = bind_native(ir, x.shape, runtime)
            y = np.zeros(out_shape, dtype=x.dtype)
            if y.size == 0:
                return y
            dy = dev.put(y)
            _call(lib.rb_cuda_resize_ir, code, dev.put(x), dy, y.size, attributes_text(onnx_attributes(ir)).encode(),
                  x.ndim, _ptr(_i64(x.shape)), *_runtime_args(_runtime_arrays(runtime)), None)
            return dev.get(dy, y)
        if isinstance(ir, GridSampleIR):
            grid = np.ascontiguousarray(inputs[1])
            y = np.zeros(x.shape[:2] + grid.shape[1:-1], dtype=x.dtype)
            dy = dev.put(y)
            a = float(ir.sampler.cubic_a) if ir.sampler.cubic_a is not None else -0.75
            _call(lib.rb_cuda_gridsample, code, _dtype_code(grid, "grid"), dev.put(x), dev.put(grid), dy,
                  ir.spatial_rank, _ptr(_i64(x.shape)), _ptr(_i64(grid.shape[1:-1])),
                  SAMPLER_KINDS.index(ir.sampler.kind), a, GRID_PADDINGS.index(ir.padding),
                  PADDING_ON.index(ir.padding_on), int(ir.align_corners), ARITH.index(ir.arith), None)
            return dev.get(dy, y)
        if isinstance(ir, DeformConvIR):
            w, off, b, m = (None if v is None else np.ascontiguousarray(v, dtype=x.dtype)
                            for v in (list(inputs[1:]) + [None] * 4)[:4])
            out_sp = deformconv_out_shape(ir, x.shape[2:], w.shape[2:])
            y = np.zeros((x.shape[0], w.shape[0]) + out_sp, dtype=x.dtype)
            dy = dev.put(y)
            a = float(ir.sampler.cubic_a) if ir.sampler.cubic_a is not None else -0.75
            _call(lib.rb_cuda_deformconv, code, dev.put(x), dev.put(w), dev.put(off), dev.put(b), dev.put(m), dy,
                  ir.spatial_rank, _ptr(_i64(x.shape)), _ptr(_i64(w.shape)), _ptr(_i64(ir.strides)),
                  _ptr(_i64(ir.pads)), _ptr(_i64(ir.dilations)), ir.group, ir.offset_group,
                  SAMPLER_KINDS.index(ir.sampler.kind), a, DEFORM_BORDERS.index(ir.border), None)
            return dev.get(dy, y)
    raise BridgeError(f"not an IR value: {type(ir).__name__}")
