"""What the keep-aspect forms' tests share: the policy's common scale by its definition, and the proof of a written
model read back against its own policy and the other one."""

from __future__ import annotations

import dataclasses
from fractions import Fraction


def common_scale(policy: str, ins, sizes) -> tuple[int, int]:
    """(I, S) of the axis whose ratio size / in bounds the others: the definition, in fractions."""
    ratios = [Fraction(s, i) for i, s in zip(ins, sizes)]
    k = ratios.index(min(ratios) if policy == "not_larger" else max(ratios))
    return ins[k], sizes[k]


def proves_only_its_policy(src: str, out: str) -> None:
    """``src`` converted again into ``out``: its written model, re-read, proves the node's own IR and not the IR
    under the other keep-aspect policy."""
    import openvino as ov

    from resample_bridge import api
    from resample_bridge.lowering.openvino import prove

    done = api.convert(src, out)
    written = ov.Core().read_model(out)
    assert prove(written, list(done.records)) == []
    (rec,) = done.records
    flipped = "not_smaller" if rec.ir.aspect_policy == "not_larger" else "not_larger"
    other = dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, aspect_policy=flipped))
    assert prove(written, [other])
