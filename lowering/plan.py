"""The plan: what the climb chose for every resampling node of a model, decided before anything is emitted.

The driver (``passes.Target.lower_model``) runs in three steps, in the manner of onnx-ir's passes
(precondition, call, postcondition): ``plan`` climbs the target's rungs for each node into a frozen
:class:`Plan`; ``emit`` writes every choice into the model; ``prove`` re-reads what was written. Between the
steps only the plan travels: the emitter never re-decides a rung, reports read the rung and the reasons from
the plan, and a choice's payload is the rung's own typed handle (a spelling, a decomposition's tables, an
index form), never re-parsed from a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping


@dataclass(frozen=True)
class Choice:
    """One node's decision. ``record``: its NodeRecord (the rung taken, or refused; the reasons of the rungs not
    taken in ``record.tried``); ``payload``: the chosen candidate's ``produced`` (None where refused or settled
    before the climb, as rung 0's fold); ``node``: the target's view of the node, what its emitter reads."""

    record: Any
    payload: Any = None
    node: Any = None

    @property
    def key(self) -> str:
        return self.record.node

    @property
    def rung(self) -> int | None:
        return self.record.rung


@dataclass(frozen=True)
class Plan:
    """Every node's Choice, in the order they were decided, keyed by node name. ``model``: the model as the
    target prepared it for emitting (inlined, named, constants folded); ``source``: the model before that (the
    order records are reported in)."""

    model: Any
    choices: tuple[Choice, ...]
    source: Any = None

    @property
    def by_key(self) -> Mapping[str, Choice]:
        return MappingProxyType({c.key: c for c in self.choices})

    def __getitem__(self, key: str) -> Choice:
        return self.by_key[key]

    @property
    def records(self) -> list:
        return [c.record for c in self.choices]

    @property
    def refused(self) -> list:
        return [c.record for c in self.choices if c.record.refused]


__all__ = ["Choice", "Plan"]
