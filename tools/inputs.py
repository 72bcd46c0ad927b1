"""What every verb does to the model before anything else: the user's ``--input`` shapes applied (a temporary
copy when needed), and the graph checked for what OpenVINO's frontend would otherwise report without a node
or field (a cycle, an input no earlier node produces)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from ..semantics.errors import BridgeError, clip

TWO_GB = 2 ** 31 - 1


def check_graph_order(model) -> None:
    """Every node input is a graph input, an initializer, '' or the output of an earlier node (the ONNX
    checker's rule; a cyclic graph breaks it)."""
    from ..translate.onnx import node_name

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


@contextlib.contextmanager
def prepared(model_path: str, shapes: dict | None = None):
    """(path, ModelProto) of the model the verb works on: ``model_path`` itself, or a temporary copy with the
    ``--input`` shapes fixed (removed afterwards)."""
    from ..translate.onnx import load
    from ..translate.onnx_shapes import with_input_shapes

    model = load(model_path)
    check_graph_order(model)
    if not shapes:
        yield str(model_path), model
        return
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
