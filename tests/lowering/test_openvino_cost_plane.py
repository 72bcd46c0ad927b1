"""The in-graph forms' choice (lowering/openvino/cost_in_graph.py, issue 45): rates read at the node's plane
(``cost_plane``: Interpolate's time per output grows with the plane, the matrix form's per multiply-accumulate
shrinks), the matrix form charged the reorders between Conv layers; the shipped reference table orders the
forms as they were measured on cases at least 1.5x apart (``tools/dev/cost_order.py`` measures them again)."""

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import cost, cost_in_graph, cost_plane, matmul_rewrite  # noqa: E402
from resample_bridge.lowering.openvino.cost_plane import plane_key  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.tools.dev import cost_order  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

LINEAR_UP = "builtin/linear/plain/up"


def test_a_rate_is_interpolated_in_log_plane_size_between_the_timed_planes():
    table = cost.Calibration({LINEAR_UP: 9.0, plane_key(LINEAR_UP, 24): 1.0, plane_key(LINEAR_UP, 48): 3.0,
                              plane_key(LINEAR_UP, 96): 7.0}, "the test's table")
    assert cost_plane.rate(table, LINEAR_UP, 12 * 12) == 1.0  # clamped below the smallest plane
    assert cost_plane.rate(table, LINEAR_UP, 24 * 48) == pytest.approx(2.0)  # halfway in log size
    assert cost_plane.rate(table, LINEAR_UP, 48 * 48) == pytest.approx(3.0)
    assert cost_plane.rate(table, LINEAR_UP, 400 * 400) == 7.0  # clamped above the largest
    assert cost_plane.rate(table, LINEAR_UP, None) == 9.0  # no plane (a size known only at run time): its own
    assert cost_plane.rate(cost.Calibration({LINEAR_UP: 9.0}, "t"), LINEAR_UP, 400) == 9.0  # no plane rates


def _taken(tmp_path, case, table=None):
    name, shape, scale, attrs, between, *_ = case
    m = cost_order.model(shape, scale, attrs, between)
    onnx.save(m, tmp_path / "m.onnx")
    with cost.using(table or cost.table_file(cost.REFERENCE)):
        ov_model, rec = cost_order.converted(str(tmp_path / "m.onnx"))
    return m, ov_model, rec


@pytest.mark.parametrize("case", cost_order.CASES, ids=[c[0] for c in cost_order.CASES])
def test_the_shipped_table_never_takes_the_form_measured_slower(tmp_path, case):
    """Each case's two forms were measured 1.5x or more apart (``cost_order.CASES``); the default conversion with
    the shipped reference table does not take the slower (the faster, or a third form), and computes the
    oracle's numbers."""
    *_, faster, slower, measured = case
    assert measured[1] >= 1.5 * measured[0]
    m, ov_model, rec = _taken(tmp_path, case)
    assert cost_order.taken(rec) != slower, rec.summary()
    x = np.random.default_rng(0).standard_normal(case[1]).astype(np.float32)
    if not case[4]:  # alone: the Resize's own numbers against the oracle (between Conv layers: proven at convert)
        (_, ir), = parse_model(m)
        got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
        result = against_oracle(ir, got, run(ir, x), [x])
        assert result.ok, result


@pytest.mark.parametrize("between", [False, True], ids=["alone", "between-conv-layers"])
def test_the_matrix_form_pays_the_reorders_between_conv_layers(tmp_path, between):
    """Alone (both sides at the model's boundary) the matrix form estimated 2x faster is taken; between Conv
    layers its reorders (``layout/matmul`` ns per element in and out) make Interpolate the faster."""
    shape = (1, 8, 12, 10)
    n_in, n_out = 8 * 12 * 10, 8 * 24 * 20
    (_, ir), = parse_model(cost_order.model(shape, 2, {"coordinate_transformation_mode": "align_corners"}, False))
    macs = matmul_rewrite.macs(matmul_rewrite.plan(ir, shape), shape)
    builtin_ms = 2 * macs * 1e-3 / 1e6  # twice the matrix form's time (its rate below)
    table = cost.Calibration({LINEAR_UP: builtin_ms * 1e6 / n_out, "matmul/mac": 1e-3, cost_plane.LAYOUT: 1.0},
                             "the test's table")
    case = ("", shape, 2, {"coordinate_transformation_mode": "align_corners"}, between)
    _, _, rec = _taken(tmp_path, case, table)
    assert cost_order.taken(rec) == ("builtin" if between else "matmul"), rec.summary()
    sides = (False, False) if between else (True, True)
    _, est = cost_in_graph._conv_estimate(ir, table, "builtin", "matmul", sides)
    assert est.get("reorders_ms", 0.0) == pytest.approx((n_in + n_out) * 1.0 / 1e6 if between else 0.0)
    assert est["matmul_ms"] == pytest.approx(macs * 1e-3 / 1e6 + est.get("reorders_ms", 0.0))


@pytest.mark.parametrize("channels, faster", [(8, None), (16, 100.0)])
def test_fewer_channels_than_the_planes_were_timed_with_keep_the_class_rates(channels, faster):
    """The plane rates (here Interpolate 100x the convolution form's) count from ``cost_plane.LEAST_CHANNELS``
    channels; 8 read the class's own rates (here alike: the form not taken)."""
    up = {"builtin": "builtin/nearest/plain/up", "conv": "conv/nearest/plain/up"}
    table = cost.Calibration({up["builtin"]: 1.0, up["conv"]: 1.0, **{
        plane_key(up[cls], side): rate for side in cost_plane.PLANES for cls, rate in (("builtin", 100.0),
                                                                                      ("conv", 1.0))}}, "t")
    (_, ir), = parse_model(cost_order.model((1, channels, 24, 32), 2, {"mode": "nearest"}, False))
    got, est = cost_in_graph._conv_estimate(ir, table, "builtin", "conv")
    assert got == (None if faster is None else pytest.approx(faster)), est
