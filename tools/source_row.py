"""One row of ``check --source``: an exported node (ONNX's, or OpenVINO's PyTorch frontend's) against the PyTorch
call it came from, and the FX node a dynamo export records for a node (shared by ``check_source``, its grids'
rows ``check_source_grid`` and ``check_torch_openvino``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FX_NODE = re.compile(r"^%([\w.]+) :")


@dataclass(frozen=True)
class SourceRow:
    """One ONNX node (or one PyTorch call with no node) against its PyTorch call."""

    onnx_name: str  # "" where the call has no resampling node in the ONNX model
    onnx_op: str
    torch_name: str  # "" where no call matches the node
    call: str  # the call in the user's terms (TorchCall.describe)
    verdict: str  # same | differs | missing | unmatched | refused
    fields: tuple = ()  # (field, ONNX value, PyTorch value) that change the numbers
    numbers_differ: bool | None = None
    max_error: float | None = None
    shape: tuple | None = None
    reason: str = ""
    measured: float | None = None  # the target run against PyTorch eager, where one was run
    at: str = ""  # the input shapes, where not the export's


    def to_dict(self) -> dict:
        d = dict(vars(self))
        d["fields"] = [{"field": f, "onnx": a, "pytorch": b} for f, a, b in self.fields]
        d["shape"] = list(self.shape) if self.shape else None
        return d


def fx_name(node) -> str | None:
    """The FX node a dynamo export records for an ONNX node, if any."""
    for p in node.metadata_props:
        if p.key == "pkg.torch.onnx.fx_node":
            m = _FX_NODE.match(p.value)
            if m:
                return m.group(1)
    return None
