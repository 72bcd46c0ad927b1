"""Rung 2's matrix form (lowering/openvino/matmul_rewrite.py, issue 45): a static resize of any coordinate map and
ratio as one MatMul per axis by the oracle's tap tables as dense matrices. Exact for finite inputs only (an inf
anywhere on an axis makes its rows NaN): taken alone, that condition stated, with --allow-conditional, and by the
default policy behind an If on every input element finite whose other branch is the exact rung the ladder chose;
where the cost model estimates it faster. Run on OpenVINO CPU against the oracle and onnxruntime; refused where it
does not apply; its proof re-reads the matrices, the guard and the fallback."""

import dataclasses

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering.openvino import conv_rewrite, cost, cost_in_graph, cost_matmul, matmul_rewrite  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.openvino.target import CONDITION_KEY, convert  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

# Every per-output class alike and the matrix form nearly free: it is taken wherever it applies.
FAVOUR_MATMUL = cost.Calibration({**{f"{cls}/{kind}/{aa}/{d}": 3.0 for kind in ("nearest", "linear", "cubic")
                                     for aa in ("plain", "aa") for d in ("up", "down")
                                     for cls in ("builtin", "conv", "decomposition", "extension")},
                                  cost_matmul.KEY: 1e-6}, "the test's table")
FORMS = [  # (input shape, scales, attributes): maps and ratios the convolution form refuses
    ((1, 5, 12, 10), [1, 1, 2, 2], dict(mode="linear", coordinate_transformation_mode="align_corners")),
    ((1, 5, 12, 10), [1, 1, 1.5, 0.75], dict(mode="cubic", cubic_coeff_a=-0.75)),
    ((1, 3, 30, 26), [1, 1, 0.3, 0.45], dict(mode="linear", antialias=1)),
    ((1, 3, 24, 20), [1, 1, 0.5, 0.75], dict(mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)),
    ((1, 4, 9, 7), [1, 1, 2.5, 3], dict(mode="nearest", nearest_mode="round_prefer_ceil")),
    ((1, 4, 9, 7), [1, 1, 2, 2], dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                                      nearest_mode="round_prefer_floor")),  # a tie at every odd output
    ((2, 3, 4, 6, 5), [1, 1, 2, 0.5, 3], dict(mode="linear")),  # 5-D: the first axis through a Reshape
]


def _converted(tmp_path, model, table=FAVOUR_MATMUL, **options):
    onnx.save(model, tmp_path / "m.onnx")
    with cost.using(table):
        ov_model, (rec,) = convert(str(tmp_path / "m.onnx"), **options)
    return ov_model, rec


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 10


def _run(ov_model, x, precision="f32"):
    return ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": precision})([x])[0]


@pytest.mark.parametrize("shape, scales, attrs", FORMS, ids=[f"{a['mode']}-{i}" for i, (_, _, a) in enumerate(FORMS)])
def test_each_form_computes_the_oracle_and_onnxruntime(tmp_path, shape, scales, attrs):
    model = resize_model(shape, scales=scales, **attrs)
    ov_model, rec = _converted(tmp_path, model, allow_conditional=True)
    assert rec.rung == 2 and rec.proof["form"] == "matmul", rec.summary()
    assert rec.conditions == [matmul_rewrite.CONDITION] and "matrix form faster" in rec.tried[-1][2]
    assert rec.proof["probes"]["count"] > 0  # the ladder's probes (extremes, distinct and large values) ran
    assert matmul_rewrite.CONDITION in ov_model.get_rt_info()[CONDITION_KEY].astype(str)
    assert prove(ov_model, [rec]) == []
    (_, ir), = parse_model(model)
    x = _x(shape)
    got, want = _run(ov_model, x), run(ir, x)
    assert against_oracle(ir, got, want, [x]).ok
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert against_oracle(ir, theirs, want, [x]).ok
    if attrs["mode"] == "nearest":
        np.testing.assert_array_equal(got, want)  # the same element, ties included


@pytest.mark.parametrize("case", [0, 2], ids=["Interpolate-fallback", "decomposition-fallback"])
def test_the_default_policy_takes_it_guarded(tmp_path, case):
    """No condition: an If runs the matrices where every input element is finite, else the rung the ladder chose
    (Interpolate; the decomposition): an input with inf and NaN computes what that rung alone computes (the
    decomposition: the oracle's numbers; Interpolate-11 reads a weight-0 tap's inf as no contribution, where the
    oracle's 0 * inf is NaN: that rung's own matter, the probes have no infinities)."""
    shape, scales, attrs = FORMS[case]
    model = resize_model(shape, scales=scales, **attrs)
    ov_model, rec = _converted(tmp_path, model)
    assert rec.rung == 2 and rec.proof["form"] == "matmul" and not rec.conditions, rec.summary()
    fallback = rec.proof["fallback"]
    assert fallback.rung == (1, 3)[case // 2] and f"else {fallback.reason.split(': ')[0]}" in rec.reason
    assert "If" in [op.get_type_name() for op in ov_model.get_ops()]
    assert prove(ov_model, [rec]) == []
    (_, ir), = parse_model(model)
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    x = _x(shape)
    assert against_oracle(ir, compiled([x])[0], run(ir, x), [x]).ok
    x[0, 0, 0, 0], x[0, 1, 3, 4] = np.inf, np.nan
    with conv_rewrite.forcing("builtin"):
        alone, rec_alone = _converted(tmp_path, model)
    assert rec_alone.rung == fallback.rung and rec_alone.proof.get("form") is None
    got = compiled([x])[0]
    ref = ov.Core().compile_model(alone, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert np.isnan(got).any() and np.isfinite(got).any()  # the rows whose taps read them only
    finite = np.isfinite(got)  # the same non-finite values; the finite ones as the rung alone (its float order)
    assert np.array_equal(finite, np.isfinite(ref)) and np.array_equal(got[~finite], ref[~finite], equal_nan=True)
    np.testing.assert_allclose(got[finite], ref[finite], rtol=1e-5, atol=1e-5)
    if fallback.rung == 3:
        with np.errstate(invalid="ignore"):
            assert against_oracle(ir, got, run(ir, x), [x]).ok


def test_an_infinite_input_breaks_the_form_as_its_condition_says(tmp_path):
    """The stated condition is real: one inf makes every output of the rows that multiply it NaN in the matrix
    form, where the oracle reads it only through its taps (finite elsewhere)."""
    shape, scales, attrs = FORMS[0]
    model = resize_model(shape, scales=scales, **attrs)
    with conv_rewrite.forcing("matmul"):
        ov_model, rec = _converted(tmp_path, model, allow_conditional=True)
    assert rec.proof["form"] == "matmul"
    (_, ir), = parse_model(model)
    x = _x(shape)
    x[0, 0, 0, 0] = np.inf
    with np.errstate(invalid="ignore"):
        got, want = _run(ov_model, x), run(ir, x)
        assert np.isnan(got[0, 0]).sum() > np.isnan(want[0, 0]).sum()
        assert not against_oracle(ir, got, want, [x]).ok
        assert against_oracle(ir, got[:, 1:], want[:, 1:], [x[:, 1:]]).ok  # the other channels untouched


def test_under_bf16_the_form_differs_by_value_rounding_only(tmp_path):
    shape, scales, attrs = FORMS[1]
    model = resize_model(shape, scales=scales, **attrs)
    ov_model, rec = _converted(tmp_path, model, allow_conditional=True)
    assert rec.proof["form"] == "matmul" and rec.proof["bf16_exact_weights"] is False, rec.summary()
    (_, ir), = parse_model(model)
    x = _x(shape, seed=1)
    got = _run(ov_model, x, "bf16").astype(np.float64)
    want = run(ir, x)
    # Input, weights and each axis's result rounded to bf16: a few of its ulps of the values a row sums.
    assert np.max(np.abs(got - want)) <= 8 * 2.0 ** -8 * 1.5 * 1.5 * np.max(np.abs(x))
    assert np.max(np.abs(got - want)) > 0  # the run was in bf16 indeed


@pytest.mark.parametrize("shape, attrs, why", [
    ((1, 4, "H", "W"), dict(scales=[1, 1, 2, 2], mode="linear"), "static input shape"),
    ((1, 4, 8, 8), dict(scales=[1, 1, 2, 2], mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                        roi=[0, 0, -0.5, -0.5, 1, 1, 1.5, 1.5], extrapolation_value=7.0), "extrapolation value"),
    ((1, 1, 4, 1200), dict(scales=[1, 1, 1, 0.9], mode="linear"), "past 1048576 entries"),
])
def test_refused_where_it_does_not_apply(tmp_path, shape, attrs, why):
    """The plan says why; the ladder keeps the rung it chose (the matrix form, favoured, not taken)."""
    model = resize_model(shape, **attrs)
    (_, ir), = parse_model(model)
    assert why in matmul_rewrite.plan(ir, tuple(None if isinstance(d, str) else d for d in shape))
    _, rec = _converted(tmp_path, model, allow_conditional=True)
    assert rec.proof.get("form") != "matmul", rec.summary()


def test_integer_inputs_are_refused():
    (_, ir), = parse_model(resize_model((1, 2, 4, 4), scales=[1, 1, 2, 2], mode="linear",
                                        dtype=onnx.TensorProto.UINT8))
    assert "written for float32" in matmul_rewrite.plan(ir, (1, 2, 4, 4))


@pytest.mark.parametrize("allow", [False, True], ids=["guarded", "conditional"])
def test_the_cost_model_takes_it_at_mid_sizes_only(tmp_path, allow):
    """The shipped reference table: align_corners x2 on 1x64x40x40 (25 M multiply-accumulates) takes the matrix
    form; on 1x16x160x200 (573 M) Interpolate stays; both exact."""
    table = cost.table_file(cost.REFERENCE)
    mid = resize_model((1, 64, 40, 40), scales=[1, 1, 2, 2], mode="linear",
                       coordinate_transformation_mode="align_corners")
    _, rec = _converted(tmp_path, mid, table, allow_conditional=allow)
    assert rec.proof.get("form") == "matmul" and ("fallback" in rec.proof) != allow, rec.summary()
    est = rec.extra["in_graph_cost"]
    assert est["matmul_ms"] * cost_in_graph.MATMUL_MARGIN <= est["chosen_ms"]
    large = resize_model((1, 16, 160, 200), scales=[1, 1, 2, 2], mode="linear",
                         coordinate_transformation_mode="align_corners")
    _, rec = _converted(tmp_path, large, table, allow_conditional=allow)
    assert rec.proof.get("form") != "matmul" and rec.rung == 1, rec.summary()


def test_the_proof_rereads_the_matrices_against_the_source_ir(tmp_path):
    """The same model judged against a cubic IR (other weights) fails naming the matrices; a record that lost its
    condition fails too."""
    shape, scales, attrs = FORMS[0]
    ov_model, rec = _converted(tmp_path, resize_model(shape, scales=scales, **attrs), allow_conditional=True)
    assert prove(ov_model, [rec]) == []
    (_, cubic), = parse_model(resize_model(shape, scales=scales, mode="cubic",
                                           coordinate_transformation_mode="align_corners"))
    failures = prove(ov_model, [dataclasses.replace(rec, ir=cubic)])
    assert len(failures) == 2 and all("matrix differs" in f for f in failures), failures
    assert "condition" in prove(ov_model, [dataclasses.replace(rec, conditions=[])])[0]


def test_the_proof_rereads_the_guard_and_the_fallback(tmp_path):
    """The guarded form: the If and its finite test re-read, and the fallback proven as its own rung's record
    (judged against half_pixel, Interpolate's re-read IR, align_corners, differs)."""
    shape, scales, attrs = FORMS[0]
    ov_model, rec = _converted(tmp_path, resize_model(shape, scales=scales, **attrs))
    assert prove(ov_model, [rec]) == [] and "fallback" in rec.proof
    (_, other), = parse_model(resize_model(shape, scales=scales, mode="linear"))
    wrong = dataclasses.replace(rec, proof={**rec.proof, "fallback": dataclasses.replace(rec.proof["fallback"],
                                                                                          ir=other)})
    assert prove(ov_model, [wrong]), "a fallback other than the source IR's passed"
    unguarded = dataclasses.replace(rec, node="other", proof={**rec.proof, "located": {}})
    assert any("guard" in f for f in prove(ov_model, [unguarded]))


def _two_resizes_of_one_input():
    """FORMS[0] and FORMS[1] (one input shape) on one input X: two guards that test the same tensor."""
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    shape = FORMS[0][0]
    nodes, inits, outs = [], [], []
    for k in (0, 1):
        _, scales, attrs = FORMS[k]
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), f"scales{k}"))
        nodes.append(helper.make_node("Resize", ["X", "", f"scales{k}"], [f"Y{k}"], name=f"r{k}", **attrs))
        outs.append(helper.make_tensor_value_info(f"Y{k}", onnx.TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(shape))],
                          outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), shape


def test_two_guards_on_one_input_are_proven(tmp_path):
    """OpenVINO merges the two nodes' identical finite tests into one op, which keeps one node's tag: the other's
    guard was "missing from the produced model" and convert refused the model (measured on torchvision's resize
    variants of one image exported together). The guard is read through its If now; one that tests another tensor
    than the one it hands its branches is refused."""
    model, shape = _two_resizes_of_one_input()
    onnx.save(model, tmp_path / "m.onnx")
    with cost.using(FAVOUR_MATMUL):
        ov_model, records = convert(str(tmp_path / "m.onnx"))
    assert [(r.rung, r.proof.get("form")) for r in records] == [(2, "matmul")] * 2, [r.reason for r in records]
    assert prove(ov_model, records) == []
    irs = dict(parse_model(model))
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    x = _x(shape)
    got = compiled([x])
    for k in (0, 1):
        assert against_oracle(irs[f"r{k}"], got[k], run(irs[f"r{k}"], x), [x]).ok
    tampered = ov_model.clone()
    guard = next(op for op in tampered.get_ops() if op.get_type_name() == "If")
    o = ov.opset13
    other = o.constant(np.zeros(shape, np.float32))
    test = o.reduce_logical_and(o.is_finite(other), o.constant(np.arange(len(shape), dtype=np.int64)), False)
    guard.input(0).replace_source_output(test.output(0))
    assert any("finite" in f for f in prove(tampered, records)), "a guard testing another tensor passed"


def test_the_matrix_holds_the_oracles_taps():
    """Each row: the taps' weights at their clamped indices (a clamped border's two taps on one index added),
    zeros elsewhere, summing to 1 (a partition of unity)."""
    (_, ir), = parse_model(resize_model((1, 1, 5, 4), scales=[1, 1, 2, 1], mode="linear"))
    (d,) = matmul_rewrite.plan(ir, (1, 1, 5, 4))
    assert d.matrix.shape == (10, 5)
    np.testing.assert_array_equal(d.matrix[0], [1, 0, 0, 0, 0])  # src -0.25: both taps clamped onto input 0
    np.testing.assert_array_equal(d.matrix[1], [0.75, 0.25, 0, 0, 0])
    np.testing.assert_allclose(d.matrix.sum(axis=1), 1, rtol=1e-7)
