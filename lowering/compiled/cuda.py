"""The CUDA launchers (``lowering/cuda``): built where nvcc is found, run where a device is. They take the CPU
launchers' checked arguments (``cpu.py``) with the data in device memory."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR
from .abi import call, dtype_code, lib_lock, load, ptr, tensor, tensors
from .build import CMAKE_ROOT, CUDA_DIR, build_library, nvcc, project_hash
from .cpu import DEFORMCONV_INPUTS, GRIDSAMPLE_INPUTS, deformconv_args, gridsample_args, resize_ir_args

_cuda = None


def cuda_library() -> ctypes.CDLL:
    """The CUDA launcher library (sm_80 and sm_90), built on first use; BridgeError where nvcc is missing."""
    global _cuda
    with lib_lock:
        if _cuda is None:
            compiler = nvcc()
            if compiler is None:
                raise BridgeError("the CUDA launchers need nvcc (the CUDA toolkit), which was not found")
            version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
            key = project_hash(CUDA_DIR, extra=f"{sys.platform} {version}")
            path = build_library(CMAKE_ROOT, "rb_cuda", key=key,
                                 cmake_args=("-DRB_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={compiler}"),
                                 what="the resample-bridge CUDA launchers")
            _cuda = load(path, "the CUDA launchers", cuda=True)
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
        call(self.lib.rb_cuda_alloc, ctypes.byref(p), max(a.nbytes, 1))
        self.ptrs.append(p)
        if a.nbytes:
            call(self.lib.rb_cuda_copy, p, ptr(a), a.nbytes, 1)
        return p

    def tensors(self, arrays, names):
        return tensors(arrays, names, data=[self.put(a) for a in arrays])

    def get(self, p, out: np.ndarray) -> np.ndarray:
        if out.nbytes:
            call(self.lib.rb_cuda_copy, ptr(out), p, out.nbytes, 0)
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
    if not isinstance(ir, (ResizeIR, GridSampleIR, DeformConvIR)):
        raise BridgeError(f"not an IR value: {type(ir).__name__}")
    x = np.ascontiguousarray(inputs[0])
    dtype_code(x, "X", floats_only=True)
    with _OnDevice(lib) as dev:
        if isinstance(ir, ResizeIR):
            y, text, rt = resize_ir_args(ir, x, inputs[1:])
            if y.size == 0:
                return y
            dy = dev.put(y)
            call(lib.rb_cuda_resize_ir, text, ctypes.byref(tensor(x, dev.put(x))), ctypes.byref(rt),
                 ctypes.byref(tensor(y, dy)), None)
            return dev.get(dy, y)
        if isinstance(ir, GridSampleIR):
            x, grid, y, params = gridsample_args(ir, x, inputs[1])
            args = dev.tensors((x, grid), GRIDSAMPLE_INPUTS)
            fn = lib.rb_cuda_gridsample
        else:
            arrays, y, params = deformconv_args(ir, *inputs)
            args = dev.tensors(arrays, DEFORMCONV_INPUTS)
            fn = lib.rb_cuda_deformconv
        dy = dev.put(y)
        call(fn, *args, ctypes.byref(params), ctypes.byref(tensor(y, dy)), None)
        return dev.get(dy, y)
