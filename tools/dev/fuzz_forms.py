"""Fuzz family "forms": the ways exporters write a Resize's inputs (issue 9 item 2), each meaning the same as
the plain form.
"""

from __future__ import annotations

import random

import numpy as np

from .fuzz_cases import Case, const_init, const_node, data, elem, fmt_floats, make_model, out_vi, random_shape, vi




def _empty(rng, name, nodes, inits, opset) -> str:
    """An empty float tensor ("absent") in one of the spellings exporters use; returns the tensor name."""
    from onnx import AttributeProto, TensorProto, helper
    style = rng.choice(["init", "const", "value_floats", "identity", "cast"])
    if style == "value_floats" and opset < 12:  # Constant's value_* attributes arrived in opset 12
        style = "const"
    empty = np.zeros((0,), np.float32)
    if style == "init":
        inits.append(const_init(name, empty))
    elif style == "const":
        nodes.append(const_node(name, empty))
    elif style == "value_floats":
        node = helper.make_node("Constant", [], [name], name="")
        node.attribute.append(helper.make_attribute("value_floats", [], attr_type=AttributeProto.FLOATS))
        nodes.append(node)
    elif style == "identity":
        inits.append(const_init(name + "_src", empty))
        nodes.append(helper.make_node("Identity", [name + "_src"], [name], name=""))
    else:
        nodes.append(const_node(name + "_src", np.zeros((0,), np.float64)))
        nodes.append(helper.make_node("Cast", [name + "_src"], [name], to=TensorProto.FLOAT, name=""))
    return name


def _shape_chain_sizes(rng, shape, sizes, nodes, opset, fed: dict) -> str:
    """sizes computed as PyTorch writes F.interpolate(size=...): the lengths kept are read from Shape(X)
    (Slice or Gather + Unsqueeze), the others are constants, joined by Concat (sometimes through Cast), or a
    graph input (a preprocessing graph resizing to the size it is given: ``fed`` gets {name: value})."""
    from onnx import TensorProto, helper
    nodes.append(helper.make_node("Shape", ["X"], ["x_shape"], name=""))
    parts = []
    keep = 0
    while keep < len(shape) and sizes[keep] == shape[keep]:
        keep += 1
    keep = min(keep, len(shape) - 1)
    if keep:
        if rng.random() < 0.5:
            nodes.append(const_node("sl_start", np.array([0], np.int64)))
            nodes.append(const_node("sl_end", np.array([keep], np.int64)))
            nodes.append(helper.make_node("Slice", ["x_shape", "sl_start", "sl_end"], ["lead"], name=""))
            parts.append("lead")
        else:
            for i in range(keep):
                nodes.append(const_node(f"gi{i}", np.array(i, np.int64)))
                nodes.append(helper.make_node("Gather", ["x_shape", f"gi{i}"], [f"g{i}"], axis=0, name=""))
                if opset >= 13:
                    nodes.append(const_node(f"ua{i}", np.array([0], np.int64)))
                    nodes.append(helper.make_node("Unsqueeze", [f"g{i}", f"ua{i}"], [f"u{i}"], name=""))
                else:  # axes an attribute before opset 13
                    nodes.append(helper.make_node("Unsqueeze", [f"g{i}"], [f"u{i}"], axes=[0], name=""))
                parts.append(f"u{i}")
    tail = np.array(sizes[keep:], np.int64)
    if rng.random() < 0.25:
        fed["tail"] = tail
    elif rng.random() < 0.3:
        nodes.append(const_node("tail_f", tail.astype(np.float32)))
        nodes.append(helper.make_node("Cast", ["tail_f"], ["tail"], to=TensorProto.INT64, name=""))
    else:
        nodes.append(const_node("tail", tail))
    parts.append("tail")
    nodes.append(helper.make_node("Concat", parts, ["sizes"], axis=0, name=""))
    return "sizes"


def gen_forms(rng: random.Random) -> Case:
    """A valid Resize whose roi / scales / sizes come in an exporter's spelling, sometimes unnamed."""
    from onnx import TensorProto, helper
    opset = rng.choice([11, 12, 13, 13, 17, 18, 19])
    rank = rng.choice([3, 4, 4, 5])
    shape = random_shape(rng, rank)
    dtype = rng.choice(["float32", "float32", "float32", "uint8"])
    mode = rng.choice(["nearest", "linear", "cubic"]) if rank == 4 else rng.choice(["nearest", "linear"])
    coord = rng.choice(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if mode == "nearest":
        attrs["nearest_mode"] = rng.choice(["floor", "round_prefer_floor", "round_prefer_ceil"])
    nodes, inits, fed = [], [], {}
    use_sizes = rng.random() < 0.6
    roi = _empty(rng, "roi", nodes, inits, opset) if opset < 13 or rng.random() < 0.5 else ""
    if use_sizes:
        sizes = shape[:2] + [rng.choice([n, 2 * n, n + 3, max(1, n // 2)]) for n in shape[2:]]
        scales = _empty(rng, "scales", nodes, inits, opset) if roi or opset < 13 or rng.random() < 0.5 else ""
        if rng.random() < 0.5:
            param = _shape_chain_sizes(rng, shape, sizes, nodes, opset, fed)
            how = "sizes from Shape(X)" + (" and a graph input" if fed else "")
        elif opset < 12:
            param, how = "sizes", "sizes as a Constant"
            nodes.append(const_node("sizes", np.array(sizes, np.int64)))
        else:
            param = "sizes"
            nodes.append(helper.make_node("Constant", [], ["sizes"], value_ints=sizes, name=""))
            how = "sizes as value_ints"
        ins = ["X", roi, scales, param]
        what = f"sizes {sizes}"
    else:
        sc = [1.0, 1.0] + [rng.choice([2.0, 0.5, 1.5, 3.0, 0.75]) for _ in shape[2:]]
        style = rng.choice(["value_floats", "identity", "cast"] if opset >= 12 else ["identity", "cast"])
        if style == "value_floats":
            nodes.append(helper.make_node("Constant", [], ["scales"], value_floats=sc, name=""))
        elif style == "identity":
            inits.append(const_init("scales_src", np.array(sc, np.float32)))
            nodes.append(helper.make_node("Identity", ["scales_src"], ["scales"], name=""))
        else:
            nodes.append(const_node("scales_src", np.array(sc, np.float64)))
            nodes.append(helper.make_node("Cast", ["scales_src"], ["scales"], to=TensorProto.FLOAT, name=""))
        ins = ["X", roi, "scales"]
        how, what = f"scales as {style}", f"scales {fmt_floats(sc)}"
    name = rng.choice(["", "resize"])
    nodes.append(helper.make_node("Resize", ins, ["Y"], name=name, **attrs))
    inputs = [vi("X", elem(dtype), shape)] + [vi(k, TensorProto.INT64, list(v.shape)) for k, v in fed.items()]
    model = make_model(nodes, inputs, [out_vi("Y", elem(dtype), rank)], inits, opset=opset)
    probes = [{"X": data(rng, shape, dtype), **fed}, {"X": data(rng, shape, dtype, "halves"), **fed}]
    desc = (f"forms: Resize opset {opset} {dtype} X{shape} {mode} {coord} {what}, {how}, roi "
            f"{'empty' if roi else 'omitted'}{', scales empty' if use_sizes and scales else ''}"
            f"{', unnamed node' if not name else ''}")
    return Case("forms", desc, model=model, feeds=probes)
