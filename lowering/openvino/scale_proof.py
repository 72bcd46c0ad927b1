"""The proof of rung 3's run-time scale window (``scale_taps``): each computed axis' Gather and tap sum read by
structure (``antialias_proof.taps_read``) and its window subgraph, taken out of the produced model with parameters
in place of the run-time length and scale, checked over the grid (``scale_taps.grid_verdict``); the axes left as
they are, by the constant 1 their scale reads."""

from __future__ import annotations

import numpy as np

from ...semantics.coords import axis_roi, box_past
from ...semantics.ir import same_value
from ...semantics.messages import plugin_sentence
from .antialias_proof import taps_read
from .antialias_taps import tap_layout
from .graph import ops
from .index_ops import inside_read, tag_of
from .nearest_index import index_gathers, tags_in_copy
from . import scale_nearest
from .scale_length import known_values, unit_maps_onto_itself
from .scale_taps import crop_copied, grid_verdict, refusal, sizes_grid_verdict, static_scale


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather and tap sum (``antialias_proof.taps_read``), and its window subgraph,
    taken out of a copy of the produced model with parameters in place of the run-time length and scale it reads
    (the tagged Maximum ops; a length OpenVINO folded is the static one recorded at lowering), gives the oracle's
    output length and taps over ``grid``."""
    opened = _opened(rec, by_tag, ov_model, refusal, "run-time scale form")
    if isinstance(opened, list):
        return opened
    tags, axes, copied = opened
    if rec.ir.sizes is None:
        out = _prove_copied(tags, rec, axes[0], copied)
    elif copied != list(crop_copied(rec.ir)):  # a fact of the source graph's arithmetic, as the window's
        out = [f"{rec.node}: the axes left as they are are not those the source pins to its own length whole"]
    else:
        out = []
    prev = None
    for axis in axes:
        out += [f"{rec.node}: axis {axis}: {m}" for m in _prove_axis(tags, rec, axis, prev)]
        prev = tags.get(tag_of(rec.node, axis, "crop" if box_past(axis_roi(rec.ir, axis)) else "sum"))
    return out


def crop_read(tags, rec, axis: int):
    """The outside mask that the axis' tagged Select reads, where it sets the extrapolation value of the source IR
    on the tap sum's result (``scale_taps.extrapolated``), or why it is not there."""
    chosen, total = tags.get(tag_of(rec.node, axis, "crop")), tags.get(tag_of(rec.node, axis, "sum"))
    if chosen is None or chosen.get_type_name() != "Select":
        return "no Select of the extrapolation value in the produced model"
    if chosen.input_value(2).get_node().get_name() != total.get_name():
        return "the extrapolation value's Select does not read the tap sum"
    value = chosen.input_value(1).get_node()
    if value.get_type_name() != "Constant" or not same_value(float(value.get_data().reshape(-1)[0]),
                                                            float(np.float32(rec.ir.extrapolation_value))):
        return "the extrapolation value is not the source IR's"
    return chosen.input_value(0)


def _opened(rec, by_tag, ov_model, refusal_of, form: str):
    """(tags in a model copy, computed axes, axes left as they are) of a run-time scale form's record, or the
    failures that end its proof first: a source IR the form does not express, axes that are not the IR's."""
    refused = refusal_of(rec.ir)
    if refused is not None:
        return [f"{rec.node}: the source IR has no {form} ({refused[0]})"]
    axes, copied = list(rec.proof.get("axes", ())), list(rec.proof.get("copied", ()))
    if sorted(axes + copied) != sorted(rec.ir.axes) or not axes:
        return [f"{rec.node}: the axes computed and left as they are are not the source IR's resized axes"]
    return tags_in_copy(rec, by_tag, ov_model), axes, copied


def _prove_copied(tags, rec, axis: int, copied: list) -> list[str]:
    """The axes left as they are have scale 1 in the produced model: the scales tensor the tagged scale of a
    computed ``axis`` reads (Maximum(ReduceSum(Select(one-hot, scales, 0)), 0), as ``scale_length.element`` builds it) holds
    the constant 1 at their positions (``known_values``)."""
    if not copied:
        return []
    cropped = [a for a in copied if not unit_maps_onto_itself(rec.ir, a)]
    if cropped:
        return [f"{rec.node}: axis {a} is left as it is, but the source IR crops it at scale 1" for a in cropped]
    if all(static_scale(rec.ir, a) is not None for a in rec.ir.axes):
        # the IR's own constants (OpenVINO folds the chain below into one): the axes left as they are have scale 1
        wrong = [a for a in copied if static_scale(rec.ir, a) != 1.0]
        return [f"{rec.node}: axis {a} is left as it is, but its scale is not 1" for a in wrong]
    op = tags.get(tag_of(rec.node, axis, "scale"))
    chain = [op]
    for kind in ("Maximum", "ReduceSum", "Select"):
        if chain[-1] is None or chain[-1].get_type_name() != kind:
            return [f"{rec.node}: the scales the axes left as they are rest on are not in the produced model"]
        chain.append(chain[-1].input_value(1 if kind == "Select" else 0).get_node())
    known = known_values(chain[-2].input_value(1), len(rec.ir.axes))
    wrong = [a for a in copied if known[list(rec.ir.axes).index(a)] != 1.0]
    return [f"{rec.node}: axis {a} is left as it is, but its scale is not the constant 1" for a in wrong]


def _prove_axis(tags, rec, axis: int, prev) -> list[str]:
    read = taps_read(tags, rec, axis, prev)
    if isinstance(read, str):
        return [read]
    if box_past(axis_roi(rec.ir, axis)):
        mask = crop_read(tags, rec, axis)
        if isinstance(mask, str):
            return [mask]
        read = list(read) + [mask]
    sized = rec.ir.sizes is not None
    if sized != (rec.proof.get("given") == "sizes"):
        return ["the window reads its output length otherwise than the source IR gives it"]
    second = ("out", lambda: _static_size(rec.ir, axis)) if sized else ("scale", lambda: static_scale(rec.ir, axis))
    cut = _cut(tags, rec, axis, list(read), second=second)
    if isinstance(cut, str):
        return [cut]
    model, fixed_len, fixed_second = cut
    fixed_len = None if fixed_len is None else int(fixed_len)
    if sized:
        verdict = sizes_grid_verdict(model, rec.ir, tap_layout(rec.ir.rank, axis), fixed_len,
                                     None if fixed_second is None else int(fixed_second), axis_roi(rec.ir, axis))
    else:
        verdict = grid_verdict(model, rec.ir, tap_layout(rec.ir.rank, axis), fixed_len, fixed_second,
                               axis_roi(rec.ir, axis))
    return [] if verdict is None else [verdict]


def _static_size(ir, axis: int) -> int | None:
    """The IR's output length of ``axis`` where it fixes it, else None (fed at run time)."""
    return None if not isinstance(ir.sizes, tuple) else int(ir.sizes[list(ir.axes).index(axis)])


def _cut(tags, rec, axis: int, outputs, fixed_of=None, second=("scale", lambda: None)):
    """(model, fixed lengths, fixed second) of the subgraph up to ``outputs`` in the model copy, its run-time
    lengths and scales (the ops tagged at ``axis``) replaced by parameters of their shapes; lengths OpenVINO folded
    are the static ones recorded at lowering (``fixed_of()``); the ``second`` role (the scale, or the output
    length) folded is the source IR's static value (its function), each then None in place of its parameter:
    the grid then runs the model's own constant against the oracle at the IR's value. Or why it cannot be taken
    out."""
    import openvino as ov

    o = ops()
    params, fixed = [], {}
    for role, given in (("in", fixed_of or (lambda: rec.proof.get("fixed", {}).get(axis))), second):
        op = tags.get(tag_of(rec.node, axis, role))
        if op is None or op.get_type_name() == "Constant":
            fixed[role] = given()
            if fixed[role] is None:
                return f"the run-time {role} is not in the produced model"
            continue
        p = o.parameter(op.get_output_partial_shape(0), op.get_output_element_type(0), name=role)
        op.output(0).replace(p.output(0))
        params.append(p)
    try:
        return ov.Model(outputs, params, "scale_proof"), fixed.get("in"), fixed.get(second[0])
    except RuntimeError as e:
        return f"the subgraph depends on more than its lengths and scales ({plugin_sentence(e)})"


def prove_nearest(rec, by_tag, ov_model) -> list[str]:
    """The run-time scale index form (``scale_nearest``): every computed axis has its Gather (on that axis, fed
    by the one before), under exclude_outside followed by its tagged Multiply by which picks lie inside; their
    index rows (and those of the picks inside), cut out of the model copy with parameters in place of the axes'
    joint lengths and scales, give the oracle's taps over the grid; the axes left as they are read the constant 1."""
    opened = _opened(rec, by_tag, ov_model, scale_nearest.refusal, "run-time scale index form")
    if isinstance(opened, list):
        return opened
    tags, axes, copied = opened
    out = _prove_copied(tags, rec, scale_nearest.JOINT, copied)
    chained, gathers = index_gathers(rec, tags, axes)
    if chained:
        return out + chained
    indices = [g.input_value(1) for g in gathers.values()]
    keeps = [inside_read(rec, tags, axis) for axis in gathers] if rec.ir.exclude_outside else []
    static = [rec.proof.get("fixed", {}).get(a) for a in axes]
    cut = _cut(tags, rec, scale_nearest.JOINT, indices + keeps,
               lambda: tuple(int(v) for v in static) if None not in static else None)
    why = cut if isinstance(cut, str) else scale_nearest.grid_verdict(cut[0], rec.ir, len(axes), cut[1])
    return out + ([] if why is None else [f"{rec.node}: {why}"])
