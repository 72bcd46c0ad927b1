"""`verify` for every target and Polygraphy's conventions (issue 22), through the real CLI: the ONNX targets' output
run on onnxruntime against the source and the oracle (a TensorRT plugin node refused: nothing verified), inputs
and outputs in Polygraphy's JSON (checked against Polygraphy itself where it is installed), --load-outputs,
--check-error-stat, --fail-fast, --validate, and -q keeping only the verdict line."""

import base64
import io
import json

import numpy as np
import onnx
import pytest

pytest.importorskip("onnxruntime")

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import resize_model, saved, strict_json  # noqa: E402
from tests.tools.test_tensorrt_cli import antialias_then_nearest, plugin_then_nearest  # noqa: E402


def _run(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def _polygraphy_arrays(doc):
    """Polygraphy's ndarray objects decoded the way its json.serde does (base64 of numpy.save), independently of
    the module under test."""
    return np.load(io.BytesIO(base64.b64decode(doc["array"])), allow_pickle=False)


@pytest.mark.parametrize("target", ["onnx", "tensorrt"])
def test_verify_runs_the_onnx_targets_output_on_onnxruntime(capsys, tmp_path, target):
    """Before: --target onnx was no choice of verify and --target tensorrt exited 2. Now the converted ONNX (for
    TensorRT a decomposition and a native node) runs on onnxruntime against the source and the oracle; a file converted
    from another model FAILS."""
    src = saved(antialias_then_nearest(), tmp_path, "m.onnx")
    rc, out, err = _run(capsys, "verify", src, "--target", target)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[-1] == "PASSED: 1 output passed, 0 failed, 0 not judged; 2 resampling nodes passed, 0 failed"
    ready = "TensorRT-ready" if target == "tensorrt" else "converted"
    assert f"model outputs (the {ready} ONNX on onnxruntime vs the source on onnxruntime):" in lines
    rung = {"onnx": "rung 1 (native)", "tensorrt": "rung 3 (decomposition)"}[target]  # antialias: not in TensorRT
    assert f"  aa: {rung}" in [ln[:len(rung) + 6] for ln in lines], out
    assert ("TensorRT absent: the TensorRT-ready ONNX was run on onnxruntime" in out) == (target == "tensorrt")
    # The user's file: right, then one converted from a model that computes something else.
    right, wrong = tmp_path / "right.onnx", tmp_path / "wrong.onnx"
    other = saved(resize_model((1, 1, 8, 8), scales=[1, 1, 1, 1], mode="nearest"), tmp_path, "o.onnx")
    for model, path in ((src, right), (other, wrong)):
        assert _run(capsys, "convert", model, "--target", target, "-o", path)[0] == 0
    assert _run(capsys, "verify", src, "--target", target, "--converted", right)[0] == 0
    rc, out, err = _run(capsys, "verify", src, "--target", target, "--converted", wrong, "--json")
    doc = strict_json(out)
    assert rc == 1 and doc["verdict"] == "FAILED" and doc["outputs"][0]["ok"] is False, doc["outputs"]
    rc, out, err = _run(capsys, "verify", src, "--target", target, "--converted", tmp_path / "nothing.xml")
    assert rc == 2 and "field 'converted'" in err and "no such file" in err
    (tmp_path / "other.xml").write_text("<net/>")
    rc, out, err = _run(capsys, "verify", src, "--target", target, "--converted", tmp_path / "other.xml")
    assert rc == 2 and "field 'converted'" in err and "is not an .onnx file" in err


def test_verify_tensorrt_runs_the_parser_spelling_and_the_api_takes_a_target(capsys, tmp_path):
    """A GridSample-20 cubic respelled 'bicubic' for TensorRT's parser (onnxruntime refuses that name) beside a
    decomposition: verify gives it back its ONNX name to run it; api.verify takes the same targets."""
    from onnx import TensorProto, helper, numpy_helper

    from resample_bridge import api

    F = TensorProto.FLOAT
    nodes = [helper.make_node("Resize", ["X", "", "", "sz"], ["Z"], name="aa", mode="cubic", antialias=1),
             helper.make_node("GridSample", ["Z", "grid"], ["Y"], name="gs", mode="cubic", padding_mode="zeros")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [1, 2, 12, 12]),
                                       helper.make_tensor_value_info("grid", F, [1, 5, 5, 2])],
                          [helper.make_tensor_value_info("Y", F, None)],
                          [numpy_helper.from_array(np.array([1, 2, 7, 7], np.int64), "sz")])
    src = saved(helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10), tmp_path, "g.onnx")
    ready = tmp_path / "ready.onnx"
    rc, out, err = _run(capsys, "convert", src, "--target", "tensorrt", "-o", ready, "--json")
    assert rc == 0 and {n["node"]: n["rung"] for n in json.loads(out)["nodes"]} == {"aa": 3, "gs": 2}
    assert any(a.s == b"bicubic" for n in onnx.load(ready).graph.node for a in n.attribute if a.name == "mode")
    rc, out, err = _run(capsys, "verify", src, "--target", "tensorrt", "--converted", ready)
    assert rc == 0 and out.splitlines()[-1].endswith("2 resampling nodes passed, 0 failed"), out + err
    result = api.verify(src, target="tensorrt", converted=str(ready))
    assert result.ok and [n.name for n in result.nodes] == ["aa", "gs"] and all(n.ok for n in result.nodes)
    assert api.verify(src, target="onnx").ok


def test_verify_tensorrt_refuses_a_plugin_node_it_cannot_run(capsys, tmp_path):
    """A plugin node runs only on TensorRT: exit 2 (nothing verified; exit 1 would say it was verified wrong,
    exit 0 would let a CI gate pass what it never checked), one line naming the node."""
    src = saved(plugin_then_nearest(), tmp_path, "p.onnx")
    rc, out, err = _run(capsys, "verify", src, "--target", "tensorrt", "--input-shapes", "X:[2,1,8,8]")
    assert rc == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "node 'aa', field 'target': not verified" in line and "ResampleBridgeResize" in line, line


def test_inputs_and_outputs_in_polygraphys_json(capsys, tmp_path):
    # Linear: written as it is (cubic takes the faster decomposition), so the converted model's outputs are the
    # saved ones bit for bit.
    src = saved(resize_model((1, 2, 6, 5), scales=[1, 1, 2, 1.5], mode="linear", name="c"), tmp_path, "m.onnx")
    ins, outs = tmp_path / "in.json", tmp_path / "out.json"
    rc, out, err = _run(capsys, "verify", src, "--target", "onnx", "--save-inputs", ins, "--save-outputs", outs)
    assert rc == 0, err
    feeds = json.loads(ins.read_text())
    assert isinstance(feeds, list) and len(feeds) == 1 and feeds[0]["X"]["polygraphy_class"] == "ndarray"
    x = _polygraphy_arrays(feeds[0]["X"])
    assert x.shape == (1, 2, 6, 5) and x.dtype == np.float32
    runs = json.loads(outs.read_text())
    assert runs["polygraphy_class"] == "RunResults" and [r[0] for r in runs["lst"]] == ["onnxruntime", "onnx"]
    iteration = runs["lst"][0][1][0]
    assert iteration["polygraphy_class"] == "IterationResult" and iteration["runner_name"] == "onnxruntime"
    y = _polygraphy_arrays(iteration["outputs"]["Y"]["values"])
    assert y.shape == (1, 2, 12, 7)
    # Two iterations written by hand in Polygraphy's format: each verified, one verdict line.
    rng = np.random.default_rng(1)
    two = [{"X": {"array": base64.b64encode(_npy(rng.standard_normal((1, 2, 6, 5)).astype(np.float32))).decode(),
                  "polygraphy_class": "ndarray"}} for _ in range(2)]
    (tmp_path / "two.json").write_text(json.dumps(two))
    rc, out, err = _run(capsys, "verify", src, "--load-inputs", tmp_path / "two.json", "--target", "onnx")
    assert rc == 0, err
    assert "iteration 1:" in out and out.splitlines()[-1] == "PASSED: 2 of 2 iterations passed"
    # --load-outputs compares the converted model with saved outputs: the saved ones, then altered ones.
    rc, out, err = _run(capsys, "verify", src, "--load-inputs", ins, "--load-outputs", outs, "--target", "onnx")
    assert rc == 0 and "  output Y vs onnxruntime (--load-outputs): abs max 0" in out, out
    iteration["outputs"]["Y"]["values"]["array"] = base64.b64encode(_npy(y + 0.01)).decode()
    (tmp_path / "off.json").write_text(json.dumps(runs))
    rc, out, err = _run(capsys, "verify", src, "--load-inputs", ins, "--load-outputs", tmp_path / "off.json",
                        "--target", "onnx")
    assert rc == 1 and "output Y vs onnxruntime (--load-outputs)" in out and "MISMATCH" in out, out
    assert _run(capsys, "verify", src, "--save-outputs", outs, "--target", "onnx")[0] == 2  # exists, no --force
    # Saved outputs that share no name with the model compare nothing: refused, never a silent pass.
    iteration["outputs"] = {"other": iteration["outputs"]["Y"]}
    (tmp_path / "other.json").write_text(json.dumps(runs))
    rc, out, err = _run(capsys, "verify", src, "--load-outputs", tmp_path / "other.json", "--target", "onnx")
    assert rc == 2 and "field 'load-outputs'" in err and "no output of this model" in err, err


def test_older_polygraphy_json_and_what_cannot_be_read(capsys, tmp_path):
    """Older Polygraphy files tag a type with "__polygraphy_encoded_<type>": "polygraphy_serialized_json_type"; a
    file verify cannot read is one line naming the option."""
    src = saved(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), tmp_path, "m.onnx")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    legacy = [{"X": {"array": base64.b64encode(_npy(x)).decode(),
                     "__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"}}]
    (tmp_path / "old.json").write_text(json.dumps(legacy))
    rc, out, err = _run(capsys, "verify", src, "--target", "onnx", "--load-inputs", tmp_path / "old.json",
                        "--save-inputs", tmp_path / "again.npz")
    assert rc == 0, err
    with np.load(tmp_path / "again.npz") as z:
        np.testing.assert_array_equal(z["X"], x)
    (tmp_path / "torch.json").write_text(json.dumps([{"X": {"tensor": "AAAA", "polygraphy_class": "Tensor"}}]))
    for bad in ("torch.json", "m.onnx"):
        rc, out, err = _run(capsys, "verify", src, "--target", "onnx", "--load-inputs", tmp_path / bad)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "field 'inputs'" in err, err


def _npy(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def test_polygraphy_itself_reads_and_writes_our_files(capsys, tmp_path):
    """Where Polygraphy is installed: its load_json / RunResults.load read what verify writes, and verify reads
    what Polygraphy's save_json / RunResults.save write."""
    pytest.importorskip("polygraphy")
    from polygraphy.comparator import RunResults
    from polygraphy.json import load_json, save_json

    src = saved(resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="linear"), tmp_path, "m.onnx")
    ins, outs = tmp_path / "in.json", tmp_path / "out.json"
    assert _run(capsys, "verify", src, "--target", "onnx", "--save-inputs", ins, "--save-outputs", outs)[0] == 0
    assert load_json(str(ins))[0]["X"].shape == (1, 1, 4, 4)
    results = RunResults.load(str(outs))
    assert list(results.keys()) == ["onnxruntime", "onnx"]
    y = results["onnxruntime"][0]["Y"]
    save_json([{"X": np.ones((1, 1, 4, 4), np.float32)}], str(tmp_path / "pg_in.json"))
    mine = RunResults()
    mine.add([{"Y": y + 1}], runner_name="trt-runner")
    mine.save(str(tmp_path / "pg_out.json"))
    rc, out, err = _run(capsys, "verify", src, "--target", "onnx", "--load-inputs", tmp_path / "pg_in.json")
    assert rc == 0 and "X: float32 [1, 1, 4, 4] (given)" in out
    rc, out, err = _run(capsys, "verify", src, "--target", "onnx", "--load-inputs", ins, "--load-outputs",
                        tmp_path / "pg_out.json")
    assert rc == 1 and "output Y vs trt-runner (--load-outputs)" in out


def test_check_error_stat_fail_fast_and_validate(capsys, tmp_path):
    """Polygraphy's rules: with --check-error-stat mean an output passes when its mean error is within atol even
    where single elements are not; --fail-fast stops at the first failure; --validate fails NaN the reference has
    not, even on an output not judged."""
    src = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="cubic"), tmp_path, "m.onnx")
    other = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="linear"), tmp_path, "o.onnx")
    wrong = tmp_path / "wrong.onnx"
    assert _run(capsys, "convert", other, "--target", "onnx", "-o", wrong)[0] == 0
    base = ["verify", src, "--target", "onnx", "--converted", wrong, "--json"]
    rc, out, _ = _run(capsys, *base)
    doc = strict_json(out)
    stats = doc["outputs"][0]
    assert rc == 1 and stats["ok"] is False and doc["nodes"][0]["ok"] is False
    tol = ["--atol", f"{stats['mean_abs'] * 1.01}", "--rtol", "0"]  # just over the mean error
    rc, out, _ = _run(capsys, *base, *tol)
    assert rc == 1 and strict_json(out)["outputs"][0]["ok"] is False  # elemwise: some elements beyond
    rc, out, _ = _run(capsys, *base, *tol, "--check-error-stat", "mean")
    doc = strict_json(out)
    assert rc == 0 and doc["outputs"][0]["ok"] is True and doc["outputs"][0]["error_stat"] == "mean", doc
    rc, out, _ = _run(capsys, *base, *tol, "--check-error-stat", "max")
    assert rc == 1
    assert _run(capsys, *base, "--check-error-stat", "p90")[0] == 2
    rc, out, _ = _run(capsys, *base, "--fail-fast")
    doc = strict_json(out)
    assert rc == 1 and doc["outputs"] == [] and doc["stopped"].startswith("--fail-fast"), doc
    # NaN in the input: the reference's output has NaN where the converted one has; a NaN the reference lacks
    # is what --validate catches (the node's output is compared with the oracle, which propagates the same NaN).
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6)).astype(np.float32)
    np.savez(tmp_path / "x.npz", X=x)
    nan_out = _nan_model(tmp_path)
    rc, out, _ = _run(capsys, "verify", src, "--target", "onnx", "--converted", nan_out, "--load-inputs",
                      tmp_path / "x.npz", "--json", "--atol", "1e9", "--check-error-stat", "median")
    assert rc == 0, out  # the median error hides one NaN
    rc, out, _ = _run(capsys, "verify", src, "--target", "onnx", "--converted", nan_out, "--load-inputs",
                      tmp_path / "x.npz", "--json", "--atol", "1e9", "--check-error-stat", "median", "--validate")
    doc = strict_json(out)
    assert rc == 1 and "NaN/Inf" in doc["outputs"][0]["validate"], doc["outputs"]


def _nan_model(tmp_path):
    """The cubic model converted to ONNX, then one output element replaced by NaN (Y * mask, mask NaN at [0])."""
    from onnx import helper, numpy_helper

    src = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], mode="cubic"), tmp_path, "c.onnx")
    conv = tmp_path / "c.portable.onnx"
    main(["convert", src, "--target", "onnx", "-o", str(conv)])
    m = onnx.load(conv)
    mask = np.ones((1, 1, 12, 12), np.float32)
    mask[0, 0, 0, 0] = np.nan
    m.graph.initializer.append(numpy_helper.from_array(mask, "nan_mask"))
    for n in m.graph.node:
        n.output[:] = ["Y_pre" if o == "Y" else o for o in n.output]
        n.input[:] = ["Y_pre" if i == "Y" else i for i in n.input]
    m.graph.node.append(helper.make_node("Mul", ["Y_pre", "nan_mask"], ["Y"]))
    onnx.save(m, conv)
    return conv


@pytest.mark.parametrize("verb", ["convert", "check", "verify"])
def test_quiet_keeps_only_the_verdict_lines(capsys, tmp_path, verb):
    src = saved(antialias_then_nearest(), tmp_path, "m.onnx")
    args = {"convert": ["convert", src, "--target", "tensorrt", "-o", tmp_path / "o.onnx"],
            "check": ["check", src, "--target", "tensorrt"],
            "verify": ["verify", src, "--target", "onnx"]}[verb]
    rc, loud, _ = _run(capsys, *args, *(["--force"] if verb == "convert" else []))
    assert rc == 0 and any(ln.startswith(("aa:", "aa (", "  node aa:")) for ln in loud.splitlines()), loud
    rc, quiet, _ = _run(capsys, *args, "-q", *(["--force"] if verb == "convert" else []))
    assert rc == 0 and not any(ln.startswith(("aa", "nn", "  node ", "  resample-bridge:")) for ln in quiet.splitlines()), quiet
    last = {"convert": "[ SUCCESS ] ONNX file:", "check": "gate (--fail-on", "verify": "PASSED: "}[verb]
    assert quiet.splitlines()[-1].startswith(last) and loud.splitlines()[-1] == quiet.splitlines()[-1]
