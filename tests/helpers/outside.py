"""The proof of a nearest index form under exclude_outside reads the Multiply by which picks lie inside the input
(``lowering/openvino/index_ops.zeroed_outside``): bypassed in the produced model, the proof must name it."""

from __future__ import annotations


def bypass_fails_the_proof(src: str, tag: str) -> None:
    """Convert ``src`` (an ONNX path), assert the proof passes, bypass the Multiply tagged ``tag`` (e.g.
    "r/index_3/outside") and assert the proof names the missing Multiply."""
    from resample_bridge.lowering.openvino import convert
    from resample_bridge.lowering.openvino.graph import tagged
    from resample_bridge.lowering.openvino.prove import prove

    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    kept = tagged(ov_model)[tag]
    kept.output(0).replace(kept.input_value(0))
    failures = prove(ov_model, records)
    assert any("no Multiply of the Gather" in f for f in failures), failures
