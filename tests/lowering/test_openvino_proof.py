"""OpenVINO: every candidate proven by numbers against the oracle before the ladder takes it, the whole model
compiled, conditional conversions only with allow_conditional, and every exporter form through convert."""

import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering import openvino as low  # noqa: E402
from resample_bridge.lowering.openvino.probe import __name__ as _probe_module  # noqa: E402
from resample_bridge.lowering.openvino.ladder import Node, policy_for  # noqa: E402
from resample_bridge.lowering.openvino.target import CONDITION_KEY  # noqa: E402
from resample_bridge.lowering.passes import BUILTIN, CUSTOM, DECOMPOSE, NodeRecord, Policy, Rung, climb  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import onnx_convention, parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

F = TP.FLOAT
probe = sys.modules[_probe_module]  # the package's own ``probe`` attribute is check.probe, a function
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def _onnxruntime(model, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _openvino(ov_model, feeds, extension=False):
    core = ov.Core()
    if extension:
        from resample_bridge.lowering.compiled import openvino_extension

        core.add_extension(openvino_extension())
    compiled = core.compile_model(ov_model, "CPU", F32)
    return [np.asarray(v) for v in compiled(feeds).values()]


def _convert(model, tmp_path, **kw):
    p = tmp_path / "m.onnx"
    onnx.save(model, p)
    return low.convert(str(p), **kw)


# ----------------------------------------------------------------------------------------------------------
# The probe inside the ladder, on hand-made rungs


def _node(ir_model, shape=(1, 1, 3, 3)):
    (name, ir), = parse_model(ir_model)
    x = ov.opset13.parameter(list(shape), np.float32)
    return Node(name, ir, [x.output(0), None, None, None])


def _interpolate(x, scales, mode, axes=None):
    import openvino.opset11 as o

    return o.interpolate(x, o.constant(np.array(scales, np.float32)), mode, "scales",
                         coordinate_transformation_mode="half_pixel",
                         axes=None if axes is None else o.constant(np.array(axes, np.int64)))


def _candidate(build):
    from resample_bridge.lowering.passes import Candidate

    return lambda node: Candidate([build(node).output(0)], "test-only candidate")


def _decomposition():
    from resample_bridge.lowering.openvino import decompose

    return probe.proven(Rung(DECOMPOSE, "decomposition", decompose.rung))


def test_a_candidate_the_plugin_refuses_goes_to_the_next_rung_with_the_plugins_sentence():
    probe.clear_cache()
    m = resize_model((2, 1, 3, 3), scales=[2, 1, 1, 1], mode="linear")
    node = _node(m, (2, 1, 3, 3))
    refused = probe.proven(Rung(BUILTIN, "native", _candidate(
        lambda n: _interpolate(n.inputs[0], [2, 1, 1, 1], "linear_onnx"))))
    rec = NodeRecord(node.name, "Resize", node.ir, "openvino")
    climbed = climb([refused, _decomposition()], node, rec, Policy(allow_conditional=False))
    chosen, rec = climbed.candidate, climbed.record
    assert chosen is not None and rec.rung == DECOMPOSE
    (number, _, why), = rec.tried
    assert number == BUILTIN
    assert "only supports resize on spatial dimensions" in why
    assert "src/" not in why and "Exception from" not in why and "\n" not in why


def test_a_wrong_candidate_is_refused_by_the_numbers():
    probe.clear_cache()
    m = resize_model((1, 1, 3, 3), scales=[1, 1, 2, 2], mode="linear")
    node = _node(m)
    wrong = probe.proven(Rung(BUILTIN, "native", _candidate(   # nearest where the node is linear
        lambda n: _interpolate(n.inputs[0], [2, 2], "nearest", axes=[2, 3]))))
    rec = NodeRecord(node.name, "Resize", node.ir, "openvino")
    rec = climb([wrong, _decomposition()], node, rec, Policy(allow_conditional=False)).record
    assert rec.rung == DECOMPOSE
    why = rec.tried[0][2]
    assert "differs from the oracle" in why and "worst element" in why
    got = probe.proven(Rung(BUILTIN, "native", _candidate(
        lambda n: _interpolate(n.inputs[0], [2, 2], "nearest", axes=[2, 3])))).lower(_node(m))
    assert got.field == "X"
    # what was probed is on the record of a taken candidate
    assert rec.proof["probes"]["count"] >= 3 and rec.proof["probes"]["max_abs"] < 1e-5 * 1e6  # 1e6-sized probes


def test_the_verdict_is_cached_per_rung_ir_and_shapes(tmp_path, monkeypatch):
    probe.clear_cache()
    calls = []
    measure = probe._measure
    monkeypatch.setattr(probe, "_measure", lambda *a: calls.append(a[0].number) or measure(*a))
    sc = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
    nodes = [helper.make_node("Resize", [f"x{i}", "", "sc"], [f"y{i}"], name=f"r{i}", mode="linear")
             for i in range(5)]
    g = helper.make_graph(nodes, "g", [vi(f"x{i}", [1, 2, 5, 5]) for i in range(5)],
                          [vi(f"y{i}", None) for i in range(5)], [sc])
    _, records = _convert(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), tmp_path)
    assert [r.rung for r in records] == [BUILTIN] * 5
    assert calls == [BUILTIN]
    assert all(r.proof["probes"]["count"] >= 3 for r in records)


def test_dynamic_lengths_are_probed_on_several_shapes(tmp_path):
    probe.clear_cache()
    sc = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
    g = helper.make_graph([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="r", mode="nearest")], "g",
                          [vi("x", ["n", 3, "h", "w"])], [vi("y", None)], [sc])
    ov_model, (rec,) = _convert(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), tmp_path)
    probes = rec.proof["probes"]
    assert len({tuple(s) for s in probes["shapes"]}) >= 3 and probes["count"] >= 9
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
    (want,) = _onnxruntime(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), {"x": x})
    (got,) = _openvino(ov_model, [x], extension=rec.rung == CUSTOM)
    np.testing.assert_array_equal(got, want)


def test_plugin_sentence_keeps_the_meaning_only():
    text = ("Exception from src/inference/src/cpp/core.cpp:117:\nException from src/plugins/intel_cpu/src/nodes/"
            "interpolate.cpp:2513:\n[CPU] Interpolate node with name 'I' only supports resize on spatial "
            "dimensions(depth, height and width)\n\n")
    s = probe.plugin_sentence(text)
    assert s.startswith("Interpolate node with name 'I' only supports resize on spatial")
    assert "src/" not in s and "Exception" not in s


# ----------------------------------------------------------------------------------------------------------
# Conditional conversions


def _runtime_scales_model(coord="half_pixel"):
    """Linear on H, W with its scales fed at run time."""
    n = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", coordinate_transformation_mode=coord,
                         axes=[2, 3], name="rt")
    g = helper.make_graph([n], "g", [vi("x", [1, 2, 8, 8]), vi("s", [2])], [vi("y", None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def test_policy_for():
    assert policy_for() == Policy(allow_conditional=False, prefer="fastest")  # the default: the cost model decides
    assert policy_for(allow_conditional=True).allow_conditional
    assert not policy_for(strict=True, allow_conditional=True).allow_conditional
    assert policy_for("extension").floor == CUSTOM


@pytest.mark.compiled
def test_conditional_candidates_need_allow_conditional(tmp_path):
    """Linear align_corners with run-time scales under the reference convention (it divides by the fractional
    L*s - 1): no run-time scale form takes it, Interpolate fed the scales divides by the integer length."""
    probe.clear_cache()
    m = _runtime_scales_model(coord="align_corners")
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    broken = np.array([1.3, 1.3], np.float32)  # 8*1.3 = 10.4: not an integer, the condition fails
    with onnx_convention("reference"):
        (_, ir), = parse_model(m)
        want = run(ir, x, None, broken, None)

        ov_model, (rec,) = _convert(m, tmp_path)   # default: exact for every run-time value
        assert rec.rung == CUSTOM and rec.condition is None
        assert any("exact only if" in why for _, _, why in rec.tried)
        assert "--allow-conditional" in rec.reason
        assert CONDITION_KEY not in ov_model.get_rt_info()
        np.testing.assert_allclose(_openvino(ov_model, [x, broken], extension=True)[0], want, atol=1e-5)

        ov_model, (rec,) = _convert(m, tmp_path, allow_conditional=True)
        assert rec.rung == BUILTIN and "L*s is an integer" in rec.condition
        assert np.abs(_openvino(ov_model, [x, broken])[0] - want).max() > 1e-2  # the condition is real
        assert rec.proof["probes"]["count"] >= 1
        ov.save_model(ov_model, str(tmp_path / "c.xml"))
        carried = ov.Core().read_model(str(tmp_path / "c.xml")).get_rt_info()
        assert "L*s is an integer" in str(carried[CONDITION_KEY].astype(str))

        _, (rec,) = _convert(m, tmp_path, allow_conditional=True, strict=True)
        assert rec.rung == CUSTOM and rec.condition is None


# ----------------------------------------------------------------------------------------------------------
# Every exporter form through convert


def _sc(values, name="sc"):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def _if_model():
    then = helper.make_graph([helper.make_node("Resize", ["X", "", "sc"], ["t"], name="up_linear", mode="linear")],
                             "then", [], [vi("t", None)])
    other = helper.make_graph([helper.make_node("Resize", ["X", "", "sc"], ["e"], name="up_nearest")],
                              "else", [], [vi("e", None)])
    g = helper.make_graph([helper.make_node("If", ["c"], ["Y"], name="if", then_branch=then, else_branch=other)],
                          "g", [vi("X", [1, 1, 4, 4]), vi("c", [], TP.BOOL)], [vi("Y", None)], [_sc([1, 1, 2, 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _loop_model():
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]), helper.make_node("Identity", ["v"], ["vo"]),
         helper.make_node("Resize", ["v", "", "sc"], ["r"], name="inner", mode="cubic")],
        "body", [vi("i", [], TP.INT64), vi("ci", [], TP.BOOL), vi("v", [1, 1, 4, 4])],
        [vi("co", [], TP.BOOL), vi("vo", [1, 1, 4, 4]), vi("r", [1, 1, 8, 6])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "X"], ["V", "Y"], name="loop", body=body)], "g",
                          [vi("X", [1, 1, 4, 4])], [vi("V", None), vi("Y", None)],
                          [_sc([1, 1, 2, 1.5]), numpy_helper.from_array(np.array(2, np.int64), "M")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _function_model():
    fn = helper.make_function("local", "Up", ["a", "s"], ["b"],
                              [helper.make_node("Resize", ["a", "", "", "s"], ["b"], mode="linear", name="inner")],
                              opset_imports=[helper.make_opsetid("", 13)])
    g = helper.make_graph([helper.make_node("Up", ["X", "sz"], ["Y"], domain="local", name="call")], "g",
                          [vi("X", [1, 1, 4, 4])], [vi("Y", None)],
                          [numpy_helper.from_array(np.array([1, 1, 8, 6], np.int64), "sz")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
                             functions=[fn])


@pytest.mark.parametrize("build,feeds", [
    (_if_model, {"c": np.array(True)}), (_if_model, {"c": np.array(False)}), (_loop_model, {}),
    (_function_model, {})], ids=["if-then", "if-else", "loop", "function"])
def test_bodies_and_functions_convert_and_compute_onnxruntimes_numbers(tmp_path, build, feeds):
    m = build()
    x = np.random.default_rng(5).standard_normal((1, 1, 4, 4)).astype(np.float32)
    feeds = {"X": x, **feeds}
    ov_model, records = _convert(m, tmp_path)
    names = sorted(n for n, _ in parse_model(m))
    assert sorted(r.node for r in records) == names   # the names inspect shows
    assert all(r.rung is not None for r in records)
    want = _onnxruntime(m, feeds)
    order = [p.get_any_name() for p in ov_model.inputs]
    got = _openvino(ov_model, [feeds[n] for n in order], extension=any(r.rung == CUSTOM for r in records))
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-5)


def _vf(out):
    n = helper.make_node("Constant", [], [out])
    n.attribute.append(helper.make_attribute("value_floats", [], attr_type=onnx.AttributeProto.FLOATS))
    return n


def _empty_form(form):
    """Resize(X, roi, scales, sizes) with roi and scales empty, spelled as one exporter or another."""
    e = lambda n, dt=np.float32: numpy_helper.from_array(np.zeros(0, dt), n)  # noqa: E731
    nodes, inits = {
        "initializer": ([], [e("roi"), e("scales")]),
        "constant-value": ([helper.make_node("Constant", [], ["roi"], value=e("a")),
                            helper.make_node("Constant", [], ["scales"], value=e("b"))], []),
        "value_floats": ([_vf("roi"), _vf("scales")], []),
        "identity-cast": ([_vf("r0"), helper.make_node("Identity", ["r0"], ["roi"]),
                           helper.make_node("Constant", [], ["s0"], value=e("d", np.float64)),
                           helper.make_node("Cast", ["s0"], ["scales"], to=F)], []),
    }[form]
    sizes = numpy_helper.from_array(np.array([1, 1, 8, 6], np.int64), "sizes")
    g = helper.make_graph(nodes + [helper.make_node("Resize", ["X", "roi", "scales", "sizes"], ["Y"], name="r",
                                                    mode="cubic")],
                          "g", [vi("X", [1, 1, 4, 3])], [vi("Y", None)], [sizes] + inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("form", ["initializer", "constant-value", "value_floats", "identity-cast"])
def test_empty_constant_forms_convert(tmp_path, form):
    m = _empty_form(form)
    (_, ir), = parse_model(m)
    ov_model, (rec,) = _convert(m, tmp_path)
    assert rec.ir == ir and rec.rung in (BUILTIN, DECOMPOSE)   # what inspect reads; exact for every value
    x = np.random.default_rng(6).standard_normal((1, 1, 4, 3)).astype(np.float32)
    # the oracle: onnxruntime's shape inference refuses the Identity/Cast spelling that exporters write
    np.testing.assert_allclose(_openvino(ov_model, [x])[0], run(ir, x, None, None, None), rtol=1e-5, atol=1e-5)
    if form == "initializer":
        np.testing.assert_allclose(_openvino(ov_model, [x])[0], _onnxruntime(m, {"X": x})[0], rtol=1e-5, atol=1e-5)


def test_resize_of_a_constant_is_proven_by_value(tmp_path):
    """A ViT position embedding: Resize(Transpose(initializer)) that OpenVINO folds into a Constant."""
    emb = numpy_helper.from_array(np.random.default_rng(7).standard_normal((1, 4, 4, 8)).astype(np.float32), "emb")
    nodes = [helper.make_node("Transpose", ["emb"], ["t"], perm=[0, 3, 1, 2]),
             helper.make_node("Resize", ["t", "", "", "sz"], ["r"], name="posembed", mode="cubic"),
             helper.make_node("Add", ["X", "r"], ["Y"])]
    g = helper.make_graph(nodes, "g", [vi("X", [1, 8, 6, 7])], [vi("Y", None)],
                          [emb, numpy_helper.from_array(np.array([1, 8, 6, 7], np.int64), "sz")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    ov_model, (rec,) = _convert(m, tmp_path)
    assert rec.proof["by_value"]["shape"] == [1, 8, 6, 7]
    x = np.zeros((1, 8, 6, 7), np.float32)
    (want,) = _onnxruntime(m, {"X": x})
    np.testing.assert_allclose(_openvino(ov_model, [x])[0], want, rtol=1e-5, atol=1e-5)


def test_a_model_that_does_not_compile_is_refused_in_one_line(tmp_path, monkeypatch):
    """The whole model is compiled before it is returned: a failure there is a BridgeError, not a traceback."""
    m = resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear")

    def refuse(self, *a, **k):
        raise RuntimeError("Exception from src/inference/src/cpp/core.cpp:117:\n[CPU] cannot compile this\n")

    monkeypatch.setattr(ov.Core, "compile_model", refuse)
    monkeypatch.setattr(probe, "_compile", lambda model, rung: object())  # let the ladder through
    monkeypatch.setattr(probe, "_measure", lambda *a: {"count": 0})
    probe.clear_cache()
    with pytest.raises(BridgeError) as e:
        _convert(m, tmp_path)
    assert "cannot compile this" in str(e.value) and "\n" not in str(e.value) and "src/" not in str(e.value)
    probe.clear_cache()


@pytest.mark.parametrize("configs", [
    # two decomposed nodes with the same IR on the same input: OpenVINO merges them whole, one tag survives
    [("cubic_xo", [1, 3, 12, 12]), ("cubic_xo", [1, 3, 12, 12])],
    # the same H mapping, another W: only the H tables are merged
    [("cubic_xo", [1, 3, 21, 21]), ("cubic_xo", [1, 3, 21, 22])],
    # two equal built-in Interpolate ops on one input
    [("linear", [1, 3, 24, 24]), ("linear", [1, 3, 24, 24])],
], ids=["same-ir", "shared-axis-table", "same-native"])
def test_nodes_openvino_merges_are_still_proven(configs, tmp_path):
    """OpenVINO merges equal Constants and equal ops and keeps one op's rt_info: a node whose tables or op were
    merged into another's is proven through them (equal values), and the converted model computes the oracle."""
    modes = {"cubic_xo": dict(mode="cubic", coordinate_transformation_mode="half_pixel", exclude_outside=1),
             "linear": dict(mode="linear", coordinate_transformation_mode="half_pixel")}
    nodes, inits, outs = [], [], []
    for i, (mode, sizes) in enumerate(configs):
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), f"sz{i}"))
        nodes.append(helper.make_node("Resize", ["X", "", "", f"sz{i}"], [f"Y{i}"], name=f"r{i}", **modes[mode]))
        outs.append(vi(f"Y{i}", None))
    g = helper.make_graph(nodes, "g", [vi("X", [1, 3, 16, 16])], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    onnx.save(m, tmp_path / "m.onnx")
    ov_model, records = low.convert(str(tmp_path / "m.onnx"))
    assert len(records) == 2
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    got = ov.Core().compile_model(ov_model, "CPU", F32)([x])
    irs = dict(parse_model(m))
    for i in range(2):
        want = run(irs[f"r{i}"], x, None, None, np.array(configs[i][1], np.int64))
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-5)
