"""verify's runner of ``--target openvino``: the converted model (the user's .xml with its extension library
beside it, or ``model`` converted here as ``convert`` converts it) run on OpenVINO CPU, at the inference precision
asked for (f32 unless ``--precision`` says otherwise); the registry entry (``targets``) names it."""

from __future__ import annotations

import os
import tempfile

from ..lowering.compiled import openvino_extension
from ..lowering.openvino.frontend import openvino_error_reason
from ..lowering.openvino.graph import F32, Compiled, compile_checked
from ..lowering.openvino.target import convert
from ..lowering.openvino.write import EXTENSION_NAME
from ..lowering.passes import CUSTOM
from ..semantics.errors import BridgeError, clip

# What verify's lines call the runtime (``--precision`` names another precision in place of f32).
NAME = "OpenVINO CPU f32"
# verify's options only this runner honours (ConvertOptions / verify keywords).
TAKES = frozenset({"extensions", "precision"})


def _read_converted(xml: str, extensions=()):
    """The user's converted model, with the extension library beside it (and ``extensions``) loaded."""
    import openvino as ov

    if not os.path.exists(xml):
        raise BridgeError(f"no such file: {clip(xml)}", field="converted")  # as the ONNX target says it
    if not os.path.isfile(xml) or not xml.endswith(".xml"):
        raise BridgeError(f"{clip(xml)} is not an OpenVINO .xml file", field="converted")
    core = ov.Core()
    beside = os.path.join(os.path.dirname(os.path.abspath(xml)), EXTENSION_NAME)
    for lib in ([beside] if os.path.isfile(beside) else []) + list(extensions):
        try:
            core.add_extension(lib)
        except Exception as e:
            raise BridgeError(f"cannot load the extension {clip(lib)}: {_ov_reason(e)}", field="extension") from None
    try:
        return core, core.read_model(xml)
    except Exception as e:
        raise BridgeError(f"OpenVINO cannot read {clip(xml)}: {_ov_reason(e)}", field="converted") from None


def _ov_reason(e: Exception) -> str:
    return clip(openvino_error_reason(str(e)), 160)


def _run_openvino(core, ov_model, feeds: dict, observe: list[str], precision: str = "f32") -> dict:
    """Outputs by tensor name; ``observe``: intermediate tensors added as outputs where the model has them."""
    have = {n for op in ov_model.get_ops() for o in op.outputs() for n in o.get_names()}
    have_out = {n for o in ov_model.outputs for n in o.get_names()}
    extra = [n for n in observe if n in have and n not in have_out]
    if extra:
        ov_model.add_outputs(extra)
    params = {n for p in ov_model.inputs for n in p.get_names()}
    try:
        compiled = Compiled(compile_checked(core, ov_model, {**F32, "INFERENCE_PRECISION_HINT": precision}))
        res = compiled({k: v for k, v in feeds.items() if k in params})
    except Exception as e:
        raise BridgeError(f"OpenVINO cannot run the converted model: {_ov_reason(e)}", field="converted") from None
    out = {}
    for port, val in res.items():
        for name in port.get_names():
            out[name] = val
    # A graph output that is a graph input (no node between) is its own value.
    for name, v in feeds.items():
        out.setdefault(name, v)
    return out


def precision_run(precision: str) -> tuple[str, str | None]:
    """(the inference precision OpenVINO's CPU runs ``precision``'s hint at, a line saying so where that is not
    ``precision``): a CPU without bf16 or f16 runs the hint in f32 without a word, and a model compiled under it
    says so, so verify judges and names what ran rather than what was asked."""
    if precision == "f32":
        return precision, None
    import numpy as np
    import openvino as ov

    x = ov.opset13.parameter([1], np.float32)
    compiled = ov.Core().compile_model(ov.Model([ov.opset13.relu(x)], [x]), "CPU",
                                       {"INFERENCE_PRECISION_HINT": precision})
    ran = compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
    if ran == precision:
        return precision, None
    return ran, (f"--precision {precision}: this CPU does not compute in {precision} (OpenVINO's "
                 f"OPTIMIZATION_CAPABILITIES lack it) and runs the hint at {ran}: judged at {ran}, as it ran")


def importer_outputs(model, feeds: dict, precision: str) -> dict | None:
    """OpenVINO's own importer's model of ``model`` (a ModelProto) run at ``precision``, outputs by tensor name; None
    where it cannot convert or run it: verify's measure of a network's own rounding at a reduced precision."""
    import io

    import openvino as ov

    try:
        return _run_openvino(ov.Core(), ov.convert_model(io.BytesIO(model.SerializeToString())), feeds, [], precision)
    except Exception:  # noqa: BLE001 -- the importer refuses the model: no measure, nothing said
        return None


def openvino_outputs(model, path: str, feeds: dict, observe: list[str], *, converted=None, extensions=(),
                     precision: str = "f32", target=None, convert_file=None, **convert_options):
    """verify's runner of ``--target openvino`` (``targets.Runner``): (OpenVINO CPU's outputs by tensor name, the
    conversion's rung lines): the user's .xml, or ``model`` converted here with ``convert_options`` (``path``,
    ``target`` and ``convert_file``, the registry's conversion to a file, are the ONNX runner's)."""
    import onnx

    rungs = []
    if converted is not None:
        core, ov_model = _read_converted(converted, extensions)
    else:
        import openvino as ov

        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "source.onnx")
            onnx.save(model, p)
            ov_model, records = convert(p, extensions=list(extensions), **convert_options)
            # Run as deployed: the precision marks (``pinned.PRECISE``) take effect in a model read from its IR,
            # read as the user's .xml is read (the custom ops' library loaded first: reading creates its layers).
            xml = os.path.join(d, "converted.xml")
            ov.save_model(ov_model, xml, compress_to_fp16=False)
            ours = [openvino_extension()] if any(r.rung == CUSTOM for r in records) else []
            core, ov_model = _read_converted(xml, ours + list(extensions))
        rungs = [r.summary() for r in records]
    return _run_openvino(core, ov_model, feeds, observe, precision), rungs


__all__ = ["NAME", "TAKES", "openvino_outputs"]
