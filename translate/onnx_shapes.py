"""Input shapes fixed by the user before anything else reads the model: ovc's ``--input NAME[1,3,224,224]``
(``?`` or -1 for a dynamic dimension, several inputs comma-separated) and Polygraphy's ``--input-shapes
NAME:[1,3,224,224]``; both become {input name: [int | None, ...]} and ``with_input_shapes`` writes them into
a copy of the model's graph inputs."""

from __future__ import annotations

import re

import numpy as np
import onnx

from ..semantics.errors import BridgeError, clip

MAX_DIM = 1 << 31

# ovc's item: NAME[d0,d1,...]{type}, NAME{type}[d0,...], NAME{type} or NAME alone (selects the input, no shape).
_OVC_ITEM = re.compile(r"\s*([^\[\]{},]*?)\s*(?:\{([^{}]*)\})?\s*(?:\[([^\]]*)\])?\s*(?:\{([^{}]*)\})?\s*(?:,|$)")
# ovc's element type names (and the numpy ones), as ONNX element types.
OVC_TYPES = {**{k: v for k, v in (("f16", "float16"), ("f32", "float32"), ("f64", "float64"), ("bf16", "bfloat16"),
                                  ("i8", "int8"), ("i16", "int16"), ("i32", "int32"), ("i64", "int64"),
                                  ("u8", "uint8"), ("u16", "uint16"), ("u32", "uint32"), ("u64", "uint64"),
                                  ("boolean", "bool"))}}


class InputSpecs(dict):
    """{input name: [int | None, ...] | None (named without a shape)}; ``types``: {name: the element type given
    in braces}; ``text``: {name: the dimensions as written (ovc's bounds ``1..4`` kept: TensorRT's profile)}."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.types: dict[str, str] = {}
        self.text: dict[str, str] = {}

    def shaped(self) -> dict:
        """The names given a shape, and their shapes."""
        return {k: v for k, v in self.items() if v is not None}


# ovc's bounded dimension: "1..4", "..4", "1.." (ONNX keeps no bounds: the dimension stays dynamic, named by its
# bounds, so that the probes a model gets stay inside them: ``bounds``).
_BOUNDED = re.compile(r"(\d*)\.\.(\d*)")


def bounds(dim_param: str | None) -> tuple[int, int | None] | None:
    """(lo, hi or None) of a dynamic dimension named by ovc's bounds ("64..256", "..4", "1.."), else None."""
    b = _BOUNDED.fullmatch(dim_param or "")
    return (int(b.group(1) or 1), int(b.group(2)) if b.group(2) else None) if b else None


def _bound_names(text: str | None) -> list[str | None]:
    """Per dimension of an --input shape as written, its bounds ("64..256") or None."""
    parts = [p for p in re.split(r"[,\s]+", (text or "").strip()) if p]
    return [p if bounds(p) is not None else None for p in parts]


def _dims(text: str, name: str, field: str) -> list[int | None]:
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    out: list[int | None] = []
    for p in parts:
        if p in ("?", "-1"):
            out.append(None)
            continue
        b = _BOUNDED.fullmatch(p)
        if b and (not b.group(1) or not b.group(2) or int(b.group(1)) <= int(b.group(2))):
            out.append(None)  # dynamic: the bounds are ovc's hint for its own planning, not a shape
            continue
        if not re.fullmatch(r"\d+", p) or not 0 < int(p) < MAX_DIM:
            raise BridgeError(f"input {clip(name, 80)!r}: dimension {clip(p, 40)!r} is not a positive integer, "
                              f"'?' or -1", field=field)
        out.append(int(p))
    return out


# trtexec's --shapes / --optShapes spelling: images:1x3x320x320[,other:1x8]
_TRTEXEC = re.compile(r"\s*([^\[\],:]+?)\s*:\s*(\d+(?:x\d+)*)\s*(?:,|$)")


def parse_ovc_inputs(spec: str, field: str = "input") -> InputSpecs:
    """ovc's ``--input``: ``x[1,3,224,224],y[?,3]`` (spaces between dimensions also accepted; ``1..4`` a bounded
    dynamic dimension; ``[1,3,224,224]`` without a name for a model with one input, keyed ""), ``x`` alone (the
    input named, its shape as declared), ``x[1,3,224,224]{f16}`` (the type must be the model's own); trtexec's
    ``x:1x3x224x224,y:2x3`` too (issue 43: a deployment engineer's other spelling), and Polygraphy's
    ``x:[1,3,224,224]``."""
    out = InputSpecs()
    pos = 0
    spec = spec.strip()
    if "[" not in spec and "{" not in spec and _TRTEXEC.match(spec):
        while pos < len(spec):
            m = _TRTEXEC.match(spec, pos)
            if not m:
                raise BridgeError(f"cannot read {clip(spec[pos:], 80)!r}: expected NAME:d0xd1x... (trtexec) or "
                                  f"NAME[d0,d1,...] (ovc)", field=field)
            if m.group(1) in out:
                raise BridgeError(f"input {clip(m.group(1), 80)!r} is given twice", field=field)
            out.text[m.group(1)] = m.group(2).replace("x", ",")
            out[m.group(1)] = _dims(out.text[m.group(1)], m.group(1), field)
            pos = m.end()
        return out
    while pos < len(spec):
        m = _OVC_ITEM.match(spec, pos)
        if not m or m.end() == pos or (m.group(2) is not None and m.group(4) is not None) or \
                not (m.group(1) or m.group(3) is not None):
            raise BridgeError(f"cannot read {clip(spec[pos:], 80)!r}: expected NAME[d0,d1,...] with '?' for a "
                              f"dynamic dimension, optionally {{type}} after it, or NAME alone; several inputs "
                              f"separated by commas", field=field)
        name, dims, kind = m.group(1), m.group(3), m.group(2) or m.group(4)
        if dims is not None and name.endswith(":"):
            name = name[:-1].rstrip()  # Polygraphy's NAME:[d0,...] given to --input (a TF name "x:0" keeps its ':')
        if not name and (out or pos + len(m.group(0)) < len(spec)):
            raise BridgeError("a shape without an input name is for a model with one input; name each input "
                              "(NAME[d0,d1,...])", field=field)
        if name in out:
            raise BridgeError(f"input {clip(name, 80)!r} is given twice", field=field)
        out[name] = None if dims is None else _dims(dims, name, field)
        if dims is not None:
            out.text[name] = dims
        if kind is not None:
            t = kind.strip().lower()
            if OVC_TYPES.get(t, t) not in OVC_TYPES.values():
                raise BridgeError(f"input {clip(name, 80)!r}: unknown element type {clip(kind, 20)!r}; expected one "
                                  f"of {', '.join(OVC_TYPES)}", field=field)
            out.types[name] = OVC_TYPES.get(t, t)
        pos = m.end()
    if not out:
        raise BridgeError("no input shape given", field=field)
    return out


def parse_polygraphy_shapes(items: list[str], field: str = "input-shapes") -> dict[str, list[int | None]]:
    """``name:[1,3,224,224]`` items (Polygraphy's ``--input-shapes``)."""
    out: dict[str, list[int | None]] = {}
    for item in items:
        m = re.fullmatch(r"\s*(.+?):\s*\[([^\]]*)\]\s*", item)
        if not m:
            raise BridgeError(f"cannot read {clip(item, 80)!r}: expected NAME:[d0,d1,...]", field=field)
        out[m.group(1)] = _dims(m.group(2), m.group(1), field)
    return out


def graph_inputs(model) -> list:
    """The graph inputs that are not initializers (what a user feeds)."""
    inits = {i.name for i in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def declared_shape(vi) -> list[int | str | None] | None:
    """An input's declared dims: int (static), str (a named symbol), None (unknown); None when the rank is."""
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]


def with_value_shapes(model, values: dict):
    """A copy of ``model`` whose intermediate values named in ``values`` (arrays a run produced) carry their
    observed type and shape as value_info, replacing what inference left: a node whose input rank no shape
    inference gives (a shape computed from data) has it where a run has seen the tensor (``verify``). Graph
    inputs and outputs keep their declarations."""
    declared = {vi.name for vi in (*model.graph.input, *model.graph.output)}
    infos = []
    for name, v in values.items():
        if name in declared:
            continue
        try:
            elem = onnx.helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype)
        except (KeyError, TypeError, ValueError):
            continue
        infos.append(onnx.helper.make_tensor_value_info(name, elem, list(np.shape(v))))
    return with_value_info(model, infos, dropped=values)


def with_value_info(model, infos: list, dropped=()):
    """A copy of ``model`` whose value_info holds ``infos`` in place of what it had for those tensors (and for
    the names in ``dropped``)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = {vi.name for vi in infos} | set(dropped)
    kept = [vi for vi in m.graph.value_info if vi.name not in names]
    m.graph.ClearField("value_info")
    m.graph.value_info.extend(kept + list(infos))
    return m


def with_input_shapes(model, shapes: dict[str, list[int | None]], field: str = "input"):
    """A copy of ``model`` whose graph inputs have the given shapes; stale inferred shapes of intermediate
    values and outputs are dropped so shape inference derives them again."""
    if not shapes:
        return model
    feeds = {vi.name: vi for vi in graph_inputs(model)}
    types = dict(getattr(shapes, "types", {}))
    if "" in shapes:  # ovc's unnamed --input "[1,3,224,224]": the model's one input
        if len(feeds) != 1:
            raise BridgeError(f"a shape without an input name needs a model with one input; this one has "
                              f"{len(feeds)} ({', '.join(clip(n, 40) for n in list(feeds)[:8])})", field=field)
        only = next(iter(feeds))
        shapes, types = {only: shapes[""]}, {only if k == "" else k: v for k, v in types.items()}
    for name, dims in shapes.items():
        vi = feeds.get(name)
        if vi is None:
            known = ", ".join(clip(n, 40) for n in list(feeds)[:8]) or "none"
            raise BridgeError(f"the model has no input {clip(name, 80)!r} (its inputs: {known})", field=field)
        if not vi.type.HasField("tensor_type"):
            raise BridgeError(f"input {clip(name, 80)!r} is not a tensor", field=field)
        _same_type(vi, types.get(name), field)
        if dims is None:
            continue
        old = declared_shape(vi)
        if old is not None and len(old) != len(dims):
            raise BridgeError(f"input {clip(name, 80)!r} has rank {len(old)}; {len(dims)} dimensions given",
                              field=field)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    texts = getattr(shapes, "text", {})
    for vi in m.graph.input:
        if shapes.get(vi.name) is None:
            continue
        shape = vi.type.tensor_type.shape
        old = declared_shape(vi)
        named = _bound_names(texts.get(vi.name))
        shape.ClearField("dim")
        for i, d in enumerate(shapes[vi.name]):
            dim = shape.dim.add()
            if d is not None:
                dim.dim_value = d
            elif i < len(named) and named[i] is not None:
                dim.dim_param = named[i]
            elif old is not None and isinstance(old[i], str):
                dim.dim_param = old[i]
            else:
                dim.dim_param = f"{vi.name}_{i}"
    del m.graph.value_info[:]
    for o in m.graph.output:
        if o.type.HasField("tensor_type") and o.type.tensor_type.HasField("shape"):
            for d in o.type.tensor_type.shape.dim:
                if d.HasField("dim_value"):
                    d.ClearField("dim_value")
    return m


def _same_type(vi, given: str | None, field: str) -> None:
    """ovc's ``{type}`` converts an input; here the model is converted as it is, so a type other than the
    input's own is refused (the user may have expected a cast)."""
    if given is None:
        return
    own = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type).name \
        if vi.type.tensor_type.elem_type != onnx.TensorProto.BFLOAT16 else "bfloat16"
    if own != given:
        short = {v: k for k, v in OVC_TYPES.items()}
        raise BridgeError(f"input {clip(vi.name, 80)!r} is {short.get(own, own)} in the model, not "
                          f"{short.get(given, given)}; resample-bridge converts inputs as the model declares them "
                          f"(cast in the model, or drop {{{short.get(given, given)}}})", field=field)
