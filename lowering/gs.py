"""onnx-graphsurgeon round trips (the ONNX and TensorRT targets rewrite graphs with it)."""

from __future__ import annotations

_EMPTY_LISTS = {"value_floats": "FLOAT", "value_ints": "INT64", "value_strings": "STRING"}


def import_graph(model):
    """``gs.import_onnx(model)``, after spelling each Constant's empty list value (``value_floats=[]``, an
    exporter's "absent") as the empty tensor it means: graphsurgeon's exporter cannot type an empty list
    attribute and would fail on the way back."""
    import onnx
    import onnx_graphsurgeon as gs
    from onnx import helper

    fixed = None
    for i, node in enumerate(model.graph.node):
        if node.op_type != "Constant":
            continue
        for a in node.attribute:
            if a.name in _EMPTY_LISTS and not (a.floats or a.ints or a.strings):
                if fixed is None:
                    fixed = onnx.ModelProto()
                    fixed.CopyFrom(model)
                n = fixed.graph.node[i]
                del n.attribute[:]
                dtype = getattr(onnx.TensorProto, _EMPTY_LISTS[a.name])
                n.attribute.append(helper.make_attribute("value", helper.make_tensor("value", dtype, [0], [])))
                break
    return gs.import_onnx(fixed if fixed is not None else model)
