"""``check --target tensorrt``, ``convert --target tensorrt`` and ``build-plugin`` for the CLI: the verbs'
modules (``check_tensorrt``, ``finish_tensorrt``, ``run_tensorrt``) over the target in ``lowering/tensorrt``.

What needs TensorRT: ``build-plugin`` (TensorRT headers and libnvinfer, the CUDA toolkit with nvcc, CMake and a
C++17 compiler) and the engine the printed trtexec / polygraphy commands build and run (TensorRT and an NVIDIA
GPU). ``check`` and ``convert`` need neither.
"""

from __future__ import annotations

import argparse


from .check_tensorrt import check_rows as _check_rows
from .check_tensorrt import conformance_rows as _conformance_rows
from .check_tensorrt import format_check as format_check_tensorrt
from .check_tensorrt import format_conformance_table
from .conformance import conformance_cases, frozen_case
from .finish_tensorrt import format_convert as format_convert_tensorrt
from .run_tensorrt import run_tensorrt_ready
from ..lowering.passes import ConvertOptions
from ..lowering.tensorrt.plugin_build import build_plugin
from .targets import convert_file


def check_tensorrt(model_path, *, strict: bool = False) -> list[dict]:
    """One row per resampling node: {"name", "op", "tensorrt": importer verdict, "resample_bridge": rung}."""
    return _check_rows(model_path, strict=strict)


def convert_to_tensorrt(model_path, out_path: str, force: bool = False, *, strict: bool = False,
                        source: str | None = None) -> dict:
    """Write the TensorRT-ready ONNX of ``model_path`` to ``out_path`` (atomically; nothing is left behind on
    failure) and return the report: per-node rungs, plugins and their library (built, or the command that builds
    it), what is unverified on TensorRT, and either the engine built (tensorrt importable) or the trtexec command
    that builds it, and the polygraphy command comparing TensorRT with onnxruntime. ``source``: the model the
    polygraphy command compares against (default ``model_path``; the CLI passes the user's file when
    ``--input`` made a temporary copy)."""

    options = ConvertOptions(force=force, strict=strict, source=source or model_path)
    return convert_file("tensorrt", model_path, out_path, options)[1]


def conformance_rows(*, strict: bool = False) -> list[dict]:
    """Per ONNX conformance case (roi/scales/sizes frozen): onnx-tensorrt's predicted verdict and
    resample-bridge's rung."""
    return _conformance_rows(((c.name, frozen_case(c)[0]) for c in conformance_cases()), strict=strict)


# ----------------------------------------------------------------------------------------------------------
# resample-bridge build-plugin


def add_build_plugin(sub, common=None) -> None:
    """Register ``build-plugin`` on the CLI's subparsers (``common``: the options every verb takes)."""
    p = sub.add_parser("build-plugin", help="build the TensorRT plugin library that convert --target tensorrt's "
                                            "plugin nodes need (needs TensorRT headers and libraries, CUDA/nvcc)")
    p.add_argument("--tensorrt-include", metavar="DIR", help="folder with NvInferRuntime.h (default: found under "
                                                             "/usr/local/TensorRT, /opt/tensorrt, TensorRT_ROOT)")
    p.add_argument("--tensorrt-lib", metavar="DIR", help="folder with libnvinfer.so (default: found likewise)")
    # -o is where the file goes, as convert's -o; convert's --output names tensors (ovc's), so this verb's long
    # name says folder, and its first spelling --output is kept without being shown.
    p.add_argument("-o", "--output-dir", dest="output", metavar="DIR", default=None,
                   help="folder for libresample_bridge_tensorrt.so (default: where convert looks for it)")
    p.add_argument("--output", dest="output", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="JSON on stdout")
    p.set_defaults(func=cmd_build_plugin)
    if common is not None:
        common(p)


def cmd_build_plugin(args) -> int:
    import json

    lib = build_plugin(args.tensorrt_include, args.tensorrt_lib, args.output)
    if args.json:
        print(json.dumps({"ok": True, "plugin_library": lib}))
    else:
        print(f"[ SUCCESS ] TensorRT plugin library: {lib}")
    return 0


__all__ = ["check_tensorrt", "format_check_tensorrt", "convert_to_tensorrt", "format_convert_tensorrt",
           "run_tensorrt_ready", "conformance_rows", "format_conformance_table", "add_build_plugin",
           "cmd_build_plugin"]
