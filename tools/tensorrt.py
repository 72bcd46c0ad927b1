"""``check --target tensorrt`` and ``convert --target tensorrt`` for the CLI; the logic lives beside the target in
``lowering/tensorrt`` (``check``, ``target``, ``engine``, ``run``)."""

from __future__ import annotations

from ..lowering.tensorrt import check_rows as _check_rows
from ..lowering.tensorrt import conformance_rows as _conformance_rows
from ..lowering.tensorrt import format_check as format_check_tensorrt
from ..lowering.tensorrt import format_conformance_table, run_tensorrt_ready
from ..lowering.tensorrt import format_convert as format_convert_tensorrt
from .conformance import conformance_cases, frozen_case
from ..lowering.artifacts import check_output_path


def check_tensorrt(model_path, *, strict: bool = False) -> list[dict]:
    """One row per resampling node: {"name", "op", "tensorrt": importer verdict, "resample_bridge": rung}."""
    return _check_rows(model_path, strict=strict)


def convert_to_tensorrt(model_path, out_path: str, force: bool = False, *, strict: bool = False) -> dict:
    """Write the TensorRT-ready ONNX of ``model_path`` to ``out_path`` (atomically; nothing is left behind on
    failure) and return the report: per-node rungs, plugins and their library, what is unverified on
    TensorRT, and either the engine built (tensorrt importable) or the trtexec command that builds it."""
    from ..lowering import tensorrt as low
    from ..translate.onnx import load

    out = check_output_path(out_path, force, ".onnx")
    result = low.lower(load(model_path), strict=strict)
    low.save(result, out)
    rep = low.report(result.records)
    rep["output"] = out
    rep.update(low.finish(out, rep["plugin_library"] is not None))
    return rep


def conformance_rows(*, strict: bool = False) -> list[dict]:
    """Per ONNX conformance case (roi/scales/sizes frozen): onnx-tensorrt's predicted verdict and
    resample-bridge's rung."""
    return _conformance_rows(((c.name, frozen_case(c)[0]) for c in conformance_cases()), strict=strict)


__all__ = ["check_tensorrt", "format_check_tensorrt", "convert_to_tensorrt", "format_convert_tensorrt",
           "run_tensorrt_ready", "conformance_rows", "format_conformance_table"]
