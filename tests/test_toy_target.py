"""A fourth target is its own folder and one registry line (tests/toy_target: ``register(ENTRY)`` below), with
nothing in the package edited: it converts the demo's model through the CLI and the API on the one driver, and
what it writes computes the source's numbers on onnxruntime."""

import os

import numpy as np
import onnx
import pytest

from resample_bridge.lowering.passes import BUILTIN
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.tools import api, targets
from resample_bridge.tools.cli import main
from resample_bridge.tools.examples import tricky_model
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
