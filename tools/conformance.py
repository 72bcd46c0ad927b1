"""The 62 ONNX conformance cases for the resampling ops, and their deployed ("frozen") form: shared by the
tests and the per-target conformance tables."""

from __future__ import annotations

from ..semantics.vocab import ONNX_RESIZE_OPS


def conformance_cases():
    """The 62 resampling cases of ``onnx.backend.test.case.node`` (Resize, Upsample, GridSample, DeformConv)."""
    import re
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        return [c for c in collect_testcases(None) if re.search("resize|upsample|gridsample|deform", c.name)]


def frozen_case(case):
    """(model, feeds, expected output): roi/scales/sizes as initializers, the deployed form; data inputs stay
    graph inputs."""
    import onnx
    from onnx import numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    node = m.graph.node[0]
    ins, outs = case.data_sets[0]
    keep, feeds = [], {}
    for vi, arr in zip(list(m.graph.input), ins):
        if node.op_type in ONNX_RESIZE_OPS and vi.name != node.input[0]:
            m.graph.initializer.append(numpy_helper.from_array(arr, vi.name))
        else:
            keep.append(vi)
            feeds[vi.name] = arr
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m, feeds, outs[0]
