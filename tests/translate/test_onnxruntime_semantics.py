"""``translate.onnxruntime.ort_semantics`` against onnxruntime itself, for rules the differential campaign
(tests/test_differential_onnxruntime.py) does not draw: a tf_crop_and_resize roi fed at run time."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

ort = pytest.importorskip("onnxruntime")

from resample_bridge.semantics import reference  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from resample_bridge.translate.onnxruntime import ort_semantics  # noqa: E402

ROI = np.array([0, 0, 0.9, 1.153698], np.float32)


def _crop_model(dtype, runtime_roi: bool, sizes):
    t = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32}[dtype]
    inputs = [helper.make_tensor_value_info("X", t, [2, 7])]
    inits = [numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    if runtime_roi:
        inputs.append(helper.make_tensor_value_info("roi", TensorProto.FLOAT, [4]))
    else:
        inits.append(numpy_helper.from_array(ROI, "roi"))
    node = helper.make_node("Resize", ["X", "roi", "", "sizes"], ["Y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
    g = helper.make_graph([node], "crop", inputs, [helper.make_tensor_value_info("Y", t, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["float32", "int32"])
@pytest.mark.parametrize("runtime_roi", [False, True], ids=["static roi", "run-time roi"])
def test_equal_lengths_are_copied_whatever_the_roi(dtype, runtime_roi):
    """onnxruntime copies X when every output length equals the input's, ignoring tf_crop_and_resize's roi
    (found by fuzz seed 53: int32 with a run-time roi was left unexplained)."""
    m = _crop_model(dtype, runtime_roi, [2, 7])
    x = (np.random.default_rng(0).standard_normal((2, 7)) * 500).astype(dtype)
    feeds = {"X": x, **({"roi": ROI} if runtime_roi else {})}
    got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    (_, ir), = parse_model(m)
    assert not np.array_equal(reference.run(ir, x, ROI), got)  # the spec crops and stretches
    np.testing.assert_array_equal(reference.run(ort_semantics(ir), x, ROI), got)
