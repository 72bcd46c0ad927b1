"""Resize nodes whose run-time ``sizes`` is computed from the input's own shape, as the TorchScript and dynamo
exporters write ``F.interpolate(x, scale_factor=k, recompute_scale_factor=True)`` with dynamic H/W (issue 42/45),
and the near misses that must stay run-time sizes."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def _c(name, v, dt=np.int64):
    return nh.from_array(np.array(v, dtype=dt), name)


def _model(nodes, inits, attrs, inputs=(("x", [1, 3, "H", "W"]),), opset=13):
    nodes = nodes + [h.make_node("Resize", ["x", "", "", "sizes"] if opset >= 13 else ["x", "roi", "sc", "sizes"],
                                 ["y"], name="up", **attrs)]
    if opset < 13:
        inits = inits + [_c("roi", [], np.float32), _c("sc", [], np.float32)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def torchscript(k=2.0, attrs=None, src="x", opset=13, floor_op="Floor"):
    """TorchScript: Gather(Shape(x), d) -> Cast float -> Mul k -> Cast float -> Floor, per axis; Unsqueeze,
    Concat; Concat(Cast(Slice(Shape(x), 0, 2)), Cast int64)."""
    nodes, inits = [], [_c("k", k, np.float32), _c("a0", [0]), _c("s0", [0]), _c("s2", [2])]
    for d in (2, 3):
        nodes += [h.make_node("Shape", [src], [f"shp{d}"]), h.make_node("Gather", [f"shp{d}", f"i{d}"], [f"g{d}"]),
                  h.make_node("Cast", [f"g{d}"], [f"f{d}"], to=T.FLOAT), h.make_node("Mul", [f"f{d}", "k"], [f"m{d}"]),
                  h.make_node("Cast", [f"m{d}"], [f"c{d}"], to=T.FLOAT),
                  h.make_node(floor_op, [f"c{d}"], [f"r{d}"]), _unsqueeze(f"r{d}", f"u{d}", opset)]
        inits.append(_c(f"i{d}", d))
    nodes += [h.make_node("Concat", ["u2", "u3"], ["hw"], axis=0), h.make_node("Shape", ["x"], ["shp"]),
              h.make_node("Slice", ["shp", "s0", "s2", "a0"], ["nc"]), h.make_node("Cast", ["nc"], ["ncf"], to=T.INT64),
              h.make_node("Cast", ["hw"], ["hwi"], to=T.INT64), h.make_node("Concat", ["ncf", "hwi"], ["sizes"], axis=0)]
    inputs = (("x", [1, 3, "H", "W"]),) + ((("z", [1, 3, "P", "Q"]),) if src != "x" else ())
    return _model(nodes, inits, attrs or dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                                              nearest_mode="floor"), inputs, opset)


def _unsqueeze(x, y, opset):
    return h.make_node("Unsqueeze", [x, "a0"], [y]) if opset >= 13 else h.make_node("Unsqueeze", [x], [y], axes=[0])


def dynamo(k=2, attrs=None, gather=False):
    """dynamo: Squeeze(Shape(x, start=d, end=d+1)) -> Mul k (int64) -> Reshape [1], per axis; Concat with
    Shape(x, end=2). ``gather``: the length read as kornia's pyrup reads it, a 0-d Gather of Shape(x)
    then Reshape."""
    nodes, inits = [], [_c("k", k), _c("one", [1])]
    for d in (2, 3):
        if gather:
            nodes += [h.make_node("Shape", ["x"], [f"s{d}"]), h.make_node("Gather", [f"s{d}", f"i{d}"], [f"g{d}"]),
                      h.make_node("Reshape", [f"g{d}", "one"], [f"q{d}"])]
            inits.append(_c(f"i{d}", d))
        else:
            nodes += [h.make_node("Shape", ["x"], [f"s{d}"], start=d, end=d + 1),
                      h.make_node("Squeeze", [f"s{d}"], [f"q{d}"])]
        nodes += [h.make_node("Mul", [f"q{d}", "k"], [f"m{d}"]), h.make_node("Reshape", [f"m{d}", "one"], [f"r{d}"])]
    nodes += [h.make_node("Shape", ["x"], ["nc"], start=0, end=2), h.make_node("Concat", ["r2", "r3"], ["hw"], axis=0),
              h.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0)]
    return _model(nodes, inits, attrs or dict(mode="linear", coordinate_transformation_mode="half_pixel"),
                  opset=18)


def floor_after_div(d=2.0):
    """floor(H / 2): a downscale whose ratio out/in is no constant."""
    model = torchscript(k=1.0 / d)
    return model


def unknown_op():
    """Sizes through an op the evaluator does not read (Abs): unchanged behaviour."""
    return torchscript(floor_op="Abs")
