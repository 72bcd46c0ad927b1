"""A small fixed slice of the fuzz campaign (tools/dev/fuzz.py) inside ``make test-all`` (the slow tier), each case
through the real CLI and classified as the campaign does (silently wrong, compile failure, hang, exit 3, a refusal that
is not one clean line naming node and field, leftovers, clobbered files ...). The full campaign is ``make fuzz``.

* every generator of invalid models and hostile files once: refused by ``convert`` in one clean line naming
  node and field, nothing accepted, crashed, hung or left behind (fixed: asserted);
* exporters' spellings of a Resize's inputs: read by ``inspect`` (asserted);
* random valid models, exporters' forms and output-path faults through convert: written only when the converted
  model computes the oracle's numbers on OpenVINO CPU, else refused cleanly (asserted).
"""

from __future__ import annotations

import re

import pytest

from resample_bridge.tools.dev.fuzz import make_case, run_cases
from resample_bridge.tools.dev.fuzz_classify import BAD

SEED = 20260
pytestmark = pytest.mark.slow  # a campaign: each case through the CLI in a subprocess


def _generator(label: str) -> str:
    """A case's generator: its label without the values drawn at random."""
    return re.sub(r"[-\d.]+|'[^']*'|nan|inf", "#", label)


def one_per_generator(family: str, scan: int = 400) -> list:
    """The first case of each generator of ``family`` among the seed's first ``scan`` cases."""
    seen, cases = set(), []
    for i in range(scan):
        c = make_case(SEED, i, (family,))
        key = _generator(c.label)
        if key not in seen:
            seen.add(key)
            cases.append(c)
    return cases


# Outcomes the translate side answers for on invalid input (validation at load, clean refusals); a refusal
# that names no node or field is checked by the classifier (BAD-MESSAGE "names no ...").
VALIDATION = {"ACCEPTED-INVALID", "INTERNAL-ERROR", "HANG", "CLOBBERED", "LEFTOVER"}
# Generators of valid-but-hostile inputs whose outcomes are the lowering's (run by the convert test below).
LOWERING_OPEN = ("2^30-element input",)


def _validation_failures(results) -> str:
    bad = [r for r in results if r.outcome in VALIDATION
           or any(c.outcome == "BAD-MESSAGE" and "names no" in c.detail for c in r.calls)]
    return _failures(bad, everything=True)


def _failures(results, everything=False) -> str:
    bad = [r for r in results if everything or r.outcome in BAD]
    return "\n".join(f"{r.case.name} {r.outcome}: {r.case.label[:100]}\n    {r.detail[:300]}" for r in bad)


def test_every_invalid_model_and_hostile_file_is_refused_cleanly(tmp_path):
    """Every generator of invalid models and hostile files (fuzz_bad.py) once, through ``convert``: refused
    with exit 2 in one line naming node and field (the file, for hostile files), nothing accepted, crashed,
    hung or left behind."""
    cases = [c for c in one_per_generator("invalid") + one_per_generator("hostile")
             if not c.label.startswith(LOWERING_OPEN)]
    assert len(cases) >= 90  # every generator, not a lucky few
    for c in cases:
        c.feeds = []  # refusals and file handling are checked here; numbers of valid ones in make fuzz
    # convert only: every verb and target reads the model through the same translate.onnx.load (the
    # TensorRT check's refusals are covered by tests/test_regressions.py); a minute is the budget
    results = run_cases(cases, SEED, out=str(tmp_path), timeout=60, jobs=2, verbs={"convert-ov"})
    assert not _validation_failures(results), _validation_failures(results)


def test_exporter_input_forms_are_read_as_the_plain_form(tmp_path):
    """Exporters' spellings of roi / scales / sizes (empty tensors in every spelling, Shape chains, unnamed
    nodes): ``inspect`` reads them without a bad outcome (converting them is in the convert test below)."""
    cases = [make_case(SEED, i, ("forms",)) for i in range(8)]
    results = run_cases(cases, SEED, out=str(tmp_path), timeout=60, jobs=2, verbs={"inspect"})
    assert not _failures(results), _failures(results)
    assert all(c.rc == 0 for r in results for c in r.calls), [(r.case.label, r.detail) for r in results]


def test_random_valid_models_forms_and_output_paths_have_no_bad_outcome(tmp_path):
    per_family = {"resize": 3, "gridsample": 1, "deformconv": 1, "forms": 2, "outpath": 2}
    cases = [make_case(SEED, i, (fam,)) for fam, n in per_family.items() for i in range(n)]
    cases += [c for c in one_per_generator("invalid") if c.label.startswith(LOWERING_OPEN)]
    results = run_cases(cases, SEED, out=str(tmp_path), timeout=60, jobs=2, verbs={"convert-ov"})
    assert not _failures(results), _failures(results)
