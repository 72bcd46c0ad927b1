"""The policy ``--prefer fastest`` (the default until issue 42 made it portable): the extension instead of an
exact rung that needs nothing beside the model only where the cost model (lowering/openvino/cost.py) estimates it at least 1.25x faster, reorders
included; the result still proven and exact; ``--prefer builtin`` never consulting it. Fixed tables
(``cost.using``) make the choices the same on every machine; where the rates come from is tested apart."""

import functools
import json

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import cost  # noqa: E402
from resample_bridge.lowering.openvino.target import convert as _convert  # noqa: E402

# The cost model weighs the extension under --prefer fastest (the default is portable since issue 42).
convert = functools.partial(_convert, prefer="fastest")
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
N_OUT, N_IN = 4 * 48 * 40, 4 * 24 * 20  # _linear_up's output and input elements


def _table(**rates) -> cost.Calibration:
    """A fixed table: ns per output element of each class for linear x2 (built-in, extension), per element in
    and out for copy / layout."""
    names = {"builtin": "builtin/linear/plain/up", "extension": "extension/linear/plain/up"}
    return cost.Calibration({names.get(k, k): v for k, v in rates.items()}, "the test's table")


def _linear_up(tmp_path):
    m = resize_model((1, 4, 24, 20), scales=[1, 1, 2, 2], mode="linear")
    onnx.save(m, tmp_path / "m.onnx")
    return m, str(tmp_path / "m.onnx")


def _exact(m, ov_model, records):
    from resample_bridge.lowering import compiled

    core = ov.Core()
    if any(r.rung == 4 for r in records):
        core.add_extension(compiled.openvino_extension())
    x = np.random.default_rng(0).standard_normal((1, 4, 24, 20)).astype(np.float32)
    (_, ir), = parse_model(m)
    result = against_oracle(ir, core.compile_model(ov_model, "CPU", F32)([x])[0], run(ir, x), [x])
    assert result.ok, result


@pytest.mark.compiled
@pytest.mark.parametrize("builtin, extension, rung", [
    (1.25, 1.0, 4),     # exactly 1.25x faster: the extension
    (1.0, 0.75, 4),     # 1.33x
    (1.0, 0.85, 1),     # 1.18x: the built-in op, which needs nothing beside the model
    (1.0, 5.0, 1),
])
def test_the_extension_from_1_25x_faster_on(tmp_path, builtin, extension, rung):
    m, path = _linear_up(tmp_path)
    with cost.using(_table(builtin=builtin, extension=extension, copy=0.0, layout=0.0)):
        ov_model, (rec,) = convert(path)  # the default policy
    assert rec.rung == rung, rec.summary()
    assert rec.extra["cost"]["chosen_ms"] == pytest.approx(builtin * N_OUT / 1e6)
    assert rec.extra["cost"]["extension_ms"] == pytest.approx(extension * N_OUT / 1e6)
    if rung == 4:
        assert f"cost model: {builtin / extension:.2g}x faster than Interpolate-11 (rung 1) on the test's " \
               f"table" in rec.reason, rec.reason
        assert rec.tried[-1][:2] == (1, "native") and "estimates the extension faster" in rec.tried[-1][2]
    _exact(m, ov_model, [rec])


@pytest.mark.compiled
@pytest.mark.parametrize("channels, rung", [(4, 4), (5, 1)])
def test_few_channels_read_the_rates_timed_at_few_channels(tmp_path, channels, rung):
    """OpenVINO runs Interpolate over blocks of channels: at most ``cost_timing.FEW`` channels read the rates
    timed at 3 channels (here 4.0 against the extension's 1.0: the extension), more the rates at 16 (1.0 against
    1.0: the built-in op)."""
    m = resize_model((1, channels, 24, 20), scales=[1, 1, 2, 2], mode="linear")
    onnx.save(m, tmp_path / "m.onnx")
    table = _table(builtin=1.0, extension=1.0, copy=0.0, layout=0.0, **{
        "builtin/linear/plain/up/few": 4.0, "extension/linear/plain/up/few": 1.0})
    with cost.using(table):
        _, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.rung == rung, rec.summary()
    n_out = channels * 48 * 40
    assert rec.extra["cost"]["chosen_ms"] == pytest.approx((4.0 if channels <= 4 else 1.0) * n_out / 1e6)
    assert rec.extra["cost"].get("few_channels") == (channels if channels <= 4 else None)


def _in_context(tmp_path, before: bool, after: bool, relu: bool = False):
    """_linear_up's Resize behind a 1x1 Conv (``before``) and / or in front of one (``after``); ``relu``: a Relu
    between the graph's input and the Resize (a side stays at the boundary through it)."""
    from onnx import TensorProto, helper, numpy_helper

    c = 4
    nodes = [helper.make_node("Resize", ["a", "", "sc"], ["b"], name="r", mode="linear")]
    if before or relu:
        nodes.insert(0, helper.make_node("Conv" if before else "Relu", ["X", "w"] if before else ["X"], ["a"]))
    if after:
        nodes.append(helper.make_node("Conv", ["b", "w"], ["Y"]))
    inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")] + \
        ([numpy_helper.from_array(np.eye(c, dtype=np.float32).reshape(c, c, 1, 1), "w")] if before or after else [])
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("X" if before or relu else "a",
                                                                     TensorProto.FLOAT, [1, c, 24, 20])],
                          [helper.make_tensor_value_info("Y" if after else "b", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path / "c.onnx")
    return str(tmp_path / "c.onnx")


@pytest.mark.parametrize("before, after, relu, charged, boundary", [
    (True, True, False, N_IN + N_OUT, None),          # between Conv layers: reorders in and out
    (True, False, False, N_IN, "output"),             # a Conv's output upsampled into the model's output
    (False, True, False, N_OUT, "input"),             # the model's input upsampled into a Conv
    (False, False, True, 0, "input and output"),      # Relu keeps the input's layout: no reorder anywhere
])
def test_the_reorders_count_where_the_node_meets_layers(tmp_path, before, after, relu, charged, boundary):
    """The extension pays the reorders measured between Conv layers on each side that meets a layer, none on a
    side that meets the model's own input or output: a rate that wins alone (0.5 against 1.0 per output) loses
    once 2 ns per element are charged on either side (x2 upsampling: the input side is a quarter of the output's)."""
    path = _in_context(tmp_path, before, after, relu)
    with cost.using(_table(builtin=1.0, extension=0.5, copy=0.01, layout=2.0)):
        _, (rec,) = convert(path)
    got = rec.extra["cost"]
    assert got["extension_ms"] == pytest.approx((0.5 * N_OUT + 2.0 * charged) / 1e6)
    assert got.get("boundary") == boundary
    assert rec.rung == (4 if charged == 0 else 1), rec.summary()
    if boundary and rec.rung == 4:
        assert f"none at the model's {boundary}" in rec.reason, rec.reason


def test_builtin_never_reads_the_model(tmp_path, monkeypatch):
    """--prefer builtin never weighs the extension nor times rates here; its one choice, between two of
    OpenVINO's own ops (the convolution form or Interpolate), reads the shipped rates (``cost.shipped``)."""
    monkeypatch.setattr(cost, "calibration", lambda: pytest.fail("--prefer builtin consulted the machine's rates"))
    _, path = _linear_up(tmp_path)
    _, (rec,) = convert(path, prefer="builtin")
    assert rec.rung == 1 and "cost" not in rec.extra


def test_a_class_without_a_rate_keeps_the_ladders_choice(tmp_path):
    _, path = _linear_up(tmp_path)
    with cost.using(_table(copy=0.1)):
        _, (rec,) = convert(path)
    assert rec.rung == 1 and "cost" not in rec.extra


@pytest.mark.compiled
def test_cli_default_and_opt_out(tmp_path, capsys):
    _, path = _linear_up(tmp_path)
    with cost.using(_table(builtin=1.0, extension=0.1, copy=0.0, layout=0.0)):
        assert main(["convert", path, "--prefer", "fastest", "-o", str(tmp_path / "o.xml")]) == 0
        out = capsys.readouterr().out
        assert "rung 4 (extension)" in out and "cost model: 10x faster than Interpolate-11 (rung 1)" in out, out
        # The default is portable (issue 42): the built-in op, exact, and nothing beside the model.
        assert main(["convert", path, "-o", str(tmp_path / "default" / "d.xml")]) == 0
        assert "rung 4" not in capsys.readouterr().out
        assert sorted(p.name for p in (tmp_path / "default").iterdir()) == ["d.bin", "d.xml"]
        assert main(["convert", path, "--prefer", "builtin", "-o", str(tmp_path / "b.xml")]) == 0
        assert "rung 4" not in capsys.readouterr().out
        assert main(["convert", path, "--target", "onnx", "-o", str(tmp_path / "o.onnx")]) == 0
        capsys.readouterr()
        assert main(["convert", path, "--prefer", "fastest", "--target", "onnx", "-o", str(tmp_path / "p.onnx")]) == 2
        assert "--prefer applies to --target openvino only" in capsys.readouterr().err


def _grid_5d(tmp_path):
    """A 5-D GridSample (GridSample-9 is 4-D only: its exact rung that needs nothing beside the model is the
    decomposition) and its inputs."""
    from onnx import TensorProto, helper

    xs, gs = (1, 3, 4, 5, 6), (1, 3, 4, 2, 3)
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], name="g", mode="linear", padding_mode="border")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(xs)),
                                        helper.make_tensor_value_info("G", TensorProto.FLOAT, list(gs))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    onnx.save(m, tmp_path / "g.onnx")
    rng = np.random.default_rng(1)
    return m, str(tmp_path / "g.onnx"), [rng.standard_normal(xs).astype(np.float32),
                                         rng.uniform(-1.2, 1.2, gs).astype(np.float32)]


@pytest.mark.compiled
@pytest.mark.parametrize("decomposition, rung", [(2.0, 4), (1.0, 3)])
def test_gridsample_takes_the_extension_over_its_decomposition_by_the_margin(tmp_path, decomposition, rung):
    """GridSample's decomposition against the extension (1.0 per output; no reorder charged against a
    decomposition): 2.0 per output is 1.25x or more, 1.0 is not. Never GridSample-9 itself."""
    from resample_bridge.lowering import compiled

    m, path, feeds = _grid_5d(tmp_path)
    table = cost.Calibration({"decomposition/gridsample-linear/3d": decomposition,
                              "extension/gridsample-linear/3d": 1.0, "copy": 0.1}, "the test's table")
    with cost.using(table):
        ov_model, (rec,) = convert(path)
    assert rec.rung == rung, rec.summary()
    assert rec.extra["cost"]["chosen_ms"] == pytest.approx(decomposition * 72 / 1e6)
    assert rec.extra["cost"]["extension_ms"] == pytest.approx(72 / 1e6)
    assert "boundary" not in rec.extra["cost"]
    if rung == 4:
        assert "faster than the decomposition (rung 3)" in rec.reason, rec.reason
        assert "reorders alike" in rec.reason, rec.reason
    core = ov.Core()
    core.add_extension(compiled.openvino_extension())
    (_, ir), = parse_model(m)
    got = core.compile_model(ov_model, "CPU", F32)(feeds)[0]
    assert against_oracle(ir, got, run(ir, *feeds), feeds).ok


def _fpn_nearest(tmp_path) -> str:
    """Conv -> nearest to sizes read from another tensor at run time (an FPN's) -> Conv."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Shape", ["S"], ["sz"]), helper.make_node("Conv", ["X", "w"], ["a"]),
             helper.make_node("Resize", ["a", "", "", "sz"], ["b"], name="r", mode="nearest"),
             helper.make_node("Conv", ["b", "w"], ["Y"])]
    w = numpy_helper.from_array(np.eye(2, dtype=np.float32).reshape(2, 2, 1, 1), "w")
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                       helper.make_tensor_value_info("S", TensorProto.FLOAT, [1, 2, "H", "W"])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path / "n.onnx")
    return str(tmp_path / "n.onnx")


def _index_form_table(decomposition: float) -> cost.Calibration:
    return cost.Calibration({"decomposition/nearest/plain/up": decomposition, "extension/nearest/plain/up": 0.5,
                             "copy": 0.1, "layout": 2.0}, "the test's table")


def _grid_runs(monkeypatch) -> list:
    """The index form's grid proofs run from now on (one entry each)."""
    from resample_bridge.lowering.openvino import index_ops, nearest_index

    runs, verdict = [], nearest_index.grid_verdict
    index_ops.VERDICTS.clear()
    monkeypatch.setattr(nearest_index, "grid_verdict", lambda *a, **k: runs.append(1) or verdict(*a, **k))
    return runs


@pytest.mark.compiled
@pytest.mark.parametrize("decomposition, rung", [(2.0, 4), (0.6, 3)])
def test_run_time_sizes_compare_rates_per_output_element(tmp_path, monkeypatch, decomposition, rung):
    """Nearest to sizes read from another tensor at run time (an FPN's): the index-form decomposition or the
    extension, by their rates per output element (no static size to weigh them at). Between Conv layers, but
    the decomposition runs planar as the extension does: no reorder charged (the table's copy and layout rates
    are not read). 0.5 against 2.0 (4x: the extension) or 0.6 (1.2x: the decomposition). Where the extension
    is taken, the decomposition is not built: its grid proof does not run."""
    runs = _grid_runs(monkeypatch)
    with cost.using(_index_form_table(decomposition)):
        _, (rec,) = convert(_fpn_nearest(tmp_path))
    assert rec.rung == rung, rec.summary()
    got = rec.extra["cost"]
    assert got["chosen_ns"] == decomposition and got["extension_ns"] == 0.5, got
    assert "assumed" not in got and "boundary" not in got, got
    assert (len(runs) > 0) == (rung == 3), runs
    if rung == 4:
        assert "faster per output element than the decomposition (rung 3)" in rec.reason, rec.reason
        assert "reorders alike" in rec.reason, rec.reason
        assert rec.tried[-1] == (3, "decomposition",
                                 "built, not proven: the cost model estimates the extension faster")


@pytest.mark.compiled
def test_the_decomposition_is_built_where_the_extension_it_was_weighed_against_refuses(tmp_path, monkeypatch):
    """The cost model prefers the extension (4x), but this machine cannot build it: the index form is built,
    proven and taken, as with ``--prefer builtin``."""
    from resample_bridge.lowering import compiled
    from resample_bridge.semantics.errors import BridgeError

    def missing(*_):
        raise BridgeError("no C++ compiler found", "rung")

    runs = _grid_runs(monkeypatch)
    monkeypatch.setattr(compiled, "openvino_node", missing)
    with cost.using(_index_form_table(2.0)):
        _, (rec,) = convert(_fpn_nearest(tmp_path))
    assert rec.rung == 3 and runs, rec.summary()
    assert "no C++ compiler found" in rec.extra["cost"]["extension_refused"], rec.extra


@pytest.mark.compiled
def test_under_allow_conditional_the_exact_rungs_still_beat_a_conditional_interpolate(tmp_path):
    """Interpolate fed the run-time sizes is exact only where no coordinate falls on a rounding boundary: with
    --allow-conditional it is held, and the climb stops before the extension. The index form, exact, is then
    proven and taken (and the cost model swaps it for the extension), never skipped for an extension the climb
    would not reach."""
    with cost.using(_index_form_table(2.0)):
        _, (rec,) = convert(_fpn_nearest(tmp_path), allow_conditional=True)
    assert rec.rung == 4 and not rec.conditions, rec.summary()
    assert rec.tried[-1][:2] == (3, "decomposition") and "exact, but" in rec.tried[-1][2], rec.tried


@pytest.mark.parametrize("before, after, rung", [(False, False, 4), (True, True, 1)])
def test_run_time_sizes_weigh_a_builtin_rung_per_output_element(tmp_path, before, after, rung):
    """A built-in op is one op, as the extension is: with H and W known only at run time they are weighed per
    output element (x2: a quarter of an input element per output). Alone, 1.0 against 0.5 (2x: the extension);
    between Conv layers 2 ns per element in and out are charged: 0.5 + 2 * 1.25 = 3.0 (the built-in op)."""
    m = onnx.load(_in_context(tmp_path, before, after))
    for d in (2, 3):
        m.graph.input[0].type.tensor_type.shape.dim[d].dim_param = "hw"[d - 2]
    onnx.save(m, tmp_path / "d.onnx")
    with cost.using(_table(builtin=1.0, extension=0.5, copy=0.0, layout=2.0, call=1e6)):
        _, (rec,) = convert(str(tmp_path / "d.onnx"))
    assert rec.rung == rung, rec.summary()
    got = rec.extra["cost"]
    assert got["chosen_ns"] == 1.0 and got["extension_ns"] == pytest.approx(0.5 if rung == 4 else 3.0), got
    assert "assumed" not in got  # the scales fix the input per output
    if rung == 4:  # a call's cost does not apply: there is no size to weigh the saving at
        assert "faster per output element than Interpolate-11 (rung 1)" in rec.reason, rec.reason


# ----------------------------------------------------------------------------------------------------------
# Where the rates come from


def test_the_table_named_by_the_environment(tmp_path, monkeypatch):
    own = tmp_path / "rates.json"
    own.write_text(json.dumps({"where": "the deployment machine", "rates": {"copy": 0.5}}))
    monkeypatch.setenv(cost.ENV, str(own))
    got = cost.calibration()
    assert got.where == "the deployment machine" and got.rate("copy") == 0.5 and got.rate("layout") is None
    # or that machine's cache file itself (the rates alone)
    own.write_text(json.dumps({"copy": 0.25, "decomposition/nearest/plain/up": None}))
    got = cost.calibration()
    assert got.where == f"the rates of {own}" and got.rate("copy") == 0.25
    assert got.rate("decomposition/nearest/plain/up") is None


def test_without_a_built_extension_the_reference_table_decides(tmp_path, monkeypatch):
    """A fresh machine: nothing built, no rates cached. The first convert neither builds the extension nor times
    anything to decide; the shipped reference table decides, and says so."""
    monkeypatch.delenv(cost.ENV, raising=False)
    monkeypatch.delenv("RESAMPLE_BRIDGE_OPENVINO_EXT", raising=False)
    monkeypatch.setenv("RESAMPLE_BRIDGE_CACHE", str(tmp_path / "cache"))
    from resample_bridge.lowering.openvino import cost_machine

    monkeypatch.setattr(cost_machine, "_time", lambda key, _: pytest.fail(f"timed {key} on a fresh machine"))
    table = cost.calibration()
    reference = json.loads(cost.REFERENCE.read_text())
    assert table.where == reference["where"] and table.where.startswith("the reference machine (")
    assert table.rates == reference["rates"] and table.timer is None
    _, (rec,) = convert(_in_context(tmp_path, before=True, after=True))  # weighed, and not the extension
    assert rec.extra["cost"]["rates"] == reference["where"] and rec.rung == 1
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())  # nothing built


def _on_this_machine(tmp_path, monkeypatch, cached=None):
    """This machine's table with its cache file in ``tmp_path`` (holding ``cached``); the keys timed, in order."""
    from resample_bridge.lowering import compiled
    from resample_bridge.lowering.openvino import cost_machine

    compiled.openvino_extension()  # built (or found) where the tests build it
    monkeypatch.delenv(cost.ENV, raising=False)
    own = tmp_path / "cost.json"
    if cached is not None:
        own.write_text(json.dumps(cached))
    monkeypatch.setattr(cost_machine, "cache_file", lambda: own)
    monkeypatch.setattr(cost, "_machine", None)
    timed = []
    real = cost_machine._time
    monkeypatch.setattr(cost_machine, "_time", lambda key, how: timed.append(key) or real(key, how))
    return own, timed


@pytest.mark.compiled
@pytest.mark.slow
def test_this_machine_times_only_the_rates_a_conversion_needs_once(tmp_path, monkeypatch):
    from resample_bridge.lowering.openvino import cost_machine

    own, timed = _on_this_machine(tmp_path, monkeypatch)
    _, path = _linear_up(tmp_path)
    _, (rec,) = convert(path)
    assert rec.extra["cost"]["rates"] == "this machine"
    # The extension is timed beside the built-in op, in one run (a busy machine weighs on both alike); no
    # reorder where the node meets the model's own input and output; 4 channels: the rates at few channels.
    # Where they send the node to the extension, each is timed twice more first (cost_machine.CONFIRM_RUNS).
    # The convolution form's rate too (issue 45: the in-graph choice, read before the extension is weighed; where
    # the rates send the node to the form they are confirmed as the extension's are), and the matrix form's, per
    # multiply-accumulate with its guard's (timed together; 4 channels: not by plane, cost_plane.LEAST_CHANNELS).
    once = ["builtin/linear/plain/up/few", "conv/linear/plain/up/few", "matmul/mac", "call"]
    unweighed = "builtin/linear/plain/up/few" if rec.proof.get("form") == "conv" else "conv/linear/plain/up/few"
    weighed = [k for k in once if k != unweighed]
    # the call's cost is read where the convolution form's saving is weighed against it, which only some measured
    # rates reach (cost_in_graph's short-circuit): its place beside the matrix form's rate is the machine's
    first = list(dict.fromkeys(timed))
    assert first[:2] == once[:2] and sorted(first) == sorted(once) and all(timed.count(k) in (1, 3) for k in once), \
        (timed, rec.rung)
    cached = json.loads(own.read_text())
    assert set(timed) | {"extension/linear/plain/up/few"} <= set(cached) and all(v >= 0 for v in cached.values())
    assert all(cached.get(cost_machine.runs_key(k), 1) == timed.count(k) for k in once), timed
    if rec.rung == 4:
        assert all(cached[cost_machine.runs_key(k)] == 3 for k in weighed + ["extension/linear/plain/up/few"])
    assert rec.extra["cost"]["few_channels"] == 4
    # Once per machine: the next process reads the file.
    monkeypatch.setattr(cost, "_machine", None)
    monkeypatch.setattr(cost_machine, "_time", lambda key, _: pytest.fail(f"timed {key} twice"))
    _, (again,) = convert(path)
    assert again.extra["cost"] == rec.extra["cost"]


@pytest.mark.compiled
@pytest.mark.slow
def test_a_burst_in_one_timing_is_outvoted_before_the_extension_is_taken(tmp_path, monkeypatch):
    """The built-in op's rate timed once in a burst (here 100 ns per output element, some 40x its own) sends the
    node to the extension by the estimate; the rates it read are timed twice more first, each then the median of
    three, and the estimate made again with them."""
    from resample_bridge.lowering.openvino import cost_machine

    key = "builtin/linear/plain/up/few"
    own, timed = _on_this_machine(tmp_path, monkeypatch, cached={key: 100.0, "call": 0.0})
    _, path = _linear_up(tmp_path)
    _, (rec,) = convert(path)
    assert timed.count(key) == 2, timed  # twice more: none of the first
    cached = json.loads(own.read_text())
    assert cached[cost_machine.runs_key(key)] == 3 and cached[key] < 100.0
    # the estimate on the record is the one made with the medians
    got = rec.extra["cost"]
    assert got["chosen_ms"] == pytest.approx((cached["fixed/" + key] + cached[key] * N_OUT) / 1e6)
    assert cached[cost_machine.runs_key("fixed/" + key)] == 3


@pytest.mark.slow
@pytest.mark.parametrize("key", ["builtin/linear/aa/up", "decomposition/nearest/plain/up",
                                 "decomposition/gridsample-linear/3d", "builtin/cubic/aa/down/few"])
def test_every_class_the_estimate_reads_has_a_calibration_model(key):
    """The classes a calibration model of the plain spelling cannot land on: antialias on the built-in op (the
    pillow modes, as PyTorch exports antialias), nearest's index form (lengths known only at run time), and
    GridSample's decomposition (5-D), and the pillow modes at few channels: each is timed, not left missing
    (which would keep the ladder's choice)."""
    from resample_bridge.lowering.openvino import cost_timing, target

    got = cost_timing.time_rates(key, target.convert)
    assert got.get(key) is not None and got[key] > 0, got
    assert got.get(cost_timing.fixed_key(key)) is not None and got[cost_timing.fixed_key(key)] >= 0, got


def test_an_empty_output_is_not_weighed(tmp_path):
    """A scale that sends an axis of length 1 to length 0 (fuzz seed 62: a ZeroDivisionError in the estimate):
    nothing to compute, nothing to weigh; the ladder's choice stands."""
    m = resize_model((1, 1, 6, 6), scales=[1, 0.5, 1, 1.5], mode="linear")
    onnx.save(m, tmp_path / "e.onnx")
    with cost.using(_table(builtin=1.0, extension=0.1, copy=0.0, layout=0.0)):
        _, (rec,) = convert(str(tmp_path / "e.onnx"))
    assert rec.rung in (1, 2, 3) and "cost" not in rec.extra, rec.summary()


def test_planar_sides_follow_layout_keeping_ops_only():
    """A side is at the model's boundary through ops that keep the layout and read nothing else that varies;
    a Shape consumer reads no layout; a second consumer that meets a layer, or a node in a body, is charged."""
    from onnx import TensorProto, helper, numpy_helper

    from resample_bridge.lowering.openvino.boundary import planar_sides

    def r(name, x, y):
        return helper.make_node("Resize", [x, "", "sc"], [y], name=name, mode="linear")

    nodes = [helper.make_node("Sub", ["X", "k"], ["x1"]), helper.make_node("Transpose", ["x1"], ["x2"]),
             r("pre", "x2", "p"), helper.make_node("Sigmoid", ["p"], ["P"]), helper.make_node("Shape", ["p"], ["s"]),
             helper.make_node("Conv", ["X", "w"], ["c"]), r("head", "c", "H"),
             r("fork", "X", "f"), helper.make_node("Add", ["f", "c"], ["F"]),
             r("mixed", "X", "m"), helper.make_node("Mul", ["m", "X"], ["M"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 4, 4])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("P", "H", "F", "M", "s")],
                          [numpy_helper.from_array(np.ones(4, np.float32), "sc"),
                           numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), "w"),
                           numpy_helper.from_array(np.float32(0.5), "k")])
    sides = planar_sides(helper.make_model(g))
    assert sides["pre"] == (True, True)      # Sub of a constant, Transpose; Sigmoid; a Shape beside it
    assert sides["head"] == (False, True)    # a Conv's output into the model's output
    assert sides["fork"] == (True, False)    # added to a Conv's output
    assert sides["mixed"] == (True, False)   # multiplied by another varying tensor


@pytest.mark.parametrize("call_ns, rung", [(1e4, 1), (1e3, 4)])
def test_a_saving_below_a_calls_cost_is_not_taken(tmp_path, call_ns, rung):
    """10x faster per output, but the saving (0.9 * 7680 ns = 6.9 us) below an inference of nothing (10 us): the
    rates are times beyond it, so they do not resolve the saving, and the built-in op needs nothing beside the
    model. Above a 1 us call it is taken."""
    _, path = _linear_up(tmp_path)
    with cost.using(_table(builtin=1.0, extension=0.1, call=call_ns)):
        _, (rec,) = convert(path)
    assert rec.rung == rung, rec.summary()
    assert rec.extra["cost"]["call_ms"] == pytest.approx(call_ns / 1e6)


def test_a_batch_known_only_at_run_time_is_weighed_at_1(tmp_path):
    """A batch known only at run time: the static estimate at batch 1 (the smallest run), so that a saving below a
    call's cost there is not taken (the ratio is the same at every batch)."""
    m = resize_model(("n", 4, 24, 20), scales=[1, 1, 2, 2], mode="linear")
    onnx.save(m, tmp_path / "b.onnx")
    with cost.using(_table(builtin=1.0, extension=0.1, call=1e4)):
        _, (rec,) = convert(str(tmp_path / "b.onnx"))
    got = rec.extra["cost"]
    assert rec.rung == 1 and got["chosen_ms"] == pytest.approx(N_OUT / 1e6), rec.summary()
    assert got["assumed"] == "1 for each length known only at run time"


@pytest.mark.parametrize("dynamic_ns, rung", [(0.0, 4), (3e4, 1)])
def test_fixed_costs_per_call_are_weighed(tmp_path, dynamic_ns, rung):
    """Each rung's fixed cost per call is added at the node's sizes: the built-in op 10 us, the extension 2 us,
    and where a length is known only at run time (here the batch) the extension's shape inference at each call
    (``DYNAMIC``). 1.0 against 0.5 per output over 7680 outputs: 17.68 against 5.84 us (3.0x) without it; with 30
    us more, 17.68 against 35.84 (the built-in op)."""
    from resample_bridge.lowering.openvino.cost_timing import DYNAMIC, fixed_key

    m = resize_model(("n", 4, 24, 20), scales=[1, 1, 2, 2], mode="linear")
    onnx.save(m, tmp_path / "f.onnx")
    table = _table(builtin=1.0, extension=0.5, **{fixed_key("builtin/linear/plain/up"): 1e4,
                                                  fixed_key("extension/linear/plain/up"): 2e3, DYNAMIC: dynamic_ns})
    with cost.using(table):
        _, (rec,) = convert(str(tmp_path / "f.onnx"))
    got = rec.extra["cost"]
    assert got["chosen_ms"] == pytest.approx((1e4 + N_OUT) / 1e6)
    assert got["extension_ms"] == pytest.approx((2e3 + dynamic_ns + 0.5 * N_OUT) / 1e6)
    assert got["fixed_ms"] == pytest.approx([1e4 / 1e6, (2e3 + dynamic_ns) / 1e6])
    assert rec.rung == rung, rec.summary()


def test_fixed_costs_weigh_run_time_sizes_spread_over_the_reference_output(tmp_path):
    """Sizes known only at run time: each fixed cost spread over ``REFERENCE_OUTPUTS`` per output element. Per
    element alone 0.5 against 0.45 (1.1x: not the margin); with the index form's chain (59 us a call) against the
    extension's (3 us, and 6 us of shape inference at each call): 0.6 against 0.465, 1.29x: the extension."""
    from onnx import TensorProto, helper

    from resample_bridge.lowering.openvino.cost_timing import DYNAMIC, fixed_key

    nodes = [helper.make_node("Shape", ["S"], ["sz"]),
             helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="r", mode="nearest")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                       helper.make_tensor_value_info("S", TensorProto.FLOAT, [1, 2, "H", "W"])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path / "n.onnx")
    n = cost.REFERENCE_OUTPUTS
    rates = {"decomposition/nearest/plain/up": 0.5, "extension/nearest/plain/up": 0.45}
    for fixed in ((0.0, 0.0, 0.0), (0.1 * n, 0.005 * n, 0.01 * n)):
        table = cost.Calibration({**rates, fixed_key("decomposition/nearest/plain/up"): fixed[0],
                                  fixed_key("extension/nearest/plain/up"): fixed[1], DYNAMIC: fixed[2]}, "the test's")
        with cost.using(table):
            _, (rec,) = convert(str(tmp_path / "n.onnx"))
        got = rec.extra["cost"]
        assert got["chosen_ns"] == pytest.approx(0.5 + fixed[0] / n)
        assert got["extension_ns"] == pytest.approx(0.45 + (fixed[1] + fixed[2]) / n)
        assert rec.rung == (4 if fixed[0] else 3), rec.summary()
