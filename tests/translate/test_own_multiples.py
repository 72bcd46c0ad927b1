"""A run-time Resize ``sizes`` that the graph computes as k x the input's own H/W (k an integer) is the
static-scale node (issue 42/45): the symbolic evaluator's claims hold on onnxruntime at every shape tried, the IR
is the scales-k IR, the near misses stay run-time sizes, and what convert writes for OpenVINO and ONNX computes
the oracle's numbers at odd, unit and large lengths."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.ir import RuntimeValue
from resample_bridge.semantics.reference import run
from resample_bridge.translate import openvino as tov
from resample_bridge.translate.onnx import Graph, parse_model
from tests.helpers import own_multiples as om

ort = pytest.importorskip("onnxruntime")
ov = pytest.importorskip("openvino")

SHAPES = [(1, 1), (7, 5), (16, 16), (129, 67), (1, 300)]
NEAREST = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
CASES = {  # name: (builder, k)
    "torchscript nearest x2": (lambda: om.torchscript(2.0), 2),
    "torchscript nearest x3 opset 11": (lambda: om.torchscript(3.0, opset=11), 3),
    "torchscript linear align_corners x2": (lambda: om.torchscript(2.0, dict(
        mode="linear", coordinate_transformation_mode="align_corners")), 2),
    "torchscript cubic pytorch_half_pixel x3": (lambda: om.torchscript(3.0, dict(
        mode="cubic", coordinate_transformation_mode="pytorch_half_pixel")), 3),
    "dynamo linear half_pixel x2": (lambda: om.dynamo(2), 2),
    "0-d Gather -> Reshape -> Mul linear x2": (lambda: om.dynamo(2, gather=True), 2),
    "dynamo nearest round_prefer_ceil x4": (lambda: om.dynamo(4, dict(
        mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")), 4),
}


def _div_then_mul():
    """float(H) / 3 * 6: 2H as a rational, but H / 3 is rounded in float32, so no exact reading."""
    m = om.torchscript(6.0)
    for n in [n for n in m.graph.node if n.op_type == "Mul"]:
        div = h.make_node("Div", [n.input[0], "three"], [n.input[0] + "_d3"])
        n.input[0] = div.output[0]
        m.graph.node.insert(list(m.graph.node).index(n), div)
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(3.0, np.float32), "three"))
    return m


NEGATIVES = {
    "non-integer factor 1.5": lambda: om.torchscript(1.5),
    "another tensor's shape": lambda: om.torchscript(2.0, src="z"),
    "floor after a division (downscale)": om.floor_after_div,
    "an op the evaluator does not read": om.unknown_op,
    "a float fraction times its inverse": _div_then_mul,
}


def _session(model, extra_outputs=()):
    model = onnx.ModelProto.FromString(model.SerializeToString())
    if extra_outputs:  # the shape subgraph alone: floor(L / 2) is 0 at L = 1, which Resize refuses
        del model.graph.node[-1], model.graph.output[:]
    model.graph.output.extend(h.make_tensor_value_info(n, T.INT64, None) for n in extra_outputs)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _feeds(model, hw, rng):
    return {i.name: rng.standard_normal((1, 3) + hw).astype(np.float32) for i in model.graph.input}


@pytest.mark.parametrize("name", list(CASES) + list(NEGATIVES))
def test_every_claim_holds_on_onnxruntime(name):
    model = {**{k: v[0] for k, v in CASES.items()}, **NEGATIVES}[name]()
    known = Graph(model).partials.get("sizes")
    assert known is not None
    sess, rng = _session(model, ["sizes"]), np.random.default_rng(0)
    for hw in SHAPES:
        feeds = _feeds(model, hw, rng)
        sizes = sess.run(["sizes"], feeds)[0].tolist()
        for entry, actual in zip(known, sizes):
            if isinstance(entry, tuple) and entry[0] == "multiple":
                assert entry[1] * feeds[entry[2]].shape[entry[3]] == actual, (name, hw, known, sizes)


def _static_twin(name):
    """The same node with scales [1, 1, k, k] and no sizes."""
    build, k = CASES[name]
    static = build()
    resize = static.graph.node[-1]
    static.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1, 1, k, k], np.float32), "k_scales"))
    del resize.input[3]
    resize.input[1:] = ["", "k_scales"] if resize.input[1] == "" else ["roi", "k_scales"]
    return static


@pytest.mark.parametrize("name", CASES)
def test_read_as_the_static_scale_node(name):
    build, k = CASES[name]
    model = build()
    ((_, ir),) = parse_model(model)
    ((_, want),) = parse_model(_static_twin(name))
    assert ir == want and ir.sizes is None and ir.scales_from_sizes == (0, 1, 2, 3)
    assert f"sizes = {k} x axis 2, {k} x axis 3 of the input's own length for every length" in ir.origin


@pytest.mark.parametrize("name", NEGATIVES)
def test_near_misses_stay_run_time_sizes(name):
    ((_, ir),) = parse_model(NEGATIVES[name]())
    assert isinstance(ir.sizes, RuntimeValue) and ir.scales is None and not ir.scales_from_sizes


def _check_runs(name, ir, compute, model):
    """``compute(feeds)`` against the oracle and onnxruntime on the source, at every shape."""
    sess, rng = _session(model), np.random.default_rng(1)
    for hw in SHAPES:
        feeds = _feeds(model, hw, rng)
        x = feeds["x"]
        want = run(ir, x)
        got, ref = compute(feeds), sess.run(None, feeds)[0]
        assert got.shape == want.shape == ref.shape == (1, 3) + tuple(k * L for k, L in zip(CASES[name][1:] * 2, hw))
        for out in (got, ref):
            c = against_oracle(ir, out, want, [x])
            assert c.ok, (name, hw, c.to_dict())


@pytest.mark.parametrize("name", CASES)
def test_openvino_writes_the_static_scale_form(name, tmp_path):
    from resample_bridge.lowering.openvino import convert

    model = CASES[name][0]()
    onnx.save(model, tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))
    ((_, ir),) = parse_model(model)
    onnx.save(_static_twin(name), tmp_path / "twin.onnx")
    _, (twin,) = convert(str(tmp_path / "twin.onnx"))
    assert (rec.rung, rec.ir) == (twin.rung, twin.ir) and "shape subgraph evaluated" in rec.op, rec.summary()
    # The model's own shape subgraph is gone: an Interpolate reads k x its own input's lengths, in integers
    # (OpenVINO's scales mode: k*L + 1 from L = 983040 at k = 2); nearest x3 is the ConvTranspose form
    parsed = tov.parse_model(ov_model)
    assert len(parsed) == ("Interpolate" in rec.summary()), rec.summary()
    assert all((got.scales, got.size_rule) == ((CASES[name][1],) * 2, "floor") for _, got in parsed), parsed
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    _check_runs(name, ir, lambda feeds: compiled(feeds)[0], model)


@pytest.mark.parametrize("name", ["torchscript nearest x2", "dynamo linear half_pixel x2",
                                  "dynamo nearest round_prefer_ceil x4"])
def test_onnx_target_computes_the_same(name, tmp_path):
    from resample_bridge.lowering.onnx import convert

    model = CASES[name][0]()
    done = convert(model)
    (rec,) = done.records
    ((_, ir),) = parse_model(model)
    (twin,) = convert(_static_twin(name)).records
    assert (rec.rung, rec.ir) == (twin.rung, twin.ir), (rec.summary(), twin.summary())
    sess = _session(done.model)
    _check_runs(name, ir, lambda feeds: sess.run(None, feeds)[0], model)


@pytest.mark.parametrize("case,node,k", [("ts13_dynhw_nearest_recompute_x2", "/Resize", 2),
                                         ("dy18_dynhw_bilinear_recompute_x3", "node_upsample_bilinear2d", 3),
                                         ("ts13_kornia_pyramid_dynhw", "/Resize_2", 2)])
def test_real_exports_read_as_static_scales(case, node, k):
    """What the TorchScript and dynamo exporters wrote (tests/models), kornia's pyrup (Gather -> Reshape) too."""
    from pathlib import Path

    irs = dict(parse_model(str(Path(__file__).parents[1] / "models" / case / "model.onnx"), lenient=True))
    assert irs[node].scales == (k, k) and irs[node].sizes is None, irs[node]
    assert not any(ir.scales_from_sizes for n, ir in irs.items() if n != node)


@pytest.mark.parametrize("name", ["torchscript nearest x2", "dynamo linear half_pixel x2"])
def test_tensorrt_target_keeps_the_native_node(name):
    """The written Resize reads the sizes the graph computes; the proof re-reads it from the written model."""
    from resample_bridge.lowering.tensorrt import lower

    done = lower(CASES[name][0]())
    (twin,) = lower(_static_twin(name)).records
    (rec,) = done.records
    assert (rec.rung, rec.ir) == (twin.rung, twin.ir) == (1, twin.ir), (rec.summary(), twin.summary())
