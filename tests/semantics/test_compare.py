"""The comparator (semantics.compare) and the tolerance policy (semantics.tolerance): the typed result, the
strict-JSON dict verify reports (its keys and their order), NaN / infinity handling, the model outputs' fixed pairs and a node's float32 bound."""

import dataclasses
import json
import warnings
from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.semantics import tolerance
from resample_bridge.semantics.compare import CompareResult, compare
from resample_bridge.semantics.reference import run

_HEAD = ["dtype", "shape", "atol", "rtol"]


def test_equal_arrays_pass_with_verify_keys():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    c = compare(x, x.copy())
    assert isinstance(c, CompareResult) and c.ok and c.mismatches == 0 and c.first_mismatch is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.ok = False
    assert list(c.to_dict()) == _HEAD + ["max_abs", "mean_abs", "median_abs", "p99_abs", "max_rel", "mean_rel",
                                         "median_rel", "p99_rel", "ok", "mismatches", "worst", "got", "want"]
    assert (c.atol, c.rtol) == tolerance.FLOAT


def test_mismatch_names_worst_and_first_element():
    want = np.zeros((2, 3), np.float32)
    got = want.copy()
    got[0, 2], got[1, 1] = 1e-3, 1.0
    c = compare(got, want)
    assert not c.ok and c.mismatches == 2
    assert c.worst == (1, 1) and c.first_mismatch == (0, 2) and (c.got, c.want) == (1.0, 0.0)
    d = c.to_dict()
    assert d["worst"] == [1, 1] and d["ok"] is False and d["shape"] == [2, 3]


def test_shape_mismatch_and_empty_dicts():
    a = np.zeros((2, 3), np.float32)
    c = compare(a[:1], a)
    assert not c.ok and c.shape_mismatch == "[1, 3] vs [2, 3]"
    assert list(c.to_dict()) == _HEAD + ["ok", "shape_mismatch", "max_abs", "max_rel", "worst"]
    e = compare(a[:0], a[:0])
    assert e.ok and e.empty
    assert list(e.to_dict()) == _HEAD + ["ok", "max_abs", "max_rel", "mean_abs", "median_abs", "p99_abs", "mean_rel",
                                         "median_rel", "p99_rel", "worst"]


def test_nan_equals_nan_and_equal_infinities_are_equal():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    c = compare(x, x.copy())
    assert c.ok and c.both_nan == 1 and c.infinite == 2 and c.max_abs == 0.0
    bad = compare(x[::-1].copy(), x)
    assert not bad.ok and "max_abs" in bad.non_finite
    d = bad.to_dict()
    assert d["max_abs"] is None and "max_abs" in d["non_finite"]
    json.dumps(d, allow_nan=False)  # strict JSON


def test_infinite_distances_print_no_warning():
    """Two infinite distances: numpy's percentile interpolates inf - inf and warned on stderr, a stray line in the
    middle of convert's one-line refusal (measured on a Deformable DETR export whose OpenVINO run gives infinities)."""
    got = np.array([np.inf, 1.0, -np.inf, 1.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = compare(got, np.ones(4, np.float32))
    assert not c.ok and c.infinite == 2 and "max_abs" in c.non_finite


def test_atol_scales_with_the_data_unless_told():
    want = np.array([100.0, 0.0])
    got = want + np.array([0.0, 5e-4])
    assert compare(got, want).ok  # atol 1e-5 per unit of max|want| = 1e-3
    assert not compare(got, want, atol_scale=1.0).ok


def test_integers_are_bit_exact_and_model_outputs_keep_fixed_pairs():
    assert tolerance.default_tolerance(np.int32) == (0.0, 0.0)
    assert not compare(np.array([1, 2], np.int32), np.array([1, 3], np.int32)).ok
    assert tolerance.default_tolerance(np.float16) == tolerance.FLOAT16_REPORT
    assert tolerance.default_tolerance(np.float32) == tolerance.FLOAT
    assert tolerance.report_floor(np.array([0.5, -20.0])) == pytest.approx(20 * 1e-4)


def test_a_node_is_judged_by_the_float32_bound():
    """against_oracle: an implementation's float32 rounding of the formula passes, the same error where the
    bound is tight (a flat input: no coordinate term) does not; integers and nearest must be equal."""
    from resample_bridge.semantics.compare import against_oracle
    from resample_bridge.semantics.ir import ResizeIR, Sampler

    ir = ResizeIR(rank=2, axes=(1,), scales=(Fraction(3, 2),), sizes=None, roi=None, coord="half_pixel",
                  sampler=Sampler("linear"), input_shape=(1, 8), dtype="float32", origin="Resize-19")
    x = (np.arange(8, dtype=np.float32) * 1e5).reshape(1, 8)
    want = run(ir, x)
    bound = tolerance.float_bound(ir, x)
    assert (bound[:, 1:] > 0).all() and against_oracle(ir, want + 0.5 * bound, want, [x]).ok
    assert not against_oracle(ir, want + 2 * bound + 1e-3, want, [x]).ok
    nearest = dataclasses.replace(ir, sampler=Sampler("nearest", nearest="round_prefer_floor"))
    y = run(nearest, x)
    assert not tolerance.float_bound(nearest, x).any()
    assert not against_oracle(nearest, y + np.float32(1e-3), y, [x]).ok
