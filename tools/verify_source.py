"""The source model on onnxruntime, the reference of ``verify`` for every target: every resampling node's inputs
and output observed beside the model's outputs; onnxruntime's refusals as one line naming the node it cannot
run. ``verify_onnx`` runs the ONNX targets' converted models through the same session options."""

from __future__ import annotations

import os
import re
import tempfile

from ..semantics.errors import BridgeError, clip, without_source
from .check_openvino_node import single_node_models
from ..lowering.model_check import import_onnxruntime
from ..translate.onnx import RESAMPLING_OPS


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
            if node is not None:
                raise BridgeError(f"onnxruntime cannot run this node of the source model, so verify has no "
                                  f"reference: {clip(msg, 600)}", node, "op") from None
            raise BridgeError(f"onnxruntime cannot run the source model: {clip(msg, 600)}",
                              field="model") from None


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


__all__ = ["with_node_tensors_as_outputs", "run_onnxruntime", "ort_text", "node_onnxruntime_refuses", "ort_options"]
