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
from dataclasses import dataclass
from typing import Any, Sequence

from ..semantics.errors import BridgeError
from .artifacts import check_output_path
from .conversion import ConvertOptions, Written  # what a user asks of a conversion; what it wrote
from .model_check import whole_model_failures
from .plan import Choice, Plan
from ..translate.onnx import load, parse_model
# The rung vocabulary (lowering/rungs.py), imported by every target from here with the pass.
from .rungs import BUILTIN, CUSTOM, DECOMPOSE, FOLD_REASON, FOLDED, REWRITE, RUNG_NAMES, Attempt, Candidate, Climbed, \
    NodeRecord, Policy, Refusal, Rung, climb, facts, folded_record, not_taken, rung_names, take, tried_of  # noqa: F401

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
            head = "the converted model computes other numbers than the source: "
            raise BridgeError(head + failures[0], field="model", brief=head + getattr(failures[0], "brief",
                                                                                        failures[0]))

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
