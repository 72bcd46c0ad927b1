"""The source model on onnxruntime, the reference of ``verify`` for every target: every resampling node's inputs
and output observed beside the model's outputs; onnxruntime's refusals as one line naming the node it cannot
run (where it has no kernel for a resampling node's type: that node by the oracle). ``verify_onnx`` runs the
ONNX targets' converted models through the same session options."""

from __future__ import annotations

import os
import re
import tempfile

from ..semantics.errors import BridgeError, clip, without_source
from .check_openvino_node import single_node_models
from ..lowering.model_check import import_onnxruntime
from ..translate.onnx import RESAMPLING_OPS, is_resampling
from .run_tensorrt import run_tensorrt_ready


def with_node_tensors_as_outputs(model):
    """A copy of ``model`` whose outputs also include every resampling node's inputs and outputs."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    # onnx >= 1.23 writes IR version 14, onnxruntime 1.31 reads <= 13; these ops need nothing past IR 10.
    m.ir_version = min(m.ir_version, 10)
    have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input} | \
        {i.name for i in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type in RESAMPLING_OPS:
            for name in list(node.input) + list(node.output):
                if name and name not in have:
                    m.graph.output.append(onnx.ValueInfoProto(name=name))
                    have.add(name)
    return m


def run_onnxruntime(model, feeds: dict) -> dict:
    import onnx

    ort = import_onnxruntime()

    aug = with_node_tensors_as_outputs(model)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "augmented.onnx")
        onnx.save(aug, p)
        try:
            sess = ort.InferenceSession(p, ort_options(), providers=["CPUExecutionProvider"])
            return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        except Exception as e:
            # Every line of it (the list of what the kernel supports follows the first), one line for us.
            msg = " ".join(str(e).replace(p, "the source model").replace(d + os.sep, "")
                           .replace("augmented.onnx", "the source model").split()) if str(e) \
                else type(e).__name__
            msg = ort_text(msg)
            found = re.search(r"Name:'([^']*)'", msg)  # onnxruntime names the node that failed to run
            node = found.group(1) if found else node_onnxruntime_refuses(model)
            by_node = _oracle_at_resampling(model, aug, feeds, node, msg)
            if by_node is not None:
                return by_node
            if node is not None:
                # The node is named already: onnxruntime's preamble naming it again, and the C++ assertion
                # before its sentence, are left out of the one line (-v keeps them).
                said = _ASSERTION.sub("", _RUNNING.sub("", msg)).strip()
                raise BridgeError(f"onnxruntime cannot run this node of the source model, so verify has no "
                                  f"reference: {clip(msg, 600)}", node, "op",
                                  brief=f"onnxruntime cannot run it here (verify has no reference): {said}") from None
            raise BridgeError(f"onnxruntime cannot run the source model: {clip(msg, 600)}",
                              field="model") from None


def _oracle_at_resampling(model, aug, feeds: dict, node: str | None, why: str) -> dict | None:
    """Where onnxruntime cannot run a resampling node (no bfloat16 Resize kernel; attribute combinations its
    kernels reject), the reference it cannot give: the model run node by node, every resampling node by the
    oracle, the rest on onnxruntime one node at a time (``run_tensorrt.run_tensorrt_ready``,
    resampling="oracle"), the outputs verify reads. None where the node is not a resampling node or the rest
    cannot run either."""
    if node is None or not any(n.name == node and is_resampling(n) for n in model.graph.node):
        return None
    try:
        values = run_tensorrt_ready(model, feeds, resampling="oracle")
    except Exception:  # noqa: BLE001 -- the first refusal stands: the caller names it
        return None
    return OracleAt({o.name: values[o.name] for o in aug.graph.output if o.name in values}, node, why)


class OracleAt(dict):
    """The reference's tensors by name, every resampling node computed by the oracle: onnxruntime cannot run
    ``node`` (``why``, its words)."""

    def __init__(self, values: dict, node: str, why: str):
        super().__init__(values)
        # The node is named already: onnxruntime's own preamble naming it again is left out.
        self.node, self.why = node, _RUNNING.sub("", why)

    def note(self) -> str:
        return (f"onnxruntime cannot run node {clip(self.node, 80)} of the source ({clip(self.why, 500)}): the "
                f"reference computes every resampling node by the oracle, the other nodes on onnxruntime one by one")


_RUNNING = re.compile(r"Non-zero status code returned while running \w+ node\. Name:'[^']*' Status Message: ")
# A C++ check's own words before onnxruntime's sentence: "input_shape_size == requested_shape_size was false.", a
# function name ("PrepareForComputeImpl").
_ASSERTION = re.compile(r"^\S+ [=!<>]=? \S+ was false\.\s*|^[A-Z]\w*Impl\b\s*")


# onnxruntime's error text: a status prefix and C++ signatures ("onnxruntime::X<T>::Compute(...) const
# [with T = float]") before the sentence that says what is wrong.
_ORT_NOISE = re.compile(r"\[ONNXRuntimeError\] : \d+ : \w+ : |(?:\w+(?:::[\w<>]+)+ )?\b\w+(?:::[\w<>]+)+\([^()]*\)"
                        r"(?: const)?(?: \[with [^\]]*\])?\s*")


def ort_text(msg: str) -> str:
    return _ORT_NOISE.sub("", without_source(msg)).strip()


def node_onnxruntime_refuses(model) -> str | None:
    """The first resampling node onnxruntime refuses to load on its own (its kernel constructors reject some
    attribute combinations the ONNX spec allows, without naming the node), or None."""

    ort = import_onnxruntime()

    try:
        singles = list(single_node_models(model))
    except Exception:  # noqa: BLE001 -- only a better message is at stake
        return None
    for name, _, one, _ in singles:
        try:
            ort.InferenceSession(one.SerializeToString(), ort_options(), providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001
            return name
    return None


def ort_options():
    """onnxruntime's own log lines (coloured, relaying raw attribute text) stay off the terminal unless the
    "resample_bridge" logger is at debug level (``-v``)."""
    import logging


    ort = import_onnxruntime()

    so = ort.SessionOptions()
    # Fatal only by default: its errors reach the user as our one line.
    so.log_severity_level = 1 if logging.getLogger("resample_bridge").isEnabledFor(logging.DEBUG) else 4
    return so


__all__ = ["OracleAt", "with_node_tensors_as_outputs", "run_onnxruntime",
           "ort_text", "node_onnxruntime_refuses", "ort_options"]
