"""One home per op (issue 41): the resampling ops resample-bridge knows, keyed by IR kind, and ``PerOp``, the
table in which each layer keeps its piece of every op (the oracle in ``reference``, the error bound in
``error_bound``, the text in ``text``, the probes, each target's rungs and decompositions) instead of switching on
kinds. A table names every op (None where the layer has nothing for one) and is checked against ``SPECS`` when its
module loads, so a new op is one line here, one module per layer and one entry per table, and a table that forgets
it fails at import, not on the first model that has the op.

The tables live in their layers (the oracle's beside the oracle), not here: ``reference.run``,
``error_bound.bound`` and ``text.describe`` are the entry points everyone calls, and they sit above this module."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import BridgeError
from .ir import DeformConvIR, GridSampleIR, ResizeIR
from .vocab import ONNX_RESIZE_OPS


@dataclass(frozen=True)
class OpSpec:
    """What is true of one op on every layer. ``onnx_ops``: the default-domain ONNX op types parsed into its IR
    (the first also names the op in resample-bridge's own ONNX domain, ``schema.ONNX_OP_TYPES``); ``inputs``: the
    ONNX node's inputs in order (the oracle's arguments, None for an omitted one); ``custom_op``: the op type of
    the OpenVINO extension's op and the TensorRT plugin's name (``schema.OP_TYPES``: unique across domains);
    ``positions``: the input that carries sample positions (GridSample's grid, DeformConv's offsets), None where
    the op computes them; ``parameters``: the trailing inputs whose values the IR holds as its fields (Resize's
    roi, scales, sizes), not arrays the oracle reads (``arrays``)."""

    kind: str
    ir: type
    onnx_ops: tuple[str, ...]
    inputs: tuple[str, ...]
    custom_op: str
    positions: int | None = None
    parameters: tuple[str, ...] = ()

    @property
    def arrays(self) -> tuple[str, ...]:
        """The leading inputs the oracle reads as arrays (where the IR holds its parameters' values)."""
        return self.inputs[:len(self.inputs) - len(self.parameters)]

    @property
    def domain_op(self) -> str:
        """The op type in resample-bridge's own ONNX domain."""
        return self.onnx_ops[0]


# In the C ABI's op order (``schema.KINDS``: the kernels number the ops so).
SPECS = {s.kind: s for s in (
    OpSpec("resize", ResizeIR, ONNX_RESIZE_OPS, ("X", "roi", "scales", "sizes"), "ResampleBridgeResize",
           parameters=("roi", "scales", "sizes")),
    OpSpec("gridsample", GridSampleIR, ("GridSample",), ("X", "grid"), "ResampleBridgeGridSample", positions=1),
    OpSpec("deformconv", DeformConvIR, ("DeformConv",), ("X", "W", "offset", "B", "mask"), "ResampleBridgeDeformConv",
           positions=2),
)}
BY_ONNX_OP = {op: s for s in SPECS.values() for op in s.onnx_ops}


def spec(ir) -> OpSpec:
    """The spec of an IR value (or of its class), or BridgeError for anything else."""
    found = SPECS.get(getattr(ir, "kind", None))
    if found is None or not isinstance(ir, found.ir) and ir is not found.ir:
        raise BridgeError(f"not an IR value: {type(ir).__name__}")
    return found


def of_onnx_op(op_type: str) -> OpSpec | None:
    """The spec of an ONNX (default-domain) op type, None for an op that is not a resampling op."""
    return BY_ONNX_OP.get(op_type)


class PerOp(dict):
    """kind -> one layer's piece of that op (a function, a ladder, a builder); ``of(ir)`` looks one up."""

    def __init__(self, what: str, **by_kind):
        missing, unknown = sorted(set(SPECS) - set(by_kind)), sorted(set(by_kind) - set(SPECS))
        if missing or unknown:
            raise TypeError(f"{what}: the table must name every op of semantics.opspec.SPECS "
                            f"(missing {missing}, unknown {unknown})")
        super().__init__(by_kind)
        self.what = what

    def of(self, ir):
        """The piece for ``ir``'s op; BridgeError where this layer has none for it."""
        piece = self[spec(ir).kind]
        if piece is None:
            raise BridgeError(f"{self.what}: nothing for {ir.kind}")
        return piece

    def get_for(self, ir, default=None):
        """The piece for ``ir``'s op, ``default`` where this layer has none for it."""
        piece = self[spec(ir).kind]
        return default if piece is None else piece


__all__ = ["OpSpec", "SPECS", "BY_ONNX_OP", "spec", "of_onnx_op", "PerOp"]
