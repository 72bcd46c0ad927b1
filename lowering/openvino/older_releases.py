"""The converted model in op versions older OpenVINO releases read (issue 42: what ``convert`` writes runs wherever
its user deploys it). OpenVINO's frontends write some ops of the user's graph in their newest version where an
older version computes the same: OpenVINO 2026.4's ONNX frontend writes every ScatterND as ScatterNDUpdate-15,
which OpenVINO before 2024.4 cannot read ("unsupported opset: opset15"), so a model holding one could not be
deployed there although nothing in it needs opset 15 (measured on four real models of tests/models in OpenVINO
2023.3.0 and 2024.0.0); its PyTorch frontend writes max_pool2d as MaxPool-14 (opset 14, OpenVINO 2024.0 and later).
Each respelling here is exact: the older version's semantics equal the newer one's for the attribute values it
applies to (ScatterNDUpdate-15 adds only the reduction, "none" is ScatterNDUpdate-3; MaxPool-14 and AvgPool-14
add only the rounding type "ceil_torch", their "floor" and "ceil" are MaxPool-8's and AvgPool-1's)."""

from __future__ import annotations

from .graph import all_ops


def _scatter_nd_update(op):
    """ScatterNDUpdate-15 without a reduction: ScatterNDUpdate-3 of the same inputs (None otherwise)."""
    if str(op.get_attributes().get("reduction", "none")).lower() != "none":
        return None  # sum / prod / min / max need opset 15; it stays
    import openvino.opset13 as ops13  # ScatterNDUpdate-3, the version every release reads

    return ops13.scatter_nd_update(op.input_value(0), op.input_value(1), op.input_value(2))


def _older_pool(op):
    """A pool-14's attributes, rounding and padding lower-cased, where its rounding is one the older version has
    ("floor" / "ceil"); None for "ceil_torch", which only opset 14 has."""
    a = dict(op.get_attributes())
    a["rounding_type"], a["auto_pad"] = a["rounding_type"].lower(), a["auto_pad"].lower()
    return a if a["rounding_type"] in ("floor", "ceil") else None


def _max_pool(op):
    """MaxPool-14 rounding "floor" / "ceil": MaxPool-8 with the same attributes."""
    a = _older_pool(op)
    if a is None:
        return None
    import openvino.opset8 as ops8

    return ops8.max_pool(op.input_value(0), a["strides"], a["dilations"], a["pads_begin"], a["pads_end"],
                         a["kernel"], a["rounding_type"], a["auto_pad"], a["index_element_type"], a["axis"])


def _avg_pool(op):
    """AvgPool-14 rounding "floor" / "ceil": AvgPool-1 with the same attributes."""
    a = _older_pool(op)
    if a is None:
        return None
    import openvino.opset1 as ops1

    return ops1.avg_pool(op.input_value(0), a["strides"], a["pads_begin"], a["pads_end"], a["kernel"],
                         a["exclude-pad"], a["rounding_type"], a["auto_pad"])


# (type, version id) -> the older spelling, or None where the attributes need the newer one
RESPELL = {("ScatterNDUpdate", "opset15"): _scatter_nd_update, ("MaxPool", "opset14"): _max_pool,
           ("AvgPool", "opset14"): _avg_pool}


def respell_for_older_releases(ov_model) -> int:
    """Replace, in ``ov_model`` (bodies included), every op RESPELL names by its older version where that is
    exact; the new op keeps the old one's name and tensor names (the frontend's runtime info, such as
    ``can_be_folded``, is not carried: OpenVINO's Python API cannot copy its values, and no mark of resample-bridge's
    is on the user's own ops). Returns how many were replaced."""
    replaced = 0
    for op in list(all_ops(ov_model)):
        info = op.get_type_info()
        spell = RESPELL.get((info.name, info.version_id))
        new = spell(op) if spell else None
        if new is None:
            continue
        new.set_friendly_name(op.get_friendly_name())
        for old, now in zip(op.outputs(), new.outputs()):  # (MaxPool: the values and the indices)
            old.replace(now)  # moves the consumers and the tensor names
        replaced += 1
    return replaced
