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
    *_, faster, slower, measured, _hint = case
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


def _plane_table(alone: tuple, fed: tuple, fed_low: tuple | None = None) -> cost.Calibration:
    """Interpolate's and the convolution form's linear x2 rates (builtin, conv) at every plane: alone (fed by the
    model's input), fed by a Conv (its output to another op's or the model's), and so at bf16 where given."""
    rates = {}
    for cls, a, f, low in zip(("builtin", "conv"), alone, fed, fed_low or (None, None)):
        key = f"{cls}/linear/plain/up"
        for side in cost_plane.PLANES:
            rates[plane_key(key, side)] = a
            for out in (False, True):
                rates[cost_plane.fed_key(plane_key(key, side), out)] = f
                if low is not None:
                    rates[cost_plane.at(cost_plane.fed_key(plane_key(key, side), out), "bf16")] = low
    return cost.Calibration(rates, "the test's table")


@pytest.mark.parametrize("sides, faster", [((True, True), 10.0), ((True, False), 10.0), ((False, False), None),
                                           ((False, True), None)])
def test_a_node_fed_by_another_op_reads_the_rates_timed_so(sides, faster):
    """Alone (fed by the model's input) Interpolate runs another layout than after a Conv: here 10x the
    convolution form's time alone, the same fed. The side that decides is the input's."""
    (_, ir), = parse_model(cost_order.model((1, 16, 24, 32), 2, {}, False))
    got, est = cost_in_graph._conv_estimate(ir, _plane_table((10.0, 1.0), (1.0, 1.0)), "builtin", "conv", sides)
    assert got == (None if faster is None else pytest.approx(faster)), est


@pytest.mark.parametrize("low, taken", [(None, "conv"), ((1.0, 3.0), "builtin"), ((3.0, 1.0), "conv")],
                         ids=["no-bf16-rates", "slower-at-bf16", "faster-at-bf16"])
def test_a_form_faster_at_f32_only_is_not_taken_where_the_cpu_defaults_to_bf16(tmp_path, low, taken):
    """Between Conv layers, a convolution form estimated 3x faster at f32 but 3x slower at the CPU's default bf16
    keeps Interpolate (the model runs at bf16 as it comes); taken, its reason gives the bf16 estimate beside."""
    case = ("", (1, 16, 24, 32), 2, {}, True)
    _, _, rec = _taken(tmp_path, case, _plane_table((1.0, 1.0), (3.0, 1.0), low))
    assert cost_order.taken(rec) == taken, rec.summary()
    if taken == "conv" and low is not None:
        assert "bf16" in rec.extra["in_graph_cost"] and "bf16: " in rec.reason, rec.summary()


@pytest.mark.parametrize("sides, faster", [((False, True), 10.0), ((False, False), None)],
                         ids=["output-the-models", "between-ops"])
def test_a_node_whose_output_is_the_models_reads_the_rates_with_that_reorder(sides, faster):
    """Fed by a Conv, Interpolate's output to the model's output takes the plugin's reorder (timed in:
    ``fed-out``), to another op not (``fed``): here 10x the convolution form's time to the output, alike between."""
    rates = {}
    for cls, to_out in (("builtin", 10.0), ("conv", 1.0)):
        for side in cost_plane.PLANES:
            key = plane_key(f"{cls}/linear/plain/up", side)
            rates[cost_plane.fed_key(key)], rates[cost_plane.fed_key(key, True)] = 1.0, to_out
    (_, ir), = parse_model(cost_order.model((1, 16, 24, 32), 2, {}, False))
    got, est = cost_in_graph._conv_estimate(ir, cost.Calibration(rates, "t"), "builtin", "conv", sides)
    assert got == (None if faster is None else pytest.approx(faster)), est
    assert cost_plane.context(sides) == ("fed-out" if sides[1] else "fed")


@pytest.mark.parametrize("channels, faster", [(4, None), (8, 10.0), (12, 10.0), (16, None)])
def test_narrow_nodes_read_the_narrow_planes(channels, faster):
    """5-15 channels read the planes timed at ``cost_plane.NARROW`` channels (here Interpolate 10x the convolution
    form's time there, alike on the wide planes and in the class's own rates); at most ``cost_timing.FEW`` read
    the class's rates."""
    up = {"builtin": "builtin/nearest/plain/up", "conv": "conv/nearest/plain/up"}
    rates = {up["builtin"]: 1.0, up["conv"]: 1.0}
    for cls, narrow_rate in (("builtin", 10.0), ("conv", 1.0)):
        for narrow in (False, True):
            for side in cost_plane.planes(narrow):
                rates[cost_plane.fed_key(plane_key(up[cls], side, narrow))] = narrow_rate if narrow else 1.0
    (_, ir), = parse_model(cost_order.model((1, channels, 24, 32), 2, {"mode": "nearest"}, False))
    got, est = cost_in_graph._conv_estimate(ir, cost.Calibration(rates, "t"), "builtin", "conv", (False, False))
    assert got == (None if faster is None else pytest.approx(faster)), est
