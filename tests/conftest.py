"""Shared fixtures."""

import pytest

from resample_bridge.translate.onnx import onnx_convention


@pytest.fixture
def reference_convention():
    """Parse ONNX as onnx.reference does: for tests whose expected numbers come from it (the conformance
    data). The default elsewhere is the spec text as the runtimes compute it."""
    with onnx_convention("reference"):
        yield
