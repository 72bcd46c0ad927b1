"""Generators of invalid models and of hostile files.

invalid: models that onnxruntime or ``onnx.checker`` (full_check) refuse, or that break a rule of the ONNX
specification (NaN cubic_coeff_a, a cycle, a tensor claiming more data than it has). The only good outcome is
exit status 2 with one clean line naming the node and the field.

hostile: what a user's disk can hand the CLI: FIFOs, devices, directories, truncated or foreign protobufs,
control characters / ANSI escapes / U+202E / 1 MB strings in names and attributes and file names, external
data outside the model's folder. Output-path faults live in ``fuzz_paths.py``.
"""

from __future__ import annotations

import os
import random

import numpy as np

from .fuzz_cases import Case, const_init, make_model, out_vi, vi

F = 1  # TensorProto.FLOAT


def _node(op, ins, **attrs):
    from onnx import helper
    return helper.make_node(op, ins, ["Y"], name=f"{op.lower()}_bad", **attrs)


def resize(opset=19, ins=("X", "", "scales"), attrs=None, scales=(1, 1, 2, 2), sizes=None, roi=None,
           scales_dtype=np.float32, sizes_dtype=np.int64, x=(1, 1, 4, 4)):
    inits = []
    if scales is not None:
        inits.append(const_init("scales", np.array(scales, scales_dtype)))
    if sizes is not None:
        inits.append(const_init("sizes", np.array(sizes, sizes_dtype)))
    if roi is not None:
        inits.append(const_init("roi", np.array(roi, np.float32)))
    return make_model([_node("Resize", list(ins), **(attrs or {}))], [vi("X", F, list(x))],
                      [out_vi("Y", F, len(x))], inits, opset=opset)


def gridsample(opset=20, attrs=None, x=(1, 1, 4, 4), g=(1, 3, 3, 2), ins=("X", "grid"), grid_elem=F):
    inputs = [vi("X", F, list(x)), vi("grid", grid_elem, list(g))]
    return make_model([_node("GridSample", list(ins), **(attrs or {}))], inputs[:len(ins)],
                      [out_vi("Y", F, len(x))], opset=opset)


def deformconv(opset=19, attrs=None, x=(1, 2, 5, 5), w=(2, 2, 2, 2), off=(1, 8, 4, 4), b=None, mask=None,
               x_elem=F, extra_inputs=0):
    inputs = [vi("X", x_elem, list(x)), vi("offset", F, list(off))]
    inits = [const_init("W", np.ones(w, np.float32))]
    ins = ["X", "W", "offset"]
    if b is not None or mask is not None or extra_inputs:
        ins.append("B" if b is not None else "")
        if b is not None:
            inits.append(const_init("B", np.ones(b, np.float32)))
    if mask is not None or extra_inputs:
        ins.append("mask")
        inputs.append(vi("mask", F, list(mask or (1, 4, 4, 4))))
    for i in range(extra_inputs):
        ins.append(f"extra{i}")
        inputs.append(vi(f"extra{i}", F, [1]))
    attrs = dict({"kernel_shape": list(w[2:])}, **(attrs or {}))
    return make_model([_node("DeformConv", ins, **attrs)], inputs, [out_vi("Y", F, len(x))], inits, opset=opset)


def _invalid(label, model, need_node=True):
    return Case("invalid", label, kind="invalid", model=model, need_node=need_node)


def gen_invalid(rng: random.Random) -> Case:
    nan, inf = float("nan"), float("inf")
    choices = [
        lambda: _invalid("Resize unknown attribute",
                         resize(attrs={rng.choice(["foo", "Mode", "scale", "antialiasing"]): 1})),
        lambda: _invalid("GridSample unknown attribute", gridsample(attrs={"align_corner": 1})),
        lambda: _invalid("DeformConv unknown attribute", deformconv(attrs={"bias": 1})),
        lambda: _invalid("antialias in opset 13", resize(13, attrs={"antialias": 1, "mode": "linear"})),
        lambda: _invalid("axes in opset 11", resize(11, ("X", "roi", "scales"), {"axes": [2, 3]}, (2, 2), roi=[])),
        lambda: _invalid("keep_aspect_ratio_policy in opset 13",
                         resize(13, ("X", "", "", "sizes"), {"keep_aspect_ratio_policy": "not_larger"}, None,
                                (1, 1, 8, 8))),
        lambda: _invalid("coordinate_transformation_mode in Resize-10",
                         resize(10, ("X", "scales"), {"coordinate_transformation_mode": "half_pixel"})),
        lambda: _invalid("Resize with 5 inputs", resize(ins=("X", "", "scales", "", "scales"))),
        lambda: _invalid("Resize-10 without scales", resize(10, ("X",), scales=None)),
        lambda: _invalid("Resize-11 without roi/scales", resize(11, ("X",), scales=None)),
        lambda: _invalid("GridSample with 1 input", gridsample(ins=("X",))),
        lambda: _invalid("DeformConv with 6 inputs", deformconv(extra_inputs=1, b=(2,))),
        lambda: _invalid("int64 scales", resize(scales_dtype=np.int64)),
        lambda: _invalid("float sizes", resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 1, 8, 8),
                                               sizes_dtype=np.float32)),
        lambda: _invalid("int32 grid", gridsample(grid_elem=6)),
        lambda: _invalid("int32 DeformConv input", deformconv(x_elem=6)),
        lambda: _invalid("scales of the wrong length", resize(scales=rng.choice([(1, 2, 2), (1, 1, 2, 2, 2)]))),
        lambda: _invalid("sizes of the wrong length", resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 8, 8))),
        lambda: _invalid("roi of the wrong length",
                         resize(ins=("X", "roi", "scales"), roi=[0, 0, 1, 1],
                                attrs={"coordinate_transformation_mode": "tf_crop_and_resize"})),
        lambda: _invalid("axes and scales of different lengths", resize(attrs={"axes": [2, 3]}, scales=(2, 2, 2))),
        lambda: _invalid("both scales and sizes", resize(ins=("X", "", "scales", "sizes"), sizes=(1, 1, 8, 8))),
        lambda: _invalid("neither scales nor sizes", resize(13, ("X",), scales=None)),
        lambda: _invalid(f"cubic_coeff_a {rng.choice(['nan', 'inf', '-inf'])}",
                         resize(attrs={"mode": "cubic", "cubic_coeff_a": rng.choice([nan, inf, -inf])})),
        lambda: _invalid("cubic_coeff_a given as a string", resize(attrs={"mode": "cubic", "cubic_coeff_a": "-0.75"})),
        lambda: _invalid("unknown mode", resize(attrs={"mode": rng.choice(["bogus", "bilinear", "Linear"])})),
        lambda: _invalid("unknown coordinate_transformation_mode",
                         resize(attrs={"coordinate_transformation_mode": "half_pixels"})),
        lambda: _invalid("unknown nearest_mode", resize(attrs={"nearest_mode": "round"})),
        lambda: _invalid("unknown keep_aspect_ratio_policy",
                         resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 1, 8, 8),
                                attrs={"keep_aspect_ratio_policy": "fit"})),
        lambda: _invalid("unknown padding_mode", gridsample(attrs={"padding_mode": "edge"})),
        # Outside GridSample-16's 4-D definition, yet onnx.checker and onnxruntime both take it: no verdict.
        lambda: Case("invalid", "GridSample-16 on a 5-D input", kind="any",
                     model=gridsample(16, x=(1, 1, 3, 4, 4), g=(1, 2, 2, 2, 3))),
        lambda: _invalid(f"scale {rng.choice(['-2', '0', 'nan', 'inf'])}",
                         resize(scales=(1, 1, rng.choice([-2.0, 0.0, nan, inf]), 2))),
        lambda: _invalid("negative size", resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 1, -8, 8))),
        lambda: _invalid("axes out of range", resize(attrs={"axes": [2, 4]}, scales=(2, 2))),
        lambda: _invalid("repeated axes", resize(attrs={"axes": [2, -2]}, scales=(2, 2))),
        lambda: _invalid("Upsample in opset 10",
                         make_model([_node("Upsample", ["X", "scales"])], [vi("X", F, [1, 1, 4, 4])],
                                    [out_vi("Y", F, 4)], [const_init("scales", np.array([1, 1, 2, 2], np.float32))],
                                    opset=rng.choice([10, 11, 13]))),
        lambda: _invalid("DeformConv bias of the wrong length", deformconv(b=(3,))),
        lambda: _invalid("DeformConv group does not divide C", deformconv(attrs={"group": 3}, x=(1, 4, 5, 5))),
        lambda: _invalid("DeformConv group 0", deformconv(attrs={"group": 0})),
        lambda: _invalid("DeformConv stride 0", deformconv(attrs={"strides": [0, 1]})),
        lambda: _invalid("DeformConv pads of the wrong length", deformconv(attrs={"pads": [1, 1, 1]})),
        lambda: _invalid("DeformConv kernel_shape does not match W", deformconv(attrs={"kernel_shape": [3, 3]})),
        lambda: _invalid("DeformConv offset with the wrong channels", deformconv(off=(1, 6, 4, 4))),
        lambda: _invalid("DeformConv mask with the wrong channels", deformconv(mask=(1, 3, 4, 4))),
        lambda: _invalid("cyclic graph", _cycle(rng)),
        lambda: _invalid("graph without nodes whose output nothing computes",
                         make_model([], [vi("X", F, [1, 1, 4, 4])], [out_vi("Y", F, 4)]), need_node=False),
        lambda: Case("invalid", "graph without nodes (output = input)", kind="any",
                     model=make_model([], [vi("X", F, [1, 1, 4, 4])], [vi("X", F, [1, 1, 4, 4])])),
        lambda: _invalid("huge claimed initializer", _huge(rng), need_node=False),
        lambda: Case("invalid", "2^30-element input (verify must not allocate it blindly)", kind="any",
                     model=resize(x=(1, 1, 16384, 65536), scales=(1, 1, 0.5, 0.5)), need_node=False,
                     verbs=["inspect", "convert-ov", "verify-ov", "check-trt"]),
    ]
    # One draw in eight from the graph-level and cross-input rules (kept apart so older seeds' draws from the
    # list above stay as they were).
    if rng.random() < 0.125:
        return rng.choice(_more_invalid(rng))()
    return rng.choice(choices)()


def _more_invalid(rng):
    """Graph-level faults (as onnx.checker and onnxruntime see them) and rules across a node's inputs."""
    from onnx import TensorProto, helper
    x = vi("X", F, [1, 1, 4, 4])
    scales = const_init("scales", np.array([1, 1, 2, 2], np.float32))
    ok = _node("Resize", ["X", "", "scales"])
    return [
        lambda: _invalid("input nothing defines", make_model([_node("Resize", ["X", "", "nowhere"])], [x],
                                                             [out_vi("Y", F, 4)])),
        lambda: _invalid("tensor assigned twice", make_model(
            [helper.make_node("Relu", ["X"], ["Y"], name="first"),
             helper.make_node("Relu", ["X"], ["Y"], name="twice")],
            [x], [out_vi("Y", F, 4)])),
        lambda: _invalid("unknown attribute on a neighbour op", make_model(
            [helper.make_node("Relu", ["X"], ["R"], name="relu_bad", alpha=1.0),
             _node("Resize", ["R", "", "scales"])], [x], [out_vi("Y", F, 4)], [scales])),
        lambda: _invalid("unknown op in the default domain", make_model(
            [helper.make_node("Frobnicate", ["X"], ["R"], name="frob"), _node("Resize", ["R", "", "scales"])],
            [x], [out_vi("Y", F, 4)], [scales])),
        lambda: _invalid("declared output type the op cannot compute",
                         make_model([ok], [x], [out_vi("Y", TensorProto.INT64, 4)], [scales])),
        lambda: _invalid("initializer shorter than its dims", make_model([ok], [x], [out_vi("Y", F, 4)],
                                                                         [_short_tensor()]), need_node=False),
        lambda: _invalid("IR version from the future", make_model([ok], [x], [out_vi("Y", F, 4)], [scales],
                                                                  ir_version=rng.choice([99, 1000])), need_node=False),
        lambda: _invalid("opset from the future", make_model([ok], [x], [out_vi("Y", F, 4)], [scales], opset=99),
                         need_node=False),
        lambda: _invalid("scalar scales", make_model([_node("Resize", ["X", "", "s0"])], [x], [out_vi("Y", F, 4)],
                                                     [const_init("s0", np.array(2, np.float32))])),
        lambda: _invalid("Upsample scale below 1", make_model(
            [_node("Upsample", ["X", "scales"])], [x], [out_vi("Y", F, 4)],
            [const_init("scales", np.array([1, 1, 0.5, 2], np.float32))], opset=9)),
        lambda: _invalid("DeformConv W of the wrong rank", deformconv(w=(2, 2, 2))),
        lambda: _invalid("DeformConv offset of the wrong spatial size", deformconv(off=(1, 8, 3, 3))),
        lambda: _invalid("DeformConv offset of the wrong batch", deformconv(off=(2, 8, 4, 4))),
        lambda: _invalid("GridSample grid of another batch", gridsample(g=(2, 3, 3, 2))),
        lambda: _invalid("GridSample grid of another rank", gridsample(g=(1, 2, 3, 3, 3))),
        lambda: _invalid("float16 scales", resize(scales_dtype=np.float16)),
        lambda: _invalid("int32 sizes", resize(ins=("X", "", "", "sizes"), scales=None, sizes=(1, 1, 8, 8),
                                               sizes_dtype=np.int32)),
    ]


def _short_tensor():
    from onnx import helper
    t = helper.make_tensor("scales", F, [2], [1.0, 2.0])
    t.dims[0] = 4  # claims 4 values, carries 2
    return t


def _cycle(rng):
    from onnx import helper
    if rng.random() < 0.5:   # a Resize reading its own output
        nodes = [helper.make_node("Resize", ["Y", "", "scales"], ["Y"], name="self_loop")]
    else:                    # Resize -> Relu -> back into the Resize
        nodes = [helper.make_node("Resize", ["Z", "", "scales"], ["Y"], name="loop_resize"),
                 helper.make_node("Relu", ["Y"], ["Z"], name="loop_relu")]
    return make_model(nodes, [vi("X", F, [1, 1, 4, 4])], [out_vi("Y", F, 4)],
                      [const_init("scales", np.array([1, 1, 2, 2], np.float32))])


def _huge(rng):
    from onnx import TensorProto
    m = resize()
    t = m.graph.initializer[0]
    t.ClearField("float_data")
    t.raw_data = b"\0" * 16
    del t.dims[:]
    t.dims.extend(rng.choice([[1 << 28], [1 << 20, 1 << 20], [4]]))  # [4] is right; the others claim GBs
    if list(t.dims) == [4]:
        t.data_type = TensorProto.DOUBLE  # 32 bytes claimed, 16 given
    return m


# ----------------------------------------------------------------------------------------------------------
# hostile files

ESC = "\x1b[2J\x1b[31mred\x07\x08\u202eevil"
MB = "A" * (1 << 20)


def _valid_resize(name="resize", x_name="X", y_name="Y", **attrs):
    from onnx import helper
    node = helper.make_node("Resize", [x_name, "", "scales"], [y_name], name=name, **attrs)
    return make_model([node], [vi(x_name, F, [1, 1, 3, 4])], [out_vi(y_name, F, 4)],
                      [const_init("scales", np.array([1, 1, 2, 2], np.float32))])


def _feeds(x_name="X"):
    return [{x_name: np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)}]


def _hostile(label, kind="invalid", need_node=False, **kw):
    kw.setdefault("verbs", ["inspect", "check-ov", "convert-ov", "verify-ov", "check-trt"])
    return Case("hostile", label, kind=kind, need_node=need_node, **kw)


def _fifo(d):
    os.mkfifo(os.path.join(d, "model.onnx"))
    return "model.onnx"


def _link(target):
    def setup(d):
        os.symlink(target, os.path.join(d, "model.onnx"))
        return "model.onnx"
    return setup


def _mkdir(d):
    os.mkdir(os.path.join(d, "model.onnx"))
    return "model.onnx"


def _file_named(name):
    def setup(d):
        with open(os.path.join(d, name), "wb") as f:
            f.write(_valid_resize().SerializeToString())
        return name
    return setup


def _external(location, write=None, offset=None, length=None, outside=False):
    """scales stored as external data at ``location`` (relative to the model's folder)."""
    def setup(d):
        from onnx import TensorProto
        sub = os.path.join(d, "m")
        os.makedirs(sub, exist_ok=True)
        m = _valid_resize()
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        payload = np.array([1, 1, 2, 2], np.float32).tobytes()
        if write == "outside":
            with open(os.path.join(d, "outside.bin"), "wb") as f:
                f.write(payload)
        elif write == "inside":
            with open(os.path.join(sub, "scales.bin"), "wb") as f:
                f.write(payload)
        elif write == "link":
            with open(os.path.join(d, "outside.bin"), "wb") as f:
                f.write(payload)
            os.symlink(os.path.join(d, "outside.bin"), os.path.join(sub, "scales.bin"))
        with open(os.path.join(sub, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        return os.path.join("m", "model.onnx")
    return setup


def gen_hostile(rng: random.Random) -> Case:
    good = _valid_resize().SerializeToString()
    s = rng.choice([ESC, MB, "name\nwith newline", "\u202etxt.exe", ESC + MB[:5000]])
    short = "MB" if s is MB else repr(s[:24])
    choices = [
        lambda: _hostile("FIFO as the model", setup=_fifo, verbs=["inspect", "convert-ov"], timeout=20),
        lambda: _hostile("/dev/zero as the model", setup=lambda d: "/dev/zero",
                         verbs=["inspect", "check-ov", "convert-ov"], timeout=30),
        lambda: _hostile("symlink to /dev/zero", setup=_link("/dev/zero"), verbs=["inspect", "convert-ov"], timeout=30),
        lambda: _hostile("/dev/null as the model", setup=lambda d: "/dev/null", verbs=["inspect", "convert-ov"]),
        lambda: _hostile("directory as the model", setup=_mkdir),
        lambda: _hostile("missing model file", setup=lambda d: "no_such_model.onnx", verbs=["inspect", "convert-ov"]),
        lambda: _hostile("empty file", raw=b""),
        lambda: _hostile("truncated protobuf", raw=good[:rng.randint(1, len(good) - 1)]),
        lambda: _hostile("random bytes", raw=bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 4000)))),
        lambda: _hostile("a TensorProto, not a ModelProto",
                         raw=const_init("t", np.ones(5, np.float32)).SerializeToString()),
        lambda: _hostile(f"node name {short}", "any", model=_valid_resize(name=s), feeds=_feeds(), verbs=None),
        lambda: _hostile(f"tensor names {short}", "any",   # npz keys are capped at 64 KiB
                         model=_valid_resize(x_name="X" + s[:9000], y_name="Y" + s[:9000]),
                         feeds=_feeds("X" + s[:9000]), verbs=None),
        lambda: _hostile(f"mode attribute {short}", model=_valid_resize(mode=s), need_node=True),
        lambda: _hostile(f"coordinate_transformation_mode {short}",
                         model=_valid_resize(coordinate_transformation_mode=s), need_node=True),
        lambda: _hostile(f"attribute named {short}", model=_valid_resize(**{s: 1}), need_node=True),
        lambda: _hostile(f"model file named {short[:12]}", "any", setup=_file_named("m" + s[:40] + ".onnx"),
                         feeds=_feeds(), verbs=None),
        lambda: _hostile("output path with control characters", "any", model=_valid_resize(), feeds=_feeds(),
                         out_xml="out/m" + ESC + ".xml", verbs=["convert-ov"]),
        lambda: _hostile("external data '../outside.bin'", setup=_external("../outside.bin", "outside")),
        lambda: _hostile("external data at an absolute path", setup=_external("/etc/hostname")),
        lambda: _hostile("external data through a symlink out of the folder", setup=_external("scales.bin", "link")),
        lambda: _hostile("external data file missing", setup=_external("missing.bin")),
        lambda: _hostile("external data offset past the end", setup=_external("scales.bin", "inside", 8, 16)),
        lambda: _hostile("external data inside the folder", "valid", setup=_external("scales.bin", "inside"),
                         feeds=_feeds(), verbs=None, need_node=True),
    ]
    case = rng.choice(choices)()
    if case.verbs is None:
        from .fuzz_cases import ALL_VERBS
        case.verbs = list(ALL_VERBS)
    return case


GENERATORS = {"invalid": gen_invalid, "hostile": gen_hostile}
