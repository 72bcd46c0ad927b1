"""The DeformConv decomposition (lowering/onnx/deformconv_decompose.py): bilinear samples at every kernel tap with
offsets and mask, groups and offset groups, 1-D to 3-D, one MatMul with the weights plus bias; against the oracle
on onnxruntime with the project's one tolerance, and where the TensorRT and portable ONNX targets take it."""

import numpy as np
import pytest

from resample_bridge.lowering.onnx.deformconv_decompose import check_deformconv, decompose_deformconv
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import DeformConvIR
from resample_bridge.semantics.reference import deformconv_out_shape
from resample_bridge.semantics.reference import run as oracle

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
gs = pytest.importorskip("onnx_graphsurgeon")

NAMES = ["x", "w", "offset", "b", "mask"]
# (spatial rank, group, offset_group, mask, bias, stride, pad, dilation)
CASES = [(2, 1, 1, True, True, 1, 1, 1), (2, 2, 2, True, False, 2, 0, 1), (2, 1, 2, False, True, 1, 2, 2),
         (1, 1, 1, True, True, 1, 1, 1), (3, 1, 1, True, True, 1, 1, 1), (2, 2, 1, True, True, 1, (1, 0), 1)]


def _case(D, G, OG, mask, bias, stride, pad, dil, C=4, OC=6):
    S, k = (6, 5, 4)[:D], (3, 2, 2)[:D]
    pads = pad * D if isinstance(pad, tuple) else (pad,) * (2 * D)
    ir = DeformConvIR(D, k, (stride,) * D, pads, (dil,) * D, G, OG, bias, mask, input_shape=(None, C) + S,
                      weight_shape=(OC, C // G) + k, dtype="float32")
    out, K = deformconv_out_shape(ir, S, k), int(np.prod(k))
    shapes = [(2, C) + S, (OC, C // G) + k, (2, OG * K * D) + out, (OC,), (2, OG * K) + out]
    return ir, [s if used else None for s, used in zip(shapes, [True, True, True, bias, mask])]


def _session(ir, shapes):
    vs = [gs.Variable(n, np.float32) if s is not None else None for n, s in zip(NAMES, shapes)]
    y = gs.Variable("y", np.float32)
    graph = gs.Graph(inputs=[v for v in vs if v is not None], outputs=[y], opset=19)
    decompose_deformconv(graph, ir, vs, y, "dc")
    model = gs.export_onnx(graph, do_type_check=False)
    model.ir_version = 10
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _probes(shapes, rng):
    """Random inputs; offsets on half pixels (bilinear halves), far outside the input (every tap zero), and
    non-finite data (read through zero weights, as the oracle)."""
    arrays = [None if s is None else rng.standard_normal(s).astype(np.float32) for s in shapes]
    arrays[2] = rng.normal(0, 2, shapes[2]).astype(np.float32)
    if shapes[4] is not None:
        arrays[4] = rng.uniform(0, 1, shapes[4]).astype(np.float32)
    half, far, bad = list(arrays), list(arrays), list(arrays)
    half[2] = (np.round(arrays[2]) + 0.5).astype(np.float32)
    far[2] = rng.uniform(-40, 40, shapes[2]).astype(np.float32)
    bad[0] = arrays[0].copy()
    bad[0].reshape(-1)[::7], bad[0].reshape(-1)[3::11] = np.inf, np.nan
    return [arrays, half, far, bad]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}d_g{c[1]}_og{c[2]}_m{int(c[3])}_b{int(c[4])}" for c in CASES])
def test_matches_the_oracle(case):
    ir, shapes = _case(*case)
    sess = _session(ir, shapes)
    rng = np.random.default_rng(0)
    with np.errstate(invalid="ignore", over="ignore"):
        for arrays in _probes(shapes, rng):
            got = sess.run(None, {n: a for n, a in zip(NAMES, arrays) if a is not None})[0]
            want = oracle(ir, *arrays)
            c = against_oracle(ir, got, want, arrays)
            assert c.ok, (case, c.first_mismatch, got[c.first_mismatch], want[c.first_mismatch])


def test_refusals_name_the_field():
    ir, _ = _case(*CASES[0])
    with pytest.raises(BridgeError) as e:
        check_deformconv(DeformConvIR(2, (3, 3), (1, 1), (0,) * 4, (1, 1), 1, 1, False, False,
                                      input_shape=(1, None, 5, 5), dtype="float32"))
    assert e.value.field == "input_shape"
    with pytest.raises(BridgeError) as e:
        check_deformconv(DeformConvIR(2, (3, 3), (1, 1), (0,) * 4, (1, 1), 1, 1, False, False,
                                      border="clamp_in_range", input_shape=(1, 2, 5, 5), dtype="float32"))
    assert e.value.field == "border"


def _model(case):
    from onnx import TensorProto, helper

    ir, shapes = _case(*case)
    used = [n if s is not None else "" for n, s in zip(NAMES, shapes)]
    node = helper.make_node("DeformConv", used, ["y"], name="dc", kernel_shape=list(ir.kernel_shape),
                            strides=list(ir.strides), pads=list(ir.pads), dilations=list(ir.dilations),
                            group=ir.group, offset_group=ir.offset_group)
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(NAMES, shapes) if s is not None]
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 10
    return m, shapes


@pytest.mark.parametrize("case", [CASES[3], CASES[4], CASES[5]], ids=["1d", "3d", "asymmetric_pads"])
def test_tensorrt_target_writes_deformconv_with_mask_without_plugin(case, tmp_path):
    """convert --target tensorrt where the parser's DeformConv importer (2-D, symmetric pads) is not taken: every
    node in the default domain, no DeformConv left, exact on onnxruntime."""
    from resample_bridge.tools import api

    model, shapes = _model(case)
    src, out = tmp_path / "m.onnx", tmp_path / "m.trt.onnx"
    onnx.save(model, src)
    conv = api.convert(str(src), str(out), target="tensorrt")
    (rec,) = conv.records
    assert rec.rung == 3, rec.reason
    written = onnx.load(out)
    assert {n.domain for n in written.graph.node} == {""}
    assert all(n.op_type != "DeformConv" for n in written.graph.node)
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    with np.errstate(invalid="ignore", over="ignore"):
        for arrays in _probes(shapes, np.random.default_rng(1)):
            got = sess.run(None, {n: a for n, a in zip(NAMES, arrays) if a is not None})[0]
            want = oracle(rec.ir, *arrays)
            assert against_oracle(rec.ir, got, want, arrays).ok


def test_onnx_target_decomposes_what_onnxruntime_does_not_compute():
    from resample_bridge.lowering.onnx.target import DEFAULT_POLICY, OnnxTarget

    model, _ = _model(CASES[4])  # 3-D: onnxruntime's DeformConv was measured for 2-D only
    (rec,) = OnnxTarget()(model, DEFAULT_POLICY).records
    assert rec.rung == 3 and "probed on onnxruntime" in rec.extra["probe"]
