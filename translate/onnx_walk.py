"""Naming and walking the nodes of an ONNX graph, bodies of If / Loop / Scan included: shared by the parser
(``translate/onnx.py``) and the checks that run before it (``translate/onnx_validate.py``)."""

from __future__ import annotations

from ..semantics.vocab import ONNX_DOMAINS, ONNX_RESAMPLING_OPS


def is_resampling(node) -> bool:
    """A resampling node: one of the ops the parsers read, in the default domain (a custom domain's Resize is
    someone else's op). The one test every walk over a model's nodes uses."""
    return node.op_type in ONNX_RESAMPLING_OPS and node.domain in ONNX_DOMAINS


def node_name(node, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def subgraphs(node):
    """(attribute name, GraphProto) of an If / Loop / Scan (or any) node."""
    for a in node.attribute:
        if a.HasField("g"):
            yield a.name, a.g
        for k, g in enumerate(a.graphs):
            yield f"{a.name}{k}", g


def walk(graph, prefix: str = ""):
    """(name, NodeProto) for every node of ``graph`` in order, descending into If / Loop / Scan bodies;
    a node in a body is named ``<outer node>/<attribute>/<node>``."""
    for i, node in enumerate(graph.node):
        name = prefix + node_name(node, i)
        yield name, node
        for attr, g in subgraphs(node):
            yield from walk(g, f"{name}/{attr}/")
