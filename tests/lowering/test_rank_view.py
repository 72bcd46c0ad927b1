"""Linear Resize below rank 4: OpenVINO's CPU computes a rank 1-3 linear Interpolate wrong without AVX2 (under
``qemu-x86_64 -cpu Nehalem``: ``[1, 1, 5]`` x2 reads ``[0, 1, 3, 3, 1, 4e-45, ...]``), so convert writes it over a
rank-4 (or rank-5) view, and check says the importer's rank-3 op is exact only on CPUs with AVX2. Here (any CPU):
what is written holds no linear Interpolate below rank 4, computes the oracle's numbers, and its proof refuses the
op where the view is gone. Under the emulated SSE4.2 CPU: ``test_default_portable`` (slow)."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.reference import run
from resample_bridge.translate.onnx import parse_model
from tests.helpers.models import saved, strict_json

ov = pytest.importorskip("openvino")
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _linear(shape, scales, coord="half_pixel", fed_sizes=None):
    """Resize linear of a ``shape`` input (None: a dynamic length) by constant ``scales``, or by sizes fed as
    a graph input (``fed_sizes``: the values the test feeds)."""
    dims = [d if d is not None else f"d{i}" for i, d in enumerate(shape)]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, dims)]
    inits = []
    if fed_sizes is None:
        inits.append(onnx.numpy_helper.from_array(np.array(scales, np.float32), "s"))
        node = h.make_node("Resize", ["x", "", "s"], ["y"], name="r", mode="linear",
                           coordinate_transformation_mode=coord)
    else:
        inputs.append(h.make_tensor_value_info("z", T.INT64, [len(shape)]))
        node = h.make_node("Resize", ["x", "", "", "z"], ["y"], name="r", mode="linear",
                           coordinate_transformation_mode=coord)
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


# (model, the input shape fed, the sizes fed or None)
CASES = {
    "rank 3 x2.5": (_linear([2, 3, 7], [1, 1, 2.5]), (2, 3, 7), None),
    "rank 3 dynamic x2": (_linear([1, 2, None], [1, 1, 2]), (1, 2, 13), None),
    "rank 3 on C and L": (_linear([1, 4, 9], [1, 0.5, 1.5], "align_corners"), (1, 4, 9), None),
    "rank 3 on N": (_linear([4, 2, 7], [2, 1, 1], "asymmetric"), (4, 2, 7), None),
    "rank 2": (_linear([3, 8], [1, 0.75], "pytorch_half_pixel"), (3, 8), None),
    "rank 1": (_linear([9], [1.5], "align_corners"), (9,), None),
    "rank 3 fed sizes": (_linear([1, 2, None], None, fed_sizes=True), (1, 2, 10), np.array([1, 2, 23], np.int64)),
}


def _interpolates(ov_model):
    return [op for op in ov_model.get_ordered_ops() if op.get_type_name() == "Interpolate"]


@pytest.mark.parametrize("name", CASES)
def test_written_over_a_view_with_the_oracles_numbers(name, tmp_path):
    from resample_bridge.lowering.openvino import convert

    model, shape, sizes = CASES[name]
    path = saved(model, tmp_path)
    ov_model, (rec,) = convert(path)  # the default: no run-time condition taken
    assert rec.rung == 1, rec.summary()
    (op,) = _interpolates(ov_model)
    assert op.get_input_partial_shape(0).rank.get_length() >= 4, name
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    feeds = {"x": x} if sizes is None else {"x": x, "z": sizes}
    got = ov.Core().compile_model(ov_model, "CPU", F32)(feeds)[0]
    ((_, ir),) = parse_model(model)
    ir = dataclasses.replace(ir, input_shape=x.shape)
    want = run(ir, x, None, None, sizes)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert against_oracle(ir, got, want, [x, None, None, sizes]).ok, name


def test_the_proof_refuses_the_op_without_its_view(tmp_path):
    """The written Interpolate re-read without the Squeeze after it (its output read at rank 4): not a view, so
    not proven; the same op with it is."""
    from resample_bridge.lowering.openvino import convert, prove

    ov_model, records = convert(saved(CASES["rank 3 x2.5"][0], tmp_path))
    assert prove(ov_model, records) == []
    (op,) = _interpolates(ov_model)
    (squeeze,) = [t.get_node() for t in op.output(0).get_target_inputs()]
    result = ov.opset13.result(op.output(0))
    ov_model.add_results([result])
    failures = prove(ov_model, records)
    assert failures and "view" in failures[0], failures
    assert squeeze.get_type_name() in ("Squeeze", "Reshape")


def test_check_says_the_importer_needs_avx2(tmp_path, capsys):
    """OpenVINO's importer writes the rank-3 Interpolate itself: exact only on a CPU with AVX2; a rank-4 one
    carries no such condition."""
    from resample_bridge.tools.cli import main

    for model, conditional in ((CASES["rank 3 x2.5"][0], True), (_linear([1, 2, 3, 7], [1, 1, 1, 2.5]), False)):
        path = saved(model, tmp_path)
        assert main(["check", path, "--json"]) == 0
        v = strict_json(capsys.readouterr().out)["nodes"][0]["openvino"]
        assert (v["verdict"] == "exact only if" and "AVX2" in v["conditions"][-1]) if conditional else \
            v["verdict"] == "exact", v
