"""The canonical IR, the numpy oracle and equivalence. Imports numpy only."""

from .errors import BridgeError
from .ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler, to_dict, to_json

__all__ = ["BridgeError", "ResizeIR", "GridSampleIR", "DeformConvIR", "RuntimeValue", "Sampler", "to_dict",
           "to_json"]
