"""The rung vocabulary every target's ladder speaks (``passes``' pass drives it): the rung table, a rung's answer
(a :class:`Candidate` or a :class:`Refusal`), one :class:`NodeRecord` per node, the :class:`Policy` and
:func:`climb`, which asks each rung in turn (see ``passes``' module note)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from ..semantics import text
from ..semantics.errors import BridgeError, clip

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
