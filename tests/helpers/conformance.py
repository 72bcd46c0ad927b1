"""The 62 ONNX conformance cases for Resize / Upsample / GridSample / DeformConv, built cheaply.

onnx builds its node test cases when their generator modules are imported; ``collect_testcases`` imports all
of them (~5 s of CPU, mostly pooling references) and ``tools.conformance.conformance_cases`` keeps the 62.
The 62 live in four generator modules: importing those alone, in the order ``collect_testcases`` walks them,
gives the same cases in the same order in ~0.5 s. ``tests/semantics/test_conformance.py`` checks that the two
selections stay equal."""

from __future__ import annotations

import functools
import importlib
import re
import warnings

from resample_bridge.tools.conformance import frozen_case  # noqa: F401  (re-exported for the test modules)

GENERATORS = ("deformconv", "gridsample", "resize", "upsample")  # alphabetical, as collect_testcases imports
RESAMPLING = re.compile("resize|upsample|gridsample|deform")


@functools.cache
def conformance_cases() -> tuple:
    """The resampling cases of ``onnx.backend.test.case.node``, each built once per process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow on purpose here and there
        node = importlib.import_module("onnx.backend.test.case.node")
        for name in GENERATORS:
            importlib.import_module(f"{node.__name__}.{name}")
    return tuple(c for c in node._NodeTestCases if RESAMPLING.search(c.name))


def conformance_case(name: str):
    """The conformance case called ``name``."""
    return next(c for c in conformance_cases() if c.name == name)
