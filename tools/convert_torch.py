"""``convert model.pt2 --target openvino`` (issue 44): a PyTorch program through OpenVINO's PyTorch frontend, every
resampling call on resample-bridge's ladder, the model proven against the program's module in eager PyTorch
(``lowering/openvino/torch_source.py``), written through the one convert path (staged, proven again from disk)."""

from __future__ import annotations

import os

from ..lowering.openvino.torch_source import load_source
from ..lowering.passes import ConvertOptions
from ..semantics.errors import BridgeError
from .convert import output_path, reap_stale, remove_created
from .logs import step
from .targets import DEFAULT, TARGETS, convert_file, entry

# What a program has no use for: options that name ONNX tensors.
_ONNX_ONLY = {"input_shapes": "input", "outputs": "output"}


def torch_source(model, example_inputs=None, target: str = DEFAULT, **onnx_only):
    """``model`` (a .pt2 path, an ExportedProgram, or a module with ``example_inputs``) loaded for the OpenVINO
    target; BridgeError naming an option or target a PyTorch program has no use for."""
    if entry(target).torch_source is None:
        taking = [(n, e.torch_source) for n, e in TARGETS.items() if e.torch_source]
        ways = " or ".join(f"--target {n} only ({how})" for n, how in taking)
        raise BridgeError(f"a PyTorch program converts to {ways}, not {target}; export it to ONNX for "
                          f"--target {target}", field="target")
    for key, flag in _ONNX_ONLY.items():
        if onnx_only.get(key):
            raise BridgeError(f"--{flag} names ONNX tensors; a PyTorch program takes the shapes it was exported "
                              f"with (torch.export dynamic_shapes)", field=flag)
    return load_source(model, example_inputs)


def convert_torch(model, output: str | None, options: ConvertOptions, *, target: str = DEFAULT,
                  example_inputs=None, **onnx_only):
    """(output path, what was written, the report): ``model`` converted to OpenVINO IR at ``output`` (ovc's
    rules, as ``convert``)."""
    source = torch_source(model, example_inputs, target, **onnx_only)
    stem = model if isinstance(model, (str, os.PathLike)) else "model"
    out, created = output_path(os.fspath(stem), None if output is None else os.fspath(output), target, options.force)
    reap_stale(os.path.dirname(out))
    try:
        return (out, *convert_file(target, source, out, options, step=step))
    except BaseException:
        remove_created(created)
        raise
