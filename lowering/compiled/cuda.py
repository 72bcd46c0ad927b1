"""The CUDA launchers (``lowering/cuda``): built where nvcc is found, run where a device is. They take the CPU
launchers' checked arguments (``cpu.py``) with the data in device memory."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR
from ...semantics.opspec import PerOp, spec
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


class DeviceArrays:
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

    def get(self, p, out: np.ndarray) -> np.ndarray:
        if out.nbytes:
            call(self.lib.rb_cuda_copy, ptr(out), p, out.nbytes, 0)
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.ptrs:
            self.lib.rb_cuda_free(p)


def _gridsample_launch(lib, ir, x, inputs):
    x, grid, y, params = gridsample_args(ir, x, inputs[0])
    return (x, grid), y, params, GRIDSAMPLE_INPUTS, lib.rb_cuda_gridsample


def _deformconv_launch(lib, ir, x, inputs):
    arrays, y, params = deformconv_args(ir, x, *inputs)
    return arrays, y, params, DEFORMCONV_INPUTS, lib.rb_cuda_deformconv


# GridSample and DeformConv launch as one call; a Resize binds a plan once (``CudaLaunch.__init__``).
LAUNCH_ARGS = PerOp("CUDA launch", resize=None, gridsample=_gridsample_launch, deformconv=_deformconv_launch)


class CudaLaunch:
    """One IR value bound to its inputs' shapes on the device, as a TensorRT plugin holds it between
    onShapeChange and enqueue: Resize's binding, tap tables and scratch are made here once (in device memory),
    so a call only queues kernels. ``x`` and ``inputs`` give the shapes and dtypes (and Resize's run-time
    roi / scales / sizes values); ``close()`` frees the plan in the order of the stream of its last call."""

    def __init__(self, ir, x: np.ndarray, inputs, stream=None):
        self.lib = cuda_library()
        spec(ir)  # BridgeError for anything but an IR value
        x = np.ascontiguousarray(x)
        dtype_code(x, "X", floats_only=True)
        self.ir, self.plan, self.x_shape, self.x_dtype = ir, None, x.shape, x.dtype
        if isinstance(ir, ResizeIR):
            self.y, text, rt = resize_ir_args(ir, x, inputs)
            plan = ctypes.c_void_p()
            call(self.lib.rb_cuda_resize_prepare, text, ctypes.byref(tensor(x)), ctypes.byref(rt),
                 ctypes.byref(tensor(self.y)), stream, ctypes.byref(plan))
            self.plan = plan

    def _args(self, x, inputs):
        """(the GridSample / DeformConv input arrays, checked, the output array, the params struct, the names,
        the launcher)."""
        return LAUNCH_ARGS.of(self.ir)(self.lib, self.ir, x, inputs)

    def __call__(self, x: np.ndarray, inputs, put, stream=None):
        """Queue the value on ``stream`` (a cudaStream_t or None): ``put(array)`` gives a host array's device
        pointer (a copy, or memory the caller already holds there). Returns (the output's host array of the right
        shape and type, its device pointer; None where the output is empty)."""
        resize = isinstance(self.ir, ResizeIR)
        if resize and self.plan is None:
            raise BridgeError("this Resize launch is closed")
        if resize and (x.shape != self.x_shape or x.dtype != self.x_dtype):
            raise BridgeError(f"X {x.dtype}{list(x.shape)} is not the plan's {self.x_dtype}{list(self.x_shape)}",
                              field="X")
        if resize:
            y = np.empty_like(self.y)  # shape and dtype for put (not read)
        else:  # nothing bound beforehand: the arguments are checked here, once per call
            arrays, y, params, names, fn = self._args(x, inputs)
        if y.size == 0:
            return y, None
        dy = put(y)
        if resize:
            call(self.lib.rb_cuda_resize_enqueue, self.plan, put(np.ascontiguousarray(x)), dy, stream)
        else:
            call(fn, *tensors(arrays, names, data=[None if a is None else put(a) for a in arrays]),
                 ctypes.byref(params), ctypes.byref(tensor(y, dy)), stream)
        return y, dy

    def close(self):
        if self.plan is not None:
            self.lib.rb_cuda_resize_release(self.plan)
            self.plan = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cuda_launch(ir, x: np.ndarray, inputs, put, stream=None):
    """Queue one IR value on the device in one call (``CudaLaunch`` made, called and closed): Resize binds and
    builds its tables from the op's attributes on the host, as the OpenVINO op does."""
    with CudaLaunch(ir, x, inputs, stream) as launch:
        return launch(x, inputs, put, stream)


def cuda_run(ir, *inputs) -> np.ndarray:
    """Run an IR value on the GPU from host arrays (tests; float32 / float16 / float64): the same arguments as
    ``run``, copied to device memory and back."""
    lib = cuda_library()
    if cuda_device_count() == 0:
        raise BridgeError("no CUDA device")
    with DeviceArrays(lib) as dev:
        y, dy = cuda_launch(ir, inputs[0], inputs[1:], dev.put)
        return y if dy is None else dev.get(dy, y)
