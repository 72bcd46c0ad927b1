"""The OpenVINO extension (``lowering/openvino_ext``): its build, its ops made from Python, and the
custom-domain ONNX nodes its ONNX-frontend mapping reads. Attributes: ``semantics.schema``."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR, RuntimeValue
from ...semantics.opspec import PerOp
from ...semantics.schema import DOMAIN, ONNX_OP_TYPES, OP_TYPES, to_attributes
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from .build import CMAKE_ROOT, KERNELS_DIR, OPENVINO_EXT_DIR, build_library, built_library, source_hash

_factory = None


def openvino_extension() -> str:
    """Path of the OpenVINO extension library, built on first use against the installed openvino wheel: for
    ``openvino.convert_model(onnx_path, extension=path)``, ``Core().add_extension(path)`` and
    ``NodeFactory().add_extension(path)``."""
    env = os.environ.get("RESAMPLE_BRIDGE_OPENVINO_EXT")
    if env:
        return env
    ov_cmake, key = _extension_key()
    return str(build_library(CMAKE_ROOT, _EXT_TARGET, key=key,
                             cmake_args=("-DRB_OPENVINO=ON", f"-DOpenVINO_DIR={ov_cmake}"),
                             what="the resample-bridge OpenVINO extension", level=EXTENSION_LEVEL,
                             level_text="every x86-64 level (one copy per level, picked at load)"))


def openvino_extension_built() -> str | None:
    """The extension library's path where it needs no build (named, or built earlier), else None."""
    env = os.environ.get("RESAMPLE_BRIDGE_OPENVINO_EXT")
    if env:
        return env
    try:
        _, key = _extension_key()
    except BridgeError:
        return None
    lib = built_library(_EXT_TARGET, key)
    return None if lib is None else str(lib)


_EXT_TARGET = "resample_bridge_openvino"
# The extension is one library for every x86-64 level (issue 42: it travels beside a model to other CPUs): built
# from the base level, it carries a copy per level and picks one at load (openvino_ext/entry.cpp), whatever this
# CPU is; ``RB_ISA`` at load picks a lower level there.
EXTENSION_LEVEL = "base"


@functools.lru_cache(maxsize=1)
def _extension_key():
    """(openvino's cmake folder, the build's cache key): hashing the sources once per process, since the cost
    model asks per node whether the library is built."""
    try:
        import openvino
    except ImportError:
        raise BridgeError("the OpenVINO extension needs the openvino package (pip install openvino)") from None
    ov_cmake = Path(openvino.__file__).parent / "cmake"
    if not (ov_cmake / "OpenVINOConfig.cmake").exists():
        raise BridgeError(f"openvino {openvino.__version__} has no cmake/OpenVINOConfig.cmake to build against")
    return ov_cmake, source_hash(CMAKE_ROOT / "CMakeLists.txt", KERNELS_DIR, OPENVINO_EXT_DIR,
                                 extra=f"{sys.platform} openvino {openvino.__version__} isa={EXTENSION_LEVEL}")


# Element types of X the extension ops compute exactly on OpenVINO CPU, and those the CPU plugin runs a custom
# op on as i32 (measured; the table and why: translate/dtypes.py).
EXTENSION_DTYPES = OPENVINO_DTYPES["extension"]
_CPU_AS_I32 = OPENVINO_DTYPES["custom_op_as_int32"]


def extension_dtype_refusal(ir, dtype) -> str | None:
    """Why the extension op cannot compute ``ir`` exactly on X of ``dtype`` (a numpy dtype or its name) on
    OpenVINO CPU, or None when it can: the ladder asks this before offering the extension rung, so an
    unsupported type is a clean refusal at lowering time rather than an OpenVINO validation error."""
    import numpy as np

    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name == "float64" and ir.sampler.kind == "nearest" and getattr(ir, "arith", None) == "fp64":
        # OpenVINO's CPU hands a custom op float64 as float32 (measured: a float64 grid value of -4/3 on length 4,
        # align_corners, reads element -1, zeros, where onnxruntime's double reads 0)
        return "OpenVINO CPU runs float64 as float32: nearest picks from a float64 grid move at ties and edges"
    if name in EXTENSION_DTYPES:
        return None
    if name in _CPU_AS_I32:
        return (f"OpenVINO CPU runs a custom op on {name} as int32 and converts the result back without "
                f"saturating: the extension's {OP_TYPES[ir.kind]} is exact on {', '.join(EXTENSION_DTYPES)}")
    return f"the extension's {OP_TYPES[ir.kind]} takes X as {', '.join(EXTENSION_DTYPES)}, not {name}"


def openvino_attributes(ir) -> dict:
    """The OpenVINO op's attributes (``to_attributes(ir, "openvino")``): booleans as bool; DeformConv also says
    which optional inputs follow (has_bias, has_mask) from the IR."""
    return to_attributes(ir, "openvino")


def resize_inputs(ir: ResizeIR, inputs: list) -> list:
    """A resize node's inputs as (X, roi, scales, sizes): Upsample and Resize-10 list (X, scales)."""
    inputs = list(inputs)
    if ir.origin.startswith(("Upsample", "Resize-10")):
        empty = "" if inputs and isinstance(inputs[0], str) else None
        return [inputs[0], empty, inputs[1] if len(inputs) > 1 else empty, empty]
    return inputs


def _resize_op_inputs(ir, inputs: list) -> list:
    """X and the roi / scales / sizes fed at run time."""
    inputs = resize_inputs(ir, inputs)
    keep = [inputs[0]]
    for i, key in enumerate(("roi", "scales", "sizes"), start=1):
        if isinstance(getattr(ir, key), RuntimeValue) and (key != "roi" or ir.coord == "tf_crop_and_resize"):
            if i >= len(inputs) or inputs[i] is None:
                raise BridgeError(f"{key} is fed at run time but the node has no such input", field=key)
            keep.append(inputs[i])
    return keep


def _given_inputs(ir, inputs: list) -> list:
    """The inputs given (DeformConv's omitted B / mask dropped: has_bias / has_mask say which follow)."""
    return [v for v in inputs if v is not None]


_OP_INPUTS = PerOp("extension op inputs", resize=_resize_op_inputs, gridsample=_given_inputs,
                   deformconv=_given_inputs)


def openvino_inputs(ir, inputs: list) -> list:
    """The op's inputs from the node's inputs in ONNX order (None for omitted ones): Resize keeps X and the
    roi / scales / sizes fed at run time; DeformConv drops omitted B / mask."""
    return _OP_INPUTS.of(ir)(ir, inputs)


def _unread_roi(ir, attrs: dict) -> dict:
    """Only tf_crop_and_resize reads roi: a run-time roi elsewhere is no input of the op."""
    if isinstance(getattr(ir, "roi", None), RuntimeValue) and ir.coord != "tf_crop_and_resize":
        attrs["roi"] = ""
    return attrs


def _optional_inputs(inputs: list) -> dict:
    """DeformConv's attributes of which optional inputs follow offset (B at 3, mask at 4)."""
    return dict(has_bias=len(inputs) > 3 and inputs[3] is not None, has_mask=len(inputs) > 4 and inputs[4] is not None)


# The attributes an op's node takes from its inputs (None: none).
_INPUT_ATTRIBUTES = PerOp("extension op attributes from inputs", resize=None, gridsample=None,
                          deformconv=_optional_inputs)


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
    attrs = _unread_roi(ir, openvino_attributes(ir))
    attrs.update(_INPUT_ATTRIBUTES.get_for(ir, lambda inputs: {})(inputs))
    return _factory.create(OP_TYPES[ir.kind], openvino_inputs(ir, inputs), attrs)


def _resize_onnx_inputs(ir, inputs: list[str]) -> list[str]:
    """(X, roi, scales, sizes), an Upsample's (X, scales) placed so, trailing omitted ones dropped."""
    inputs = resize_inputs(ir, inputs)
    while inputs and inputs[-1] == "":
        inputs.pop()
    return inputs


# The custom-domain node's inputs from the source node's.
_ONNX_INPUTS = PerOp("custom-domain ONNX inputs", resize=_resize_onnx_inputs, gridsample=lambda ir, inputs: inputs,
                     deformconv=lambda ir, inputs: inputs)


def onnx_node(ir, inputs: list[str], outputs: list[str], name: str | None = None):
    """The custom-domain ONNX node (``schema.DOMAIN``, version ``schema.DOMAIN_VERSION``) computing ``ir``:
    ``inputs`` in the source op's order ("" for omitted ones; the custom Resize takes X, roi, scales, sizes, and
    an Upsample's (X, scales) is placed so). The model must import the domain:
    ``onnx.helper.make_opsetid(schema.DOMAIN, schema.DOMAIN_VERSION)``."""
    from onnx import AttributeProto, helper

    attrs = _unread_roi(ir, to_attributes(ir))
    inputs = _ONNX_INPUTS.of(ir)(ir, inputs)
    node = helper.make_node(ONNX_OP_TYPES[ir.kind], list(inputs), list(outputs), name=name, domain=DOMAIN)
    for k, v in attrs.items():
        if isinstance(v, list):  # empty lists carry no type of their own
            node.attribute.append(helper.make_attribute(k, v, attr_type=AttributeProto.INTS))
        else:
            node.attribute.append(helper.make_attribute(k, v))
    return node
