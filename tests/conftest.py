"""Shared fixtures, and the tiers: markers a test module need not spell itself."""

import functools
import inspect
import os
import re
from pathlib import Path

import pytest

from resample_bridge.translate.onnx import onnx_convention

# The default policy's cost model decides by the shipped reference rates in every test, subprocesses included,
# so the rungs tests assert (and the README tour prints) are the same on every machine, built extension or not;
# tests/lowering/test_openvino_cost.py gives its own tables.
os.environ["RESAMPLE_BRIDGE_COST_TABLE"] = str(Path(__file__).resolve().parent.parent / "lowering" / "openvino" /
                                               "cost_reference.json")


@pytest.fixture
def reference_convention():
    """Parse ONNX as onnx.reference does: for tests whose expected numbers come from it (the conformance
    data). The default elsewhere is the spec text as the runtimes compute it."""
    with onnx_convention("reference"):
        yield


# A test needs OpenVINO when its module asks for it at the top, or the test itself does.
OPENVINO_AT_TOP = re.compile(r'^(?:\w+ = )?pytest\.importorskip\("openvino"\)|^(?:import|from) openvino\b', re.M)
OPENVINO_IN_TEST = re.compile(r'importorskip\("openvino"\)|\b(?:import|from) openvino\b')


@functools.cache
def _module_needs_openvino(path: str) -> bool:
    return bool(OPENVINO_AT_TOP.search(Path(path).read_text(encoding="utf-8")))


def _needs_openvino(item) -> bool:
    if _module_needs_openvino(str(item.path)):
        return True
    try:
        return bool(OPENVINO_IN_TEST.search(inspect.getsource(item.function)))
    except (OSError, TypeError):
        return False


def pytest_collection_modifyitems(config, items):
    """``openvino`` on every test that imports it (module or test); the other markers (``compiled``, ``cuda``,
    ``slow``) are spelled where the test is, since no import says a test builds C++ or takes long."""
    for item in items:
        if isinstance(item, pytest.Function) and _needs_openvino(item):
            item.add_marker(pytest.mark.openvino)
