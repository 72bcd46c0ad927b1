"""float64 nodes on OpenVINO: its CPU runs float64 as float32 in every op (the importer's, and the extension's: its
float64 output was the float32 evaluation), so the default computes them with the in-graph forms in float32 too,
within the policy's float32 evaluation bound, instead of writing the extension library for them (issue 42).
Judged against the oracle on the probes' inputs (ties, integer boundaries, non-finite values). A float64 value
past float32's range is read as float32's largest by OpenVINO's input conversion (measured), before any op. Not a
nearest GridSample on a float64 grid: onnxruntime picks its elements in double, and a pick next to a tie or an edge
moves in float32 before any op of ours (refused, below)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.probes import probe_sets  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

pytestmark = pytest.mark.openvino
F64 = TensorProto.DOUBLE


def _resize(x_shape, attrs, *, scales=None, sizes=None):
    """A float64 Resize: scales an initializer, sizes an initializer (a list) or a graph input (``"input"``)."""
    inputs, inits, names = [helper.make_tensor_value_info("X", F64, x_shape)], [], ["X", "", ""]
    if scales is not None:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [len(scales)], scales))
        names[2] = "scales"
    if sizes == "input":
        inputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [len(x_shape)]))
        names.append("sizes")
    elif sizes is not None:
        inits.append(helper.make_tensor("sizes", TensorProto.INT64, [len(sizes)], sizes))
        names.append("sizes")
    node = helper.make_node("Resize", names, ["Y"], name="r", **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", F64, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _gridsample(D: int, mode: str):
    xs, gs = [1, 2] + [5, 4, 3][:D], [1] + [3, 2, 4][:D] + [D]
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], name="gs", mode=mode, padding_mode="border",
                            align_corners=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F64, xs),
                                            helper.make_tensor_value_info("grid", F64, gs)],
                              [helper.make_tensor_value_info("Y", F64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


# (model, the form it takes, concrete input shapes for the probes)
CASES = {
    "linear static": (_resize([1, 2, 5, 6], dict(mode="linear"), scales=[1, 1, 1.6, 0.7]), None,
                      [(1, 2, 5, 6)]),
    "nearest static": (_resize([1, 2, 5, 6], dict(mode="nearest"), scales=[1, 1, 1.6, 0.7]), None,
                       [(1, 2, 5, 6)]),
    "antialias, run-time sizes": (_resize([1, 3, "H", "W"], dict(mode="linear", antialias=1), sizes="input"),
                                  "antialias_taps", [(1, 3, 12, 10), (4,)]),
    "nearest round_prefer_ceil, run-time sizes": (_resize([1, 3, "H", "W"], dict(
        mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
        sizes="input"), "nearest_index", [(1, 3, 7, 9), (4,)]),
    "cubic, a static scale on run-time lengths": (_resize([1, 3, "H", "W"], dict(mode="cubic"),
                                                          scales=[1, 1, 1.5, 0.7]), None, [(1, 3, 9, 14)]),
    "GridSample 5-D linear": (_gridsample(3, "linear"), "gridsample", [(1, 2, 5, 4, 3), (1, 3, 2, 4, 3)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_float64_takes_an_in_graph_form(case, tmp_path):
    model, form, shapes = CASES[case]
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 3 and done.extension is None, rec.summary()
    if form is not None:
        assert rec.proof.get("form") == form, rec.proof.get("form")
    (_, ir), = parse_model(model)
    compiled = ov.Core().compile_model(str(tmp_path / "out" / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    fed = [i.name for i in model.graph.input]
    dtypes = ["float64" if n != "sizes" else "int64" for n in fed]
    count = 0
    for ps in probe_sets(ir, shapes, dtypes + [None] * 4, [True] * len(fed) + [False] * 4):
        arrays = list(ps.arrays[:len(fed)])
        if "sizes" in fed:
            args = [arrays[0], None, None, arrays[1]]
        else:
            args = arrays
        with np.errstate(invalid="ignore", over="ignore"):
            want = run(ir, *args)
        got = compiled(arrays)[0]
        assert got.dtype == np.float64
        result = against_oracle(ir, got, want, args)
        assert result.ok, (ps.what, result)
        count += 1
    assert count >= 2


def test_a_nearest_pick_from_a_float64_grid_is_refused():
    """onnxruntime (and onnx.reference) compute a float64 grid's coordinates in double; OpenVINO's CPU has the grid
    in float32 before any op, so a pick next to a .5 tie or an edge moves (a fuzz campaign's case: -4/3 on length
    4, align_corners, reads element 0 in double, -1, zeros, in float32), in the in-graph form and the extension
    alike: refused, naming both, where the extension was written and verify's random grids passed it."""
    import onnxruntime as ort

    model = _gridsample(2, "nearest")
    del model.graph.node[0].attribute[:]
    model.graph.node[0].attribute.extend([helper.make_attribute("mode", "nearest"),
                                          helper.make_attribute("padding_mode", "zeros"),
                                          helper.make_attribute("align_corners", 1)])
    grid = np.full((1, 3, 2, 2), 0.5)
    grid[0, 0, 0] = (-4 / 3, 0.0)
    x = np.arange(40, dtype=np.float64).reshape(1, 2, 5, 4)
    double = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "grid": grid})[0]
    single = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "grid": grid.astype(np.float32).astype(np.float64)})[0]
    assert double[0, 0, 0, 0] != single[0, 0, 0, 0]  # the premise: the float32 grid reads another element
    from resample_bridge.semantics.errors import BridgeError

    with pytest.raises(BridgeError) as e:
        api.convert(model)
    assert e.value.field == "rung" and "float32" in e.value.message, e.value.message
