"""``check --source``: each resampling node of an exported ONNX model diffed against the PyTorch call it came
from (issue 44). The PyTorch program is the truth: a node is ``same`` when its IR computes the call's numbers
at the export shape, ``differs`` with the fields (ONNX value, PyTorch value) and the error on a probe input
otherwise, ``ties`` where they part only at float32 ties (how each runtime rounds its map decides),
``missing`` where the exporter wrote the call as other ops (no resampling node to judge), and ``refused`` where
either side cannot be expressed in the IR.

Matching: the dynamo exporter names each node after its FX node and records it in the node's metadata
(``pkg.torch.onnx.fx_node``: "%upsample_bilinear2d : ..."); a TorchScript export records nothing, so its
nodes are matched to the calls in graph order, kind by kind (Resize to upsample calls, GridSample to
grid_sampler, DeformConv to deform_conv2d), each pair checked to read an input of the same shape.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..semantics import reference
from ..semantics.compare import against_oracle
from ..semantics.equivalence import diff, number_text, off_ties
from ..semantics.errors import BridgeError
from ..semantics.ir import ResizeIR, is_static
from ..semantics.opspec import PerOp, of_onnx_op
from ..translate import torch as torch_frontend
from ..translate.onnx import load, parse_model, resampling_nodes
from ..translate.onnx_shapes import graph_inputs, with_input_shapes
from ..translate.torch import load_program
from ..translate.torch_ops import DEFORM_OPS, GRID_OPS, Tensor
from .check_source_bind import bind_runtime_parameters
from .check_source_grid import grid_rows
from .node_probe import PROBE_SEED, probe_image
from .source_row import SourceRow, fx_name

def match(onnx_nodes, torch_calls):
    """[(onnx (name, node, ir) or None, TorchCall or None)]: by the recorded FX node where the export has it,
    else in graph order per kind and input shape."""
    by_name = {c.name: c for c in torch_calls}
    pairs, used = [], set()
    recorded = any(fx_name(n) for _, n, _ in onnx_nodes)
    queues: dict = {}
    for c in torch_calls:
        queues.setdefault(_call_kind(c), []).append(c)
    for item in onnx_nodes:
        _, node, ir = item
        if recorded:
            c = by_name.get(fx_name(node) or "")
        else:
            queue = queues.get(getattr(of_onnx_op(node.op_type), "kind", None), [])
            c = next((c for c in queue if c.name not in used and _same_input(c, ir)), None)
        if c is not None:
            used.add(c.name)
        pairs.append((item, c))
    pairs += [(None, c) for c in torch_calls if c.name not in used]
    return pairs


def _call_kind(c) -> str:
    packet = c.op.split(".")[1]
    return "gridsample" if packet in GRID_OPS else "deformconv" if packet in DEFORM_OPS else "resize"


def _same_input(call, ir) -> bool:
    shape = call.args.get("input", call.args.get("self"))
    shape = getattr(shape, "shape", None)
    theirs = getattr(ir, "input_shape", None)
    if shape is None or theirs is None or len(shape) != len(theirs):
        return shape is None or theirs is None
    return all(a is None or b is None or a == b for a, b in zip(shape, theirs))


def probe_inputs(call, ir) -> list:
    """The oracle's inputs for both IRs of a call: the probe image for the data, seeded grids, offsets, masks
    and weights shaped as the call's own arguments."""
    rng = np.random.default_rng(PROBE_SEED)
    a = call.args
    x = a.get("input", a.get("self"))
    return [probe_image(x.shape, x.dtype)] + [v.astype(x.dtype) for v in _PROBE_ARGS.of(ir)(a, rng)]


def _deformconv_args(a: dict, rng) -> list:
    arrays = [rng.standard_normal(a["weight"].shape), rng.normal(0, 2.0, a["offset"].shape),
              rng.standard_normal(a["bias"].shape)]
    if a.get("use_mask"):
        arrays.append(rng.uniform(0, 1, a["mask"].shape))
    return arrays


# The oracle's inputs after the data, drawn in its argument order from the call's own arguments.
_PROBE_ARGS = PerOp("check --source probe inputs", resize=lambda a, rng: [],
                    gridsample=lambda a, rng: [rng.uniform(-1.2, 1.2, a["grid"].shape)], deformconv=_deformconv_args)


def judge(onnx_name, onnx_op, onnx_ir, call) -> SourceRow:
    """One matched pair: the named fields that differ at the call's shape and the oracle's numbers of both."""
    head = dict(onnx_name=onnx_name, onnx_op=onnx_op, torch_name=call.name, call=call.describe())
    if call.error is not None:
        return SourceRow(**head, verdict="refused", reason=f"PyTorch side: {call.error.line()}")
    torch_ir = call.ir
    shape = torch_ir.input_shape
    if not is_static(shape):
        return SourceRow(**head, verdict="refused", reason="the program's input shape is dynamic here; give "
                         "--input with the export shape")
    try:
        d = diff(onnx_ir, torch_ir, shape)
        inputs = probe_inputs(call, torch_ir)
        want = reference.run(torch_ir, *inputs)
        got = reference.run(onnx_ir, *inputs)
    except BridgeError as e:
        return SourceRow(**head, verdict="refused", shape=shape, reason=e.line())
    ties, masked = "", None
    _float32_ties(d, onnx_ir, torch_ir, shape)
    if got.shape == want.shape and d.ties:
        # Outputs on a float32 tie are decided by how each runtime rounds its map, not by the IR: judged apart
        # (a nearest scale 0.6 written as float32: onnxruntime picks PyTorch's elements there, OpenVINO's CPU
        # others, measured), so a node whose only differences sit there is "ties", not "differs".
        keep = off_ties(d, len(shape), want.shape)
        masked = np.where(keep, got, want)
        ties = "; ".join(f"{ax}: float32 ties at output indices {idx}" for ax, idx in d.ties.items() if idx)
    r = against_oracle(torch_ir, got, want, inputs)
    err = None if r.shape_mismatch else r.max_abs
    if r.ok and not r.shape_mismatch and d.same:
        return SourceRow(**head, verdict="same", numbers_differ=False, max_error=err, shape=shape, reason=ties)
    if masked is not None and against_oracle(torch_ir, masked, want, inputs).ok:
        return SourceRow(**head, verdict="ties", fields=_shown(d), numbers_differ=not r.ok, max_error=err,
                         shape=shape, reason=f"except at {ties}, where float32 rounding decides")
    return SourceRow(**head, verdict="differs", fields=_shown(d), numbers_differ=not r.ok, max_error=err,
                     shape=shape, reason=f"output shape {r.shape_mismatch}" if r.shape_mismatch else ties)


def _shown(d) -> tuple:
    return tuple((f.name, show(f.a), show(f.b)) for f in d.fields)


def _float32_ties(d, *irs_and_shape) -> None:
    """Add to ``d.ties`` the outputs of either nearest IR that sit within float32 reach of a rounding boundary:
    both sides compute their maps in float32 (same ``arith``, so ``diff`` lists none), but the oracle is
    exact, and two float32 maps of scales 0.6f and 0.6 agree there (measured) where the exact ones part."""
    *irs, shape = irs_and_shape
    for ir in irs:
        if isinstance(ir, ResizeIR) and ir.sampler.kind == "nearest" and ir.arith != "exact":
            for ax, idx in diff(ir, dataclasses.replace(ir, arith="exact"), shape).ties.items():
                d.ties[ax] = sorted(set(d.ties.get(ax, [])) | set(idx))


def show(v) -> str:
    """A field's value as the user reads it: scales as decimals (0.4, not the float's exact fraction)."""
    if isinstance(v, Fraction):
        return number_text(v) if v.denominator <= 10**4 else repr(float(v))
    if isinstance(v, tuple):
        return "(" + ", ".join(show(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def check_source(onnx_model, source, example_inputs=None, input_shapes: dict | None = None) -> list[SourceRow]:
    """Every resampling node of ``onnx_model`` (a path or ModelProto) against the call of ``source`` it came
    from, at the export shape (the program's example lengths, or ``input_shapes`` by ONNX input name); where
    both have dynamic lengths, also at other lengths of them (a size frozen by tracing differs there), each
    node that is not the same there reported once more with the shape."""
    program = load_program(source, example_inputs)
    torch_calls = torch_frontend.calls(program)
    model = load(onnx_model)
    names = [vi.name for vi in graph_inputs(model)]
    dims = torch_frontend.dynamic_inputs(program)
    hints = torch_frontend.probe_lengths(dims)[0]
    rows = judge_model(model, torch_calls, input_shapes or _shapes(names, dims, hints), hints)
    if hints and not input_shapes and _dynamic(model):
        other = (torch_frontend.probe_lengths(dims) * 2)[1]  # the example's again where no other fits the range
        shapes = _shapes(names, dims, other)
        at = ", ".join(f"{n}{list(v)}" for n, v in shapes.items())
        rows += [dataclasses.replace(r, at=at) for r in judge_model(model, torch_calls, shapes, other)
                 if r.verdict in ("differs", "ties")]
    return rows + grid_rows(model, torch_frontend.grid_generators(program))


def _shapes(names, dims, values) -> dict:
    return {n: [d if isinstance(d, int) else int(d[0].xreplace(values)) for d in ds] for n, ds in zip(names, dims)}


def _dynamic(model) -> bool:
    return any(not d.HasField("dim_value") for vi in graph_inputs(model) for d in vi.type.tensor_type.shape.dim)


def judge_model(model, torch_calls, shapes: dict, values: dict) -> list[SourceRow]:
    """The rows of ``model`` with its inputs fixed to ``shapes``; ``values``: the length of each of the
    program's symbols there."""
    model = bind_runtime_parameters(with_input_shapes(model, shapes))
    irs = dict(parse_model(model))
    nodes = [(name, node, irs[name]) for name, node in resampling_nodes(model) if name in irs]
    rows = []
    for item, call in match(nodes, torch_calls):
        if item is None:
            rows.append(SourceRow("", "", call.name, call.describe(), "missing",
                                  reason="no resampling node of the ONNX model comes from this call (written "
                                         "as other ops, or left out)"))
        elif call is None:
            rows.append(SourceRow(item[0], item[1].op_type, "", "", "unmatched",
                                  reason="no PyTorch call of the source matches this node"))
        else:
            rows.append(judge(item[0], item[1].op_type, item[2], bound_call(call, item[2], values)))
    return rows


def bound_call(call, onnx_ir, values: dict):
    """A Resize call at concrete lengths: its input shape is the ONNX node's (the same tensor, where the export
    is faithful up to there), its output_size the program's own expressions evaluated at ``values``."""
    ir = call.ir
    if not isinstance(ir, ResizeIR) or (is_static(ir.input_shape) and call.sym_sizes is None):
        return call
    # A static input in the program (a position embedding) stays static; a dynamic one is the ONNX node's.
    shape = ir.input_shape if is_static(ir.input_shape) else onnx_ir.input_shape
    sizes = tuple(torch_frontend.lengths_at(call.sym_sizes, values)) if call.sym_sizes else ir.sizes
    key = "input" if "input" in call.args else "self"
    args = {**call.args, key: Tensor(tuple(shape) if shape else None, call.args[key].dtype)}
    return dataclasses.replace(call, ir=dataclasses.replace(ir, input_shape=shape, sizes=sizes), args=args)


# Outcomes a source check can fail on, in --fail-on's words (tools/gate.OUTCOMES): "different" is a node that
# computes other numbers than its call, "refused" one that cannot be judged, "conditional" one equal but at
# float32 ties (exact where the runtime rounds its map as PyTorch does); a call the export wrote as other ops
# ("missing") is reported, never judged.
_FAILS = {"differs": "different", "refused": "refused", "ties": "conditional"}


@dataclass(frozen=True)
class SourceCheck:
    """``api.check(..., source=...)``: the rows, and whether the gate passes under ``fail_on``."""

    source: str
    rows: tuple
    fail_on: tuple
    against: str = "ONNX"  # what the nodes are: the ONNX export's, or OpenVINO's PyTorch frontend's

    @property
    def passed(self) -> bool:
        return not any(_FAILS.get(r.verdict) in self.fail_on for r in self.rows)

    @property
    def first_difference(self) -> SourceRow | None:
        return next((r for r in self.rows if r.verdict == "differs"), None)

    def counts(self) -> dict:
        out: dict = {}
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_dict(self) -> dict:
        first = self.first_difference
        return {"source": self.source, "nodes": [r.to_dict() for r in self.rows], "counts": self.counts(),
                "first_difference": first.onnx_name if first else None, "passed": self.passed}


def format_rows(result: SourceCheck) -> list[str]:
    """The per-node lines of ``check --source``: verdict, the call in the user's terms, the fields that differ
    as ONNX value vs PyTorch value."""
    lines = [f"source: {result.source} (the PyTorch program is the truth; fields: {result.against} value vs "
             f"PyTorch value)"]
    for r in result.rows:
        if not r.onnx_name:
            lines.append(f"{r.torch_name} ({r.verdict}): {r.reason}")
            if r.measured is not None:
                lines.append(f"      measured: max error {r.measured:.3g} against PyTorch eager")
            lines.append(f"      from {r.call}")
            continue
        head = f"{r.onnx_name} ({r.onnx_op}){' at ' + r.at if r.at else ''}: "
        if r.verdict == "same":
            lines.append(head + "same numbers as PyTorch" + (f" ({r.reason})" if r.reason else ""))
        elif r.verdict == "ties":
            lines.append(head + f"same numbers as PyTorch {r.reason}")
            lines += [f"      {f}: {a} vs {b}" for f, a, b in r.fields]
        elif r.verdict == "differs":
            err = f"max error {r.max_error:.3g} on a probe input" if r.max_error is not None else r.reason
            lines.append(head + f"differs from PyTorch ({err})" if r.numbers_differ else
                         head + "spelled differently, same numbers at this shape")
            lines += [f"      {f}: {a} vs {b}" for f, a, b in r.fields]
        else:
            lines.append(head + f"{r.verdict}: {r.reason}")
        if r.measured is not None:
            lines.append(f"      measured: max error {r.measured:.3g} against PyTorch eager")
        if r.call:
            lines.append(f"      from {r.call}")
    return lines


def format_summary(result: SourceCheck) -> str:
    # a "ties" row is the gate's "conditional" (equal where the runtime decides its ties or its CPU as PyTorch does)
    counts = ", ".join(f"{n} {_FAILS[k] if k == 'ties' else k}" for k, n in result.counts().items())
    first = result.first_difference
    tail = f"; first difference: {first.onnx_name} ({first.call})" if first else ""
    return f"check --source: {counts or 'no resampling nodes'}{tail}; {'PASSED' if result.passed else 'FAILED'}"
