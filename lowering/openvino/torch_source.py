"""A PyTorch program as the OpenVINO target's source (issue 44): converted through OpenVINO's PyTorch frontend with
every resampling call on resample-bridge's ladder (``torch_frontend``), then proven like an ONNX source (each
lowered call by ``prove``; the whole model, here against the program's module run in eager PyTorch,
``lowering.torch_model_check``). ``target.OpenVINOTarget`` takes a ``TorchSource`` wherever it takes an ONNX
path."""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ...semantics.errors import BridgeError
from ...translate.torch import load_program
from ..torch_model_check import whole_model_failures
from .frontend import Planner, conversion_message
from .graph import observing
from .probe import plugin_sentence
from .torch_frontend import conversion_extensions, decoder, kept_program, parsed_calls, sides_of


class TorchSource:
    """A program on its way through the target: the user's (its module is the truth), the one OpenVINO's
    frontend converts (``kept_program``), and that one's resampling calls (each parsed; a refused call raises)."""

    def __init__(self, program):
        if not hasattr(program, "graph_module"):
            raise BridgeError(f"convert and verify take a torch.export program (torch.export.save, .pt2), not a "
                              f"{type(program).__name__}; a traced module is read by check --source", field="source")
        self.program = program
        self.kept = kept_program(program)
        self.calls = parsed_calls(self.kept)


def is_torch_source(model) -> bool:
    """A TorchSource, a torch.export program, a module, or a saved program (.pt2: a zip archive, where an ONNX
    file is protobuf)."""
    if isinstance(model, TorchSource) or hasattr(model, "graph_module") or hasattr(model, "forward"):
        return True
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        return path.endswith(".pt2") or os.path.isfile(path) and zipfile.is_zipfile(path)
    return False


def load_source(source, example_inputs=None) -> TorchSource:
    """A TorchSource from a .pt2 path, an ExportedProgram, or an nn.Module with ``example_inputs``."""
    if isinstance(source, TorchSource):
        return source
    return TorchSource(load_program(source, example_inputs))


def plan_program(source: TorchSource, policy, extensions=()):
    """The Plan of a PyTorch program (choices in conversion order; its model: what ``openvino.convert_model``
    returned): every resampling call chosen inside ``convert_model`` (``frontend.Planner``); a call no rung
    takes stops it with the reason, and so does a call the frontend did not hand to the hook (OpenVINO's own
    translator would have converted it)."""
    import openvino as ov

    planner = Planner(policy)
    exts = conversion_extensions(source.calls, planner=planner, sides=sides_of(source.kept))
    try:
        every = list(exts) + list(extensions)
        # An empty list is refused by ovc's check ("Expected list of extensions, got <class 'list'>"): a program
        # with no resampling call for the hook (area mode is an adaptive pool) is OpenVINO's own conversion
        ov_model = ov.convert_model(decoder(source.kept), **({"extension": every} if every else {}))
    except BridgeError:
        raise
    except Exception as e:
        raise planner.refusal or BridgeError(conversion_message(e) + _symbolic_hint(str(e))) from None
    left = [c for cs in planner.pending.values() for c in cs]
    if left:
        raise BridgeError("OpenVINO's PyTorch frontend did not hand this call to the hook (it would convert it with "
                          "its own translator)", left[0].name, "op")
    return planner.freeze(ov_model)


def _symbolic_hint(text: str) -> str:
    """What to do where OpenVINO's PyTorch frontend has no rule for the program's arithmetic on a dynamic size
    (sym_float, sym_int ...: F.interpolate(recompute_scale_factor=True) on a dynamic dimension computes its output
    length so), else nothing."""
    if "No conversion rule found" not in text or "sym_" not in text:
        return ""
    return " (arithmetic on a dynamic dimension's size; OpenVINO's own conversion refuses it too: export with " \
           "static shapes)"


def agrees(source: TorchSource, compile_model, model) -> None:
    """The whole-model postcondition: ``model`` (compiled by ``compile_model``) computes the module's numbers
    in eager PyTorch at every probe shape (``torch_model_check``); BridgeError naming the node otherwise."""
    failures = whole_model_failures(source.program, source.kept, source.calls, runner(compile_model, model))
    if failures:
        raise BridgeError("the converted model computes other numbers than the PyTorch module: " + failures[0],
                          field="model")


def runner(compile_model, model):
    """``(arrays in the program's input order, tensor names to observe) -> (outputs in order, every output by
    name)``: ``model`` on OpenVINO CPU (f32), compiled once per set of observed tensors."""
    compiled: dict = {}

    def run(arrays: list, observe: list):
        key = tuple(observe)
        if key not in compiled:
            compiled[key] = compile_model(observing(model, observe))
        c = compiled[key]
        try:
            res = c([np.ascontiguousarray(a) for a in arrays])
        except Exception as e:  # noqa: BLE001 -- the plugin's refusal, in its own words
            raise BridgeError("OpenVINO CPU cannot run the converted model: " + plugin_sentence(e),
                              field="model") from None
        values = [res[c.output(i)] for i in range(len(c.outputs))]
        return values[:len(model.outputs)], {n: v for i, v in enumerate(values) for n in c.output(i).get_names()}

    return run
