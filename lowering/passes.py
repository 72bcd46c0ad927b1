"""The one lowering pass every target implements: rungs -> one record per node -> proof -> (model, records).

Shape borrowed from onnx-ir's pass infrastructure (a pass returns ``PassResult(model, ...)``; ``ensures``
checks the result) and from onnxscript's rewrite rules (a rule's check either matches or fails with a
reason). Here:

* a **target** is an ordered tuple of :class:`Rung` s (built-in op, exact rewrite, decomposition, custom op);
* per node, :func:`climb` asks each rung in turn; a rung returns a :class:`Candidate` or a :class:`Refusal`
  with its reason. The first candidate with no conditions and no assumptions wins. A candidate that is exact
  only under a run-time condition, or that rests on undocumented behaviour, is kept aside and taken only when
  the policy allows it and no later rung is unconditionally exact (``last_resort``: no later rung below it);
* every node gets one :class:`NodeRecord`, whatever the target;
* the proof (``Target.prove``, the pass's ``ensures``) re-reads what the target produced and diffs it against
  the source IR; a target may also run it on probe inputs. The pass fails rather than return a model that
  did not prove itself.

Targets: ``lowering.openvino`` (OpenVINO IR), ``lowering.tensorrt`` (TensorRT-ready ONNX), ``lowering.onnx``
(portable ONNX). This module knows none of them and imports no framework.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from ..semantics.errors import BridgeError, clip
from .artifacts import check_output_path
from .conversion import ConvertOptions, Written  # what a user asks of a conversion; what it wrote
from .model_check import whole_model_failures
from .plan import Choice, Plan
from ..semantics import text
from ..translate.onnx import load, parse_model

# The one rung table: numbers and names are the same on every target, so records and summaries compare across
# targets; only the custom op is named after what a target ships with it (``rung_names``).
# Rung 0 comes before the ladder: a node whose every input is a constant is folded by the oracle into its exact
# output, written as a constant (no op at run time).
FOLDED, BUILTIN, REWRITE, DECOMPOSE, CUSTOM = 0, 1, 2, 3, 4
RUNG_NAMES = {FOLDED: "folded", BUILTIN: "native", REWRITE: "native after exact rewrite",
              DECOMPOSE: "decomposition", CUSTOM: "custom op"}
FOLD_REASON = "every input is a constant: the oracle's exact output is written as a constant (no op at run time)"


def folded_record(name: str, ir, target: str, produced=(), proof=None) -> "NodeRecord":
    """Rung 0's record, on every target: the node written as the oracle's output on its constant inputs."""
    return NodeRecord(name, ir.origin, ir, target, rung=FOLDED, rung_name=RUNG_NAMES[FOLDED], reason=FOLD_REASON,
                      produced=list(produced), proof=dict(proof or {}))


def rung_names(custom: str) -> dict:
    """The rung table with the custom op named as the target ships it (OpenVINO: extension; TensorRT: plugin)."""
    return {**RUNG_NAMES, CUSTOM: custom}


@dataclass(frozen=True)
class Refusal:
    """A rung that does not apply, and why (``field``: the IR field or input that decided it). ``facts``: what
    the rung found that later rungs may word their own reason with (e.g. ``"why_custom"``: the reason the node
    needs the custom op; ``"not_native"``: each built-in spelling tried and why not). ``final``: the node's
    answer when no rung takes it (its reason and field stand for the whole ladder)."""

    reason: str
    field: str | None = None
    facts: dict = dataclasses.field(default_factory=dict, compare=False)
    final: bool = False


@dataclass
class Candidate:
    """What a rung produced for one node, before the proof.

    ``produced`` is the target's own handle (OpenVINO outputs, ONNX nodes, a spelling); ``proof`` is what the
    target's proof needs to find and re-read it (tags, table shapes, spellings); ``facts`` as for a Refusal
    (read by later rungs when the policy declines this candidate)."""

    produced: Any
    reason: str
    conditions: tuple[str, ...] = ()  # exact only if these hold for the run-time values
    assumptions: tuple[str, ...] = ()  # exact only if undocumented target behaviour is as assumed
    proof: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)

    @property
    def unconditional(self) -> bool:
        return not self.conditions and not self.assumptions


@dataclass(frozen=True)
class Attempt:
    """What one rung answered for a node: its Candidate or Refusal."""

    number: int
    name: str
    outcome: "Candidate | Refusal"


@dataclass(frozen=True)
class Rung:
    """One step of a target's ladder. ``lower(node)`` returns a Candidate or a Refusal; it may raise
    BridgeError, which counts as a refusal naming the error's field. A rung that words its reason from what
    the rungs before it answered (a custom op: "why no built-in op") sets ``sees_earlier`` and is called as
    ``lower(node, earlier)`` with their Attempts, in order."""

    number: int
    name: str
    lower: Callable[..., "Candidate | Refusal"]
    sees_earlier: bool = False

    def ask(self, node, earlier: tuple = ()) -> "Candidate | Refusal":
        try:
            return self.lower(node, earlier) if self.sees_earlier else self.lower(node)
        except BridgeError as e:
            return Refusal(e.message, e.field)


def facts(earlier, key: str) -> list:
    """The values of fact ``key`` that earlier rungs left, in order."""
    return [a.outcome.facts[key] for a in earlier if key in a.outcome.facts]


@dataclass(frozen=True)
class NodeRecord:
    """What became of one node, on any target: built once by the ladder (``climb``) and the target's writing
    step, never changed after the proof. ``proof`` and ``extra`` hold the target's evidence (what the proof
    re-reads and what it found), filled while the node is lowered and proven."""

    node: str
    op: str
    ir: Any
    target: str
    rung: int | None = None  # None: refused
    rung_name: str = "refused"
    reason: str = ""
    conditions: list = dataclasses.field(default_factory=list)
    assumptions: list = dataclasses.field(default_factory=list)
    produced: list = dataclasses.field(default_factory=list)  # names of what the node became in the written model
    tried: list = dataclasses.field(default_factory=list)  # [(rung number, rung name, why it was not taken)]
    proof: dict = field(default_factory=dict)  # the target's handle for re-reading what was produced
    extra: dict = field(default_factory=dict)  # target-specific facts (e.g. the importer's own verdict)
    field: str | None = None  # refused: the IR field or input that decided it

    @property
    def refused(self) -> bool:
        return self.rung is None

    @property
    def condition(self) -> str | None:
        """The run-time conditions as one clause, None when exact for every value."""
        return "; and ".join(self.conditions) or None

    def summary(self) -> str:
        if self.rung is None:
            return f"{clip(self.node, 80)}: refused: {self.reason}"
        s = f"{clip(self.node, 80)}: rung {self.rung} ({self.rung_name}): {self.reason}"
        if self.conditions:
            s += f" [exact if {self.condition}]"
        if self.assumptions:
            s += " [assumes: " + "; ".join(self.assumptions) + "]"
        return s

    def to_dict(self) -> dict:
        return {"node": self.node, "op": self.op, "target": self.target, "rung": self.rung,
                "rung_name": self.rung_name, "reason": self.reason, "conditions": list(self.conditions),
                "assumptions": list(self.assumptions), "produced": list(self.produced),
                "tried": [{"rung": r, "name": n, "reason": why} for r, n, why in self.tried],
                "ir": text.describe(self.ir) if self.ir is not None else None}

    def refuse(self, reason: str, field: str | None = "rung", tried=()) -> "NodeRecord":
        """This record, refused with ``reason`` (``tried``: rungs to add to what was tried)."""
        return replace(self, rung=None, rung_name="refused", reason=reason, field=field,
                       tried=[*self.tried, *tried], conditions=[], assumptions=[])


@dataclass(frozen=True)
class Policy:
    """What the user allows. ``allow_conditional``: take a candidate exact only under run-time conditions or
    undocumented behaviour when nothing later is exact unconditionally. ``floor``: the lowest rung number to
    try (e.g. CUSTOM for ``--fallback extension``). ``timing``: how a target's cost model converts its timing
    models (the target's own convert, which sits above the rungs that ask for rates; None: a rate missing from
    the table stays missing)."""

    allow_conditional: bool = True
    floor: int = BUILTIN
    prefer: str = "builtin"  # builtin: the lowest exact rung; fastest: a target's cost model may pick a later one
    decompose: frozenset = frozenset()  # IR kinds whose decomposition is tried before every other rung
    timing: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class Climbed:
    """``climb``'s answer: the chosen candidate (None: refused), the node's record, and every rung's answer."""

    candidate: Candidate | None
    record: NodeRecord
    attempts: tuple = ()


def climb(rungs: Sequence[Rung], node, record: NodeRecord, policy: Policy = Policy(),
          last_resort: int | None = None, earlier: tuple = ()) -> Climbed:
    """Ask each rung in order; the node's record with the chosen candidate, or refused with every rung's reason
    (a ``final`` refusal's reason and field stand for them). ``last_resort``: rungs numbered from it on (e.g.
    CUSTOM, a library to ship) are asked only when no lower rung gave a candidate, so a conditional candidate
    the policy allows beats them. ``earlier``: Attempts of rungs asked before (a ladder climbed in parts)."""
    held: tuple[Rung, Candidate] | None = None
    attempts, tried = list(earlier), list(record.tried)
    final: Refusal | None = None
    for rung in rungs:
        if rung.number < policy.floor:
            continue
        if held is not None and last_resort is not None and rung.number >= last_resort:
            break
        got = rung.ask(node, tuple(attempts))
        attempts.append(Attempt(rung.number, rung.name, got))
        if isinstance(got, Candidate) and got.unconditional:
            return Climbed(got, take(replace(record, tried=tried), rung, got), tuple(attempts))
        tried.append((rung.number, rung.name, not_taken(got)))
        if isinstance(got, Refusal):
            final = got if got.final else final
        elif policy.allow_conditional and held is None:
            held = (rung, got)
    record = replace(record, tried=tried)
    if held is not None:
        return Climbed(held[1], take(record, *held), tuple(attempts))
    if final is not None:
        return Climbed(None, record.refuse(final.reason, final.field), tuple(attempts))
    reason = "; ".join(f"{name}: {why}" for _, name, why in tried) or "no rung applies"
    return Climbed(None, record.refuse(reason, None), tuple(attempts))


def not_taken(got: "Candidate | Refusal") -> str:
    """Why a rung's answer was not taken by itself: a refusal's reason, a candidate's conditions."""
    if isinstance(got, Refusal):
        return got.reason
    return ("exact only if " + "; and ".join(got.conditions) if got.conditions else
            "rests on: " + "; ".join(got.assumptions))


def tried_of(attempts) -> list:
    """[(rung number, rung name, why not taken)] of ``attempts`` (as a record's ``tried`` lists them)."""
    return [(a.number, a.name, not_taken(a.outcome)) for a in attempts]


def take(record: NodeRecord, rung: Rung, c: Candidate, reason: str | None = None) -> NodeRecord:
    """``record`` with ``c`` from ``rung`` as the node's lowering (``reason``: instead of the candidate's)."""
    return replace(record, rung=rung.number, rung_name=rung.name, reason=c.reason if reason is None else reason,
                   conditions=list(c.conditions), assumptions=list(c.assumptions), proof=dict(c.proof), field=None)


@dataclass
class PassResult:
    """The produced model and one record per resampling node (in graph order)."""

    model: Any
    records: list[NodeRecord]
    source: Any = None  # the source model (path or ModelProto): the whole-model postcondition runs it
    proven: bool = False  # every lowered node already proven on this very model (TensorRT proves while lowering)

    @property
    def refused(self) -> list[NodeRecord]:
        return [r for r in self.records if r.refused]


class Target:
    """A lowering target, in the spirit of onnx-ir's PassBase: ``lower_model`` (the call), ``prove`` (the
    postcondition: every lowered node re-read and diffed against its source IR), ``built`` (the whole model
    compiles), and ``write`` (staged, proven again from disk, renamed into place). What it declares:

    * ``name``; ``suffix`` and ``default_tail`` of the file it writes, ``companions`` beside it;
    * ``requires``: the Python modules a conversion needs (the CLI names their extra when missing);
    * ``takes``: the optional ``ConvertOptions`` fields it honours (the registry refuses the others);
    * ``steps``: the progress lines of its two phases (lowering, writing), None where a phase is quick;
    * ``rungs(kind, policy)``: its ladder for one IR kind.

    ``convert_file`` is the one convert-and-write path every surface (CLI, API) takes."""

    name = "?"
    suffix = ".onnx"
    default_tail = ".onnx"
    companions: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    takes: frozenset = frozenset()
    steps: tuple = (None, None)
    default_policy = Policy()

    def rungs(self, kind: str, policy: Policy) -> Sequence[Rung]:
        raise NotImplementedError

    # -- the driver: plan (climb every node) -> emit (write every choice) -> prove ----------------------------

    def prepare(self, model, policy: Policy) -> tuple[Any, Any, list]:
        """(the source as loaded, the model to lower, records of nodes settled before the climb: rung 0)."""
        raise NotImplementedError

    def nodes(self, prepared) -> Sequence[tuple[Any, NodeRecord]]:
        """(the target's view of the node, its fresh record) for every resampling node of ``prepared``."""
        raise NotImplementedError

    def plan(self, model, policy: Policy) -> Plan:
        """Every node's choice: the target's rungs for its IR kind, climbed under ``policy``."""
        source, prepared, settled = self.prepare(model, policy)
        choices = [Choice(r) for r in settled]
        for node, record in self.nodes(prepared):
            climbed = climb(self.rungs(record.ir.kind, policy), node, record, policy)
            payload = climbed.candidate.produced if climbed.candidate is not None else None
            choices.append(Choice(climbed.record, payload, node))
        return Plan(prepared, tuple(choices), source)

    def emit(self, plan: Plan) -> PassResult:
        """The model with every choice of ``plan`` written into it, and the records (in the source's order)."""
        raise NotImplementedError

    def lower_model(self, model, policy: Policy | None = None) -> PassResult:
        return self.emit(self.plan(model, self.default_policy if policy is None else policy))

    def prove(self, result: PassResult) -> list[str]:
        """Failures (empty = proven): each lowered node re-read from ``result.model`` and diffed against its
        source IR."""
        raise NotImplementedError

    def __call__(self, model, policy: Policy = Policy(), whole_model: bool = True) -> PassResult:
        """requires -> call -> ensures: lowered, no node refused, every lowered node proven, the whole built and
        (``whole_model``) computing the source's numbers; a caller that writes the model checks what it wrote
        instead (``write``), once."""
        result = self.lower_model(model, policy)
        if result.refused:
            raise self.refusal(result)
        failures = [] if result.proven else self.prove(result)
        if failures:
            raise proof_error(failures, result.records)
        self.built(result)
        result.source = model
        if whole_model:
            self.agrees(result)
        return result

    def built(self, result: PassResult) -> None:
        """A postcondition on the produced model as a whole (e.g. that it compiles); BridgeError if not."""

    def run_written(self, result: PassResult, produced=None):
        """``(feeds, names to observe) -> outputs by name``: ``produced`` (else ``result.model``) on the target's
        runtime here, for ``agrees``; None where the target cannot run here."""
        return None

    def run_importer(self, result: PassResult):
        """The same for the target runtime's own import of the source (what a node not ours computes there)."""
        return None

    def agrees(self, result: PassResult, produced=None) -> None:
        """The whole-model postcondition (``model_check``) on ``produced`` (the model as written and read back),
        else ``result.model``; BridgeError naming the output, the shape and the first differing node."""

        if result.source is None:
            return
        model = load(result.source, validate=False)
        try:
            irs = dict(parse_model(model))
        except BridgeError:
            irs = {}
        failures = whole_model_failures(model, self.run_written(result, produced), irs, self.run_importer(result))
        if failures:
            raise BridgeError("the converted model computes other numbers than the source: " + failures[0],
                              field="model")

    def refusal(self, result: PassResult) -> BridgeError:
        """The error for a model with refused nodes: the first one, on one line."""
        first = result.refused[0]
        return BridgeError(first.reason, first.node, "rung")

    # -- the conversion a user asks for --------------------------------------------------------------------

    def policy(self, options: ConvertOptions) -> Policy:
        return Policy(allow_conditional=not options.strict)

    def lower_file(self, path: str, options: ConvertOptions, whole_model: bool = True) -> PassResult:
        """The lowered model, every node proven, ready for ``write`` (``whole_model`` as for the call)."""
        return self(path, self.policy(options), whole_model)

    def write(self, result: PassResult, out: str, options: ConvertOptions) -> Written:
        raise NotImplementedError

    def convert_file(self, path: str, out: str, options: ConvertOptions = ConvertOptions(), step=None) -> Written:
        """Lower, prove and write ``path`` to ``out`` (checked first; nothing is left behind on failure).
        ``step(message)``: a context manager showing progress (the CLI's), or None."""
        out = check_output_path(out, options.force, self.suffix, self.companions)
        with _step(step, self.steps[0]):
            result = self.lower_file(path, options, whole_model=False)  # ``write`` checks what it wrote
        with _step(step, self.steps[1]):
            return self.write(result, out, options)


def _step(step, message):
    return step(message) if step is not None and message else contextlib.nullcontext()


def proof_error(failures: list[str], records: list[NodeRecord]) -> BridgeError:
    """One line for failed proofs ("node: what differs"), naming the node when every failure is about one."""
    node = next((r.node for r in records if failures[0].startswith(r.node + ": ")), None)
    text = "; ".join(failures)
    if node is not None and all(f.startswith(node + ": ") for f in failures):
        text = "; ".join(f[len(node) + 2:] for f in failures)
    return BridgeError("conversion could not prove itself: " + text, node, "rung" if node else None)
