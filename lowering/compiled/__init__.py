"""resample-bridge's own C++/CUDA code from Python: build it on first use, load it with ctypes, run an IR value.

``lowering/kernels/`` holds header-only templates (host and CUDA device code) and a small C ABI
(``rb_kernels.h``); ``lowering/openvino_ext`` the OpenVINO extension over them, ``lowering/cuda`` the CUDA
launchers; ``lowering/CMakeLists.txt`` is the one CMake project they form.

* ``build``: CMake builds into a cache keyed by the sources (``$RESAMPLE_BRIDGE_CACHE`` or
  ``~/.cache/resample_bridge``; ``$RESAMPLE_BRIDGE_KERNELS_LIB`` / ``$RESAMPLE_BRIDGE_OPENVINO_EXT`` name
  prebuilt libraries). A machine without CMake or a C++17 compiler gets a BridgeError saying so.
* ``abi``: the C structs and every entry point's signature, once; ``vocabulary`` / ``attribute_fields`` /
  ``attribute_defaults`` / ``op_type`` read the compiled enumerations and attribute schema back.
* ``cpu``: ``resize(ir, x, *onnx_inputs, tables=...)``, ``gridsample``, ``deformconv``, ``run`` (the oracle's
  arguments; ``tables="python"`` applies the oracle's tap tables, ``"native"`` the C++ port of the tap rules
  on the bound axes, ``"ir"`` binds in C++ from the op's attributes as the OpenVINO op does), ``tap_table``
  and ``bind_native`` (the C++ ports, for comparison).
* ``openvino_ext``: ``openvino_extension()`` (the library; ``openvino_extension_built()``: without a build),
  ``openvino_node`` (an op from Python), ``onnx_node`` (the custom-domain ONNX node),
  ``extension_dtype_refusal(ir, dtype)`` (None, or why the extension op cannot take that X dtype; the ladder's
  question).
* ``cuda``: ``cuda_library()`` / ``cuda_run`` (host arrays) / ``cuda_launch`` (device memory) / ``CudaLaunch``
  (bound once per shape, called many times, as the TensorRT plugin) where nvcc and a device are.

The op attributes are ``semantics.schema`` (C++ side: ``kernels/rb/attrs.hpp``).
"""

from .abi import ABI_VERSION, DTYPES, attribute_defaults, attribute_fields, attributes_text, available, library, \
    library_path, op_type, vocabulary
from .build import CMAKE_ROOT, CUDA_DIR, KERNELS_DIR, OPENVINO_EXT_DIR, build_library, cache_root, missing_tools, \
    nvcc, source_hash
from .cpu import bind_native, deformconv, gridsample, resize, run, tap_table
from .cuda import CudaLaunch, DeviceArrays, cuda_device_count, cuda_launch, cuda_library, cuda_run
from .openvino_ext import EXTENSION_DTYPES, extension_dtype_refusal, onnx_node, openvino_attributes, \
    openvino_extension, openvino_extension_built, openvino_inputs, openvino_node, resize_inputs

__all__ = ["ABI_VERSION", "DTYPES", "attribute_defaults", "attribute_fields", "attributes_text", "available", "library",
           "library_path", "op_type", "vocabulary", "CMAKE_ROOT", "CUDA_DIR", "KERNELS_DIR", "OPENVINO_EXT_DIR",
           "build_library", "cache_root", "missing_tools", "nvcc", "source_hash", "bind_native", "deformconv",
           "gridsample", "resize", "run", "tap_table", "CudaLaunch", "DeviceArrays", "cuda_device_count", "cuda_launch",
           "cuda_library", "cuda_run",
           "EXTENSION_DTYPES", "extension_dtype_refusal", "onnx_node", "openvino_attributes", "openvino_extension",
           "openvino_extension_built", "openvino_inputs", "openvino_node", "resize_inputs"]
