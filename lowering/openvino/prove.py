"""The proof (the pass's postcondition): every lowered node re-read from the produced model and compared with its
source IR. Rungs 1-2: the built-in op parsed back into IR (``translate.openvino``: what the CPU plugin computes)
and diffed; rung 3: the tap tables, or the integer index subgraphs run over a grid of lengths; rung 4: the
extension op's attributes."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.ir import RUNTIME_FIELDS, DeformConvIR, RuntimeValue, has_runtime_params, is_static
from ...semantics.messages import plugin_sentence
from ..passes import CUSTOM, DECOMPOSE, NodeRecord
from . import antialias_proof, antialias_taps, conv_rewrite, decompose, extension, grid_decompose, integer_window, \
    matmul_rewrite, nearest_aspect, nearest_index, rank_view, scale_nearest, scale_proof, scale_taps, window_aspect
from .graph import all_ops, consumer, tagged
from .interpolate import runtime_conditions
from ...semantics.equivalence import diff
from ...translate import openvino as tov


def located(ov_model, records: list[NodeRecord]) -> list[NodeRecord]:
    """The records naming what each node became in ``ov_model`` (just converted, its ops tagged in rt_info):
    ``proof["located"]`` maps each tag to its op's friendly name, ``produced`` lists those names."""
    by_tag = shared_by_twins(tagged(ov_model), records)
    out = []
    for rec in records:
        where = {t: op.get_friendly_name() for t, op in by_tag.items() if t.startswith(rec.node + "/")}
        out.append(replace(rec, produced=sorted(set(where.values())), proof={**rec.proof, "located": where}))
    return out


def prove(ov_model, records: list[NodeRecord]) -> list[str]:
    """Failures (empty = proven). Tags live in rt_info, which a model re-read from disk has lost: the friendly
    names seen in memory (``record.proof["located"]``, from ``located``) find the same ops there."""
    by_tag = tagged(ov_model)
    names = {op.get_friendly_name(): op for op in all_ops(ov_model)}
    for rec in records:
        for t, fname in rec.proof.get("located", {}).items():
            if t not in by_tag and fname in names:
                by_tag[t] = names[fname]
    by_tag = shared_by_twins(by_tag, records)
    failures = []
    for rec in records:
        if _folded(rec, by_tag, ov_model):
            continue  # proven by value at conversion (``frontend.prove_by_value``): OpenVINO folded it
        failures += _prove_one(rec, by_tag, ov_model)
    return failures


def _twin_key(rec: NodeRecord) -> tuple:
    """What two nodes lowered alike share: rung, form and IR, their run-time values' sources left out."""
    blank = {k: RuntimeValue("") for k in RUNTIME_FIELDS if isinstance(getattr(rec.ir, k, None), RuntimeValue)}
    return rec.rung, rec.proof.get("form"), replace(rec.ir, **blank) if blank else rec.ir


def shared_by_twins(by_tag: dict, records: list[NodeRecord]) -> dict:
    """``by_tag`` with the tags of a node none of whose ops is left filled from a twin's (same rung, form and IR
    but for its run-time values' names): OpenVINO merges identical ops reading the same inputs into one, and the
    merged op keeps one node's tag. YOLOS exported by TorchScript resizes its position embedding twice to the same
    run-time sizes (Identity of one initializer): the second Interpolate was merged into the first and the
    conversion refused ("native op not found"). The twin's op is then proven against this node's IR as its own;
    that it reads this node's inputs is the whole-model check's to say (``model_check``)."""
    for rec in records:
        prefix = rec.node + "/"
        if any(t.startswith(prefix) for t in by_tag):
            continue
        for twin in records:
            theirs = {t[len(twin.node) + 1:]: op for t, op in by_tag.items() if t.startswith(twin.node + "/")}
            if twin is not rec and theirs and _twin_key(twin) == _twin_key(rec):
                by_tag.update({prefix + suffix: op for suffix, op in theirs.items()})
                break
    return by_tag


def _prove_one(rec: NodeRecord, by_tag, ov_model) -> list[str]:
    failures = []
    try:
        if rec.rung == DECOMPOSE and rec.proof.get("form") == antialias_taps.FORM:
            failures += antialias_proof.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == integer_window.FORM:
            failures += integer_window.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == scale_taps.FORM:
            failures += scale_proof.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == scale_nearest.FORM:
            failures += scale_proof.prove_nearest(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == nearest_aspect.FORM:
            failures += nearest_aspect.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == window_aspect.FORM:
            failures += window_aspect.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") == "nearest_index":
            failures += nearest_index.prove(rec, by_tag, ov_model)
        elif rec.rung == DECOMPOSE and rec.proof.get("form") in grid_decompose.FORMS:
            failures += grid_decompose.prove(rec, by_tag)
        elif rec.rung == DECOMPOSE:
            failures += decompose.prove(rec, by_tag)
        elif rec.proof.get("form") == matmul_rewrite.FORM:
            failures += matmul_rewrite.prove(rec, by_tag)
            if "fallback" in rec.proof:  # the guarded form's else branch: the rung the ladder chose, as its own
                failures += _prove_one(rec.proof["fallback"], by_tag, ov_model)
        elif rec.proof.get("form") == conv_rewrite.FORM:
            failures += conv_rewrite.prove(rec, by_tag)
        elif rec.rung == CUSTOM:
            failures += extension.prove(rec, by_tag)
        else:
            failures += _prove_builtin(rec, by_tag)
    except BridgeError as e:
        failures.append(f"{rec.node}: {e.message}")
    except RuntimeError as e:  # OpenVINO refusing a look at an op it rewrote: not proven, in one line
        failures.append(f"{rec.node}: the produced ops cannot be re-read ({plugin_sentence(e)})")
    return failures


def _folded(rec: NodeRecord, by_tag, ov_model) -> bool:
    """A node OpenVINO constant-folded, none of its tagged ops left but Constants, and proven by value: its
    inputs were constants (``frontend.prove_by_value``), or its output depends on no input (every probe gave
    the oracle the same output) and that value is a Constant of the produced model."""
    ops = [op for t, op in by_tag.items() if t.startswith(rec.node + "/")]
    if not all(op.get_type_name() == "Constant" for op in ops):
        return False
    if rec.proof.get("by_value"):
        return True
    want = (rec.proof.get("probes") or {}).get("constant_output")
    if want is None:
        return False
    for op in all_ops(ov_model):
        if op.get_type_name() == "Constant" and tuple(op.get_output_shape(0)) == want.shape:
            got = op.get_data()
            if got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True):
                rec.proof["by_value"] = {"constant_output": True, "shape": list(want.shape)}
                return True
    return False


def _folded_by_openvino(ir, got):
    """``ir`` with each run-time value (scales, sizes, roi) that the produced op holds as a constant bound to that
    constant: OpenVINO folded the value's producers where the input shapes are static (``--input``) and our shape
    reading did not (RAFT's flow upsampled to 8 x its own lengths, read through Tile and Expand). Asked only of a
    node taken for every run-time value (no condition), so also exact at this one; that it is the value the source
    computes is the whole-model check's to say (``model_check``: the written model against onnxruntime)."""
    bound = {k: getattr(got, k) for k in RUNTIME_FIELDS
             if isinstance(getattr(ir, k, None), RuntimeValue) and getattr(got, k, None) is not None
             and not isinstance(getattr(got, k), RuntimeValue)}
    return replace(ir, **bound) if bound else ir


def _prove_builtin(rec: NodeRecord, by_tag) -> list[str]:
    op = by_tag.get(rec.proof.get("op"))
    if op is None:
        return [f"{rec.node}: native op not found in the produced model"]
    view = rec.proof.get("view", 0)
    if view and (why := rank_view.view_of(op, view)):
        return [f"{rec.node}: the native op is not read over its rank-4 view: {why}"]
    got = rank_view.unlifted(tov.parse_node(op), view)
    if isinstance(rec.ir, DeformConvIR) and rec.ir.has_bias:
        # Rung 2 spells the bias as an Add right after the convolution.
        if consumer(op, "Add") is None and not rec.proof.get("zero_bias"):
            return [f"{rec.node}: the bias Add after DeformableConvolution-8 is missing"]
        got = dataclasses.replace(got, has_bias=True)
    ir = rec.ir if rec.condition is not None else _folded_by_openvino(rec.ir, got)
    if rec.condition is not None or has_runtime_params(ir):
        # Run-time parameters: nothing to bind; the op must be the one the condition was derived for.
        ok, conditions = runtime_conditions(rec.ir, got, view)
        return [] if ok and "; and ".join(conditions) == (rec.condition or "") else \
            [f"{rec.node}: the native op no longer matches its stated condition"]
    # the shape the node was proven at, else the produced op's own where OpenVINO knows it (static: ``--input``)
    shape = next((s for s in (rec.proof.get("shape"), ir.input_shape, got.input_shape) if is_static(s)), None)
    d = diff(ir, got, shapes=shape)
    if not d.same:
        return [f"{rec.node}: {f}" for f in d.fields]
    if d.ties and d.ties != rec.proof.get("ties"):
        return [f"{rec.node}: fp32 ties at {d.ties} were not settled by a probe run"]
    return []
