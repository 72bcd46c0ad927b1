"""The one-line reason a node's refusal prints when every rung said why (issue 22: a message cut mid-word, a
parenthesis left open)."""

import re

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
