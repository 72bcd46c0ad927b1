"""Proof by numbers inside the ladder: a rung's candidate is rebuilt on fresh Parameters of the node's input
shapes and types, compiled on OpenVINO CPU (f32 inference precision), run on probe inputs
(``lowering.probes``) and compared with the oracle (``semantics.reference.run``, through
``semantics.compare.against_oracle``): every element within the float32 forward error bound of the spec's
formula, integers and nearest equal. A compile failure or a mismatch becomes a Refusal, so
``passes.climb`` tries the next rung. Verdicts are cached per (rung, IR, input shapes, types, constants,
conditional): a model with 50 identical nodes compiles once."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR
from ...semantics.opspec import PerOp
from ...semantics.messages import plugin_sentence
from ..passes import CUSTOM, Candidate, Refusal, Rung
from ..probes import DYNAMIC_LENGTHS, concrete_shapes, probe_sets, roles
from .graph import F32, Compiled, compile_checked, dims, np_dtype
from ...semantics.reference import deformconv_out_shape, run
from .. import compiled

_NAMES = {"data": "X", "roi": "roi", "scales": "scales", "sizes": "sizes", "grid": "grid", "weight": "W",
          "offset": "offset", "bias": "B", "mask": "mask"}
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 512


def clear_cache() -> None:
    _CACHE.clear()


# ----------------------------------------------------------------------------------------------------------
# The probe graph: the rung rebuilt on fresh inputs.


def _fresh_inputs(node):
    """(inputs, parameters, fed, constants): each input of ``node`` as a fresh Parameter of the same partial
    shape and type, or a copy of its Constant (a constant input is part of what the rung lowers)."""
    import openvino.opset13 as ops

    inputs, params, fed, consts = [], [], [], []
    for i, out in enumerate(node.inputs):
        new, value = None, None
        if out is not None and out.get_node().get_type_name() == "Constant":
            value = np.array(out.get_node().get_data(), copy=True)
            new = ops.constant(value, dtype=out.get_element_type()).output(0)
        elif out is not None:
            p = ops.parameter(_unbounded(out.get_partial_shape()), out.get_element_type(), name=f"probe_in{i}")
            params.append(p)
            new = p.output(0)
        inputs.append(new)
        fed.append(out is not None and value is None)
        consts.append(value)
    return inputs, params, fed, consts


def _unbounded(shape):
    """``shape`` with its dynamic dims free of the bounds OpenVINO inferred (an Interpolate x2 upstream makes a
    dim ``8..``): the probes feed lengths of their own, and what a rung built does not depend on the bounds."""
    import openvino as ov

    if shape.rank.is_dynamic:
        return shape
    return ov.PartialShape([d if d.is_static else ov.Dimension.dynamic() for d in shape])


def _key(rung, node, candidate: Candidate):
    parts = [rung.number, rung.name, candidate.proof.get("form"), candidate.unconditional]
    try:
        hash(node.ir)
        parts.append(node.ir)
    except TypeError:
        parts.append(repr(node.ir))
    parts.append(type(node.ir).__name__ + node.ir.origin)
    for out in node.inputs:
        if out is None:
            parts.append(None)
            continue
        src = out.get_node()
        const = src.get_data().tobytes() if src.get_type_name() == "Constant" else None
        parts.append((str(out.get_partial_shape()), str(out.get_element_type()), const))
    return tuple(parts)


def _concrete(ir, shapes: list) -> list[list]:
    """Concrete shapes of every input, one list per probe round: unknown dimensions get representative
    lengths (several); inputs tied to X (grid / offset / mask batch and spatial) follow it."""
    x = shapes[0]
    if x is None:
        raise BridgeError("the input's rank is unknown")
    if len(x) and x[0] is None:  # X's batch unknown where an input tied to it declares one: that one
        x = (declared_batch(ir, shapes),) + tuple(x[1:])
    rounds = []
    for k, xs in enumerate(concrete_shapes(x)):
        row = [xs]
        for i, s in enumerate(shapes[1:], start=1):
            if s is None:
                row.append(None)
                continue
            if all(d is not None for d in s):
                row.append(tuple(s))
                continue
            row.append(TIED_SHAPE.of(ir)(ir, s, row, k))
        rounds.append(row)
    return rounds


def _free_shape(ir, s, row: list, k: int) -> tuple:
    """A parameter's shape: its own, unknown dimensions at the round's representative length."""
    return tuple(d if d is not None else DYNAMIC_LENGTHS[k] for d in s)


def _grid_shape(ir: GridSampleIR, s, row: list, k: int) -> tuple:
    """The grid: X's batch, representative output lengths, the spatial rank."""
    return (row[0][0],) + tuple(d if d is not None else DYNAMIC_LENGTHS[k] for d in s[1:-1]) \
        + (s[-1] if s[-1] is not None else ir.spatial_rank,)


def _deform_shape(ir: DeformConvIR, s, row: list, k: int) -> tuple:
    """Offsets / mask: X's batch, the output lengths X and W give."""
    xs, w = row[0], row[1] if len(row) > 1 else None
    if w is None or any(d is None for d in w):
        raise BridgeError("the weight's shape is unknown")
    kernel = ir.kernel_shape or tuple(w[2:])
    out = deformconv_out_shape(ir, xs[2:], kernel)
    if s[1] is None:
        raise BridgeError("the offset / mask channel count is unknown")
    return (xs[0], s[1]) + tuple(out)


# The shape of an input tied to X (GridSample's grid, DeformConv's offsets and mask) in one probe round.
TIED_SHAPE = PerOp("probe shapes", resize=_free_shape, gridsample=_grid_shape, deformconv=_deform_shape)
# The inputs whose first axis is X's batch (a grid; offsets and mask), by input position
BATCH_TIED = PerOp("inputs batched with X", resize=(), gridsample=(1,), deformconv=(2, 4))


def declared_batch(ir, shapes: list) -> int | None:
    """X's batch as an input tied to it declares it (``shapes``: per input position its dims, None unknown), or
    None (multi-scale deformable attention: the data's batch x heads static, the grid's a symbol, or the reverse)."""
    return next((s[0] for i, s in enumerate(shapes) if i in BATCH_TIED.of(ir) and s and s[0] is not None), None)


def _compile(model, rung):
    import openvino as ov

    core = ov.Core()
    if rung.number == CUSTOM:

        core.add_extension(compiled.openvino_extension())
    return Compiled(compile_checked(core, model, F32))


def prove_candidate(rung, node, candidate: Candidate):
    """None when the candidate computes the oracle's numbers on every probe, else a Refusal saying where it
    does not. Records what was probed on ``candidate.proof["probes"]``."""
    key = _key(rung, node, candidate)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        verdict = _CACHE[key]
    else:
        verdict = _measure(rung, node, candidate)
        _CACHE[key] = verdict
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    if isinstance(verdict, Refusal):
        return verdict
    candidate.proof["probes"] = dict(verdict)
    return None


def _measure(rung, node, candidate: Candidate):
    """The verdict of one rung on one node: Refusal, or {"count", "max_abs", "shapes", ...}."""
    import openvino as ov

    try:
        inputs, params, fed, consts = _fresh_inputs(node)
        got = rung.ask(dataclasses.replace(node, inputs=inputs))
    except BridgeError as e:
        return Refusal(f"the probe graph could not be built: {e.message}", e.field)
    if isinstance(got, Refusal):
        return Refusal(f"the probe graph could not be built: {got.reason}", got.field)
    try:
        model = ov.Model([o for o in got.produced], params, "probe")
        compiled = _compile(model, rung)
    except BridgeError as e:
        return Refusal(f"OpenVINO CPU cannot compile it: {e.message}", e.field or "rung")
    except Exception as e:  # noqa: BLE001 -- the plugin's refusal, in its own words
        return Refusal(f"OpenVINO CPU cannot compile it: {plugin_sentence(e)}", "rung")
    try:
        rounds = _concrete(node.ir, [dims(o) if o is not None else None for o in node.inputs])
    except BridgeError as e:
        return {"count": 0, "skipped": e.message}
    kinds = roles(node.ir)
    dtypes = [None if o is None else np_dtype(o.get_element_type()).name for o in node.inputs]
    count, worst, tol = 0, 0.0, None
    wants = []  # the oracle's outputs: all equal = the output depends on no fed value (OpenVINO folds it)
    for shapes in rounds:
        for ps in probe_sets(node.ir, shapes, dtypes, fed, conditional=not candidate.unconditional):
            arrays = [c if a is None else a for a, c in zip(ps.arrays, consts)]
            arrays += [None] * (len(kinds) - len(arrays))
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # overflow is compared, not warned about
                    want = run(node.ir, *arrays)
            except BridgeError:
                continue  # values outside the node's domain (e.g. a zero-length output): nothing to compare
            feeds = [a for a, f in zip(arrays, fed) if f]
            try:
                out = np.asarray(compiled(feeds)[0])
            except Exception as e:  # noqa: BLE001
                return Refusal(f"OpenVINO CPU fails to run it on {ps.what}: {plugin_sentence(e)}", "rung")
            c = against_oracle(node.ir, out, want, arrays)
            count += 1
            tol = max(tol or 0.0, c.max_ratio or 0.0)
            if not c.ok:
                varied = _varied(ps, kinds)
                where = (f"output shape {c.shape_mismatch}" if c.shape_mismatch is not None else
                         f"worst element {list(c.worst)} is {c.got:.9g}, oracle {c.want:.9g}")
                return Refusal(f"differs from the oracle on {ps.what}, shape {list(shapes[0])}: {where}", varied)
            worst = max(worst, c.max_abs or 0.0)
            if len(rounds) == 1:
                wants.append(want)
    verdict = {"count": count, "max_abs": worst, "shapes": [list(s[0]) for s in rounds],
               "bound_ratio": tol}  # the largest error as a share of the float32 error bound
    if len(wants) > 1 and all(np.array_equal(w, wants[0], equal_nan=True) for w in wants[1:]):
        verdict["constant_output"] = wants[0]
    return verdict


def _varied(ps, kinds) -> str:
    """The ONNX input a failing probe set exercised (its description names it), X by default."""
    what = ps.what
    for role in ("grid", "offset", "mask", "scales", "sizes", "roi"):
        if role in what:
            return _NAMES[role]
    return _NAMES[kinds[0]]


def proven(rung):
    """The rung with proof by numbers: its candidate is returned only when the probes agree with the oracle;
    otherwise the probe's Refusal is (below the custom op, the first such refusal says why the node needs it)."""
    def lower(node, *earlier):
        try:
            got = rung.lower(node, *earlier)
        except BridgeError:
            raise
        except Exception as e:  # noqa: BLE001 -- a rung that cannot build this node refuses it; the next may
            kind = "" if isinstance(e, RuntimeError) else f"{type(e).__name__}: "  # RuntimeError: OpenVINO's words
            return Refusal(f"cannot be built here: {kind}{plugin_sentence(e)}", "rung")
        if isinstance(got, Refusal):
            return got
        if not got.unconditional and getattr(node, "strict", False):
            return got  # the policy declines it anyway: climb records why, nothing to measure
        refusal = prove_candidate(rung, node, got)
        if refusal is None:
            return got
        why = {"why_custom": f"{rung.name}: {refusal.reason}"} if rung.number < CUSTOM else {}
        return dataclasses.replace(refusal, facts={**got.facts, **why})

    return Rung(rung.number, rung.name, lower, rung.sees_earlier)


__all__ = ["prove_candidate", "proven", "plugin_sentence", "clear_cache"]
