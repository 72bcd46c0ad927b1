"""What OpenVINO's own PyTorch frontend (``openvino.convert_model(module, example_input=...)``) does with each
resampling call of a PyTorch program (issue 44, item 3): the same verdicts as ``check --source`` gives an ONNX
export, with OpenVINO's op in the ONNX node's place.

Each call is converted on its own: a module that makes just that aten / torchvision call on tensors of the
call's shapes, traced by the frontend as it traces a whole model (it converts op by op), so a call the frontend
cannot convert is named instead of failing the whole model, and every OpenVINO node has exactly one call. The
converted op is read by ``translate/openvino.py`` (what the CPU plugin computes, e.g. its SCALES length rule)
and judged against the call's IR by ``check_source.judge``: named fields and the oracle's numbers of both.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..lowering.openvino.rank_view import AVX2_ONLY, LEADING_UNITS
from ..semantics.compare import against_oracle
from ..semantics.errors import BridgeError, first_line
from ..semantics.ir import DeformConvIR
from ..translate import torch as torch_frontend
from ..translate.openvino import parse_model
from ..translate.torch_ops import Tensor
from .check_source import judge, load_program, probe_inputs
from .check_source_grid import frontend_grid_rows
from .source_row import SourceRow


def _overload(op: str):
    import torch

    target = torch.ops
    if op.startswith("torchvision."):
        import torchvision  # noqa: F401  (registers torch.ops.torchvision)
    for part in op.split("."):
        target = getattr(target, part)
    return target


def one_call_module(call):
    """(module, example tensors): ``call`` alone, its tensor arguments as the module's inputs (the probe arrays
    ``check_source.probe_inputs`` gives the oracle, so both judge the same data)."""
    import torch

    op = _overload(call.op)
    names = [a.name for a in op._schema.arguments]
    tensor_names = [n for n in names if isinstance(call.args.get(n), Tensor)]
    values = {n: v for n, v in call.args.items() if n not in tensor_names}
    arrays = probe_inputs(call, call.ir)
    if isinstance(call.ir, DeformConvIR):  # the oracle's (X, W, offset, B[, mask]) in the schema's order
        mask = arrays[4] if len(arrays) > 4 else np.zeros(call.args["mask"].shape, arrays[0].dtype)
        arrays = [dict(input=arrays[0], weight=arrays[1], offset=arrays[2], bias=arrays[3], mask=mask)[n]
                  for n in tensor_names]

    class OneCall(torch.nn.Module):
        def forward(self, *tensors):
            given = dict(zip(tensor_names, tensors))
            return op(*[given[n] if n in given else values[n] for n in names])

    return OneCall(), [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]


def convert_one(call):
    """(OpenVINO model, example tensors) of ``call`` through OpenVINO's PyTorch frontend; BridgeError naming the
    call where the frontend refuses it."""
    import openvino as ov

    module, tensors = one_call_module(call)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.jit.trace's deprecation, on every call
            return ov.convert_model(module, example_input=tuple(tensors)), tensors
    except Exception as e:  # the frontend raises its own types (OpConversionFailure, RuntimeError)
        raise BridgeError(f"OpenVINO's PyTorch frontend does not convert it: {first_line(e)}", call.name,
                          "op") from None


def check_openvino_frontend(source, example_inputs=None) -> list[SourceRow]:
    """Per resampling call of ``source`` (a .pt2 path, program, or module with ``example_inputs``): what
    OpenVINO's PyTorch frontend makes of it, against the call's own IR."""
    program = load_program(source, example_inputs)
    rows = []
    for call in torch_frontend.calls(program):
        if call.error is not None:
            rows.append(SourceRow("", "", call.name, call.describe(), "refused",
                                  reason=f"PyTorch side: {call.error.line()}"))
            continue
        try:
            ov_model, _ = convert_one(call)
        except BridgeError as e:
            rows.append(SourceRow("", "", call.name, call.describe(), "refused", reason=e.message))
            continue
        nodes = parse_model(ov_model)
        if len(nodes) != 1:
            rows.append(SourceRow("", "", call.name, call.describe(), "missing",
                                  reason=f"OpenVINO wrote {len(nodes)} resampling ops for it (other ops instead)"))
            continue
        (name, ir), = nodes
        row = judge(name, ir.origin, ir, call)
        err, ok = measured(ov_model, call)
        if row.verdict == "ties" and not ok:  # the CPU rounds its map otherwise than PyTorch at those ties
            row = dataclasses.replace(row, verdict="differs", numbers_differ=True,
                                      reason=f"measured at the {row.reason.removeprefix('except at ')}")
        elif row.verdict == "differs" and not row.numbers_differ and ok:
            # The op alone is spelled otherwise but the frontend's graph computes the call (deform_conv2d: the
            # bias is an Add after DeformableConvolution, the kernel read from the weights), measured.
            spelled = "; ".join(f"{f}: {a} vs {b}" for f, a, b in row.fields)
            row = dataclasses.replace(row, verdict="same", fields=(), reason=f"the op alone spells {spelled}; "
                                      f"the converted graph computes the call (measured)")
        if row.verdict == "same" and LEADING_UNITS.of(ir)(ir):  # right here, wrong on an SSE4.2-only CPU
            row = dataclasses.replace(row, verdict="ties", reason="only if " + AVX2_ONLY)
        rows.append(dataclasses.replace(row, measured=err))
    return rows + frontend_grid_rows(torch_frontend.grid_generators(program))


def measured(ov_model, call) -> tuple[float | None, bool]:
    """(max |error|, within the policy) of OpenVINO CPU (float32 inference precision) against PyTorch eager on
    the call's probe tensors: the witness beside the IR's verdict (None, False where the shapes differ)."""
    import openvino as ov

    module, tensors = one_call_module(call)
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled([t.numpy() for t in tensors])[compiled.output(0)]
    want = module(*tensors).detach().numpy()
    if got.shape != want.shape or not want.size:
        return None, False
    r = against_oracle(call.ir, got, want, probe_inputs(call, call.ir))  # the oracle's order of the same arrays
    return float(np.abs(got.astype(np.float64) - want).max()), r.ok
