"""The oracle-corrected reference of the whole-model check (``model_check``, issue 40): the source model's values
on onnxruntime, with the output of each resampling node where onnxruntime departs from the ONNX semantics in a way
its IR names (``translate.onnxruntime``) replaced by the oracle's, and everything below it computed again from
there. numpy at import; onnx and onnxruntime inside the functions."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..semantics.compare import against_oracle
from ..semantics.errors import clip, without_source
from ..semantics.equivalence import diff, field_differences, off_ties
from ..semantics.reference import run as oracle, runtime_values
from ..semantics.vocab import ONNX_RESIZE_OPS
from ..translate.onnx_walk import node_name
from ..translate.onnxruntime import at_run_time, ort_rounds_integers_otherwise, ort_semantics

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
            judged, got = judged_alone(model, node, ir, got, exact, args)
            if judged.ok:
                continue
            explained = _named_departure(ir, node, got, exact, args, consts.keys() | constants | fed)
        except Exception:  # noqa: BLE001 -- the oracle refuses these inputs: the node proofs judged it
            continue
        if not explained:
            return i, (f"onnxruntime computes node {clip(names[i], 80)} ({node.op_type}) otherwise than its IR "
                       f"says (output shape {list(got.shape)} vs {list(np.shape(exact))}): the graph around it "
                       f"was read wrong")
        return i, np.asarray(exact)
    return None, None


def _named_departure(ir, node, got, exact, args, known) -> bool:
    """Whether onnxruntime's output ``got`` of a resampling node, other than its IR's (the oracle's ``exact``),
    departs from it only as onnxruntime's own rules do (``translate.onnxruntime``): its named departures (its IR),
    its float32 ties (nearest), its truncated integer results (within one step of its IR's, so that a departure of
    both kinds at once is still named: uint8 tf_crop_and_resize casts the extrapolation value and truncates the
    taps' sum); or the node's parameters are not computed in the graph (nothing of our reading at stake)."""
    return not _reads_graph_arithmetic(node, known) or ort_departure(ir, got, exact, args) is not None


def ort_departure(ir, got, exact, args) -> str | None:
    """How onnxruntime's output ``got`` of a resampling node departs from its IR (the oracle's ``exact``) by a rule
    of its own (``translate.onnxruntime``), in words; None where no rule explains it."""
    got = np.asarray(got)
    bound = at_run_time(ir, args)
    ort_ir = ort_semantics(bound)  # its rules on the lengths this run has
    ort_want = oracle(ort_ir, *args) if ort_ir != ir else exact
    fields = ", ".join(d.name for d in field_differences(bound, ort_ir))
    if ort_ir != ir and against_oracle(ort_ir, got, ort_want, args).ok:
        return f"onnxruntime's own {fields}"
    if ort_ir != ir and same_off_ties(ir, ort_ir, got, ort_want, args):
        return f"onnxruntime's own {fields} (float32 ties)"
    if ort_rounds_integers_otherwise(ir) and got.shape == np.shape(ort_want) and \
            bool(np.all(np.abs(got.astype(np.float64) - ort_want) <= 1)):
        return "onnxruntime truncates integer results" + (f", and its own {fields}" if fields else "")
    return None


def judged_alone(model, node, ir, got: np.ndarray, exact: np.ndarray, args):
    """(the verdict, the output judged): onnxruntime's output ``got`` of ``node`` against the oracle's ``exact``,
    and where it is off, the node's own output on ``args`` (``computed_alone``) in its place."""
    verdict = against_oracle(ir, got, exact, args)
    if verdict.ok:
        return verdict, got
    alone = computed_alone(model, node, args, got)
    return (verdict, got) if alone is got else (against_oracle(ir, alone, exact, args), alone)


def computed_alone(model, node, args, got: np.ndarray) -> np.ndarray:
    """onnxruntime's output of ``node`` computed from the very values ``args`` (the model's tensors, which the
    oracle reads): ``got`` (the model's tensor), but for float16 / bfloat16 data the node alone on ``args`` where
    onnxruntime can run it: within a model it runs a float16 node next to one without a float16 kernel in float32
    (its cast transformer), from values the model's tensor holds only rounded (a float16 U-Net's bilinear Resize:
    one float16 step off its IR on its own tensors, exact alone). Alone, our reading of its parameters is what is
    judged, not their rounding."""
    import onnx

    if args[0] is None or np.asarray(args[0]).dtype.name not in ("float16", "bfloat16"):
        return got
    names = [f"in{k}" if name else "" for k, name in enumerate(node.input)]
    inputs = [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype),
                                                 list(np.shape(a))) for n, a in zip(names, args) if n]
    alone = onnx.helper.make_node(node.op_type, names, ["out"], domain=node.domain)
    alone.attribute.extend(node.attribute)
    out = onnx.ValueInfoProto(name="out")  # its type and shape onnxruntime infers
    m = onnx.helper.make_model(onnx.helper.make_graph([alone], "alone", inputs, [out]),
                               opset_imports=list(model.opset_import), ir_version=model.ir_version)
    alone = SourceRunner(m).run({n: np.asarray(a) for n, a in zip(names, args) if n})
    return got if alone is None else np.asarray(alone["out"])


def same_off_ties(ir, ort_ir, got, want, args) -> bool:
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


def _reads_graph_arithmetic(node, known) -> bool:
    """Whether the node's parameters (Resize's roi / scales / sizes) are computed in the graph, i.e. whether our
    reading of them (``translate.onnx_fold``) is at stake. Where they are written as constants or fed as graph
    inputs (``known``: read as they are, nothing to fold), a difference between onnxruntime and the node's IR is
    onnxruntime's own departure (the node proofs judged ours against the oracle): the oracle's output stands in
    for it (a departure no rule of ``translate.onnxruntime`` names yet costs no refusal there)."""
    if node.op_type not in ONNX_RESIZE_OPS:
        return False
    return any(n and n not in known for n in node.input[1:])


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
