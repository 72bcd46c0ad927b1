"""The TensorRT target on the pass interface (lowering/passes.py): its rungs, one NodeRecord per node, the climb's
preferences (exact without assumptions first, then, unless strict, exact with them; the plugin last), the
policy's floor, and the plugin schema derived from semantics/schema.py."""

import pytest

from resample_bridge.lowering import passes
from resample_bridge.lowering import tensorrt as low
from resample_bridge.semantics import schema
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.translate import onnx_tensorrt
from resample_bridge.translate import tensorrt as ttrt
from tests.helpers.conformance import conformance_cases, frozen_case
from tests.helpers.models import resize_model


def _case(name):
    return frozen_case(next(c for c in conformance_cases() if c.name == name))[0]


def test_rungs_keep_the_numbering_and_names():
    rungs = low.TARGET.rungs(passes.Policy())
    assert [r.number for r in rungs] == [1, 2, 2, 3, 4]  # 3: the tap-table decomposition
    assert [r.name for r in rungs] == ["native", "native after exact rewrite", "native after exact rewrite",
                                       "decomposition", "plugin"]
    assert isinstance(low.TARGET, passes.Target) and low.TARGET.name == "tensorrt"


def _became(source, result) -> int:
    """What lowering made of a one-node model, in the pass interface's numbers (lowering/passes.py): the node
    unchanged is a built-in op; one standard op spelled otherwise, a built-in op after a rewrite; several
    standard nodes, a decomposition; a node in the plugin's domain, a custom op."""
    nodes = list(result.model.graph.node)
    if any(n.domain == schema.DOMAIN for n in nodes):
        return passes.CUSTOM
    if len(nodes) > 1:
        return passes.DECOMPOSE
    (node,), (src,) = nodes, source.graph.node
    return passes.BUILTIN if _spelling(node) == _spelling(src) else passes.REWRITE


def _spelling(node):
    """The node as the importer reads it: its name (which lowering gives it) aside."""
    return node.op_type, node.domain, list(node.input), list(node.output), sorted(
        (a.name, a.SerializeToString()) for a in node.attribute)


# One node per rung that only that rung takes (under the given strictness), and the rung's name.
RUNG_EXAMPLES = {
    "native": (lambda: _case("test_resize_upsample_scales_linear"), False),
    "native after exact rewrite": (lambda: _case("test_gridsample_bilinear"), False),  # GridSample-20 respelled
    "decomposition": (lambda: _case("test_resize_upsample_scales_cubic"), True),  # static: tap tables
    "plugin": (lambda: resize_model((1, 1, "h", 8), scales=[1, 1, 0.5, 0.5], mode="cubic"), True),  # dynamic
}


@pytest.mark.parametrize("name", RUNG_EXAMPLES)
def test_rung_numbers_and_names_say_what_the_node_became(name):
    """The record's rung number and name against what was written (not against the table that names them)."""
    build, strict = RUNG_EXAMPLES[name]
    model = build()
    result = low.lower(model, strict=strict)
    (rec,) = result.records
    assert (rec.rung, rec.rung_name) == (_became(model, result), name)


def test_records_are_node_records():
    result = low.lower(_case("test_gridsample_bilinear"))
    assert isinstance(result, passes.PassResult) and result.refused == []
    (rec,) = result.records
    assert isinstance(rec, passes.NodeRecord) and rec.target == "tensorrt"
    assert (rec.rung, rec.rung_name) == (2, "native after exact rewrite")
    assert rec.extra["importer"]["verdict"] == "silently different"
    assert rec.proof["spelling"]["op_type"] == "GridSample" and rec.produced == [rec.node]
    assert rec.tried and rec.tried[0][0] == 1  # the node as it is was asked first, and said why not
    from resample_bridge.lowering.record_format import records_json

    assert records_json(result.records)[0]["rung"] == 2


def test_strict_records_why_the_assumed_candidate_was_not_taken():
    model = _case("test_resize_upsample_scales_cubic")  # exact only if edge taps replicate (undocumented)
    (rec,) = low.plan_model(model)[1]
    assert rec.rung == 1 and rec.assumptions
    (rec,) = low.plan_model(model, strict=True)[1]
    assert rec.rung == low.DECOMPOSE and rec.assumptions == []  # a static shape: the decomposition
    assert any(n == 1 and why.startswith("rests on: ") for n, _, why in rec.tried)


def test_an_assumed_native_verdict_beats_the_fallbacks_unless_strict():
    model = _case("test_resize_downsample_scales_cubic")
    assert low.plan_model(model)[1][0].rung == 1
    assert low.plan_model(model, strict=True)[1][0].rung == 3
    dynamic = resize_model((1, 1, "h", 8), scales=[1, 1, 0.5, 0.5], mode="cubic")  # no tap tables: the plugin
    assert low.plan_model(dynamic)[1][0].rung == 1
    assert low.plan_model(dynamic, strict=True)[1][0].rung == 4


def test_decomposition_is_proven_and_integers_go_to_the_plugin():
    from onnx import TensorProto

    model = resize_model((1, 1, 8, 8), sizes=[1, 1, 3, 5], mode="linear", antialias=1)
    (rec,) = low.lower(model).records
    assert rec.rung == 3 and rec.produced and rec.node not in rec.produced
    ops = {n.op_type for n in low.lower(model).model.graph.node}
    assert ops <= {"Gather", "Mul", "Add"}  # layers TensorRT has, no float64
    # float64 would be needed to round integers exactly; TensorRT has none, so the plugin takes them (int8: uint8
    # antialias is onnxruntime's fixed point, which the plugin's kernels do not compute).
    (rec,) = low.lower(resize_model((1, 1, 8, 8), sizes=[1, 1, 3, 5], mode="linear", antialias=1,
                                    dtype=TensorProto.INT8)).records
    assert rec.rung == 4 and any(n == 3 and "dtype policy" in why for n, _, why in rec.tried)


def test_a_split_is_preferred_to_an_assumed_native_verdict():
    # Nearest over 4 axes: the importer maps it (NvInfer.h: 8 axes) but rests on how ties round; the passes
    # within the 3 axes both TensorRT documents promise rest on it too, and are taken.
    model = resize_model((2, 2, 4, 4), sizes=[3, 3, 6, 6], mode="nearest", nearest_mode="round_prefer_floor",
                         coordinate_transformation_mode="half_pixel")
    (rec,) = low.plan_model(model)[1]
    assert rec.extra["importer"]["verdict"] == "exact" and rec.extra["importer"]["assumptions"]
    assert rec.rung == 2 and "split into 2 passes" in rec.reason and rec.assumptions
    assert any(n == 1 and "split into passes is preferred" in why for n, _, why in rec.tried)


def test_policy_floor_sends_every_node_to_the_plugin():
    result = low.TARGET(_case("test_gridsample_bilinear"), passes.Policy(floor=passes.CUSTOM))
    (rec,) = result.records
    assert rec.rung == 4 and result.model.graph.node[0].op_type == "ResampleBridgeGridSample"


def test_refused_node_reason_and_nothing_written():
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], mode="linear")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", f, [1, 1, 4, 5]),
                                        helper.make_tensor_value_info("sc", f, [4])],
                          [helper.make_tensor_value_info("Y", f, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    (rec,) = low.plan_model(model)[1]
    assert rec.refused and rec.reason.endswith("make them initializers")
    assert "the plugin cannot take it either" in rec.reason
    with pytest.raises(BridgeError, match="node 'Resize_0', field 'scales': onnx-tensorrt"):
        low.lower(model)


PLUGIN_EXAMPLES = {"resize": "test_resize_downsample_scales_cubic_antialias", "gridsample": "test_gridsample_bicubic",
                   "deformconv": "test_deform_conv_with_mask_bias"}


@pytest.mark.parametrize("kind", PLUGIN_EXAMPLES)
def test_plugin_fields_come_from_the_schema(kind):
    """The plugin node lowering writes, against semantics/schema.py (op type, domain, the IR's fields) and
    against PLUGIN_ATTRIBUTES, the table that documents it: all written, all listed (an empty INTS left out)."""
    result = low.TARGET(_case(PLUGIN_EXAMPLES[kind]), passes.Policy(floor=passes.CUSTOM))
    (node,) = result.model.graph.node
    assert (node.op_type, node.domain) == (schema.OP_TYPES[kind], schema.DOMAIN)
    written = {a.name for a in node.attribute}
    own = {f.name for f in schema.fields(kind, "tensorrt")}
    may_be_absent = {f.name for f in schema.fields(kind, "tensorrt") if f.type == "INTS"} | {
        "tensorrt_plugin_shape_input_indices"}  # the sizes shape input: none here
    assert own - written <= may_be_absent
    listed = set(low.PLUGIN_ATTRIBUTES[node.op_type]) | set(low.PLUGIN_ATTRIBUTES["common"])
    assert written <= listed and listed - written <= may_be_absent
    assert {"plugin_namespace", "plugin_version", "rb_schema", "rb_origin"} <= written - own
    assert "spatial_rank" not in low.PLUGIN_ATTRIBUTES["ResampleBridgeGridSample"]  # read from the input's rank
    assert not set(low.PLUGIN_ATTRIBUTES["common"]) & {f.name for k in schema.KINDS for f in schema.fields(k)}


def test_translate_tensorrt_still_names_the_importer():
    assert ttrt.import_node is onnx_tensorrt.import_node and ttrt.Imported is onnx_tensorrt.Imported
    with pytest.raises(AttributeError):
        ttrt.no_such_name  # noqa: B018


def test_proof_catches_a_tampered_decomposition():
    import numpy as np
    from onnx import numpy_helper

    model = resize_model((1, 1, 8, 8), sizes=[1, 1, 3, 5], mode="linear", antialias=1, name="aa")
    result = low.lower(model)
    assert low.prove(result.model, result.records) == []
    for init in result.model.graph.initializer:
        if init.name == "aa/taps3/weight":
            w = numpy_helper.to_array(init).copy()
            w.flat[0] += np.float32(2.0**-20)  # one weight one ulp-ish off
            init.CopyFrom(numpy_helper.from_array(w, init.name))
    failures = low.prove(result.model, result.records)
    assert failures and all(f.startswith("aa:") for f in failures) and "tables differ" in failures[0]
