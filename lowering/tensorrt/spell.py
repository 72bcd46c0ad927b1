"""Other ONNX spellings of a node's numbers that onnx-tensorrt's importer maps exactly: respelled attributes and
sizes/scales (one node), or a resize over more axes than IResizeLayer takes split into per-axis passes, with
Transposes that bring each pass's axes innermost.

A spelling is {"op_type", "attrs"} plus, for Resize, full-rank "sizes" or "scales"."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...semantics.coords import bind_resize
from ...semantics.ir import ResizeIR, axis_name
from ...semantics.vocab import ONNX_NEAREST_MODES
from ...translate import tensorrt as ttrt
from ...translate.onnx_tensorrt import import_node
from .compare import pass_matches
from ...translate.onnx import default_opset

ONNX_COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")  # what the importer maps as is


def window(kind: str) -> int:
    """How many innermost axes one IResizeLayer resizes. Nearest: NvInfer.h says 8 innermost axes, the Python
    docstring 3; 3 is what both promise."""
    return {"nearest": 3, "linear": 3, "cubic": 2}[kind]


def spelled_view(view, spelling: dict, x_shape=None):
    """A NodeView of ``spelling`` fed by ``view``'s X (``x_shape``: X's shape, default ``view``'s)."""
    if spelling["op_type"] != "Resize":  # GridSample / DeformConv respellings change attributes only
        return view.replace(op_type=spelling["op_type"], attrs=dict(spelling["attrs"]))
    consts, extra = {}, ["", "", ""]
    if spelling.get("sizes") is not None:
        extra[2] = "__rb_sizes"
        consts["__rb_sizes"] = np.asarray(spelling["sizes"], dtype=np.int64)
    elif spelling.get("scales") is not None:
        extra[1] = "__rb_scales"
        consts["__rb_scales"] = np.asarray(spelling["scales"], dtype=np.float32)
    while extra and not extra[-1]:
        extra.pop()
    x = view.input(0)
    return view.replace(op_type="Resize", attrs=dict(spelling["attrs"]), inputs=[x, *extra], consts=consts,
                        shapes={x: x_shape if x_shape is not None else view.shape(0)}, dtypes={x: view.dtype(0)})


def resize_spellings(src: ResizeIR, rank: int, out_shape):
    """ONNX Resize spellings (attrs + full-rank sizes or scales) of the same resize, the likeliest first."""
    s = src.sampler
    base = {"mode": s.kind}
    if s.kind == "cubic":
        base["cubic_coeff_a"] = float(s.cubic_a)
    if src.exclude_outside:
        base["exclude_outside"] = 1
    own = src.coord if src.coord in ONNX_COORDS + ("tf_half_pixel_for_nn",) else None
    coords = ([own] if own else []) + [c for c in ONNX_COORDS if c != own]
    if s.kind == "nearest":
        nat = s.nearest if s.nearest in ONNX_NEAREST_MODES else None
        nearests = ([nat] if nat else []) + [n for n in ONNX_NEAREST_MODES if n != nat]
    else:
        nearests = [None]
    sizings = [("sizes", tuple(int(o) for o in out_shape))]
    if isinstance(src.scales, tuple):
        sizings.append(("scales", tuple(float(src.scales[src.axes.index(a)]) if a in src.axes else 1.0
                                        for a in range(rank))))
    for key, val in sizings:
        for c in coords:
            if c == "tf_half_pixel_for_nn" and key != "scales":
                continue
            for n in nearests:
                attrs = dict(base, coordinate_transformation_mode=c)
                if n is not None:
                    attrs["nearest_mode"] = n
                yield {"op_type": "Resize", "attrs": attrs, key: val}


def gridsample_spelling(view, src) -> dict | None:
    """GridSample-20+ ``linear`` without the ``mode`` attribute, ``cubic`` as ``bicubic`` (the importer runs both
    as nearest otherwise, and its default is ``bilinear``)."""
    attrs = {k: v for k, v in view.attrs.items() if k != "mode"}
    if src.sampler.kind == "linear":
        return {"op_type": "GridSample", "attrs": attrs}
    if src.sampler.kind == "cubic":
        return {"op_type": "GridSample", "attrs": dict(attrs, mode="bicubic")}
    return None


def describe(spelling: dict, original_attrs: dict) -> str:
    if spelling["op_type"] == "GridSample":
        m = spelling["attrs"].get("mode")
        return ("GridSample with the mode attribute left out (the importer's default bilinear = linear)" if m is None
                else f"GridSample spelled mode={m!r} (the importer's name for it)")
    parts = []
    a = spelling["attrs"]
    for k in ("coordinate_transformation_mode", "nearest_mode"):
        old = original_attrs.get(k)
        old = old.decode() if isinstance(old, bytes) else old
        if a.get(k) is not None and a.get(k) != old:
            parts.append(f"{k}={a[k]}")
    if spelling.get("sizes") is not None:
        parts.append(f"sizes={list(spelling['sizes'])}")
    elif spelling.get("scales") is not None:
        parts.append(f"scales={[float(x) for x in spelling['scales']]}")
    return "Resize spelled " + ", ".join(parts)


def split(view, opset, src: ResizeIR, bound) -> list | None:
    """Per-axis passes of ``src`` (bound on its input shape), each within the window and proven to carry the
    source axes' exact taps: [{"axes", "perm" (None: no Transpose), "spelling", "assumptions", "in_shape",
    "out_shape"}], or None. Per pass, a spelling that rests on no undocumented rule is preferred."""
    rank = src.rank
    win = window(src.sampler.kind)
    by_axis = {ax.axis: ax for ax in bound.axes}
    inner = [a for a in by_axis if a >= rank - win]
    outer = [a for a in by_axis if a < rank - win]
    groups = ([inner] if inner else []) + [outer[i:i + win] for i in range(0, len(outer), win)]
    cur = list(bound.in_shape)
    passes = []
    for axes in groups:
        moved = any(a < rank - win for a in axes)
        perm = [a for a in range(rank) if a not in axes] + list(axes) if moved else list(range(rank))
        tin = [cur[q] for q in perm]
        tout = list(tin)
        for a in axes:
            tout[perm.index(a)] = bound.out_shape[a]
        chosen = None
        # The pass as its own resize: the source's attributes on the pass's axes.
        for sp in resize_spellings(_restrict(src, axes, perm, tin), rank, tout):
            imp = import_node(spelled_view(view, sp, tuple(tin)), opset)
            if imp.rejected or imp.ir is None:
                continue
            if not pass_matches(imp.ir, tuple(tin), [(perm.index(a), by_axis[a]) for a in axes], bound):
                continue
            assumed = ttrt.assumptions(imp.settings)
            if not assumed:
                chosen = (sp, [])
                break
            chosen = chosen or (sp, assumed)
        if chosen is None:
            return None
        names = ", ".join(axis_name(a, rank) for a in axes)
        passes.append({"axes": list(axes), "perm": perm if moved else None, "spelling": chosen[0],
                       "assumptions": [f"pass over {names}: {a}" for a in chosen[1]] if moved else chosen[1],
                       "in_shape": tin, "out_shape": tout})
        for a in axes:
            cur[a] = bound.out_shape[a]
    return passes


def _restrict(src: ResizeIR, axes, perm, tin) -> ResizeIR:
    """The source resize restricted to ``axes``, placed where ``perm`` moves them, on input shape ``tin``."""
    pos = [perm.index(a) for a in axes]
    rep = dict(axes=tuple(pos), input_shape=tuple(tin), aspect_policy="stretch", roi=None, rank=len(perm))
    if isinstance(src.scales, tuple):
        rep["scales"] = tuple(src.scales[src.axes.index(a)] for a in axes)
        rep["sizes"] = None
    else:
        rep["sizes"] = tuple(bind_resize(src, src.input_shape).out_shape[a] for a in axes)
        rep["scales"] = None
    return dataclasses.replace(src, **rep)


# ----------------------------------------------------------------------------------------------------------
# TensorRT's parser spelling of GridSample modes, given back the opset's own names (what the ONNX parser and
# onnxruntime read): the proof and ``tools/run_tensorrt`` both need it.

_PARSER_SPELLINGS = {"bilinear": "linear", "bicubic": "cubic"}


def with_opset_spelling(node, opset: int):
    """A GridSample that carries TensorRT's parser spelling (``bilinear`` / ``bicubic`` in an opset-20+ model,
    which onnxruntime refuses), given back the opset's own name for the same mode."""
    import copy

    mode = next((a for a in node.attribute if a.name == "mode"), None)
    if node.op_type != "GridSample" or opset < 20 or mode is None or mode.s.decode() not in _PARSER_SPELLINGS:
        return node
    node = copy.deepcopy(node)
    for a in node.attribute:
        if a.name == "mode":
            a.s = _PARSER_SPELLINGS[a.s.decode()].encode()
    return node


def opset_spelled(model):
    """``model`` with every GridSample in TensorRT's parser spelling given back its opset's own name (a copy;
    ``model`` itself where none is): what the ONNX parser and onnxruntime read."""

    opset = default_opset(model)
    nodes = [with_opset_spelling(n, opset) for n in model.graph.node]
    if all(a is b for a, b in zip(nodes, model.graph.node)):
        return model
    out = type(model)()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


__all__ = ["window", "spelled_view", "resize_spellings", "gridsample_spelling", "describe", "split",
           "with_opset_spelling", "opset_spelled"]
