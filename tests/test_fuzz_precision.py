"""A slice of ``tools/dev/fuzz_precision.py`` inside ``make test-all`` (the slow tier): fuzz cases with a Conv after the
resampling node, converted with the default and run at OpenVINO's default precision (bf16 on this CPU): no nearest pick
moves, no value strays past bf16 rounding. Measured with the f32 pin taken out of the in-graph samplers: 18 of the 81
GridSample cases judged here moved a pick or a sample (seed 7)."""

from __future__ import annotations

import pytest

pytest.importorskip("openvino")

from resample_bridge.tools.dev import fuzz_precision  # noqa: E402

pytestmark = pytest.mark.slow  # a campaign: every case converted and compiled twice


@pytest.fixture(autouse=True)
def _reduced():
    if not fuzz_precision.default_is_reduced():
        pytest.skip("this CPU's default inference precision is f32: nothing is reduced here")


def test_gridsample_cases_move_no_index_at_the_default_precision():
    counts = fuzz_precision.campaign(7, 120, ("gridsample",))
    assert counts["moved"] == 0 and counts["ok"] >= 60, counts


def test_every_valid_family_at_the_default_precision():
    counts = fuzz_precision.campaign(8, 80, fuzz_precision.VALID)
    assert counts["moved"] == 0 and counts["ok"] >= 20, counts
