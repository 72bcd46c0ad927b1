"""inspect and demo, through the real CLI entry point."""

import json

import onnx
import pytest

from resample_bridge.tools.cli import main
from tests.helpers.models import resize_model


def test_inspect_reports_the_20_to_6_ties(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 20, 20), sizes=[1, 1, 6, 6], name="nn", mode="nearest",
                           coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"), path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "H 20->6: src = 10/3*dst + 7/6, nearest(round_prefer_ceil), clamp" in out
    assert "ties: H output indices [1, 4]" in out
    assert main(["inspect", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["name"] == "nn" and row["op"] == "Resize-19"
    assert row["ties"] == {"H": [1, 4], "W": [1, 4]}
    assert row["ir"]["sampler"]["nearest"] == "round_prefer_ceil" and row["ir"]["sizes"] == [6, 6]
    assert row["ir"]["axes"] == [2, 3]  # N and C are copied (the spec convention)


def test_inspect_text_for_linear_half_pixel_upsample(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 3, 224, 224), scales=[1, 1, 2, 2], mode="linear"), path)
    assert main(["inspect", str(path)]) == 0
    assert "H 224->448: src = 1/2*dst - 1/4, linear, clamp" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.compiled
def test_demo_shows_every_op_kind(capsys):
    # the demo's main job is tested in test_demo.py; here: every op kind of the example goes through it
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for needle in ("nearest_ties_20_to_6", "scales_at_run_time", "crop_and_resize_extrapolate", "gridsample_5d",
                   "deform_conv_mask_bias"):
        assert out.count(needle) >= 3, needle  # in check, convert and verify
    assert "verify: PASSED" in out


def test_onnx_convention_flag(tmp_path, capsys):
    """align_corners with a fractional L*s (4 * 0.6 = 2.4): the spec text and the runtimes use the integer
    length 2, onnx.reference 2.4."""
    path = tmp_path / "m.onnx"
    onnx.save(resize_model((1, 1, 4, 4), scales=[1, 1, 0.6, 0.6], mode="linear",
                           coordinate_transformation_mode="align_corners"), path)
    assert main(["inspect", str(path)]) == 0
    assert "H 4->2: src = 3*dst, linear" in capsys.readouterr().out  # (4-1)/(2-1)
    assert main(["inspect", str(path), "--onnx-convention", "reference"]) == 0
    assert "H 4->2: src = ~2.142857*dst, linear" in capsys.readouterr().out  # (4-1)/(2.4-1)
