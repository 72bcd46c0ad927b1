"""Generators of valid random models: Resize/Upsample, GridSample, DeformConv (and, from fuzz_forms.py, a
Resize's inputs in the spellings exporters write).

Every model produced here is valid under the ONNX specification of its opset (attributes of that version
only, inputs in the forms exporters write them), so the only good outcomes are "converted and equal to the
oracle" or "refused in one clean line".
"""

from __future__ import annotations

import random

import numpy as np

from .fuzz_cases import (Case, const_init, const_node, data, elem, f32, fmt_floats, grid_values, make_model, out_vi,
                         random_shape, vi)
from .fuzz_forms import gen_forms  # the exporters' spellings of a valid Resize, one family of this set

RESIZE_OPSETS = (10, 11, 12, 13, 17, 18, 19, 20, 21)
DTYPES = ("float32", "float32", "float32", "float16", "uint8", "int8", "int32")
SPATIAL_SCALES = (1.0, 2.0, 3.0, 0.5, 0.25, 1.5, 0.75, 0.63, 1.7, 4 / 3, 2 / 3, 0.6, 0.35, 2.5)


def _version(opset: int) -> int:
    return max(v for v in (10, 11, 13, 18, 19) if v <= opset)


def _scale_for(rng: random.Random, axis: int, rank: int) -> float:
    if rank >= 3 and axis < 2 and rng.random() < 0.9:
        return 1.0                      # N and C: resized now and then (OpenVINO only resizes spatial axes)
    if rng.random() < 0.03:
        return 1e-30                    # a zero-length output axis
    if rng.random() < 0.15:
        return rng.uniform(0.3, 3.0)
    return rng.choice(SPATIAL_SCALES)


def _size_for(rng: random.Random, length: int, axis: int, rank: int) -> int:
    if rank >= 3 and axis < 2 and rng.random() < 0.9:
        return length
    if rng.random() < 0.03:
        return 0
    return rng.choice([length, length, 2 * length, length + 1, max(1, length - 1), rng.randint(1, 2 * length + 1)])


def _param(rng, name, arr, inits, nodes, inputs, feeds_main, form=None):
    """Put a parameter tensor in the model as an initializer, a Constant node or a graph input (run time)."""
    form = form or rng.choice(["init", "init", "init", "const", "runtime"])
    arr = np.asarray(arr)
    if form == "init":
        inits.append(const_init(name, arr))
    elif form == "const":
        nodes.append(const_node(name, arr))
    else:
        inputs.append(vi(name, elem(arr.dtype), list(arr.shape)))
        feeds_main[name] = arr
    return form


def gen_resize(rng: random.Random) -> Case:
    if rng.random() < 0.1:
        return gen_upsample(rng)
    opset = rng.choice(RESIZE_OPSETS)
    ver = _version(opset)
    rank = rng.choice([2, 3, 4, 4, 4, 5])
    shape = random_shape(rng, rank)
    dtype = rng.choice(DTYPES)
    attrs: dict = {}
    modes = ["nearest", "linear"] + (["cubic"] if ver >= 11 else [])
    mode = rng.choice(modes)
    attrs["mode"] = mode
    coord = "asymmetric"
    if ver >= 11:
        coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"]
        coords += ["tf_half_pixel_for_nn"] if ver == 11 else []
        coords += ["half_pixel_symmetric"] if ver >= 19 else []
        coord = rng.choice(coords)
        if coord != "half_pixel" or rng.random() < 0.5:
            attrs["coordinate_transformation_mode"] = coord
        if mode == "nearest" and rng.random() < 0.8:
            attrs["nearest_mode"] = rng.choice(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
        if mode == "cubic" and rng.random() < 0.7:
            attrs["cubic_coeff_a"] = rng.choice([-0.75, -0.5, f32(rng.uniform(-1.0, -0.1))])
        if rng.random() < 0.3:
            attrs["exclude_outside"] = 1
        if coord == "tf_crop_and_resize" and rng.random() < 0.7:
            attrs["extrapolation_value"] = rng.choice([0.0, -1.0, 10.5, f32(rng.uniform(-5, 5))])
    axes = list(range(rank))
    if ver >= 18:
        if mode != "nearest" and rng.random() < 0.4 or rng.random() < 0.05:
            attrs["antialias"] = 1
        if rng.random() < 0.3:
            k = rng.randint(1, rank)
            axes = rng.sample(range(rank), k)
            if rng.random() < 0.5:
                axes.sort()
            attrs["axes"] = [a - rank if rng.random() < 0.3 else a for a in axes]
    use_sizes = ver >= 11 and rng.random() < 0.45
    policy = "stretch"
    if use_sizes and ver >= 18 and rng.random() < 0.3:
        policy = rng.choice(["stretch", "not_larger", "not_smaller"])
        attrs["keep_aspect_ratio_policy"] = policy
    identity = rng.random() < 0.08
    if use_sizes:
        sizes = [shape[a] if identity else _size_for(rng, shape[a], a, rank) for a in axes]
        scales = None
    else:
        scales = [1.0 if identity else _scale_for(rng, a, rank) for a in axes]
        sizes = None

    # Now and then X has symbolic lengths (dynamic shapes: the extension's rung).
    dynamic = rng.random() < 0.08
    xdims = [f"d{i}" if dynamic and rng.random() < 0.7 else n for i, n in enumerate(shape)]
    nodes, inits, inputs, feeds = [], [], [vi("X", elem(dtype), xdims)], {}
    ins = ["X"]
    roi = None
    if coord == "tf_crop_and_resize":
        starts = [rng.choice([0.0, 0.1, -0.2, 0.25, f32(rng.uniform(-0.3, 0.5))]) for _ in axes]
        ends = [rng.choice([1.0, 0.9, 1.2, 0.75, f32(rng.uniform(0.55, 1.3))]) for _ in axes]
        roi = np.array(starts + ends, np.float32)
    forms = {}
    if ver == 10:
        forms["scales"] = _param(rng, "scales", np.array(scales, np.float32), inits, nodes, inputs, feeds)
        ins.append("scales")
    else:
        empty_style = rng.choice(["omit", "init", "const"]) if ver >= 13 else rng.choice(["init", "const"])
        # roi: omitted, or the empty tensor PyTorch writes at opsets 11-13, or real values.

        def optional(name, value):
            """``name`` given (a form of its own), as the empty tensor, or left out (``empty_style``)."""
            if value is not None:
                forms[name] = _param(rng, name, np.array(value, np.float32), inits, nodes, inputs, feeds)
            elif empty_style != "omit":
                _param(rng, name, np.zeros((0,), np.float32), inits, nodes, inputs, feeds,
                       "init" if empty_style == "init" else "const")
            ins.append("" if value is None and empty_style == "omit" else name)

        optional("roi", roi)
        optional("scales", scales)
        if scales is None:
            forms["sizes"] = _param(rng, "sizes", np.array(sizes, np.int64), inits, nodes, inputs, feeds)
            ins.append("sizes")
    while ins and ins[-1] == "":
        ins.pop()
    from onnx import helper
    nodes.append(helper.make_node("Resize", ins, ["Y"], name="resize", **attrs))
    model = make_model(nodes, inputs, [out_vi("Y", elem(dtype), rank)], inits, opset=opset)
    probes = [dict(feeds, X=data(rng, shape, dtype)), dict(feeds, X=data(rng, shape, dtype, "boundary"))]
    # A run-time scales/sizes input also gets other values: a conversion exact only for the values it was
    # probed with is wrong here.
    runtime = "runtime" in forms.values()
    if runtime:
        alt = dict(probes[0])
        if forms.get("scales") == "runtime":
            alt["scales"] = np.array([_scale_for(rng, a, rank) if a >= 2 or rank < 3 else 1.0 for a in axes],
                                     np.float32)
            alt["scales"] = np.maximum(alt["scales"], np.float32(0.25))
        if forms.get("sizes") == "runtime":
            alt["sizes"] = np.array([max(1, _size_for(rng, shape[a], a, rank)) for a in axes], np.int64)
        if forms.get("roi") == "runtime":
            alt["roi"] = np.array([0.0] * len(axes) + [1.0] * len(axes), np.float32)
        probes.append(alt)
    desc = (f"Resize opset {opset} {dtype} rank {rank} X{xdims if dynamic else shape} {mode} {coord}"
            f"{' scales ' + fmt_floats(scales) if scales else ' sizes ' + str(sizes)}"
            f"{' axes ' + str(attrs['axes']) if 'axes' in attrs else ''}"
            f"{' antialias' if attrs.get('antialias') else ''}"
            f"{' exclude_outside' if attrs.get('exclude_outside') else ''}"
            f"{' ' + policy if policy != 'stretch' else ''}"
            f"{' nearest ' + attrs['nearest_mode'] if 'nearest_mode' in attrs else ''}"
            f"{' a=' + str(attrs['cubic_coeff_a']) if 'cubic_coeff_a' in attrs else ''}"
            f"{' roi ' + fmt_floats(roi.tolist()) if roi is not None else ''}"
            f"{' [run-time ' + ','.join(k for k, v in forms.items() if v == 'runtime') + ']' if runtime else ''}")
    return Case("resize", desc, model=model, feeds=probes)


def gen_upsample(rng: random.Random) -> Case:
    opset = rng.choice([7, 8, 9])
    rank = rng.choice([3, 4, 4])
    shape = random_shape(rng, rank)
    dtype = rng.choice(["float32", "float32", "uint8", "int32"])
    mode = rng.choice(["nearest", "linear"])
    scales = [1.0] * 2 + [rng.choice([1.0, 2.0, 3.0, 1.5, 2.5]) for _ in range(rank - 2)]
    from onnx import helper
    nodes, inits, inputs, feeds = [], [], [vi("X", elem(dtype), shape)], {}
    if opset < 9:
        nodes.append(helper.make_node("Upsample", ["X"], ["Y"], name="upsample", mode=mode, scales=scales))
    else:
        _param(rng, "scales", np.array(scales, np.float32), inits, nodes, inputs, feeds,
               rng.choice(["init", "const"]))
        nodes.append(helper.make_node("Upsample", ["X", "scales"], ["Y"], name="upsample", mode=mode))
    model = make_model(nodes, inputs, [out_vi("Y", elem(dtype), rank)], inits, opset=opset)
    probes = [dict(feeds, X=data(rng, shape, dtype)), dict(feeds, X=data(rng, shape, dtype, "boundary"))]
    return Case("resize", f"Upsample opset {opset} {dtype} X{shape} {mode} scales {fmt_floats(scales)}", model=model,
                feeds=probes)


def gen_gridsample(rng: random.Random) -> Case:
    opset = rng.choice([16, 20, 22])
    r = 2 if opset == 16 else rng.choice([1, 2, 2, 3])
    modes = ["bilinear", "nearest", "bicubic"] if opset == 16 else ["linear", "nearest", "cubic"]
    mode = rng.choice(modes + [modes[1]])
    padding = rng.choice(["zeros", "border", "reflection"])
    align = rng.choice([0, 1])
    dtype = rng.choice(["float32"] * 6 + ["float16", "float64"] + (["int32", "uint8"] if opset >= 20 else []))
    gdt = dtype if dtype in ("float16", "float64") else "float32"
    n = rng.choice([1, 1, 2])
    xs = [n, rng.choice([1, 2, 3])] + [rng.randint(1, 7 if r < 3 else 4) for _ in range(r)]
    outs = [rng.randint(1, 5 if r < 3 else 3) for _ in range(r)]
    gshape = [n] + outs + [r]
    grid = np.zeros(gshape, np.dtype(gdt))
    for j in range(r):                      # grid[..., j] addresses spatial axis r-1-j (x is innermost)
        length = xs[2 + r - 1 - j]
        grid[..., j] = grid_values(rng, int(np.prod(gshape[:-1])), length, bool(align), gdt).reshape(gshape[:-1])
    from onnx import helper
    attrs = {}
    if mode != modes[0] or rng.random() < 0.5:
        attrs["mode"] = mode
    if padding != "zeros" or rng.random() < 0.5:
        attrs["padding_mode"] = padding
    if align or rng.random() < 0.5:
        attrs["align_corners"] = align
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gridsample", **attrs)
    inputs = [vi("X", elem(dtype), xs), vi("grid", elem(gdt), gshape)]
    model = make_model([node], inputs, [out_vi("Y", elem(dtype), r + 2)], opset=opset)
    grid2 = grid.copy()
    flat = grid2.reshape(-1)
    flat[:] = np.random.default_rng(rng.getrandbits(32)).uniform(-1.1, 1.1, flat.size).astype(gdt)
    probes = [{"X": data(rng, xs, dtype), "grid": grid}, {"X": data(rng, xs, dtype), "grid": grid2}]
    desc = f"GridSample opset {opset} {dtype} X{xs} grid{gshape} {mode} {padding} align_corners={align}"
    return Case("gridsample", desc, model=model, feeds=probes)


def gen_deformconv(rng: random.Random) -> Case:
    opset = rng.choice([19, 22])
    r = rng.choice([2, 2, 2, 1, 3])
    dtype = rng.choice(["float32"] * 5 + ["float16"])
    g = rng.choice([1, 1, 2])
    og = rng.choice([1, 1, 2])
    c = g * og * rng.choice([1, 2]) if g != og else g * rng.choice([1, 2])
    oc = g * rng.choice([1, 2])
    n = rng.choice([1, 1, 2])
    k = [rng.randint(1, 3) for _ in range(r)]
    st = [rng.choice([1, 1, 2]) for _ in range(r)]
    dil = [rng.choice([1, 1, 2]) for _ in range(r)]
    pads = [rng.choice([0, 0, 1, 2]) for _ in range(2 * r)]
    xs, out = [n, c], []
    for d in range(r):
        span = dil[d] * (k[d] - 1) + 1
        length = max(1, span - pads[d] - pads[r + d] + rng.randint(0, 5 if r < 3 else 3))
        xs.append(length)
        out.append((length + pads[d] + pads[r + d] - span) // st[d] + 1)
    kk = int(np.prod(k))
    has_b, has_m = rng.random() < 0.5, rng.random() < 0.5
    from onnx import helper
    attrs = {"kernel_shape": k} if rng.random() < 0.6 else {}
    if st != [1] * r or rng.random() < 0.3:
        attrs["strides"] = st
    if dil != [1] * r or rng.random() < 0.3:
        attrs["dilations"] = dil
    if pads != [0] * (2 * r) or rng.random() < 0.3:
        attrs["pads"] = pads
    if g != 1 or rng.random() < 0.3:
        attrs["group"] = g
    if og != 1 or rng.random() < 0.3:
        attrs["offset_group"] = og
    nrng = np.random.default_rng(rng.getrandbits(32))
    npd = np.dtype(dtype)
    w = nrng.standard_normal([oc, c // g] + k).astype(npd)
    off = nrng.standard_normal([n, og * kk * r] + out) * 1.5
    pick = nrng.random(off.shape)
    off = np.where(pick < 0.15, np.round(off), np.where(pick < 0.3, np.round(off) + 0.5, off))
    off = np.where(nrng.random(off.shape) < 0.03, 9.0 * np.sign(off), off).astype(npd)
    inputs = [vi("X", elem(dtype), xs), vi("offset", elem(dtype), list(off.shape))]
    inits, ins, feeds = [], ["X", "W", "offset"], {"X": data(rng, xs, dtype, "normal"), "offset": off}
    if rng.random() < 0.5:
        inits.append(const_init("W", w))
    else:
        inputs.append(vi("W", elem(dtype), list(w.shape)))
        feeds["W"] = w
    if has_b:
        b = nrng.standard_normal(oc).astype(npd)
        ins.append("B")
        if rng.random() < 0.5:
            inits.append(const_init("B", b))
        else:
            inputs.append(vi("B", elem(dtype), [oc]))
            feeds["B"] = b
    if has_m:
        ins += [""] if not has_b else []
        ins.append("mask")
        inputs.append(vi("mask", elem(dtype), [n, og * kk] + out))
        feeds["mask"] = nrng.uniform(0, 1, [n, og * kk] + out).astype(npd)
    node = helper.make_node("DeformConv", ins, ["Y"], name="deformconv", **attrs)
    model = make_model([node], inputs, [out_vi("Y", elem(dtype), r + 2)], inits, opset=opset)
    feeds2 = dict(feeds, X=data(rng, xs, dtype, "normal"))
    desc = (f"DeformConv opset {opset} {dtype} X{xs} W{list(w.shape)} group {g} offset_group {og} strides {st} "
            f"pads {pads} dilations {dil}{' bias' if has_b else ''}{' mask' if has_m else ''}")
    return Case("deformconv", desc, model=model, feeds=[feeds, feeds2])


GENERATORS = {"resize": gen_resize, "gridsample": gen_gridsample, "deformconv": gen_deformconv, "forms": gen_forms}

__all__ = ["GENERATORS", "gen_resize", "gen_gridsample", "gen_deformconv", "gen_forms"]
