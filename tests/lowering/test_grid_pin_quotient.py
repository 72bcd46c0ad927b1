"""``pinned.refined_quotient``, the spelling ``grid_pin`` gives a pinned Divide (issue 45): a * (1/b refined by two
Newton steps) instead of a Power by a run-time -1, which the CPU plugin ran as a scalar pow per element (kornia's
warp_perspective at 224 px: 5.2 ms of node time against the importer's 0.66, measured). It must divide as
OpenVINO's own Divide does (the plugin's a * b^-1: within 1 float32 ulp of a / b, the same non-finite results),
also where the plugin's reciprocal runs at reduced precision between layers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.lowering.openvino.pinned import PRECISE, refined_quotient  # noqa: E402
from tests.lowering.test_grid_pin import _default_is_reduced  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "models"
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.0, 1e-38, 3e38, 7e-3], np.float32)


def _probes(n: int = 1 << 16):
    """Every pair of the special values, then random signs and magnitudes over 10^-18 .. 10^18."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n) * 10.0 ** rng.uniform(-18, 18, n) for _ in range(2))
    pa, pb = np.meshgrid(SPECIAL, SPECIAL)
    return np.concatenate([pa.ravel(), a]).astype(np.float32), np.concatenate([pb.ravel(), b]).astype(np.float32)


def _run(tmp_path, a, b, hint=None, between_layers=False):
    """a / b through ``refined_quotient`` with every op marked as ``grid_pin`` marks it, read back from its IR;
    ``between_layers``: followed by a (marked) MatMul, so the quotient is not the graph's tail (which the CPU
    runs in f32 whatever the hint)."""
    o = ops()
    pa, pb = o.parameter([a.size], np.float32, name="a"), o.parameter([b.size], np.float32, name="b")
    q = refined_quotient(pa.output(0), pb.output(0))
    if between_layers:
        q = o.matmul(o.reshape(q, o.constant(np.array([-1, 4], np.int64)), False),
                     o.constant(np.eye(4, dtype=np.float32)), False, False)
    model = ov.Model([q], [pa, pb])
    for op in model.get_ordered_ops():
        if op.get_type_name() not in ("Parameter", "Constant", "Result"):
            op.get_rt_info()[PRECISE] = ""
    ov.save_model(model, str(tmp_path / "q.xml"), compress_to_fp16=False)
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": hint} if hint else {}
    got = core.compile_model(core.read_model(str(tmp_path / "q.xml")), "CPU", config)({"a": a, "b": b})[0]
    return got.ravel()


def _ulps(got, want):
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)


def test_refined_quotient_divides_as_openvinos_divide(tmp_path):
    a, b = _probes()
    with np.errstate(all="ignore"):
        want = a / b
    got = _run(tmp_path, a, b, hint="f32")
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (a[np.isnan(got) != np.isnan(want)][:5],
                                                           b[np.isnan(got) != np.isnan(want)][:5])
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    assert _ulps(got[finite], want[finite]).max() <= 1.0


def test_refined_quotient_between_layers_at_the_default_precision(tmp_path):
    """The quotient feeding a layer under the bf16 hint: the plugin's reciprocal (a new op, unmarked) may run in
    bf16 (2^-8); the marked Newton steps bring it back to float32 rounding."""
    _default_is_reduced()
    rng = np.random.default_rng(1)
    n = 1 << 16
    a = (rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-6, 6, n)).astype(np.float32)
    b = (rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-6, 6, n)).astype(np.float32)
    got = _run(tmp_path, a, b, between_layers=True)
    assert _ulps(got, a / b).max() <= 1.0


def test_perspective_division_without_a_run_time_power(tmp_path):
    """kornia's warp_perspective: every Divide in the grid's cone respelled, no Power left with an exponent
    computed at run time (the per-element pow), and the grid's arithmetic still pinned."""
    src = CORPUS / "ts16_kornia_warp_perspective" / "model.onnx"
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.extra["grid_f32"]["stops"] == [] and rec.extra["grid_f32"]["ops"] > 50, rec.extra["grid_f32"]
    model = ov.Core().read_model(done.output)
    kinds = [op.get_type_name() for op in model.get_ordered_ops()]
    powers = [op for op in model.get_ordered_ops() if op.get_type_name() == "Power"]
    assert "Divide" not in kinds and powers
    assert all(p.input_value(1).get_node().get_type_name() == "Constant" for p in powers)
