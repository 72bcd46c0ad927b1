"""Rung 2's in-graph forms on the ONNX target (issue 45): the convolution form (lowering/onnx/conv_form.py), the
plan OpenVINO's form uses (lowering/resize_forms.py) written as an edge Pad and depthwise ConvTranspose / Conv,
and the guarded matrix form (lowering/onnx/matmul_form.py); each proven like every ONNX rung and taken where the
measured rule says (lowering/onnx/cost_in_graph.py). Numbers are judged against the oracle and onnxruntime's own
Resize on probes: random, .5 ties of integer ramps, extremes, and inf / NaN."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from resample_bridge.lowering.onnx import DEFAULT_POLICY, OnnxTarget, cost_in_graph, conv_form, matmul_form
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.translate.onnx import parse_model
from tests.helpers.models import resize_model

TARGET = OnnxTarget()
HALF = {"coordinate_transformation_mode": "half_pixel"}
# (shape, scales, attributes): integer-ratio up- and downsampling in every mode the form takes.
FORMS = [
    ((1, 3, 6, 7), [1, 1, 2, 2], {"mode": "cubic", "cubic_coeff_a": -0.75, **HALF}),
    ((1, 2, 5, 6), [1, 1, 4, 3], {"mode": "cubic", "cubic_coeff_a": -0.5, **HALF}),
    ((1, 2, 5, 6), [1, 1, 2, 4], {"mode": "linear", **HALF}),
    ((1, 2, 5, 6), [1, 1, 2, 2], {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
    ((1, 2, 5, 6), [1, 1, 3, 2], {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ((1, 2, 12, 16), [1, 1, 0.5, 0.5], {"mode": "cubic", "cubic_coeff_a": -0.75, **HALF}),
    ((1, 2, 12, 16), [1, 1, 0.5, 0.25], {"mode": "linear", "antialias": 1, **HALF}),
    ((1, 2, 24, 24), [1, 1, 0.5, 0.5], {"mode": "cubic", "antialias": 1, **HALF}),
    ((1, 2, 5, 6), [1, 1, 2, 2], {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                  "nearest_mode": "floor"}),
]


def run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})[0]


def probes(shape):
    rng = np.random.default_rng(0)
    ramp = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)  # integers: linear's .5 ties
    big = np.where((np.indices(shape) // 2).sum(0) % 2 == 0, 1, -1).astype(np.float32) * np.float32(2e37)
    odd = rng.uniform(-1, 1, shape).astype(np.float32)
    odd.reshape(-1)[[i % odd.size for i in (3, 17, odd.size - 2)]] = [np.inf, -np.inf, np.nan]  # read by its taps only
    return [rng.uniform(-1, 1, shape).astype(np.float32), ramp, big, odd]


def converted(model, take=True):
    with cost_in_graph.forcing(take):
        result = TARGET(model, DEFAULT_POLICY)
    return result, result.records[0]


@pytest.mark.parametrize("shape,scales,attrs", FORMS, ids=[f"{a['mode']}-{s[2:]}-{a.get('antialias', 0)}-"
                                                        f"{a.get('coordinate_transformation_mode')}"
                                                        for _, s, a in FORMS])
def test_the_form_computes_the_oracle_and_resize_numbers(shape, scales, attrs):
    model = resize_model(shape, scales=scales, **attrs)
    (_, ir), = parse_model(model)
    result, rec = converted(model)  # proven: re-read and probed on onnxruntime
    assert rec.rung == 2 and rec.proof["form"] == conv_form.FORM, rec.summary()
    ops = [n.op_type for n in result.model.graph.node]
    assert "Resize" not in ops and set(ops) <= {"Pad", "ConvTranspose", "Conv"}
    for x in probes(shape):
        got, want, native = run(result.model, x), oracle(ir, x), run(model, x)
        # The bound from the finite values (an inf or NaN tap's term is not the finite outputs' error).
        assert against_oracle(ir, got, want, [np.where(np.isfinite(x), x, 0)]).ok
        assert np.array_equal(np.isnan(got), np.isnan(want))  # inf and NaN spread to the same outputs
        if np.isfinite(x).all():  # onnxruntime's own Resize, same policy (on inf / NaN its cubic spreads NaN
            assert against_oracle(ir, native, want, [x]).ok  # to outputs whose taps do not read them: measured)


@pytest.mark.parametrize("attrs,why", [
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, "not periodic with period 2"),
    ({"mode": "cubic", "exclude_outside": 1, **HALF}, "weights of output 0 are not periodic"),
])
def test_a_non_periodic_table_is_refused_with_the_reason(attrs, why):
    model = resize_model((1, 2, 6, 6), scales=[1, 1, 2, 2], **attrs)
    _, rec = converted(model)
    assert rec.proof.get("form") != conv_form.FORM  # cubic: the guarded matrices (next test)
    assert why in rec.extra["conv_form"]


@pytest.mark.parametrize("attrs", [{"coordinate_transformation_mode": "align_corners"}, {"exclude_outside": 1},
                                   {"coordinate_transformation_mode": "half_pixel", "scale": 1.5}])
def test_cubic_without_the_form_takes_the_guarded_matrices_not_onnxruntimes_slow_resize(attrs):
    attrs = dict(attrs)
    s = attrs.pop("scale", 2)
    model = resize_model((1, 2, 6, 7), scales=[1, 1, s, s], mode="cubic", cubic_coeff_a=-0.75, **attrs)
    (_, ir), = parse_model(model)
    result, rec = converted(model, None)  # proven: the guard re-read, probes with inf and NaN (the else branch)
    assert rec.rung == 2 and rec.proof["form"] == matmul_form.FORM and "else the decomposition" in rec.reason
    assert "faster than its own cubic Resize" in rec.reason and "matrix form is faster" in rec.tried[-1][2]
    assert [n.op_type for n in result.model.graph.node] == ["Mul", "ReduceSum", "Equal", "If"]
    for x in probes((1, 2, 6, 7)):
        got, want = run(result.model, x), oracle(ir, x)
        assert against_oracle(ir, got, want, [np.where(np.isfinite(x), x, 0)]).ok
        assert np.array_equal(np.isnan(got), np.isnan(want))
    _, rec = converted(model, False)  # held back: the ladder alone
    assert rec.rung == 1
    # Below opset 13 (ReduceSum's axes an attribute) the decomposition alone, still not the slow Resize.
    old = resize_model((1, 2, 6, 7), roi=[], scales=[1, 1, s, s], mode="cubic", opset=12, **attrs)
    _, rec = converted(old, None)
    assert rec.rung == 3 and "opset 13" in rec.extra["matmul_form"] and "cubic Resize" in rec.reason


def test_the_proof_rereads_the_guard_and_the_matrices():
    model = resize_model((1, 2, 6, 7), scales=[1, 1, 2, 2], mode="cubic",
                         coordinate_transformation_mode="align_corners")
    result, rec = converted(model, None)
    assert TARGET.prove(result) == []
    guard = next(n for n in result.model.graph.node if n.op_type == "If")
    then = next(a.g for a in guard.attribute if a.name == "then_branch")
    m = then.initializer[0]
    bad = numpy_helper.to_array(m).copy()
    bad[0, 0] += np.float32(1e-6)
    m.CopyFrom(numpy_helper.from_array(bad, m.name))
    assert any("the MatMul or its matrix differs" in f for f in TARGET.prove(result))
    zero = next(i for i in result.model.graph.initializer if i.name.endswith("/matmul/zero"))
    zero.CopyFrom(numpy_helper.from_array(np.float32(1), zero.name))
    assert any("finite-input guard" in f for f in TARGET.prove(result))


def test_the_rule_takes_cubic_and_keeps_nearest_and_says_why():
    cubic = resize_model((1, 4, 10, 10), scales=[1, 1, 2, 2], mode="cubic", **HALF)
    _, rec = converted(cubic, None)
    assert rec.rung == 2 and "onnxruntime" in rec.reason and "faster than Resize" in rec.reason
    assert rec.tried[-1][0] == 1 and "convolution form is faster" in rec.tried[-1][2]
    for mode in ("nearest", "linear"):  # onnxruntime's own Resize measured as fast or faster
        _, rec = converted(resize_model((1, 4, 10, 10), scales=[1, 1, 2, 2], mode=mode), None)
        assert rec.rung == 1 and rec.proof.get("form") is None and "keeps the rung" in rec.extra["conv_form"]


def test_the_form_replaces_the_decomposition_where_onnxruntime_has_no_kernel():
    # Rank 3 cubic: onnxruntime runs cubic at ranks 2 and 4 only, so the ladder decomposes; one ConvTranspose.
    model = resize_model((1, 3, 9), scales=[1, 1, 2], mode="cubic", **HALF)
    (_, ir), = parse_model(model)
    result, rec = converted(model, None)
    assert rec.rung == 2 and "instead of the decomposition" in rec.reason, rec.summary()
    assert [n.op_type for n in result.model.graph.node] == ["Pad", "ConvTranspose"]
    x = probes((1, 3, 9))[0]
    assert against_oracle(ir, run(result.model, x), oracle(ir, x), [x]).ok


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_run_time_lengths_take_the_form_where_every_rung_refuses(kind):
    # onnxruntime's float32 output length is a condition and the tap tables need every length: refused before;
    # the form's output length is integer arithmetic and its kernels the same at every length.
    model = resize_model((1, 3, "H", "W"), scales=[1, 1, 2, 2], mode=kind, **HALF)
    result, rec = converted(model, None)
    assert rec.rung == 2 and "exact at every input length" in rec.reason, rec.summary()
    assert [n for n, _, _ in rec.tried] == [1, 2, 3] and "exact only if" in rec.tried[0][2]
    sess = ort.InferenceSession(result.model.SerializeToString(), providers=["CPUExecutionProvider"])
    for h, w in [(1, 1), (1, 7), (3, 2), (33, 17)]:
        (_, ir), = parse_model(resize_model((1, 3, h, w), scales=[1, 1, 2, 2], mode=kind, **HALF))
        for x in probes((1, 3, h, w))[:3]:
            got = sess.run(None, {"X": x})[0]
            assert got.shape == (1, 3, 2 * h, 2 * w) and against_oracle(ir, got, oracle(ir, x), [x]).ok


def test_the_proof_rereads_the_kernel_and_the_pads():
    model = resize_model((1, 2, 6, 6), scales=[1, 1, 2, 2], mode="cubic", **HALF)
    result, rec = converted(model)
    assert TARGET.prove(result) == []
    inits = {i.name: i for i in result.model.graph.initializer}
    w = inits[conv_form.part(rec.node, "axis3/weights")]
    bad = numpy_helper.to_array(w).copy()
    bad[1, 0, 0, 2] += np.float32(1e-6)  # one tap of one channel
    w.CopyFrom(numpy_helper.from_array(bad, w.name))
    assert any("axis 3: the kernel differs" in f for f in TARGET.prove(result))
    p = inits[conv_form.part(rec.node, "pads")]
    p.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(p) + 1, p.name))
    assert any("edge Pad differs" in f for f in TARGET.prove(result))


def test_the_plan_is_openvinos():
    # One plan for both targets: the ONNX kernel is OpenVINO's, per channel.
    from resample_bridge.lowering.openvino import conv_rewrite

    model = resize_model((1, 2, 6, 6), scales=[1, 1, 2, 2], mode="cubic", **HALF)
    (_, ir), = parse_model(model)
    ours, theirs = conv_form.form_plan(ir, 19), conv_rewrite.plan(ir, ir.input_shape)
    assert ours == theirs
    assert np.array_equal(conv_form.weights(ours[1], 2, 4)[1].reshape(-1), theirs[1].kernel())
    assert "opset 11" in conv_form.form_plan(ir, 10)


@pytest.mark.slow
def test_every_plan_the_shared_module_makes_is_proven_on_onnxruntime():
    # A sweep (issue 45): wherever the form applies, forced, the conversion proves it (re-read, probes on
    # onnxruntime, whole model); it never refuses a node the ladder alone converts.
    import itertools

    from resample_bridge.semantics.errors import BridgeError

    coords = ["half_pixel", "pytorch_half_pixel", "asymmetric", "half_pixel_symmetric", "align_corners"]
    taken = 0
    for mode, coord, s, n, aa in itertools.product(["linear", "cubic", "nearest"], coords, [2, 3, 4, 0.5, 0.25],
                                                   [3, 12], [0, 1]):
        if mode == "nearest" and aa:
            continue
        attrs = {"mode": mode, "coordinate_transformation_mode": coord, **({"antialias": 1} if aa else {})}
        model = resize_model((1, 2, n, n + 1), scales=[1, 1, s, s], **attrs)
        try:
            with cost_in_graph.forcing(False):
                TARGET(model, DEFAULT_POLICY)
        except BridgeError:
            continue
        _, rec = converted(model)
        taken += rec.proof.get("form") == conv_form.FORM
    assert taken >= 60
