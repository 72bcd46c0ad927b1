"""The GridSample decomposition (lowering/onnx/gridsample_decompose.py) against the oracle on onnxruntime, with the
project's one tolerance (nearest bit-exact), and where the targets take it: the TensorRT target writes only
default-domain nodes for what its layer rejects or cannot be verified to compute, the portable ONNX target where
onnxruntime's op does not run."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.lowering.onnx.gridsample_decompose import check_gridsample, decompose_gridsample, \
    decomposition_model
from resample_bridge.lowering.probes import probe_sets
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import GridSampleIR, Sampler
from resample_bridge.semantics.reference import run as oracle

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
gs = pytest.importorskip("onnx_graphsurgeon")

SAMPLERS = {"nearest": Sampler("nearest", nearest="half_even"), "linear": Sampler("linear"),
            "cubic": Sampler("cubic", cubic_a=Fraction(-3, 4))}


def _decomposed(ir, gather="rows"):
    """A session of the decomposition alone, every dimension dynamic."""
    return ort.InferenceSession(decomposition_model(ir, gather=gather).SerializeToString(),
                                providers=["CPUExecutionProvider"])


def _inputs(ir, x_shape, grid_shape, rng, nan_grid=True):
    """The shared probes (random / distinct / large data; random grids, .5 ties and one step either side, grids
    far outside [-1, 1]), and non-finite data and grid points where the oracle's value is meaningful."""
    sets = [p.arrays for p in probe_sets(ir, [x_shape, grid_shape], ["float32", "float32"], [True, True])]
    assert any(np.abs(g).max() > 20 for _, g in sets)  # far outside: many reflections
    x, grid = sets[0]
    out = list(sets)
    if ir.sampler.kind != "cubic":
        bad = x.copy()
        bad.reshape(-1)[::7], bad.reshape(-1)[3::11] = np.inf, np.nan
        out.append((bad, grid))
    if ir.padding != "reflection" and nan_grid:
        odd = grid.copy()
        odd.reshape(-1)[::5], odd.reshape(-1)[1::7], odd.reshape(-1)[2::9] = np.nan, np.inf, -np.inf
        out.append((x, odd))
    return out


def _check(sess, ir, inputs):
    with np.errstate(invalid="ignore", over="ignore"):
        for x, grid in inputs:
            got = sess.run(None, {"x": x, "grid": grid})[0]
            want = oracle(ir, x, grid)
            c = against_oracle(ir, got, want, [x, grid])
            assert c.ok, (ir, c.first_mismatch, got[c.first_mismatch], want[c.first_mismatch])


@pytest.mark.parametrize("rank", [4, 5])
@pytest.mark.parametrize("kind", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_every_mode_padding_and_align_corners_matches_the_oracle(rank, kind, padding):
    rng = np.random.default_rng(rank)
    D = rank - 2
    for ac, padding_on in itertools.product([False, True], ["taps", "coordinate_and_taps"]):
        ir = GridSampleIR(D, SAMPLERS[kind], padding, ac, padding_on=padding_on, dtype="float32")
        # Both ways of reading X (the OpenVINO rung's "elements" on one of the two conventions, to keep it short).
        for gather in ("rows", "elements") if padding_on == "taps" else ("rows",):
            sess = _decomposed(ir, gather)
            # One session, two shapes: the lengths are read at run time (a length-1 axis under align_corners too).
            for x_shape, grid_shape in (((2, 3) + (5, 4, 3)[:D], (2,) + (3, 4, 2)[:D] + (D,)),
                                        ((1, 2) + (1, 6, 2)[:D], (1,) + (2, 3, 5)[:D] + (D,))):
                _check(sess, ir, _inputs(ir, x_shape, grid_shape, rng))


def test_three_d_and_float16():
    rng = np.random.default_rng(3)
    for kind in SAMPLERS:
        ir = GridSampleIR(1, SAMPLERS[kind], "reflection", False, padding_on="taps", dtype="float32")
        _check(_decomposed(ir), ir, _inputs(ir, (2, 3, 7), (2, 9, 1), rng))
    ir = GridSampleIR(2, SAMPLERS["linear"], "border", True, padding_on="taps", dtype="float16")
    x, grid = rng.standard_normal((1, 2, 5, 4)).astype(np.float16), rng.uniform(-2, 2, (1, 3, 3, 2))
    _check(_decomposed(ir), ir, [(x, grid.astype(np.float32))])


def test_nearest_ties_are_read_as_the_oracle_reads_them():
    """Grid points whose float32 coordinate is exactly k + 1/2 read the even neighbour (rounding half up reads
    the other one on half of them; the sweep's shared probes, one float32 step either side of each tie, catch a
    coordinate computed in another order)."""
    ir = GridSampleIR(2, SAMPLERS["nearest"], "zeros", False, padding_on="taps", dtype="float32")
    sess = _decomposed(ir)
    L = 7
    g = np.float32(-1) + np.arange(-2, 2 * L + 2, dtype=np.float32) / np.float32(L)  # (g+1)*L - 1 odd: ties
    grid = np.stack(np.meshgrid(g, g), -1)[None].astype(np.float32)
    x = np.arange(L * L, dtype=np.float32).reshape(1, 1, L, L)
    got = sess.run(None, {"x": x, "grid": grid})[0]
    np.testing.assert_array_equal(got, oracle(ir, x, grid))
    assert np.any(np.rint(((grid.astype(np.float64) + 1) * L - 1) / 2) % 2 == 0)  # ties on both sides of even


def test_nearest_in_another_arithmetic_is_refused():
    ir = GridSampleIR(2, SAMPLERS["nearest"], "zeros", False, arith="fp32_fused", dtype="float32")
    with pytest.raises(BridgeError) as e:
        check_gridsample(ir)
    assert e.value.field == "arith"
    check_gridsample(GridSampleIR(2, SAMPLERS["linear"], "zeros", False, arith="fp32_fused", dtype="float32"))
    with pytest.raises(BridgeError):
        check_gridsample(GridSampleIR(2, SAMPLERS["linear"], "zeros", False, dtype="int32"))


def test_the_proof_finds_a_decomposition_of_another_op():
    """prove_grid runs the written nodes against the source IR: a decomposition of align_corners=1 written for a
    node that says 0 does not prove."""
    from resample_bridge.lowering.onnx.prove_grid import prove_grid
    from resample_bridge.lowering.passes import NodeRecord
    from resample_bridge.translate.onnx import Graph

    written = GridSampleIR(2, SAMPLERS["linear"], "border", True, padding_on="taps", dtype="float32",
                           input_shape=(1, 2, 5, 4), grid_shape=(1, 3, 2, 2))
    src = GridSampleIR(2, SAMPLERS["linear"], "border", False, padding_on="taps", dtype="float32",
                       input_shape=(1, 2, 5, 4), grid_shape=(1, 3, 2, 2))
    x, g, y = gs.Variable("x", np.float32), gs.Variable("grid", np.float32), gs.Variable("y", np.float32)
    graph = gs.Graph(inputs=[x, g], outputs=[y], opset=20)
    decompose_gridsample(graph, written, x, g, y, "gs")
    model = gs.export_onnx(graph, do_type_check=False)
    model.ir_version = 10
    proof = {"inputs": ["x", "grid"], "output": "y"}
    graph = Graph(model)
    assert prove_grid(NodeRecord("gs", "GridSample-20", src, "onnx", proof=proof), model, graph)
    assert not prove_grid(NodeRecord("gs", "GridSample-20", written, "onnx", proof=proof), model, graph)


# ----------------------------------------------------------------------------------------------------------
# Where the targets take it


def _model(D, mode, padding, ac=0, dynamic=False):
    from onnx import TensorProto, helper

    xs = ["N", "C"] + [f"s{d}" for d in range(D)] if dynamic else [1, 2] + [5, 4, 3][:D]
    gsh = ["N"] + [f"o{d}" for d in range(D)] + [D] if dynamic else [1] + [3, 2, 4][:D] + [D]
    n = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", mode=mode, padding_mode=padding,
                         align_corners=ac)
    g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs),
                                     helper.make_tensor_value_info("grid", TensorProto.FLOAT, gsh)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    return m


def _runs_exactly(path, ir, rng):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = rng.standard_normal((1, 2, 5, 4, 3)).astype(np.float32)
    grid = rng.uniform(-3, 3, (1, 3, 2, 4, 3)).astype(np.float32)
    _check(_Named(sess), ir, [(x, grid)])


class _Named:
    def __init__(self, sess):
        self.sess = sess

    def run(self, _, feeds):
        return self.sess.run(None, feeds)


def test_tensorrt_target_writes_five_d_gridsample_without_plugin(tmp_path):
    """convert --target tensorrt of 5-D GridSample, every mode and padding: every node in the default domain,
    exact on onnxruntime (TensorRT's layer takes 4-D only)."""
    from resample_bridge.tools import api

    rng = np.random.default_rng(5)
    for mode, padding in itertools.product(["nearest", "linear", "cubic"], ["zeros", "border", "reflection"]):
        src = tmp_path / f"{mode}_{padding}.onnx"
        onnx.save(_model(3, mode, padding, ac=int(mode == "linear")), src)
        out = tmp_path / f"{mode}_{padding}.trt.onnx"
        conv = api.convert(str(src), str(out), target="tensorrt")
        assert [r.rung for r in conv.records] == [3]
        written = onnx.load(out)
        assert {n.domain for n in written.graph.node} == {""}
        assert all(n.op_type != "GridSample" for n in written.graph.node)
        _runs_exactly(str(out), conv.records[0].ir, rng)


def test_tensorrt_option_and_cubic_padding_take_the_decomposition():
    from resample_bridge.lowering.passes import ConvertOptions
    from resample_bridge.lowering.tensorrt.target import TARGET

    def rung(model, **options):
        return TARGET(model, TARGET.policy(ConvertOptions(**options))).records[0].rung

    assert rung(_model(2, "linear", "zeros")) == 2  # TensorRT's own layer, respelled
    assert rung(_model(2, "linear", "zeros"), decompose_gridsample=True) == 3
    assert rung(_model(2, "cubic", "border")) == 3  # per-tap padding unverified on TensorRT
    assert rung(_model(2, "nearest", "reflection", dynamic=True), decompose_gridsample=True) == 3


def test_the_option_is_refused_by_other_targets(tmp_path):
    from resample_bridge.tools import api

    src = tmp_path / "m.onnx"
    onnx.save(_model(2, "linear", "zeros"), src)
    with pytest.raises(BridgeError) as e:
        api.convert(str(src), str(tmp_path / "m.xml"), target="openvino", decompose_gridsample=True)
    assert e.value.field == "decompose_gridsample"  # the API names its parameter (tools/api_terms.py)


def test_onnx_target_decomposes_what_onnxruntime_does_not_run():
    from resample_bridge.lowering.onnx.target import DEFAULT_POLICY, OnnxTarget

    for D, mode in ((3, "cubic"), (1, "linear")):  # onnxruntime: cubic on 4-D only; 4-D and 5-D only
        result = OnnxTarget()(_model(D, mode, "border"), DEFAULT_POLICY)
        assert [r.rung for r in result.records] == [3]
        assert "probed on onnxruntime" in result.records[0].extra["probe"]
    assert [r.rung for r in OnnxTarget()(_model(2, "linear", "zeros"), DEFAULT_POLICY).records] == [1]


@pytest.mark.openvino
def test_openvino_target_takes_the_decomposition_for_five_d(tmp_path):
    """convert --target openvino --prefer builtin of 5-D GridSample: rung 3, no extension library written, and the
    written IR on OpenVINO CPU (f32) computes the oracle's numbers on the shared probes and far-outside grids (the
    default takes the extension where the cost model estimates it 1.25x faster: test_openvino_cost.py)."""
    ov = pytest.importorskip("openvino")
    from resample_bridge.tools import api

    rng = np.random.default_rng(9)
    # Nearest on static shapes too: OpenVINO folds the lengths into constants there and re-associates linear ops
    # with constants (the decomposition's ones tensor keeps every rounding; without it the tie probes refuse it).
    for mode, padding, ac, dynamic in (("nearest", "reflection", 0, True), ("nearest", "zeros", 0, False),
                                       ("linear", "border", 1, True), ("cubic", "zeros", 0, True)):
        src = tmp_path / f"{mode}{dynamic}.onnx"
        onnx.save(_model(3, mode, padding, ac=ac, dynamic=dynamic), src)
        out = tmp_path / f"{mode}{dynamic}.xml"
        conv = api.convert(str(src), str(out), target="openvino", prefer="builtin")
        (rec,) = conv.records
        assert rec.rung == 3 and rec.proof["probes"]["count"] > 0
        assert not list(tmp_path.glob("*.so"))
        compiled = ov.Core().compile_model(str(out), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        ir = rec.ir
        with np.errstate(invalid="ignore", over="ignore"):
            # No NaN grid points: OpenVINO CPU gives a finite value for one under border padding where the oracle
            # (and onnxruntime on the same graph) give NaN (measured; its graph rewrites' NaN rules, not checked).
            x_shape, grid_shape = ((2, 3, 5, 4, 3), (2, 3, 2, 4, 3)) if dynamic else ((1, 2, 5, 4, 3), (1, 3, 2, 4, 3))
            for x, grid in _inputs(ir, x_shape, grid_shape, rng, nan_grid=False):
                got, want = compiled([x, grid])[0], oracle(ir, x, grid)
                c = against_oracle(ir, got, want, [x, grid])
                assert c.ok, (mode, c.first_mismatch)


MODELS = __import__("pathlib").Path(__file__).resolve().parents[1] / "models"


@pytest.mark.parametrize("case", [pytest.param("ts16_hf_rt_detr", marks=pytest.mark.slow), "dy18_hf_rt_detr",
                                  "ts20_kornia_warp_affine3d"])
def test_real_models_on_tensorrt_need_no_grid_sample_layer(case, tmp_path):
    """RT-DETR (transformers, random weights; its deformable attention's GridSamples) and kornia's volumetric
    warp (5-D GridSample) through convert --target tensorrt --decompose-gridsample: no GridSample and no plugin
    node left, and onnxruntime on the written model matches the PyTorch outputs stored with the corpus (the
    corpus' own tolerance, tests/test_real_models.py)."""
    from resample_bridge.tools import api

    out = tmp_path / "m.onnx"
    conv = api.convert(str(MODELS / case / "model.onnx"), str(out), target="tensorrt", decompose_gridsample=True)
    grids = [r.rung for r in conv.records if r.op.startswith("GridSample")]
    assert grids and set(grids) == {3}
    written = onnx.load(out)
    assert {n.domain for n in written.graph.node} == {""}
    assert not any(n.op_type == "GridSample" for n in written.graph.node)
    with np.load(MODELS / case / "inputs.npz") as f, np.load(MODELS / case / "outputs.npz") as g:
        feeds, ref = dict(f), dict(g)
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    for name, want in ref.items():
        atol = 1e-4 * max(1.0, float(np.sqrt(np.mean(np.square(want.astype(np.float64))))))
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=atol)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_a_constant_grid_takes_the_decomposition_on_openvino(mode, tmp_path):
    """A 5-D GridSample whose grid is an initializer (a fixed warp): the decomposition's shapes are inferred for the
    node's own inputs before it is spliced on (issue 42: the conversion failed in OpenVINO's Gather callback), and
    the written model computes onnxruntime's numbers."""
    ov = pytest.importorskip("openvino")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    from resample_bridge.lowering.openvino.target import convert

    rng = np.random.default_rng(7)
    grid = numpy_helper.from_array(rng.uniform(-1.1, 1.1, (1, 3, 4, 2, 3)).astype(np.float32), "G")
    g = helper.make_graph([helper.make_node("GridSample", ["X", "G"], ["Y"], mode=mode)], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 4, 5, 6])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [grid])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=9), path)
    model, (record,) = convert(path)
    assert record.rung == 3, record.summary()
    x = rng.standard_normal((1, 2, 4, 5, 6)).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
