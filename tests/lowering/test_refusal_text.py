"""The one-line reason a node's refusal prints when every rung said why (issue 22: a message cut mid-word, a
parenthesis left open)."""

import re

import pytest

from resample_bridge.lowering.openvino.ladder import refusal_text


def test_long_reasons_are_cut_at_a_word_with_brackets_closed():
    tried = [(1, "native", "element type bfloat16 has no exact compute type here (float32, float16, uint8, int8, "
                           "int32, int64 are the ones computed exactly on the CPU)"),
             (3, "decomposition", "input shape (None, 8, None, None) is not static (decomposition needs static "
                                  "shapes) and the rest of a long reason")]
    text = refusal_text(tried, limit=160)
    assert len(text) <= 180
    words = set(re.split(r"[\s,();]+", tried[0][2] + " " + tried[1][2]))
    for part in text.split("; "):
        assert part.count("(") == part.count(")"), part
        last = re.split(r"[\s,();]+", part.rsplit("...", 1)[0].strip(" ,;:("))[-1]
        assert last in words, (last, part)  # cut after a whole word


def test_short_reasons_stay_whole():
    tried = [(1, "native", "no Interpolate-11 spelling is exact"), (4, "extension", "needs the library")]
    assert refusal_text(tried) == "native: no Interpolate-11 spelling is exact; extension: needs the library"


def test_an_integer_sum_past_int32_is_told_in_bits():
    """int8 antialias 100 x 100 -> 37 x 61: the exact tap denominators pass 10^70; the refusal gives their size in
    bits, not the 77-digit integers that pushed the rest of the line past its cut."""
    from onnx import TensorProto

    from resample_bridge.lowering.openvino.decompose import bind
    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.translate.onnx import parse_model
    from tests.helpers.models import resize_model

    model = resize_model([1, 3, 100, 100], sizes=[1, 3, 37, 61], mode="linear", antialias=1, dtype=TensorProto.INT8)
    (_, ir), = parse_model(model)
    with pytest.raises(BridgeError) as e:
        bind(ir, (1, 3, 100, 100))
    assert e.value.field == "dtype" and "2^" in e.value.message and not re.search(r"\d{12}", e.value.message)
