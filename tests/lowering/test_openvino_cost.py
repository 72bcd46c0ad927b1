"""``--prefer fastest``: the cost model (lowering/openvino/cost.py) calibrated on this machine, the ladder taking
the extension only where it is estimated faster by the margin, the result still proven and exact, and the
default (``builtin``) never consulting it."""

import json

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import cost  # noqa: E402
from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@pytest.fixture
def rates(monkeypatch, tmp_path):
    """Rates written where the cost model caches them (a file of the test's own; the build cache, with the
    extension library, stays where it is)."""
    own = tmp_path / "cost.json"
    monkeypatch.setattr(cost, "cache_file", lambda: own)
    monkeypatch.setattr(cost, "_rates", None)

    def write(values: dict):
        path = cost.cache_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
        monkeypatch.setattr(cost, "_rates", None)
    return write


def _linear_up(tmp_path):
    m = resize_model((1, 4, 24, 20), scales=[1, 1, 2, 2], mode="linear")
    onnx.save(m, tmp_path / "m.onnx")
    return m, str(tmp_path / "m.onnx")


def _exact(m, ov_model, records):
    from resample_bridge.lowering import compiled

    core = ov.Core()
    if any(r.rung == 4 for r in records):
        core.add_extension(compiled.openvino_extension())
    x = np.random.default_rng(0).standard_normal((1, 4, 24, 20)).astype(np.float32)
    (_, ir), = parse_model(m)
    np.testing.assert_allclose(core.compile_model(ov_model, "CPU", F32)([x])[0], run(ir, x), rtol=1e-5, atol=1e-5)


@pytest.mark.compiled
@pytest.mark.parametrize("ext_rate, rung", [(0.5, 4), (0.9, 1), (5.0, 1)])
def test_the_extension_only_where_estimated_faster_by_the_margin(rates, tmp_path, ext_rate, rung):
    # built-in 1 ns per output element; the extension's reorders cost 0.1 ns per element in and out.
    rates({"builtin/linear/plain/up": 1.0, "extension/linear/plain/up": ext_rate, "copy": 0.1})
    m, path = _linear_up(tmp_path)
    ov_model, (rec,) = convert(path, prefer="fastest")
    assert rec.rung == rung, rec.summary()
    n_out, n_in = 4 * 48 * 40, 4 * 24 * 20
    assert rec.extra["cost"]["chosen_ms"] == pytest.approx(n_out / 1e6)
    assert rec.extra["cost"]["extension_ms"] == pytest.approx((ext_rate * n_out + 0.1 * (n_in + n_out)) / 1e6)
    if rung == 4:
        assert "--prefer fastest: estimated" in rec.reason and rec.tried[-1][0] == 1
    _exact(m, ov_model, [rec])


def test_builtin_is_the_default_and_never_reads_the_model(rates, tmp_path, monkeypatch):
    rates({"builtin/linear/plain/up": 100.0, "extension/linear/plain/up": 0.01, "copy": 0.0})
    monkeypatch.setattr(cost, "rates", lambda: pytest.fail("the default consulted the cost model"))
    _, path = _linear_up(tmp_path)
    _, (rec,) = convert(path)
    assert rec.rung == 1


def test_a_class_without_a_rate_keeps_the_ladders_choice(rates, tmp_path):
    rates({"copy": 0.1})
    _, path = _linear_up(tmp_path)
    _, (rec,) = convert(path, prefer="fastest")
    assert rec.rung == 1 and "cost" not in rec.extra


@pytest.mark.compiled
def test_calibration_times_each_rung_and_is_cached(monkeypatch, tmp_path):
    own = tmp_path / "cost.json"
    monkeypatch.setattr(cost, "cache_file", lambda: own)
    monkeypatch.setattr(cost, "_rates", None)
    real = cost.calibrate
    monkeypatch.setattr(cost, "calibrate", lambda: real(samplers=(("nearest", False),)))
    got = cost.rates()
    assert got["builtin/nearest/plain/up"] > 0 and got["copy"] > 0
    assert set(got) <= {"builtin/nearest/plain/up", "builtin/nearest/plain/down", "extension/nearest/plain/up",
                        "extension/nearest/plain/down", "copy", "layout"}
    assert got.get("layout", 0) >= 0  # the reorders around a custom op, measured between Conv layers
    # Once per machine: the next process reads the file.
    monkeypatch.setattr(cost, "_rates", None)
    monkeypatch.setattr(cost, "calibrate", lambda: pytest.fail("calibrated twice"))
    assert cost.rates() == got == json.loads(own.read_text())


@pytest.mark.compiled
def test_cli_prefer(tmp_path, capsys, rates):
    rates({"builtin/linear/plain/up": 1.0, "extension/linear/plain/up": 0.1, "copy": 0.0})
    _, path = _linear_up(tmp_path)
    assert main(["convert", path, "--prefer", "fastest", "-o", str(tmp_path / "o.xml")]) == 0
    out = capsys.readouterr().out
    assert "rung 4 (extension)" in out and "--prefer fastest" in out
    assert main(["convert", path, "--prefer", "fastest", "--target", "onnx", "-o", str(tmp_path / "o.onnx")]) == 2
    assert "--prefer applies to --target openvino only" in capsys.readouterr().err


def test_the_measured_layout_cost_outweighs_a_copy(rates, tmp_path):
    """The extension pays the reorders measured between Conv layers where they exceed a plain copy: a rate
    that wins alone by the margin (0.5 against 1.0 per output) loses once 2 ns per element in and out are
    charged."""
    rates({"builtin/linear/plain/up": 1.0, "extension/linear/plain/up": 0.5, "copy": 0.01, "layout": 2.0})
    m, path = _linear_up(tmp_path)
    ov_model, (rec,) = convert(path, prefer="fastest")
    assert rec.rung == 1, rec.summary()
    n_out, n_in = 4 * 48 * 40, 4 * 24 * 20
    assert rec.extra["cost"]["extension_ms"] == pytest.approx((0.5 * n_out + 2.0 * (n_in + n_out)) / 1e6)
