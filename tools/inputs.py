"""What every verb does to the model before anything else: the user's ``--input`` shapes applied (a temporary
copy when needed), and the graph checked for what OpenVINO's frontend would otherwise report without a node
or field (a cycle, an input no earlier node produces)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from ..semantics.errors import BridgeError, clip, first_line
from ..translate.onnx import load, node_name
from ..translate.onnx_shapes import with_input_shapes

TWO_GB = 2 ** 31 - 1


def check_graph_order(model) -> None:
    """Every node input is a graph input, an initializer, '' or the output of an earlier node (the ONNX
    checker's rule; a cyclic graph breaks it)."""

    g = model.graph
    known = {vi.name for vi in g.input} | {t.name for t in g.initializer} | {""}
    produced_later = {o for n in g.node for o in n.output}
    for i, node in enumerate(g.node):
        for pos, name in enumerate(node.input):
            if name not in known:
                why = ("a later node produces it: the graph is cyclic or not in topological order"
                       if name in produced_later else "no node, graph input or initializer produces it")
                raise BridgeError(f"input {pos} {clip(name, 80)!r}: {why}", node_name(node, i), f"input {pos}")
        known.update(node.output)


def _save(model, path: str) -> None:
    import onnx

    if model.ByteSize() > TWO_GB:
        onnx.save(model, path, save_as_external_data=True, location=os.path.basename(path) + ".data")
    else:
        onnx.save(model, path)


def with_outputs(model, names):
    """ovc's ``--output``: the model cut to the named tensors as its outputs (what they do not depend on is left
    out)."""
    import onnx.shape_inference
    import onnx.utils

    produced = {o for n in model.graph.node for o in n.output} | {i.name for i in model.graph.input}
    for name in names:
        if name not in produced:
            known = ", ".join(clip(o.name, 40) for o in model.graph.output[:8])
            raise BridgeError(f"the model has no tensor {clip(name, 80)!r} to keep as an output (its outputs: "
                              f"{known})", field="output")
    inits = {i.name for i in model.graph.initializer}
    feeds = [i.name for i in model.graph.input if i.name not in inits]
    try:
        # The extractor types every tensor it keeps from value_info: infer them, and leave the ones inference
        # cannot type untyped rather than missing.
        typed = onnx.shape_inference.infer_shapes(model)
        known = {v.name for g in (typed.graph.value_info, typed.graph.input, typed.graph.output) for v in g}
        typed.graph.value_info.extend(onnx.helper.make_empty_tensor_value_info(n) for n in names if n not in known)
        return onnx.utils.Extractor(typed).extract_model(feeds, list(names))
    except Exception as e:  # noqa: BLE001 -- onnx's own words, on one line
        raise BridgeError(f"cannot cut the model at {', '.join(clip(n, 40) for n in names)}: "
                          f"{clip(first_line(e), 160)}",
                          field="output") from None


@contextlib.contextmanager
def prepared(model_path: str, shapes: dict | None = None, outputs=()):
    """(path, ModelProto) of the model the verb works on: ``model_path`` itself, or a temporary copy with the
    ``--input`` shapes fixed and cut to the ``--output`` tensors (removed afterwards)."""

    model = load(model_path)
    check_graph_order(model)
    if not shapes and not outputs:
        yield str(model_path), model
        return
    if outputs:
        model = with_outputs(model, outputs)
    model = with_input_shapes(model, shapes)
    d = tempfile.mkdtemp(prefix="rb-input-")
    try:
        path = os.path.join(d, os.path.basename(str(model_path)) or "model.onnx")
        try:
            _save(model, path)
        except OSError as e:
            raise BridgeError(f"cannot write a temporary copy of the model: {e.strerror or e}",
                              field="input") from None
        yield path, model
    finally:
        shutil.rmtree(d, ignore_errors=True)
