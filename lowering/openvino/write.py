"""Writing a converted model: OUT.xml/.bin written to a temporary directory beside OUT, re-read and proven again
from disk (so nothing the save step does, such as FP16 weight compression, slips through), then renamed into
place with the extension library beside it when a node needs it. A failure leaves nothing behind."""

from __future__ import annotations

import os
import shutil

from ...semantics.errors import BridgeError
from ..artifacts import publish, staged
from ..passes import CUSTOM
from .prove import prove

EXTENSION_NAME = "libresample_bridge_openvino.so"


def extension_path(out_xml: str) -> str:
    """Where a converted model's extension library goes: beside the .xml."""
    return os.path.join(os.path.dirname(os.path.abspath(out_xml)), EXTENSION_NAME)


def save(ov_model, records: list, out: str, force: bool = False) -> None:
    """Write ``ov_model`` to ``out`` (an absolute path ending in .xml, its directory writable) atomically; an
    existing extension library beside it is replaced only with ``force``."""
    import openvino as ov

    uses_extension = any(r.rung == CUSTOM for r in records)
    with staged(out) as tmp:
        xml = os.path.join(tmp, "model.xml")
        # compress_to_fp16 defaults to True and would round the tap weights: the proof below would refuse.
        ov.save_model(ov_model, xml, compress_to_fp16=False)
        core = ov.Core()
        moves = {xml: out, os.path.join(tmp, "model.bin"): out[:-4] + ".bin"}
        if uses_extension:
            from ..compiled import openvino_extension

            lib = os.path.join(tmp, EXTENSION_NAME)
            shutil.copy2(openvino_extension(), lib)
            core.add_extension(lib)
            moves[lib] = extension_path(out)
        failures = prove(core.read_model(xml), records)
        if failures:
            raise BridgeError("the written model could not prove itself: " + "; ".join(failures))
        publish(moves, force=force)
