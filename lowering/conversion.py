"""What a user asks of one conversion (``ConvertOptions``) and what it wrote (``Written``), whatever the target:
the values the CLI and the API hand to ``Target.convert_file`` and get back (``passes`` holds the pass itself)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConvertOptions:
    """What the user asked of one conversion, whatever the target (a target refuses the options it does not
    take: ``Target.accept``)."""

    fallback: str = "decompose"  # decompose | extension (OpenVINO)
    strict: bool = False
    allow_conditional: bool | None = None  # None: the target's default
    prefer: str | None = None  # fastest | builtin (OpenVINO; None: the target's default, builtin: portable)
    force: bool = False
    compress_to_fp16: bool = False  # (OpenVINO)
    extensions: tuple = ()  # the user's own libraries for other custom ops (OpenVINO)
    source: str | None = None  # the user's model, where a follow-up command names it (TensorRT)
    # TensorRT's optimization profile for the follow-up commands: {input: {"min" | "opt" | "max": dims}}
    trt_shapes: dict | None = None
    decompose_gridsample: bool = False  # every GridSample decomposed where it can be (TensorRT)

    # Options a target may not take, with the value that means "not asked for".
    OPTIONAL = {"compress_to_fp16": False, "extensions": (), "fallback": "decompose", "allow_conditional": None,
                "prefer": None, "trt_shapes": None, "decompose_gridsample": False}


@dataclass(frozen=True)
class Written:
    """What one conversion wrote: the output path, its files by role, one record per node and the target's own
    report (plain JSON values; ``convert --json`` prints it)."""

    target: str
    output: str
    files: dict
    records: tuple
    report: dict
