"""What the default conversion writes, run the way it is deployed (issue 42): nothing beside the model, and the
run-time forms (the nearest index form, the run-time window with and without antialias, the run-time scale
window, tf_crop_and_resize's crop window, the GridSample and DeformConv decompositions)
compute onnxruntime's numbers on an AVX2-only (Haswell) and an SSE4.2 (Nehalem) CPU, emulated by Debian's
qemu-user, and in other OpenVINO releases where they are at hand (``RB_OTHER_OPENVINO_PYTHON``: Pythons whose
openvino is another release, e.g. 2025.4.1 and 2023.3.0 in venvs of their own, separated by os.pathsep). Their integer index arithmetic leans on how the CPU
plugin runs i64 (as i32, integer Divide in float32: ``lowering/openvino/index_ops.py``), measured with this CPU's
AVX-512 kernels; these tests hold it on the other kernels. Nearest picks the same element: bit-equal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.slow

MODELS = Path(__file__).resolve().parents[1] / "models"
# One real exported model per run-time form; "nearest": its output must equal onnxruntime's bit for bit.
CASES = {
    "ts18_nearest_size_dynhw": "nearest",          # nearest index form, run-time sizes
    "ts13_dynhw_nearest_recompute_x2": "nearest",  # nearest index form, run-time H / W
    "ts16_gridsample_nearest_border_ties": "nearest",  # GridSample decomposition, nearest on ties
    "dy18_tv_preprocess_half_dynamic": "float",   # antialias window form, run-time lengths
    "dy20_gridsample_5d_bilinear_zeros": "float",  # 5-D GridSample decomposition
    "ts19_deformconv_mask": "float",               # DeformConv decomposition
    # a ScatterND beside the resampling node: OpenVINO's frontend writes it as ScatterNDUpdate-15, which 2023.3 and
    # 2024.0-2024.3 cannot read; ``older_releases`` writes ScatterNDUpdate-3
    "ts20_kornia_rotate_nearest": "nearest",
}

_RUN = textwrap.dedent("""
    import sys, numpy as np, openvino as ov
    core = ov.Core()
    out = {}
    for xml, feed in zip(sys.argv[2::2], sys.argv[3::2]):
        ins = np.load(feed)
        c = core.compile_model(core.read_model(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        out[xml] = c([ins[k] for k in ins.files])[c.output(0)]
    np.savez(sys.argv[1], *[out[x] for x in sys.argv[2::2]])
""")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Each case converted with the default: (xml, inputs.npz, onnxruntime's first output, kind)."""
    from resample_bridge.tools.cli import main

    out = tmp_path_factory.mktemp("default")
    cases = []
    for name, kind in CASES.items():
        src = MODELS / name
        xml = out / f"{name}.xml"
        assert main(["convert", str(src / "model.onnx"), "-o", str(xml)]) == 0, name
        ins = np.load(src / "inputs.npz")
        sess = ort.InferenceSession(str(src / "model.onnx"), providers=["CPUExecutionProvider"])
        want = sess.run(None, {i.name: ins[k] for i, k in zip(sess.get_inputs(), ins.files)})[0]
        cases.append((xml, src / "inputs.npz", want, kind))
    # The run-time scale forms (``scale_taps``, ``scale_nearest``): no exported model of the corpus feeds a Resize
    # its scales at run time, so generated ones (the scales a graph input; lengths and picks onnxruntime's float32
    # arithmetic agrees on)
    import onnx

    from tests.lowering.test_scale_nearest import scales_model as nearest_model
    from tests.lowering.test_scale_taps import scales_model

    x = np.random.default_rng(5).standard_normal((1, 2, 10, 12)).astype(np.float32)
    for name, model, s, kind in (("runtime_scales", scales_model("cubic", "half_pixel", axes=[2, 3]), [1.5, 0.75],
                                  "float"),
                                 ("runtime_scales_antialias", scales_model("linear", "half_pixel", axes=[2, 3],
                                                                           antialias=True), [0.5, 0.3], "float"),
                                 ("runtime_scales_nearest", nearest_model("half_pixel", "round_prefer_floor"),
                                  [1, 1, 2.0, 0.5], "nearest"),
                                 # its ties exact in float32 too, where onnxruntime decides them as the oracle does
                                 ("runtime_scales_nearest_symmetric",
                                  nearest_model("half_pixel_symmetric", "round_prefer_ceil"), [1, 1, 2.0, 0.5],
                                  "nearest")):
        src, xml = out / f"{name}.onnx", out / f"{name}.xml"
        onnx.save(model, src)
        assert main(["convert", str(src), "-o", str(xml)]) == 0
        feeds = {"X": x, "S": np.array(s, np.float32)}
        np.savez(out / f"{name}.npz", **feeds)
        want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        cases.append((xml, out / f"{name}.npz", want, kind))
    # tf_crop_and_resize with a crop box inside [0, 1] (the window's crop source): fed run-time scales, and run-time
    # sizes; lengths that all change (onnxruntime copies an axis that keeps its length, where the spec crops it)
    # and past [0, 1] (its outside outputs the extrapolation value)
    from tests.lowering.test_crop_outside import BOXES
    from tests.lowering.test_scale_taps import CROPS, sizes_crop_model

    for name, model, feeds in (
            ("crop_scales", scales_model("cubic", "tf_crop_and_resize", roi=CROPS["inside"], antialias=True),
             {"X": x, "S": np.array([1, 1, 0.6, 1.7], np.float32)}),
            ("crop_sizes", sizes_crop_model("linear", CROPS["flipped"]),
             {"X": x, "Z": np.array([1, 2, 7, 19], np.int64)}),
            ("crop_past_sizes", sizes_crop_model("cubic", BOXES["both"]),
             {"X": x, "Z": np.array([1, 2, 13, 5], np.int64)})):
        src, xml = out / f"{name}.onnx", out / f"{name}.xml"
        onnx.save(model, src)
        assert main(["convert", str(src), "-o", str(xml)]) == 0
        np.savez(out / f"{name}.npz", **feeds)
        want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        cases.append((xml, out / f"{name}.npz", want, "float"))
    # The plain run-time window (no antialias): sizes fed at run time that resize C too, where no Interpolate is
    # exact; onnxruntime refuses cubic on C, so the oracle's numbers
    from onnx import TensorProto, helper

    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="cubic")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None] * 4),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    src, xml = out / "runtime_sizes_channels.onnx", out / "runtime_sizes_channels.xml"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    feeds = {"X": np.random.default_rng(6).standard_normal((2, 3, 7, 9)).astype(np.float32),
             "S": np.array([2, 6, 10, 5], np.int64)}
    np.savez(out / "runtime_sizes_channels.npz", **feeds)
    (_, ir), = parse_model(str(src))
    cases.append((xml, out / "runtime_sizes_channels.npz", run(ir, feeds["X"], None, None, feeds["S"]), "float"))
    assert not list(out.glob("*.so")), "the default wrote a library"
    return cases


def _run(prefix: list[str], python: str, cases, tmp_path, env=None):
    got = tmp_path / "got.npz"
    args = [a for xml, feed, _, _ in cases for a in (str(xml), str(feed))]
    run = subprocess.run([*prefix, python, "-c", _RUN, str(got), *args], capture_output=True, text=True,
                         timeout=900, env=env)
    assert run.returncode == 0, (prefix, python, run.stderr[-1500:])
    with np.load(got) as z:
        outputs = [z[f"arr_{i}"] for i in range(len(cases))]
    for (xml, _, want, kind), out in zip(cases, outputs):
        assert out.shape == want.shape, (xml.name, out.shape, want.shape)
        if kind == "nearest":
            assert np.array_equal(out, want), xml.name
        else:
            assert np.abs(out.astype(np.float64) - want).max() < 1e-5, xml.name


@pytest.mark.parametrize("cpu", ["Haswell", "Nehalem"])
def test_the_default_runs_on_older_cpus(written, cpu, tmp_path):
    """numpy's own OpenBLAS misreads qemu's CPU: it is told the core type."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("qemu-user is not installed (apt-get install qemu-user)")
    _run([qemu, "-cpu", cpu], sys.executable, written, tmp_path, env=dict(os.environ, OPENBLAS_CORETYPE="Prescott"))


def _other_releases() -> list[str]:
    """The Pythons ``RB_OTHER_OPENVINO_PYTHON`` names (several: separated by os.pathsep), each with another
    OpenVINO release in its own venv."""
    return [p for p in os.environ.get("RB_OTHER_OPENVINO_PYTHON", "").split(os.pathsep) if p]


@pytest.mark.parametrize("release", range(4))
def test_the_default_runs_in_another_release(written, release, tmp_path):
    """Measured with OpenVINO 2025.4.1, 2024.6.0, 2024.0.0 and 2023.3.0 in venvs of their own: every one of the 93
    real models of tests/models, converted with the default by OpenVINO 2026.4.1, read, compiled and computed the
    same numbers there (2023.3 and 2024.0-2024.3 refused an opset-15 shift the index forms held before b57c642, and
    the ScatterNDUpdate-15 OpenVINO's frontend writes for the ScatterND of four of them before ``older_releases``)."""
    others = _other_releases()
    if release >= len(others):
        pytest.skip("RB_OTHER_OPENVINO_PYTHON names no Python with another OpenVINO release here")
    _run([], others[release], written, tmp_path)
