"""``check --source`` for the grids a program feeds to grid_sample: ``F.affine_grid`` (``aten.affine_grid_generator``,
issue 44), judged against PyTorch's own rules (``semantics/affine_grid.py``) on its own rows beside the resampling
nodes' (``check_source``, ``check_torch_openvino``).

What reaches the exported model (torch 2.14.1, measured):

* the dynamo exporter decomposes it (PyTorch's base grid folded into a constant, times theta: Mul / ReduceSum):
  no AffineGrid node, so the call's row is ``missing``, named, never silent;
* the TorchScript exporter refuses it below opset 20 and writes AffineGrid-20 from there: judged field by field
  as onnxruntime and the ONNX reference compute it (an axis of length 1 with align_corners=True at -1, where
  PyTorch has 0: ``length1``), and by the oracle's numbers of both sides on a probe theta;
* OpenVINO's PyTorch frontend has no conversion rule for it in a traced module; from a torch.export program the
  program's decomposition reaches it (the ``convert model.pt2`` path): measured against eager, in float32 and
  at the CPU's default inference precision (bf16 on this CPU moves the grid by ~1e-2, a tap's worth).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..semantics import affine_grid
from ..semantics.affine_grid import AffineGridIR
from ..semantics.compare import within_bound
from ..semantics.errors import first_line
from ..translate.onnx import model_constants
from ..translate.onnx_walk import walk
from .node_probe import PROBE_SEED
from .source_row import SourceRow, fx_name

ONNX_OP = "AffineGrid"


def probe_theta(ir: AffineGridIR) -> np.ndarray:
    """A seeded theta of the call's shape and dtype: rotation, scale and shift of order 1, so every base
    coordinate moves the grid."""
    r = ir.spatial_rank
    return np.random.default_rng(PROBE_SEED).uniform(-1.5, 1.5, (ir.size[0], r, r + 1)).astype(ir.dtype or "float32")


def onnx_grids(model) -> list[tuple[str, object, AffineGridIR | None, str]]:
    """(name, node, IR or None, why not) of every AffineGrid node; its size must be a constant."""
    consts = model_constants(model)
    out = []
    for name, node in walk(model.graph):
        if node.op_type != ONNX_OP:
            continue
        size = consts.get(node.input[1]) if len(node.input) > 1 else None
        if size is None or np.asarray(size).ndim != 1 or len(size) not in (4, 5):
            out.append((name, node, None, "its size is not a constant [N, C, H, W] or [N, C, D, H, W]"))
            continue
        align = next((a.i for a in node.attribute if a.name == "align_corners"), 0)
        ir = AffineGridIR(spatial_rank=len(size) - 2, size=tuple(int(v) for v in size), align_corners=bool(align),
                          length1="minus_one", dtype="float32", origin=f"{ONNX_OP}-20")
        out.append((name, node, ir, ""))
    return out


def judge_grid(onnx_name: str, onnx_op: str, ir: AffineGridIR, call) -> SourceRow:
    """One exported grid against its call: the fields that differ, and the oracle's numbers of both on the
    probe theta within the call's float32 bound."""
    head = dict(onnx_name=onnx_name, onnx_op=onnx_op, torch_name=call.name, call=call.describe())
    if call.error is not None:
        return SourceRow(**head, verdict="refused", reason=f"PyTorch side: {call.error.line()}")
    want_ir = call.ir
    fields = affine_grid.field_differences(ir, want_ir)
    if ir.size != want_ir.size or ir.spatial_rank != want_ir.spatial_rank:
        return SourceRow(**head, verdict="differs", fields=_shown(fields), numbers_differ=True,
                         shape=want_ir.size, reason=f"grid size {list(ir.size)} vs {list(want_ir.size)}")
    theta = probe_theta(want_ir)
    got, want = affine_grid.run(ir, theta), affine_grid.run(want_ir, theta)
    r = within_bound(got, want, affine_grid.bound(want_ir, theta))
    material = [f for f in fields if f[3]]
    verdict = "same" if r.ok and not material else "differs"
    return SourceRow(**head, verdict=verdict, fields=_shown(material), numbers_differ=not r.ok,
                     max_error=r.max_abs, shape=want_ir.size)


def _shown(fields) -> tuple:
    return tuple((f, str(a), str(b)) for f, a, b, _ in fields)


def grid_rows(model, calls) -> list[SourceRow]:
    """The rows of ``calls`` (``translate.torch.grid_generators``) against ``model``'s AffineGrid nodes: by the
    recorded FX node where the export has it, else in graph order."""
    nodes = onnx_grids(model)
    recorded = any(fx_name(n) for _, n, _, _ in nodes)
    by_name = {c.name: c for c in calls}
    queue, rows, used = list(calls), [], set()
    for name, node, ir, why in nodes:
        call = by_name.get(fx_name(node) or "") if recorded else next((c for c in queue if c.name not in used), None)
        if call is None:
            rows.append(SourceRow(name, ONNX_OP, "", "", "unmatched",
                                  reason="no F.affine_grid call of the source matches this node (the program "
                                         "computes its grid by other ops: kornia, traced, calls it, exported not)"))
            continue
        used.add(call.name)
        rows.append(judge_grid(name, ONNX_OP, ir, call) if ir is not None else
                    SourceRow(name, ONNX_OP, call.name, call.describe(), "refused", reason=why))
    rows += [SourceRow("", "", c.name, c.describe(), "missing",
                       reason="no AffineGrid node comes from this call: the exporter wrote it as other ops (the "
                              "dynamo exporter: PyTorch's base grid as a constant, times theta), not judged")
             for c in calls if c.name not in used]
    return rows


def _one_call(ir: AffineGridIR):
    """The call alone, theta its only input."""
    import torch

    class AffineGrid(torch.nn.Module):
        def forward(self, theta):
            return torch.ops.aten.affine_grid_generator(theta, list(ir.size), ir.align_corners)

    return AffineGrid()


def frontend_grid_rows(calls) -> list[SourceRow]:
    """What OpenVINO's PyTorch frontend makes of each ``F.affine_grid`` call: a traced module's refusal, and
    the exported program's conversion measured against eager (float32, and the CPU's default precision)."""
    rows = []
    for call in calls:
        head = dict(onnx_name="", onnx_op="", torch_name=call.name, call=call.describe())
        if call.error is not None:
            rows.append(SourceRow(**head, verdict="refused", reason=f"PyTorch side: {call.error.line()}"))
            continue
        rows.append(_frontend_row(head, call.ir))
    return rows


def _frontend_row(head: dict, ir: AffineGridIR) -> SourceRow:
    import openvino as ov
    import torch

    module, theta = _one_call(ir), probe_theta(ir)
    example = (torch.from_numpy(theta),)
    traced = _refusal(lambda: ov.convert_model(module, example_input=example))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ov_model = ov.convert_model(torch.export.export(module, example), example_input=example)
    except Exception as e:  # noqa: BLE001 -- the frontend raises its own types
        return SourceRow(**head, verdict="refused", reason=f"OpenVINO's PyTorch frontend does not convert it: "
                                                           f"{first_line(e)}")
    want = module(*example).numpy()
    bound = affine_grid.bound(ir, theta)
    core = ov.Core()
    f32 = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([theta])[0]
    default = core.compile_model(ov_model, "CPU")([theta])[0]
    r, rd = within_bound(f32, affine_grid.run(ir, theta), bound), within_bound(default, want, bound)
    ops = sorted({o.get_type_name() for o in ov_model.get_ops()} - {"Parameter", "Result", "Constant"})
    reason = (f"a traced module: {traced or 'converted'}; a torch.export program: decomposed into "
              f"{'/'.join(ops)} over PyTorch's base grid")
    if not rd.ok:
        reason += (f"; at the CPU's default inference precision off by {float(np.abs(default - want).max()):.3g} "
                   f"(a grid is a coordinate: pin f32 for the grid_sample it feeds)")
    return SourceRow(**head, verdict="same" if r.ok else "differs", numbers_differ=not r.ok, max_error=r.max_abs,
                     shape=ir.size, reason=reason, measured=float(np.abs(f32 - want).max()))


def _refusal(convert) -> str:
    """The frontend's refusal in one line (its summary's "No conversion rule ..." where it has one), "" where it
    converts."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            convert()
        return ""
    except Exception as e:  # noqa: BLE001 -- the frontend raises its own types
        rule = next((line.strip(" -") for line in str(e).splitlines() if "No conversion rule" in line), "")
        return f"refused ({rule or first_line(e)})"
