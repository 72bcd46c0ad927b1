"""semantics/messages.py: the one home of the cleaners of relayed OpenVINO / onnxruntime text (text only)."""

from resample_bridge.semantics import messages
from resample_bridge.semantics.errors import BridgeError

CORE = "Exception from src/inference/src/cpp/core.cpp:117:\n"


def test_without_source():
    text = CORE + "Check 'rank == 4' failed at src/core/shape_inference/include/interpolate.hpp:78:\nbad rank"
    assert messages.without_source(text) == "check (rank == 4) failed: bad rank"
    assert str(BridgeError(text)) == "check (rank == 4) failed: bad rank"  # every BridgeError message


def test_openvino_error_reason():
    report = ("Check 'false' failed at src/frontends/common_translators/x.cpp:10:\nFrontEnd API failed with "
              "OpConversionFailure:\n-- Conversion is failed for: Resize\n-- message: x\nSummary:\n"
              "-- Resize-19 with an unsupported mode\n")
    assert messages.openvino_error_reason(report) == "Resize-19 with an unsupported mode"
    raised = "While validating ONNX node '<Node(Resize): r>': ValueError: no"
    assert messages.openvino_error_reason(raised) == "internal error in a conversion extension: ValueError: no"
    assert messages.openvino_error_reason("") == "unknown error"


def test_plugin_sentence():
    text = CORE + "Exception from src/plugins/intel_cpu/src/nodes/interpolate.cpp:2513:\n[CPU] cannot\x07 do it\n\n"
    assert messages.plugin_sentence(text) == "cannot do it"
    assert messages.plugin_sentence(CORE) == "OpenVINO gave no reason"


def test_onnxruntime_text():
    text = ("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Resize node. "
            "onnxruntime::Upsample<T>::Compute(OpKernelContext*) const [with T = float] "
            "/onnxruntime/core/providers/cpu/tensor/upsample.cc:1200 scales must be positive")
    assert messages.onnxruntime_text(text) == ("Non-zero status code returned while running Resize node. "
                                               "scales must be positive")


def test_onnxruntime_text_drops_a_plain_return_type():
    """An ORT_ENFORCE's function signature with a plain return type ("void ...Append(...)"): the type went with
    it (verify printed "void axis == 1 || ...")."""
    text = ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running Add node. "
            "Name:'a' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/math/element_wise_ops.h:540 "
            "void onnxruntime::BroadcastIterator::Append(ptrdiff_t, ptrdiff_t) axis == 1 || axis == largest was "
            "false. Attempting to broadcast an axis by a dimension other than 1. 52 by 108")
    assert messages.onnxruntime_text(text) == (
        "Non-zero status code returned while running Add node. Name:'a' Status Message: axis == 1 || axis == "
        "largest was false. Attempting to broadcast an axis by a dimension other than 1. 52 by 108")
