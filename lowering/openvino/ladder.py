"""The OpenVINO ladder of each IR kind on the pass interface (``lowering.passes``), and ``lower`` for one node.

Resize: native Interpolate (1), Interpolate after an exact rewrite or the convolution form of an integer-ratio
upsampling or downsampling (2: ``conv_rewrite``; where Interpolate is exact too, the cost model chooses), or the
matrix form (2: ``matmul_rewrite``: guarded by the chosen rung for inputs not all finite), decomposition (3: tap
tables for static shapes, nearest's integer index form for run-time lengths, the run-time scale forms
``scale_taps`` / ``scale_nearest``; ``scale_taps`` also takes a static scale on run-time lengths), extension (4). GridSample: GridSample-9 (1),
the in-graph sampler for ranks GridSample-9 cannot take (3), extension (4). DeformConv: DeformableConvolution-8 + Add (2), the in-graph decomposition for
the ranks it cannot take (3), extension (4). Every candidate is proven by numbers against the oracle before it is taken (``probe``). The
extension is the last resort; a native op exact only under run-time conditions is taken before it only with
``--allow-conditional`` (``policy_for``; never with ``--strict``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...semantics.errors import BridgeError
from ...semantics.opspec import PerOp
from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE, Candidate, NodeRecord, Policy, Refusal, Rung, climb, \
    facts, rung_names, take, tried_of
from . import antialias_taps, builtin, conv_rewrite, cost, cost_in_graph, decompose, extension, fixed_point_form, \
    grid_decompose, integer_window, interpolate, matmul_rewrite, nearest_aspect, nearest_index, scale_nearest, \
    scale_taps, window_aspect
from .boundary import NOT_AT_BOUNDARY
from .probe import proven
from .graph import np_dtype
from .. import compiled

TARGET = "openvino"
NATIVE, EXTENSION = BUILTIN, CUSTOM
RUNG_NAMES = rung_names("extension")


@dataclass(frozen=True)
class Node:
    """One node on its way up the ladder: what every rung reads. What a rung found for later ones travels in
    its answer's ``facts`` (``passes.Attempt``), not here."""

    name: str
    ir: Any
    inputs: list  # OpenVINO outputs in ONNX input order, None for omitted optional inputs
    strict: bool = False  # conditions and assumptions are declined (--strict, or the default policy)
    user_strict: bool = False  # --strict itself
    sides: tuple = NOT_AT_BOUNDARY  # (input, output) at the model's own inputs / outputs (``boundary``)
    weigh: bool = False  # the policy prefers the fastest exact rung: the cost model may take the extension
    timing: Any = None  # how the cost model converts its timing models (``passes.Policy.timing``)


def policy_for(fallback: str = "decompose", strict: bool = False, allow_conditional: bool = False,
               prefer: str = "fastest", timing=None) -> Policy:
    """``--fallback extension`` starts at rung 4. By default only candidates exact for every run-time value are
    taken; ``allow_conditional`` (``--allow-conditional``) also takes one exact under stated run-time conditions
    (recorded, and written into the model's rt_info); ``--strict`` declines conditions and assumptions whatever
    ``allow_conditional`` says. ``prefer="fastest"`` (the default): a Resize or a DeformConv (a GridSample:
    instead of its decomposition) takes the extension instead of the exact rung the ladder chose where the cost
    model (``cost``) estimates it faster by ``cost.MARGIN``;
    ``"builtin"``: never where a rung that needs nothing beside the model is exact."""
    return Policy(allow_conditional=bool(allow_conditional) and not strict,
                  floor=EXTENSION if fallback == "extension" else NATIVE, prefer=prefer, timing=timing)


def _rung(number: int, lower, sees_earlier: bool = False) -> Rung:
    """A rung whose candidates are proven by numbers (``probe``) before ``climb`` sees them."""
    return proven(Rung(number, RUNG_NAMES[number], lower, sees_earlier))


def _why_custom(node, earlier) -> str | None:
    """The reason the node needs the extension (the first decisive refusal of a lower rung), in the words of
    the policy in force (the Interpolate rung words a declined condition as --strict's; without
    --allow-conditional the default policy declined it)."""
    why = next(iter(facts(earlier, "why_custom")), None)
    if why and why.startswith("--strict: ") and not node.user_strict:
        why = "needs --allow-conditional: " + why[len("--strict: "):]
    return why


def _extension(own=lambda node: None) -> Rung:
    """Rung 4. Its printed reason: the rung's own (``own(node)``: what no built-in op of the kind has), else the
    decisive refusal, else what the lower rungs said, else ``--fallback extension`` (nothing lower was asked).
    An element type the extension cannot compute exactly is refused here, with the field."""
    def lower(node, earlier=()):
        x = node.inputs[0]
        dtype = np_dtype(x.get_element_type()) if hasattr(x, "get_element_type") else None
        bad = None if dtype is None else compiled.extension_dtype_refusal(node.ir, dtype)
        if bad is not None:
            return Refusal(bad, "dtype")
        # A quiet refusal (a rung that does not apply to this node at all) is left out of the reason.
        earlier = tuple(a for a in earlier if not (isinstance(a.outcome, Refusal) and a.outcome.facts.get("quiet")))
        why = own(node) or _why_custom(node, earlier) or (refusal_text(tried_of(earlier)) if earlier else
                                                          extension.FALLBACK)
        return extension.lower(node, why)
    return _rung(EXTENSION, lower, sees_earlier=True)


def _decomposition(node, earlier=()):
    """Rung 3: the static tap tables; where lengths are known only at run time, nearest's integer index form or
    the antialias window computed in the graph instead (one refusal naming both when neither applies). Its
    reason names the Interpolate spellings the lower rungs found inexact."""
    not_native = [why for whys in facts(earlier, "not_native") for why in whys]
    got = decompose.rung(node, not_native)
    if not isinstance(got, Refusal):
        return got
    if fixed_point_form.fixed_point_rounding(node.ir):
        return Refusal(f"{got.reason}; {fixed_point_form.FIXED_RUN_TIME}", "integer_rounding",
                       facts={**got.facts, "why_custom": fixed_point_form.FIXED_RUN_TIME})
    # The run-time forms of linear / cubic: for an integer tensor the exact integer window, or none (the float
    # forms sum float32 weights, which an integer result rounds across .5); else the scale's, or the window's
    lowering = window_aspect.rung if window_aspect.applies(node) else \
        integer_window.lower if integer_window.takes(node.ir) else None
    for form in (scale_taps, scale_nearest):
        if lowering is None and form.applies(node):
            lowering = form.rung
    if lowering is None and antialias_taps.applies(node):
        lowering = antialias_taps.rung
    if lowering is not None:
        other = lowering(node, not_native)
        return other if not isinstance(other, Refusal) else \
            Refusal(f"{got.reason}; {other.reason}", other.field or got.field, facts={**other.facts, **got.facts})
    if nearest_aspect.applies(node):
        other = nearest_aspect.rung(node, not_native)
        return other if not isinstance(other, Refusal) else \
            Refusal(f"{got.reason}; {other.reason}", other.field or got.field, facts={**other.facts, **got.facts})
    if not nearest_index.applies(node):
        return got
    other = nearest_index.rung(node, not_native, unless=lambda n: _extension_first(n, earlier))
    if not isinstance(other, Refusal) or "cost_first" in other.facts:
        return other
    return Refusal(f"{got.reason}; {other.reason}", other.field or got.field, facts={**other.facts, **got.facts})


def _extension_first(node, earlier) -> Refusal | None:
    """A refusal of the index form before its proof, where the policy prefers the fastest rung (``Node.weigh``),
    the cost model estimates the extension faster and the extension takes the node: the default would give the
    index form up for it anyway (``_fastest``), and its proof over a grid of 2,311 lengths is most of such a
    conversion (measured: 0.5 of 1.1 s for an FPN with run-time H/W). The refusal carries the estimate
    (``cost_first``); where the extension refuses, the index form is proven and taken as before. Not under
    ``--allow-conditional``: a conditional candidate held from a lower rung stops the climb before the extension,
    and only an exact index form beats it."""
    if not node.weigh or not node.strict:
        return None
    why, weighed = cost.weigh(node, DECOMPOSE, f"the {RUNG_NAMES[DECOMPOSE]} (rung {DECOMPOSE})")
    if why is None:
        return None
    got = LADDERS[node.ir.kind][-1].ask(node, earlier)
    if not (isinstance(got, Candidate) and got.unconditional):  # the climb would not take it
        return None
    return Refusal("built, not proven: the cost model estimates the extension faster", "rung",
                   facts={"cost_first": (why, weighed), "quiet": True})


def _rewrite(node):
    """Rung 2: Interpolate-11 after an exact rewrite, else the convolution form (``conv_rewrite``). Where both
    are exact the cost model chooses after the climb (``_in_graph``)."""
    got = interpolate.rewrite(node)
    if not isinstance(got, Refusal):
        return got
    conv = conv_rewrite.rung(node)
    if isinstance(conv, Refusal):  # the record says why (``_in_graph``), the refusal's words stay Interpolate's
        return replace(got, facts={**got.facts, "conv_form": conv.reason})
    return replace(conv, facts={**got.facts, **conv.facts})


CONV = _rung(REWRITE, conv_rewrite.rung)  # the convolution form alone, where the cost model prefers it
MATMUL = _rung(REWRITE, matmul_rewrite.rung)  # the matrix form (exact for finite inputs: a condition)


def _in_graph(node, climbed):
    """The convolution form (rung 2) instead of the Interpolate the ladder chose where the cost model estimates
    it faster (``cost_in_graph.faster_conv``: this machine's rates under ``--prefer fastest``, else the shipped ones;
    ``conv_rewrite.forcing`` decides instead while the rates are timed); then, where the policy takes conditions
    (``--allow-conditional``), the matrix form likewise (``_matrix``). Its proof by numbers runs as on the ladder,
    and the rung given up stays in the record's ``tried``."""
    record = climbed.record
    for why in facts(climbed.attempts, "conv_form")[:1]:
        record.extra["conv_form"] = why
    if climbed.candidate is None or record.rung not in (NATIVE, REWRITE) or record.conditions or \
            record.proof.get("form") == conv_rewrite.FORM or conv_rewrite.forced() == "builtin":
        return _matrix(node, climbed)
    if conv_rewrite.forced() == "conv":
        why, weighed = "the convolution form is asked for", None
    else:
        why, weighed = cost_in_graph.faster_conv(node, record,
                                                 cost.calibration(node.timing) if node.weigh else cost.shipped())
        if why is None:
            return _matrix(node, climbed)
    return _matrix(node, _swap(node, climbed, CONV, "conv_form", why, weighed))


def _matrix(node, climbed):
    """The matrix form instead of the unconditional rung the ladder chose (1-3, static sizes) where the cost model
    estimates it faster (``conv_rewrite.forcing("matmul")``: asked for): guarded by the chosen rung for inputs not
    all finite (``matmul_rewrite.guarded``), or, where the policy takes conditions, alone (finite inputs)."""
    record, forced = climbed.record, conv_rewrite.forced()
    if climbed.candidate is None or record.rung not in (NATIVE, REWRITE, DECOMPOSE) or record.conditions or \
            forced in ("builtin", "conv"):
        return climbed
    if forced == matmul_rewrite.FORM:
        why, weighed = "the matrix form is asked for", None
    else:
        why, weighed = cost_in_graph.faster_conv(node, record,
                                                 cost.calibration(node.timing) if node.weigh else cost.shipped(),
                                                 matmul_rewrite.FORM)
        if why is None:
            return climbed
    if not node.strict:
        return _swap(node, climbed, MATMUL, "matmul_form", why, weighed)
    chosen = CONV if record.proof.get("form") == conv_rewrite.FORM else LADDERS["resize"][record.rung - 1]

    def otherwise(x):  # the chosen rung again, on the guard's else branch
        got = chosen.ask(replace(node, inputs=matmul_rewrite.body_inputs(node, x)), climbed.attempts)
        if isinstance(got, Refusal):
            raise BridgeError(f"the fallback cannot be built: {got.reason}")
        return got.produced[0]
    guarded = _rung(REWRITE, lambda n: matmul_rewrite.rung(n, otherwise, record))
    return _swap(node, climbed, guarded, "matmul_form", why, weighed)


def _swap(node, climbed, rung, field: str, why: str, weighed):
    """``climbed`` with ``rung``'s form taken instead of its candidate, proven first (a refusal: kept, the
    record's ``extra[field]`` says why); the rung given up in ``tried``."""
    record = climbed.record
    got = rung.ask(node, climbed.attempts)
    if isinstance(got, Refusal):
        record.extra[field] = got.reason  # why the faster estimate was not taken
        return climbed
    form = "convolution" if rung is CONV else "matrix"  # the matrix form: MATMUL or its guarded rung
    given_up = replace(record, tried=[*record.tried, (record.rung, record.rung_name,
                                                     f"exact, but the cost model estimates the {form} form "
                                                     "faster")])
    taken = take(given_up, rung, got, reason=f"{got.reason}: {why}")
    if weighed is not None:
        taken.extra["in_graph_cost"] = weighed
    return replace(climbed, candidate=got, record=taken)


LADDERS = PerOp(
    "OpenVINO ladder",
    resize=(_rung(NATIVE, interpolate.native), _rung(REWRITE, _rewrite),
            _rung(DECOMPOSE, _decomposition, sees_earlier=True), _extension()),
    gridsample=(_rung(NATIVE, builtin.gridsample), _rung(DECOMPOSE, grid_decompose.rung),
                _extension(lambda n: builtin.gridsample_native_reason(n.ir))),
    deformconv=(_rung(REWRITE, builtin.deformconv), _rung(DECOMPOSE, grid_decompose.deformconv_rung),
                _extension(lambda n: builtin.deformconv_rewrite_reason(n.ir))),
)
# After the climb: the in-graph forms the cost model weighs against the rung taken (Resize's run-time forms).
AFTER_CLIMB = PerOp("OpenVINO in-graph forms", resize=_in_graph, gridsample=None, deformconv=None)


def lower(name: str, ir, inputs: list, *, fallback: str = "decompose", strict: bool = False,
          policy: Policy | None = None, sides: tuple = NOT_AT_BOUNDARY):
    """Lower one node. ``inputs`` are OpenVINO outputs in ONNX order (None for omitted optional inputs);
    ``sides``: which of its sides meet the model's inputs / outputs (the cost model's reorders).
    Returns (list of outputs, NodeRecord); BridgeError naming the node when no rung takes it."""
    if getattr(ir, "kind", None) not in LADDERS:
        raise BridgeError(f"cannot lower {type(ir).__name__}", name)
    policy = policy or policy_for(fallback, strict)
    weighed = policy.prefer == "fastest"
    node = Node(name, ir, list(inputs), strict=not policy.allow_conditional, user_strict=strict, sides=tuple(sides),
                weigh=weighed, timing=policy.timing)
    climbed = climb(LADDERS[ir.kind], node, NodeRecord(name, ir.origin, ir, TARGET), policy, last_resort=EXTENSION)
    climbed = AFTER_CLIMB.get_for(ir, lambda node, climbed: climbed)(node, climbed)
    record = _cost_first(climbed)
    if climbed.candidate is None:
        final = any(isinstance(a.outcome, Refusal) and a.outcome.final for a in climbed.attempts)
        if final:
            raise BridgeError(record.reason, name, record.field)
        raise BridgeError(refusal_text(record.tried, limit=None), name, "rung", brief=refusal_text(record.tried))
    if weighed and record.rung != EXTENSION and not record.conditions:
        return _fastest(node, climbed)
    return climbed.candidate.produced, record


def _cost_first(climbed):
    """The record, its reason the cost model's where the extension was taken before the index form was proven
    (``_extension_first``), worded as ``_fastest`` words it."""
    record = climbed.record
    first = [a.outcome.facts["cost_first"] for a in climbed.attempts
             if isinstance(a.outcome, Refusal) and "cost_first" in a.outcome.facts]
    if not first or record.rung != EXTENSION:
        return record
    why, weighed = first[0]
    record.extra["cost"] = weighed
    return replace(record, reason=f"{record.reason.split(': ', 1)[0]}: {why}")


def _fastest(node, climbed):
    """The extension instead of the chosen rung where the cost model estimates it faster (its proof by numbers
    runs as on the ladder); the rung given up is kept in the record's ``tried`` with the estimate."""
    record, chosen = climbed.record, climbed.candidate
    why = _scale_form_slower(record) or cost.faster_extension(node, record)
    if why is None:
        return chosen.produced, record
    rung = LADDERS[node.ir.kind][-1]
    got = rung.ask(node, climbed.attempts)
    if isinstance(got, Refusal):
        record.extra["cost"]["extension_refused"] = got.reason
        return chosen.produced, record
    given_up = replace(record, tried=[*record.tried, (record.rung, record.rung_name,
                                                     "exact, but the cost model estimates the extension faster")])
    return got.produced, take(given_up, rung, got, reason=f"{got.reason.split(': ', 1)[0]}: {why}")


# Resize linear / cubic, scales fed at run time, 1 thread, f32, Zen 4 (AVX-512): the run-time scale window
# against the extension, 1x3x240x320 x2 / 1x3x480x640 x0.5 / 1x3x64x64 x1.5: linear 3.82 / 4.13 / 0.27 ms vs
# 0.87 / 1.04 / 0.12, cubic 7.38 / 9.43 / 0.52 vs 1.20 / 1.12 / 0.14.
SCALE_FORM_SLOWER = "cost model: the extension measured 2.3-8.4x faster than the run-time scale window (rung 3) " \
                    "at every shape tried (no rate to estimate a run-time scale with)"


def _scale_form_slower(record) -> str | None:
    """The reason to take the extension instead of the run-time scale window (``scale_taps``) under --prefer
    fastest: the cost model's table has no rate for a scale known only at run time, and the extension was faster
    at every shape measured (``SCALE_FORM_SLOWER``); None for any other form."""
    if record.proof.get("form") != scale_taps.FORM:
        return None
    record.extra["cost"] = {"measured": SCALE_FORM_SLOWER}
    return SCALE_FORM_SLOWER


def _cut(text: str, n: int) -> str:
    """``text`` cut to about ``n`` characters at a word, with a bracket it opened closed."""
    cut = text[:n - 3]
    cut = cut[:cut.rfind(" ")] if " " in cut[n // 2:] else cut
    cut = cut.rstrip(" ,;:(")
    return cut + "..." + ")" * max(cut.count("(") - cut.count(")"), 0)


def refusal_text(tried: list, limit: int | None = 230) -> str:
    """Why no rung took the node, on one short line: rungs refused for the same reason share it; past
    ``limit`` characters only the last two rungs (the decisive ones: decomposition / extension) are named
    (None: every rung, whole, as -v and --json show it)."""
    groups: list = []  # [names, why]
    for _, name, why in tried:
        if groups and groups[-1][1] == why:
            groups[-1][0].append(name)
        else:
            groups.append([[name], why])
    parts = [f"{', '.join(names)}: {why}" for names, why in groups]
    text = "; ".join(parts)
    if limit is not None and len(text) > limit:
        each = limit // min(2, len(parts)) - 2
        text = "; ".join(p if len(p) <= each else _cut(p, each) for p in parts[-2:])
    return text or "no rung applies"
