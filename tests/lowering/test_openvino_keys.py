"""OpenVINO's ONNX frontend shows our translators no node name: each resampling node of the copy it reads carries
its key (``frontend.stamped``), so nodes alike in op, input and attributes still get their own records."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering import openvino as low  # noqa: E402
from resample_bridge.lowering.openvino.frontend import KEY  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import resampling_nodes  # noqa: E402

F = TensorProto.FLOAT
SAME = dict(mode="linear", coordinate_transformation_mode="half_pixel")  # every node: the same attributes
SIZES = {"a": 8, "b": 6, "if/else_branch/e": 7, "if/then_branch/t": 5}  # the model's order (attributes sorted)


def _resize(name: str, out: str, side: int):
    size = numpy_helper.from_array(np.array([1, 1, side, side], np.int64), f"{name}_sizes")
    return helper.make_node("Constant", [], [size.name], value=size), \
        helper.make_node("Resize", ["X", "", "", size.name], [out], name=name, **SAME)


def _branch(name: str, side: int):
    return helper.make_graph(list(_resize(name, f"{name}_out", side)), f"{name}_graph", [],
                             [helper.make_tensor_value_info(f"{name}_out", F, None)])


def twins_model():
    """Two Resizes of X with the same attributes in the main graph, two more in the branches of an If."""
    nodes = [*_resize("a", "A", SIZES["a"]), *_resize("b", "B", SIZES["b"]),
             helper.make_node("If", ["C"], ["T"], name="if", then_branch=_branch("t", SIZES["if/then_branch/t"]),
                              else_branch=_branch("e", SIZES["if/else_branch/e"]))]
    graph = helper.make_graph(nodes, "twins", [helper.make_tensor_value_info("X", F, [1, 1, 4, 4]),
                                               helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info(n, F, None) for n in "ABT"])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "twins.onnx"
    onnx.save(twins_model(), path)
    return path, *low.convert(str(path))


def test_each_twin_gets_its_own_record_in_model_order(converted):
    path, _, records = converted
    assert [r.node for r in records] == [n for n, _ in resampling_nodes(onnx.load(path))] == list(SIZES)
    assert {r.node: r.ir.sizes[-1] for r in records} == SIZES


@pytest.mark.parametrize("cond", [True, False])
def test_each_twin_computes_its_own_resize(converted, cond):
    _, model, records = converted
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) / 7
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        {"X": x, "C": np.array(cond)})
    outs = {name: val for port, val in got.items() for name in port.get_names()}
    by_name = {r.node: r for r in records}
    for out, node in (("A", "a"), ("B", "b"), ("T", "if/then_branch/t" if cond else "if/else_branch/e")):
        ir = by_name[node].ir
        want = run(ir, x, None, None, np.array([1, 1, SIZES[node], SIZES[node]], np.int64))
        assert against_oracle(ir, outs[out], want, [x]).ok, node


def test_the_key_stays_out_of_the_written_ir(converted, tmp_path):
    _, model, _ = converted
    ov.save_model(model, tmp_path / "twins.xml")
    assert KEY not in (tmp_path / "twins.xml").read_text()


def test_stamped_leaves_the_model_as_it_was():
    model = twins_model()
    before = model.SerializeToString()
    with low.stamped(model) as copy:
        assert sorted(a.s.decode() for _, n in resampling_nodes(copy) for a in n.attribute if a.name == KEY) == \
            sorted(SIZES)
    assert model.SerializeToString() == before


def test_a_model_in_memory_is_keyed_alike(converted):
    """The stamped copy OpenVINO reads needs a file name; a ModelProto has none of its own."""
    from resample_bridge.lowering.openvino.target import OPENVINO
    from resample_bridge.lowering.passes import ConvertOptions

    result = OPENVINO(twins_model(), OPENVINO.policy(ConvertOptions()))
    assert [(r.node, r.ir.sizes) for r in result.records] == [(r.node, r.ir.sizes) for r in converted[2]]


def test_converting_an_onnx_model_leaves_pytorch_unimported(tmp_path):
    """OpenVINO's convert_model imports PyTorch wherever it is installed once extensions are passed: seconds and
    gigabytes of address space for an ONNX model. Only meaningful where torch is installed (the test extra)."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    x = helper.make_tensor_value_info("X", F, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("Y", F, None)
    model = helper.make_model(helper.make_graph(list(_resize("r", "Y", 8)), "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 19)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    code = ("import sys; from resample_bridge.lowering.openvino.target import convert; "
            f"m, records = convert({str(path)!r}); assert [r.rung for r in records] == [1], records; "
            "print(sys.modules.get('torch') is not None)")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr[-400:]
    assert got.stdout.strip() == "False"
