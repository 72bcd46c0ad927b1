"""tf_crop_and_resize linear / cubic with a fixed crop box past [0, 1] on lengths known only at run time (run-time
scales or sizes, or constant sizes on dynamic H / W): the run-time window (``scale_taps``) with the outputs whose
exact source lies outside the input set to the extrapolation value (``scale_source.crop_outside``: the inside outputs
per output length, from the oracle's own map). It wrote a library by default. The written model equals the oracle at
the f32 hint and within its reduced bound under bf16, onnxruntime where no axis keeps its length (onnxruntime copies
such an axis, its own convention), and outputs do take the extrapolation value; the proof re-reads the mask and the
value from the produced model and refuses another box or value; a roi fed at run time still has no window."""

import dataclasses
from fractions import Fraction

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering.openvino import scale_taps as st  # noqa: E402
from resample_bridge.semantics import tolerance  # noqa: E402
from resample_bridge.semantics.compare import outside  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.lowering.openvino.scale_grid import _sampled  # noqa: E402
from resample_bridge.lowering.openvino.scale_source import crop_outside  # noqa: E402
from resample_bridge.semantics.coords import bind_resize, crop_inside_range  # noqa: E402
from resample_bridge.semantics.ir import RuntimeValue  # noqa: E402
from resample_bridge.semantics.reference import run, runtime_values  # noqa: E402
from resample_bridge.semantics.taps import tie_indices  # noqa: E402
from resample_bridge.tools.dev.fuzz import make_case  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402
from tests.lowering.test_scale_taps import (CASES, CROPS, proven_crop, refusals, scales_model,  # noqa: E402
                                          sizes_crop_model, static_scales_model)  # noqa: E402

# Crop boxes (starts of N, C, H, W, then ends) past [0, 1]: one end out on H and W, both ends out, a flipped box
# past both ends, one lying wholly outside on W
BOXES = {"past": [0, 0, -0.1, 0.2, 1, 1, 0.8, 1.25], "both": [0, 0, -0.2, -0.126, 1, 1, 1.2, 1.046],
         "flipped": [0, 0, 1.2, 0.9, 1, 1, -0.3, 0.05], "beyond": [0, 0, 0.1, 1.1, 1, 1, 0.9, 1.5]}


def _extrapolated_somewhere(ir, x, s=None, sizes=None) -> bool:
    """Whether the oracle sets some output to the extrapolation value (a sentinel far from any sample)."""
    marked = dataclasses.replace(ir, extrapolation_value=1e6)
    return bool((run(marked, x, None, s, sizes) == 1e6).any())


def _off_ties(ir, x, s, sizes) -> np.ndarray:
    """bool, the output's shape: False at the outputs whose exact source lies within float32's reach of the crop's
    edge, where onnxruntime's float32 coordinate decides otherwise than the spec (``taps.tie_indices``: e.g. H 33 ->
    99 in the box -0.2f .. 1.2f: output 84's source is 32 + 9e-6, outside; onnxruntime's is inside)."""
    bound = bind_resize(ir, x.shape, runtime_values(ir, (x, None, s, sizes)))
    keep = np.ones(bound.out_shape, bool)
    for axis in bound.axes:
        index = [slice(None)] * x.ndim
        index[axis.axis] = tie_indices(axis, bound.sampler, "fp32", bound.exclude_outside)
        keep[tuple(index)] = False
    return keep


def _exact(xml, src, runs) -> tuple[int, int]:
    """Each (x, scales, sizes) of ``runs`` fed to the written model: within the oracle's float32 bound at the f32
    hint, its reduced bound at bf16, onnxruntime's numbers off the crop edge's float32 ties where no axis keeps its
    length. (runs compared with onnxruntime, runs where some output takes the extrapolation value)."""
    (_, ir), = parse_model(src)
    core = ov.Core()
    f32, bf16 = (core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": h}) for h in ("f32", "bf16"))
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    atol, rtol = tolerance.model_tolerance(np.float32)
    compared = marked = 0
    for x, s, z in runs:
        feeds = [x] + [v for v in (s, z) if v is not None]
        want, bound = run(ir, x, None, s, z), tolerance.float_bound(ir, x, None, s, z)
        got = f32(feeds)[0]
        assert got.shape == want.shape and not outside(got, want, bound).any(), (x.shape, s, z)
        low = bf16(feeds)[0]
        assert not outside(low, want, tolerance.reduced_bound(ir, want, bound, [x, None, s, z], "bf16")).any()
        marked += _extrapolated_somewhere(ir, x, s, z)
        if all(a != b for a, b in zip(x.shape[2:], want.shape[2:])) and want.size:
            compared += 1
            ref = sess.run(None, dict(zip(names, feeds)))[0]
            keep = _off_ties(ir, x, s, z)
            np.testing.assert_allclose(got[keep], ref[keep], rtol=rtol,
                                       atol=atol * max(1.0, float(np.abs(ref).max())))
    return compared, marked


@pytest.mark.parametrize("mode,box,exclude,antialias", [
    ("linear", "past", False, False), ("cubic", "both", False, False), ("linear", "flipped", False, False),
    ("cubic", "beyond", True, False), ("linear", "both", False, True), ("cubic", "past", False, True)])
def test_crop_past_the_input_with_run_time_scales_is_in_graph_and_exact(mode, box, exclude, antialias, tmp_path):
    model = scales_model(mode, "tf_crop_and_resize", exclude, antialias=antialias, roi=BOXES[box])
    xml, src = written_default(model, tmp_path, st.FORM)
    rng = np.random.default_rng(11)
    runs = [(rng.standard_normal((1, 2, *hw)).astype(np.float32), np.array([1.0, 1.0, *sc], np.float32), None)
            for hw, sc in CASES]
    compared, marked = _exact(xml, src, runs)
    assert compared >= 3 and marked >= 3


@pytest.mark.parametrize("mode,box,static", [("linear", "past", False), ("cubic", "flipped", False),
                                             ("linear", "both", True), ("cubic", "beyond", True)])
def test_crop_past_the_input_given_sizes_is_in_graph_and_exact(mode, box, static, tmp_path):
    """Given the output lengths (run-time sizes, or the model's constant sizes on dynamic H / W)."""
    fixed = (1, 2, 7, 5) if static else None
    xml, src = written_default(sizes_crop_model(mode, BOXES[box], fixed), tmp_path, st.FORM)
    rng = np.random.default_rng(12)
    runs = [(rng.standard_normal((1, 2, *hw)).astype(np.float32), None,
             None if static else np.array((1, 2, *out), np.int64))
            for hw, out in (((4, 5), (9, 3)), ((9, 13), (1, 20)), ((1, 7), (5, 7)), ((33, 2), (32, 1)),
                            ((6, 6), (17, 2)))]
    compared, marked = _exact(xml, src, runs)
    assert compared >= 2 and marked >= 3


def test_proof_refuses_another_box_or_extrapolation_value(tmp_path):
    """The proof runs the mask the produced model holds against the source IR's box (H's start -0.1 -> -0.2: other
    outputs lie outside) and reads the Select's value against the IR's extrapolation value."""
    ov_model, rec = proven_crop(BOXES["past"], tmp_path)
    assert any("axis 2" in f for f in refusals(ov_model, rec, 2, Fraction(-1, 5)))
    assert any("extrapolation value" in f for f in refusals(ov_model, rec, extrapolation_value=0.5))


def test_a_run_time_roi_or_a_fractional_formula_length_keeps_its_refusal():
    """A roi fed at run time: which outputs lie outside is exact arithmetic on values the model does not hold; the
    window refuses it naming the roi. A box past [0, 1] read at the fractional output length L*s (onnx.reference's
    convention) is not looked up per integer length: refused naming formula_length."""
    (_, ir), = parse_model(scales_model("linear", "tf_crop_and_resize", roi=BOXES["past"]))
    assert st.refusal(ir) is None
    assert st.refusal(dataclasses.replace(ir, formula_length="fractional"))[1] == "formula_length"
    model = scales_model("linear", "tf_crop_and_resize", roi=BOXES["past"])
    fed = model.graph.initializer.pop()
    model.graph.input.append(onnx.helper.make_tensor_value_info(fed.name, fed.data_type, list(fed.dims)))
    (_, ir), = parse_model(model)
    assert st.refusal(ir)[1] == "roi"


def test_the_outside_decision_is_exact_on_long_axes():
    """``crop_outside`` alone, compiled on CPU at the f32 and bf16 hints, for float32 boxes past [0, 1] (seeded, and
    ends whose source lands on the input's edge) at output lengths to the bound 2^21 - 1: the outputs outside
    ``coords.crop_inside_range`` (the oracle's map), where a float32 coordinate and a table both went wrong."""
    rng = np.random.default_rng(21)
    boxes = [(-0.1, 1.25), (1.2, -0.3), (0.2, 1.25), (-0.25, 1.0), (1.5, 1.1), (-3.0, 0.5)] + \
        [tuple(rng.uniform(-1.5, 2.5, 2)) for _ in range(6)]
    lengths = [1, 2, 3, 16001, 65537, 999_999, (1 << 21) - 1] + [int(v) for v in rng.integers(4, 1 << 21, 5)]
    ir = dataclasses.replace(parse_model(scales_model("linear", "tf_crop_and_resize", roi=BOXES["past"]))[0][1],
                             equal_length_identity=False)
    for box in boxes:
        roi = tuple(Fraction(float(np.float32(v))) for v in box)
        o = ops()
        pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
        mask = crop_outside(ir, roi, pi.output(0), po.output(0), None)
        for hint in ("f32", "bf16"):
            run_mask = ov.Core().compile_model(ov.Model([mask], [pi, po]), "CPU", {"INFERENCE_PRECISION_HINT": hint})
            for n in lengths:
                lo, hi = crop_inside_range(roi, n)
                want = (np.arange(n) < lo) | (np.arange(n) > hi)
                got = run_mask([np.array(7, np.int64), np.array(n, np.int64)])[0]
                assert np.array_equal(got, want), (box, n, hint, lo, hi)


@pytest.mark.parametrize("mode,box", [("linear", "past"), ("cubic", "inside")])
def test_a_crop_at_scale_1_is_computed_not_copied(mode, box, tmp_path):
    """A static scale of exactly 1 on a cropped axis (dynamic H / W): the crop still applies there (the IR copies only
    where ``unit_scale_identity`` says so, or the box is the whole axis), so the window computes that axis. It was
    left as it was, the probes refused the window (fuzz sweep: scales [1, 0.3], box -1.7 .. 0.5) and the library
    was written."""
    roi = BOXES["past"] if box == "past" else CROPS["inside"]
    model = static_scales_model(mode, "tf_crop_and_resize", scales=(1.0, 1.0, 1.0, 0.6), roi=roi)
    xml, src = written_default(model, tmp_path, st.FORM)
    rng = np.random.default_rng(13)
    runs = [(rng.standard_normal((1, 2, *hw)).astype(np.float32), None, None) for hw in ((9, 10), (4, 17), (1, 6))]
    _, marked = _exact(xml, src, runs)
    assert marked >= (2 if box == "past" else 0)


def test_a_crop_on_four_axes_proves_each_window_on_a_sample(tmp_path):
    """Fuzz seed 16910 case 116: a float16 cubic antialias crop with run-time scales and its own box past [0, 1] on
    N, C, H and W. Four windows to prove over the whole grid (the oracle's cubic antialias tables) took `check` past
    the campaign's minute; with three or more each runs every third pair of its grid (``scale_grid._sampled``).
    Still rung 3 and the oracle's numbers where scales vary on every axis."""
    case = make_case(16910, 116, ("resize",))
    (_, ir), = parse_model(case.model)
    assert _sampled(ir) and isinstance(ir.scales, RuntimeValue) and ir.dtype == "float16"
    xml, src = written_default(case.model, tmp_path, st.FORM)
    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    rng = np.random.default_rng(16)
    for scales in ([1.5, 0.7, 2.0, 0.6], [0.5, 1.0, 1.25, 3.0]):
        x = rng.standard_normal((2, 2, 5, 3)).astype(np.float16)
        s = np.array(scales, np.float32)
        want, bound = run(ir, x, None, s, None), tolerance.float_bound(ir, x, None, s, None)
        got = compiled([x, s])[0]
        assert got.shape == want.shape and not outside(got, want, bound).any(), scales
