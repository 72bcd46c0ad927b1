"""A small fixed slice of the fuzz campaign (tools/fuzz.py) inside ``make test``: 42 cases over every family,
each through the real CLI, asserting no bad outcome (silently wrong, compile failure, hang, exit 3, a
refusal that is not one clean line naming node and field, leftovers, clobbered files ...).

The full campaign is ``make fuzz``; this slice keeps to the verbs that find the most per second (convert and
the numbers of what it wrote; check --target tensorrt for invalid and hostile input).
"""

from __future__ import annotations

import pytest

from resample_bridge.tools.fuzz import make_case, run_cases
from resample_bridge.tools.fuzz_classify import BAD

SEED = 20260
PER_FAMILY = {"resize": 9, "gridsample": 4, "deformconv": 3, "invalid": 12, "hostile": 8, "outpath": 6}
VERBS = {"convert-ov", "check-trt"}


def seed_cases():
    cases, i = [], 0
    for fam, n in PER_FAMILY.items():
        for _ in range(n):
            cases.append(make_case(SEED, i, (fam,)))
            i += 1
    return cases


@pytest.mark.xfail(strict=False, reason="issue 10 is still open: today this slice finds silently wrong integer "
                   "Resize, invalid models accepted, exit-3 errors, unclean refusals and TensorRT outputs "
                   "written 0600; make it a plain test once issue 10's fixes land")
def test_fuzz_seed_set_has_no_bad_outcome(tmp_path):
    results = run_cases(seed_cases(), SEED, out=str(tmp_path), timeout=60, jobs=2, verbs=VERBS)
    assert len(results) == sum(PER_FAMILY.values())
    bad = [r for r in results if r.outcome in BAD]
    assert not bad, "\n".join(f"{r.case.name} {r.outcome}: {r.case.label[:100]}\n    {r.detail[:300]}" for r in bad)
