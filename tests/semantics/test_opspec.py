"""The op registry (issue 41): every layer's table names every op, and a lookup outside the registry's ops is a
one-line BridgeError, as the switches it replaced gave."""

import inspect

import pytest

from resample_bridge.semantics import opspec
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import DeformConvIR, GridSampleIR, ResizeIR
from resample_bridge.semantics.opspec import SPECS, PerOp, of_onnx_op, spec


def test_a_table_that_forgets_an_op_fails_when_it_is_made():
    with pytest.raises(TypeError, match=r"missing \['deformconv'\]"):
        PerOp("half a table", resize=len, gridsample=len)
    with pytest.raises(TypeError, match=r"unknown \['affinegrid'\]"):
        PerOp("a table ahead of the registry", resize=len, gridsample=len, deformconv=len, affinegrid=len)


def test_lookups_name_what_is_missing():
    table = PerOp("t", resize=None, gridsample=len, deformconv=len)
    with pytest.raises(BridgeError, match="not an IR value: str"):
        table.of("resize")
    with pytest.raises(BridgeError, match="t: nothing for resize"):
        table.of(ResizeIR.__new__(ResizeIR))
    assert table.get_for(ResizeIR.__new__(ResizeIR), "none") == "none"


def test_the_registry_covers_the_ir_classes_and_the_onnx_ops():
    assert {s.ir for s in SPECS.values()} == {ResizeIR, GridSampleIR, DeformConvIR}
    assert all(spec(s.ir) is s and s.kind == s.ir.kind for s in SPECS.values())
    assert of_onnx_op("Upsample") is SPECS["resize"] and of_onnx_op("Relu") is None


def test_every_layer_table_follows_the_registry():
    """The tables the layers keep (loaded with their modules) each name exactly the registry's ops."""
    from resample_bridge.lowering.onnx import rungs, target as onnx_target
    from resample_bridge.lowering.openvino import cost_ops, ladder
    from resample_bridge.semantics import error_bound, reference, text

    for table in (reference.ORACLE, error_bound.BOUND, text.DESCRIBE, ladder.LADDERS, rungs.DECOMPOSABLE,
                  onnx_target.DECOMPOSITIONS, cost_ops.COST_OPS):
        assert set(table) == set(opspec.SPECS), table.what


def test_arrays_are_what_the_oracle_reads():
    """An op's ``arrays`` (its inputs less the parameters its IR holds) are the oracle's named array arguments,
    in order: the ONNX proof feeds and hands the oracle exactly those."""
    from resample_bridge.semantics import reference

    for kind, s in SPECS.items():
        params = list(inspect.signature(reference.ORACLE[kind]).parameters.values())[1:]
        named = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert len(named) == len(s.arrays) >= 1, kind
        assert s.inputs[len(s.arrays):] == s.parameters, kind
