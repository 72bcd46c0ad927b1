"""The whole-model postcondition (issue 40): the written model against the source model on onnxruntime.

The node proofs judge each resampling node on its own, at the IR our reading of the graph gave it. What they
cannot see is that reading itself: the shape arithmetic around a node (``sizes`` computed from the image's own
shape), a folded chain, a node bound at the wrong lengths. So before anything is written, the target's produced
model and the source model run on the same seeded inputs at the model's shape and, where a dimension is
dynamic, at two more shapes of other aspect ratios (and another batch); every output is compared with the
whole-model tolerance (``semantics.tolerance.model_tolerance``). A difference refuses the conversion with the output,
the shape and the first node whose output differs where its inputs agree.

Not judged (said, not guessed): outputs downstream of a resampling node whose IR names a deviation of
onnxruntime's own (``translate.onnxruntime``), shapes at which onnxruntime cannot run the source (a shape the
model does not admit), and a target that cannot run here (TensorRT). A difference first made by a node that is
not a resampling node refuses the conversion too, saying where the target's own importer computes that node the
same way (its conversion of the user's graph: the written model computes other numbers all the same). The probe
inputs are ``model_probes``'. numpy at import; onnx and onnxruntime inside the functions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..semantics.compare import against_oracle, compare
from ..semantics.errors import BridgeError, clip, without_source
from ..semantics.tolerance import model_tolerance
from ..semantics.vocab import ONNX_RESIZE_OPS
from ..semantics.equivalence import diff, off_ties
from ..semantics.reference import run as oracle, runtime_values
from ..translate.onnx_walk import node_name
from ..translate.onnxruntime import at_run_time, ort_rounds_integers_otherwise, ort_semantics
from .model_probes import Probe, dynamic, probes


def import_onnxruntime():
    """onnxruntime, imported with the process's stderr (fd 2) closed over: its import prints a coloured warning
    from C++ where HOME is not writable ("Failed to persist telemetry device ID"), which no logger setting
    reaches (issue 43: nothing of a library's telemetry on our stderr). Errors still raise."""
    import sys

    if "onnxruntime" in sys.modules:
        return sys.modules["onnxruntime"]
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            import onnxruntime
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return onnxruntime


class SourceRunner:
    """The source model on onnxruntime (CPU), every top-level node's output beside the model's (the reference
    needs a resampling node's inputs and output, the attribution every tensor): one session, built once."""

    def __init__(self, model):
        import onnx

        ort = import_onnxruntime()
        m = onnx.ModelProto()
        m.CopyFrom(model)
        m.ir_version = min(m.ir_version, 10)  # onnxruntime reads IR <= 10 for these opsets
        have = {o.name for o in m.graph.output}
        for node in m.graph.node:
            for o in node.output:
                if o and o not in have:
                    m.graph.output.append(onnx.ValueInfoProto(name=o))
                    have.add(o)
        so = ort.SessionOptions()
        so.log_severity_level = 4
        so.intra_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 -- onnxruntime cannot load the source: nothing to compare with
            self.session = " ".join(without_source(str(e)).split())[:200] or type(e).__name__

    @property
    def usable(self) -> bool:
        return not isinstance(self.session, str)

    def run(self, feeds: dict) -> dict | None:
        """Every tensor by name; None where onnxruntime cannot run it (a shape the source does not admit)."""
        if not self.usable:
            return None
        names = {i.name for i in self.session.get_inputs()}
        try:
            got = self.session.run(None, {k: v for k, v in feeds.items() if k in names})
        except Exception:  # noqa: BLE001
            return None
        return dict(zip([o.name for o in self.session.get_outputs()], got))


# Runs the written model: (feeds, tensor names to observe besides the outputs) -> outputs by tensor name.
Runner = Callable[[dict, list], dict]


def whole_model_failures(model, run_written: Runner | None, irs: dict | None = None,
                         importer: Runner | None = None) -> list[str]:
    """Failures (empty: the written model computes the source's numbers at every probe shape onnxruntime
    runs). ``model``: the source ModelProto; ``irs``: {node name: IR} of its resampling nodes; ``importer``: the
    target's own importer's model of the source, run the same way (None where there is none): a failure whose
    first differing node is not a resampling node says whether the importer computes it the same way (the
    runtime's conversion of the user's graph, not ours: refused all the same, since the written model computes
    other numbers there)."""
    if run_written is None:
        return []
    source = SourceRunner(model)
    if not source.usable:
        return []  # onnxruntime cannot load the source (a custom op, a type it lacks): no reference here
    consts = constants(model)  # once: a model's weights are read for every probe otherwise
    for k, probe in enumerate(probes(model)):
        ref = reference(model, probe.feeds, irs or {}, source, consts)
        if ref is None:
            continue
        if ref.misread:
            return [f"{ref.misread}, at {probe.text()}"]
        want = ref.values
        try:
            got = run_written(probe.feeds, [])
        except BridgeError as e:
            if k == 0 and _importer_runs(importer, probe):
                return [f"the converted model cannot run at {probe.text()}: {e.message}"]
            # a loud failure at a shape the probes chose, not a silent difference; or at the model's own probe
            # shape one the runtime's own importer cannot run either (measured: a Swin backbone's windows at 16 x
            # 16, which onnxruntime runs): the shape, not the conversion
            continue
        for o in model.graph.output:
            if o.name not in got or o.name not in want:
                continue
            w = np.asarray(want[o.name])
            r = compare(np.asarray(got[o.name]), w, *model_tolerance(w.dtype))
            if r.ok:
                continue
            why = _attributed(model, want, run_written, probe, irs or {}, consts, r.shape_mismatch is not None,
                              importer)
            if why is None:
                continue  # OpenVINO's own float rounding in ops not ours (see _attributed)
            what = (f"shape {r.shape_mismatch}" if r.shape_mismatch else
                    f"max error {r.max_abs:.3g} at {list(r.worst)} ({r.got:.9g} vs {r.want:.9g})")
            if why.endswith(_IMPORTER_TOO) and dynamic(model):
                # an export that holds at its traced lengths only (TorchScript bakes shapes): those, given, may do.
                # One last clause, which the one-line message keeps whole (``errors.keep_advice``)
                why = why[:-len(_IMPORTER_TOO)] + "; OpenVINO's own importer computes it so too: where the model " \
                    "runs at fixed lengths, convert --input gives them"
            return [f"output {clip(o.name, 80)!r} differs from the source on onnxruntime at {probe.text()}: "
                    f"{what}; {why}"]
    return []


def _attributed(model, want: dict, run_written: Runner, probe: Probe, irs: dict, consts: dict,
                shape: bool, importer: Runner | None = None) -> str | None:
    """Why an output that differs is a different computation, or None where it is drift. Every tensor of both
    runs is compared in graph order: a resampling node of the written model that is not its oracle's output on
    the written model's own inputs is ours to answer for; a node whose inputs agree and whose integer output (a
    shape, a length, an index) or shape differs computes something else. A float op that is not ours, whose
    inputs agree and whose values differ is OpenVINO's own rounding (another accumulation order, a reciprocal for
    a division), as its importer has it: onnxruntime's reference drifts from it, beyond the tolerance where an
    ill-conditioned map (a random homography) amplifies it, and nothing was read or written wrong. A node that is
    not a resampling node whose output the ``importer``'s model gives identically is said to be so."""

    names = [o for node in model.graph.node for o in node.output if o]
    try:
        got = {**probe.feeds, **run_written(probe.feeds, names)}
    except BridgeError:
        return _UNLOCATED if shape else None
    differs: dict = {}
    located = False
    for i, node in enumerate(model.graph.node):
        name = node_name(node, i)
        ir = irs.get(name)
        if ir is not None and node.output and node.output[0] in got:
            args = [None if not n else consts[n] if n in consts else got.get(n) for n in node.input]
            try:
                exact = oracle(ir, *args)
                mine = against_oracle(ir, np.asarray(got[node.output[0]]), exact, args)
            except Exception:  # noqa: BLE001 -- inputs the oracle refuses: judged by the node proofs
                mine = None
            if mine is not None and not mine.ok:
                return f"node {clip(name, 80)} ({node.op_type}) of the written model is not its oracle's output " \
                       f"on its own inputs"
        for o in node.output:
            if o in want and o in got and node.op_type != "Constant":
                w, g = np.asarray(want[o]), np.asarray(got[o])
                if _beyond_int32(w):
                    continue  # OpenVINO's CPU runs 64-bit integers as 32-bit: INT64_MAX (a Slice's end) reads 2^31-1
                differs[o] = not compare(g, w, *model_tolerance(w.dtype)).ok
                located |= differs[o]
        if any(differs.get(o) for o in node.output) and not any(differs.get(n) for n in node.input):
            o = next(o for o in node.output if differs.get(o))
            w, g = np.asarray(want[o]), np.asarray(got[o])
            if g.shape != w.shape or not np.issubdtype(w.dtype, np.floating) or _integral(w) and _integral(g):
                shown = (f"{g.ravel()[:6].tolist()} vs {w.ravel()[:6].tolist()}" if w.size <= 16 and g.shape == w.shape
                         else f"shape {list(g.shape)} vs {list(w.shape)}")
                text = f"first differing node: {clip(name, 80)} ({node.op_type}) gives {shown}"
                if ir is None and _importer_agrees(importer, probe, o, g):
                    text += _IMPORTER_TOO
                return text
    if shape and not located:
        return _UNLOCATED
    return None


def _importer_runs(importer: Runner | None, probe: Probe) -> bool:
    """Whether the target's own importer's model of the source runs at ``probe`` (True where there is none)."""
    if importer is None:
        return True
    try:
        importer(probe.feeds, [])
    except BridgeError:
        return False
    return True


def _importer_agrees(importer: Runner | None, probe: Probe, name: str, got: np.ndarray) -> bool:
    """Whether the importer's model gives tensor ``name`` exactly as the written model did (``got``)."""
    if importer is None:
        return False
    try:
        theirs = importer(probe.feeds, [name])
    except BridgeError:
        return False
    if name not in theirs:
        return False
    t = np.asarray(theirs[name])
    return t.shape == got.shape and bool(np.array_equal(t, got, equal_nan=t.dtype.kind == "f"))


_IMPORTER_TOO = " (not a resampling node: OpenVINO's own importer computes it so too)"
# Asked for every intermediate tensor, the runtime compiles the model otherwise (fewer fusions): a difference that
# vanishes then is in how it compiles the model as written.
_UNLOCATED = ("no tensor differs where the runtime is asked for the intermediate tensors: its compilation of the "
              "model as written computes otherwise")


def _beyond_int32(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu" and a.size > 0 and int(np.abs(a.astype(np.float64)).max()) >= 2**31


def _integral(a: np.ndarray) -> bool:
    """Float values that are all whole numbers: lengths and indices computed in floats (Floor, Ceil, Round)."""
    with np.errstate(invalid="ignore"):
        return a.size > 0 and bool(np.all(np.isfinite(a) & (a == np.round(a))))


@dataclass
class Reference:
    """The source's values on one probe: onnxruntime's, with the output of each resampling node where onnxruntime
    departs from the ONNX semantics in a way its IR names (``translate.onnxruntime``) replaced by the oracle's, and
    everything below it computed again from there (the oracle-corrected reference). ``corrected``: those nodes;
    ``misread``: a node onnxruntime computes otherwise than its IR says with no named deviation to explain it
    (our reading of the graph is wrong there: a bound length, a parameter)."""

    values: dict
    corrected: tuple = ()
    misread: str | None = None


def reference(model, feeds: dict, irs: dict, source: "SourceRunner | None" = None,
              consts: dict | None = None) -> Reference | None:
    """The oracle-corrected reference of ``model`` on ``feeds`` (None where onnxruntime cannot run it);
    ``consts``: its initializers as arrays (``constants``), read here when not given."""

    source = source or SourceRunner(model)
    values = source.run(feeds)
    if values is None:
        return None
    values = {**feeds, **values}
    consts = constants(model) if consts is None else consts
    fixed: dict = {}  # node output -> the oracle's value
    names = [node_name(n, i) for i, n in enumerate(model.graph.node)]
    for _ in range(len(irs) + 1):
        node_i, verdict = _first_deviation(model, names, irs, consts, values, fixed)
        if verdict is None:
            return Reference(values, tuple(names[i] for i, _ in sorted(fixed.values(), key=lambda v: v[0])))
        if isinstance(verdict, str):
            return Reference(values, (), verdict)
        node = model.graph.node[node_i]
        fixed[node.output[0]] = (node_i, verdict)
        cut = _cut(model, {k: v[1] for k, v in fixed.items()})
        values = SourceRunner(cut).run({**feeds, **{k: v[1] for k, v in fixed.items()}})
        if values is None:
            return None
        values = {**feeds, **values, **{k: v[1] for k, v in fixed.items()}}
    return None


def _first_deviation(model, names, irs, consts, values, fixed):
    """(node index, the oracle's output) of the first resampling node not yet corrected whose onnxruntime output
    departs from its IR by a named deviation, (index, message) for an unexplained one, (None, None) for none."""

    constants = {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    fed = {i.name for i in model.graph.input}  # graph inputs: read as fed, no arithmetic of ours at stake
    for i, node in enumerate(model.graph.node):
        ir = irs.get(names[i])
        if ir is None or not node.output or node.output[0] in fixed or node.output[0] not in values:
            continue
        args = [None if not n else consts[n] if n in consts else values.get(n) for n in node.input]
        got = np.asarray(values[node.output[0]])
        try:
            exact = oracle(ir, *args)
            if against_oracle(ir, got, exact, args).ok:
                continue
            ort_ir = ort_semantics(at_run_time(ir, args))  # its rules on the lengths this run has
            ort_want = oracle(ort_ir, *args) if ort_ir != ir else exact
            # onnxruntime's named departures (its IR), its float32 ties (nearest), its truncated integer results
            # (within one step of its IR's, so that a departure of both kinds at once is still named: uint8
            # tf_crop_and_resize casts the extrapolation value and truncates the taps' sum)
            explained = not _reads_graph_arithmetic(node, consts, constants | fed) or \
                ort_ir != ir and against_oracle(ort_ir, got, ort_want, args).ok or \
                ort_ir != ir and _same_off_ties(ir, ort_ir, got, ort_want, args) or \
                ort_rounds_integers_otherwise(ir) and got.shape == np.shape(ort_want) and \
                bool(np.all(np.abs(got.astype(np.float64) - ort_want) <= 1))
        except Exception:  # noqa: BLE001 -- the oracle refuses these inputs: the node proofs judged it
            continue
        if not explained:
            return i, (f"onnxruntime computes node {clip(names[i], 80)} ({node.op_type}) otherwise than its IR "
                       f"says (output shape {list(got.shape)} vs {list(np.shape(exact))}): the graph around it "
                       f"was read wrong")
        return i, np.asarray(exact)
    return None, None


def _same_off_ties(ir, ort_ir, got, want, args) -> bool:
    """Whether a nearest node's onnxruntime output is its convention's oracle (``ort_ir``) at every output but those
    on a float32 tie (``equivalence.diff``'s ties): onnxruntime computes the source coordinate in float32, which
    lands either side of a rounding boundary there (scale 0.7f: 3.5 / 0.7f is 5.0 in float32, 5.00000009 exact),
    so a run-time scale on a tie is onnxruntime's own departure, not our reading of the graph. ``want``: the
    oracle's output under ``ort_ir``. Asked of Resize / Upsample nodes only (``_reads_graph_arithmetic``)."""
    if ir.sampler.kind != "nearest" or args[0] is None:
        return False
    if np.shape(got) != np.shape(want):
        return False
    shape = tuple(np.shape(args[0]))
    keep = off_ties(diff(ir, ort_ir, shape, runtime_values(ir, args)), len(shape), np.shape(want))
    return bool(np.array_equal(np.asarray(got)[keep], np.asarray(want)[keep]))


def _reads_graph_arithmetic(node, consts: dict, known: set) -> bool:
    """Whether the node's parameters (Resize's roi / scales / sizes) are computed in the graph, i.e. whether our
    reading of them (``translate.onnx_fold``) is at stake. Where they are written as constants or fed as graph
    inputs (``known``: read as they are, nothing to fold), a difference between onnxruntime and the node's IR is
    onnxruntime's own departure (the node proofs judged ours against the oracle): the oracle's output stands in
    for it (int8 antialias with its scales a graph input: onnxruntime off by up to 128, onnx.reference with us)."""
    if node.op_type not in ONNX_RESIZE_OPS:
        return False
    return any(n and n not in consts and n not in known for n in node.input[1:])


def _cut(model, fixed: dict):
    """``model`` with the nodes computing ``fixed``'s tensors removed and those tensors made graph inputs."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [n for n in m.graph.node if not any(o in fixed for o in n.output)]
    del m.graph.node[:]
    m.graph.node.extend(keep)
    for name, value in fixed.items():
        m.graph.input.append(onnx.helper.make_tensor_value_info(
            name, onnx.helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
    return m


def constants(model) -> dict:
    """The model's initializers as arrays, by name."""
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
