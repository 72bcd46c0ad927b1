"""A fourth target is its own folder and one registry line (tests/toy_target: ``register(ENTRY)`` below), with
nothing in the package edited: it converts the demo's model through the CLI and the API on the one driver, and
what it writes computes the source's numbers on onnxruntime."""

import os
from dataclasses import replace

import numpy as np
import onnx
import pytest

from resample_bridge.lowering.passes import BUILTIN
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.tools import api, targets
from resample_bridge.tools.cli import main
from resample_bridge.tools.examples import tricky_model
from resample_bridge.tools.verify_onnx import run_converted_onnx
from resample_bridge.tools.verify_openvino import format_verify
from tests.toy_target import ENTRY

PACKAGE = ("semantics", "translate", "lowering", "tools", "api")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def toy():
    targets.register(ENTRY)  # the one registry line
    yield ENTRY
    del targets.TARGETS[ENTRY.name]


def _outputs(path, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_toy_target_converts_the_demo_model(toy, tmp_path, capsys):
    src = tmp_path / "tricky.onnx"
    onnx.save(tricky_model(), src)
    plan = toy.lowering().plan(str(src), toy.lowering().default_policy)
    assert plan.records and all(c.rung == BUILTIN for c in plan.choices)

    conv = api.convert(str(src), str(tmp_path / "api"), target="toy")
    assert conv.output.endswith(".onnx") and [r.node for r in conv.records] == [c.key for c in plan.choices]

    out = tmp_path / "cli.onnx"
    assert main(["convert", str(src), "--target", "toy", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"[ SUCCESS ] ONNX file: {out}" in said and "rung 1 (as is)" in said

    model = onnx.load(str(src))
    rng = np.random.default_rng(0)
    feeds = {}
    for i in model.graph.input:
        dims = [d.dim_value or 4 for d in i.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
        feeds[i.name] = rng.uniform(-1, 1, dims).astype(dtype)
    feeds["scales_in"] = np.array([1, 1, 1.5, 0.5], np.float32)  # onnxruntime's linear keeps N and C
    for got, want in zip(_outputs(out, feeds), _outputs(src, feeds)):
        np.testing.assert_array_equal(got, want)


def test_unregistered_target_is_refused_and_nothing_names_it(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["convert", str(tmp_path / "m.onnx"), "--target", "toy"])
    assert e.value.code == 2
    assert "toy" in capsys.readouterr().err
    for pkg in PACKAGE:
        for base, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(base, f), encoding="utf-8") as fh:
                        assert "toy_target" not in fh.read(), os.path.join(base, f)


def test_what_a_target_takes_is_its_entrys_word(toy, tmp_path):
    """A PyTorch program and ``--input``'s optimization profile are asked of the registry entry, not of target
    names: the toy's entry converts no program (refused, naming the targets whose entries do, before anything is
    loaded) and fills no profile from the fixed input lengths (the profile option stays refused for it)."""
    with pytest.raises(BridgeError) as e:
        api.convert(str(tmp_path / "m.pt2"), target="toy")
    assert e.value.field == "target" and "not toy" in e.value.message
    assert all(f"target {n} only" in e.value.message for n, entry in targets.TARGETS.items() if entry.torch_source)
    assert not toy.input_profile and targets.entry("tensorrt").input_profile
    src = tmp_path / "tricky.onnx"
    onnx.save(tricky_model(), src)
    conv = api.convert(str(src), str(tmp_path / "fixed"), target="toy", input_shapes={"image": [1, 3, 20, 20]})
    assert conv.output.endswith(".onnx")


def test_verify_runs_the_written_model_on_the_runner_its_entry_names(toy):
    """verify asks the registry entry how the written model runs (its ``Runner``: the run, the runtime's name in
    the report's lines, the options only that runner takes), not the target's name: the toy's entry given the
    ONNX targets' runner verifies what the toy wrote against onnxruntime and the oracle, and ``--precision`` (an
    option only OpenVINO's runner takes) is refused naming the targets whose runner takes it."""
    runner = targets.Runner("the toy's ONNX on onnxruntime", run_converted_onnx)
    targets.register(replace(ENTRY, name="toy-run", verify=runner))
    try:
        src = os.path.join(ROOT, "tests", "models", "ts11_bilinear_scale_1_5", "model.onnx")
        result = api.verify(src, target="toy-run")
        assert result.ok and result.nodes and all(n.ok for n in result.nodes)
        assert f"({runner.name} vs the source on onnxruntime)" in format_verify(result.raw)
        with pytest.raises(BridgeError) as e:
            api.verify(src, target="toy-run", precision="bf16")
        taking = [n for n, t in targets.TARGETS.items() if isinstance(t.verify, targets.Runner)
                  and "precision" in t.verify.takes]
        assert taking and "toy-run" not in taking
        assert e.value.field == "precision" and f"target {' / '.join(taking)} only" in e.value.message
    finally:
        del targets.TARGETS["toy-run"]
