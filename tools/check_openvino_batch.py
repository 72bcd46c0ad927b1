"""``check``'s batching: one importer run for many nodes. Identical node configurations (same op, attributes,
constant inputs, input shapes and dtypes) are judged once; the distinct ones are cut out, renamed apart and put
into one model, converted and compiled once by OpenVINO's importer and once by resample-bridge. A group the
importer refuses as a whole is split in halves until the refusing node stands alone with its own message."""

from __future__ import annotations

import os

from ..lowering.openvino.frontend import openvino_error_reason
from ..lowering.openvino.graph import compile_f32
from ..lowering.openvino.target import convert
from ..semantics.errors import BridgeError
from .check_openvino_node import _ours, _ours_row
from .check_openvino_verdict import EMPTY_OUTPUT, _judge, _native_verdict, empty_results
from ..translate import openvino as tov


def config_key(one) -> bytes:
    """The one-node model with every name replaced by its position: equal keys compute equal things."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(one)
    g = m.graph
    node = g.node[0]
    rename = {n: f"i{i}" for i, n in enumerate(node.input) if n}
    rename.update({n: f"o{i}" for i, n in enumerate(node.output) if n})
    for i, n in enumerate(node.input):
        if n:
            node.input[i] = rename[n]
    for i, n in enumerate(node.output):
        if n:
            node.output[i] = rename[n]
    for coll in (g.input, g.output, g.initializer):
        for x in coll:
            x.name = rename.get(x.name, x.name)
            x.doc_string = ""
    g.name = node.name = node.doc_string = ""
    return m.SerializeToString(deterministic=True)


def _prefixed(one, k: int):
    """``one`` with every tensor and the node renamed ``c{k}:...`` (names stay unique in a combined model)."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(one)
    g = m.graph
    p = f"c{k}:"
    node = g.node[0]
    node.name = p + (node.name or "node")
    for i, n in enumerate(node.input):
        if n:
            node.input[i] = p + n
    for i, n in enumerate(node.output):
        if n:
            node.output[i] = p + n
    for coll in (g.input, g.output, g.initializer):
        for x in coll:
            x.name = p + x.name
    return m


def _combined(items):
    """One ModelProto holding the prefixed one-node models of ``items`` [(k, one, feeds)]."""
    from onnx import helper

    parts = [_prefixed(one, k) for k, one, _ in items]
    first = items[0][1]
    g = helper.make_graph([p.graph.node[0] for p in parts], "check",
                          [i for p in parts for i in p.graph.input], [o for p in parts for o in p.graph.output],
                          [t for p in parts for t in p.graph.initializer])
    return helper.make_model(g, opset_imports=list(first.opset_import), ir_version=first.ir_version)


def _feeds(items) -> dict:
    return {f"c{k}:{n}": v for k, _, feeds in items for n, v in feeds.items()}


def _resampling_above(op) -> list:
    """(name, IR) of the resampling ops that ``op`` depends on (None when our parser refuses one)."""

    seen, stack, found = set(), [op], []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.get_type_name() in tov.RESAMPLING_OPS:
            found.append(n)
        stack += [n.input_value(i).get_node() for i in range(n.get_input_size())]
    try:
        return [(op.get_friendly_name(), tov.parse_node(op)) for op in found]
    except BridgeError:
        return None


def native_batch(d: str, items, irs: dict, progress=None) -> dict:
    """k -> OpenVINO importer's verdict for every item (k, one, feeds), in as few importer runs as the
    refusals allow."""
    import onnx
    import openvino as ov

    out: dict = {}
    path = os.path.join(d, f"batch{items[0][0]}_{len(items)}.onnx")
    onnx.save(_combined(items), path)

    def split(reason_if_single):
        if len(items) == 1:
            out[items[0][0]] = reason_if_single
            if progress:
                progress(1)
            return out
        half = len(items) // 2
        out.update(native_batch(d, items[:half], irs, progress))
        out.update(native_batch(d, items[half:], irs, progress))
        return out

    try:
        ov_model = ov.convert_model(path)
    except Exception as e:
        return split({"verdict": "refused", "reason": openvino_error_reason(str(e))})
    empty = empty_results(ov_model)
    if empty:  # judged without running (``EMPTY_OUTPUT``); the others in a batch of their own
        keep = [it for it in items if f"c{it[0]}:{it[1].graph.output[0].name}" not in empty]
        kept = {it[0] for it in keep}
        for k, _, _ in items:
            if k not in kept:
                out[k] = dict(EMPTY_OUTPUT)
                if progress:
                    progress(1)
        return {**out, **(native_batch(d, keep, irs, progress) if keep else {})}
    try:
        res = compile_f32(ov_model)(_feeds(items))
    except Exception as e:
        return split({"verdict": "refused", "reason": "converts but does not run on CPU: " +
                      openvino_error_reason(str(e))})
    by_name = {}
    for port, val in res.items():
        for name in port.get_names():
            by_name[name] = val
    results = {n: r for r in ov_model.get_results() for n in r.input_value(0).get_names()}
    for k, one, feeds in items:
        oname = f"c{k}:{one.graph.output[0].name}"
        got, result = by_name.get(oname), results.get(oname)
        if got is None or result is None:
            out.update(_native_batch_single(d, [(k, one, feeds)], irs))
            if progress:
                progress(1)
            continue
        out[k] = _judge(irs[k], one, feeds, _resampling_above(result), got)
        if progress:
            progress(1)
    return out


def _native_batch_single(d, items, irs: dict) -> dict:
    k, one, feeds = items[0]
    path = os.path.join(d, f"single{k}.onnx")
    import onnx

    onnx.save(one, path)
    return {k: _native_verdict(path, irs[k], one, feeds)}


def ours_batch(d: str, items) -> dict:
    """k -> the rung resample-bridge takes, from one conversion of all items; a node that refuses is taken
    out with its reason and the rest converted again."""
    import onnx

    out: dict = {}
    todo = list(items)
    while todo:
        path = os.path.join(d, f"ours{todo[0][0]}_{len(todo)}.onnx")
        onnx.save(_combined(todo), path)
        names = {f"c{k}:{one.graph.node[0].name or 'node'}": k for k, one, _ in todo}
        try:
            _, records = convert(path)
        except BridgeError as e:
            k = names.get(e.node)
            if k is None or len(todo) == 1:
                # Not attributable to one node: judge each alone.
                for k, one, _ in todo:
                    p = os.path.join(d, f"ours_single{k}.onnx")
                    onnx.save(one, p)
                    out[k] = _ours(p)
                return out
            out[k] = {"rung": None, "reason": e.message}
            todo = [t for t in todo if t[0] != k]
            continue
        for rec in records:
            if rec.node in names:
                out[names[rec.node]] = _ours_row(rec)
        for k, one, _ in todo:
            out.setdefault(k, {"rung": None, "reason": "no record of this node in the conversion"})
        return out
    return out
