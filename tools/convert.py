"""``convert --target openvino``: the output path checked before any work, then ``lowering.openvino`` converts,
proves and writes."""

from __future__ import annotations

from ..lowering.artifacts import check_output_path


def convert_to_openvino(model_path: str, out: str, *, fallback: str = "decompose", strict: bool = False,
                        force: bool = False):
    """Write OUT.xml/.bin atomically; returns the per-node records. Nothing is left behind on failure."""
    from ..lowering.openvino import convert, save

    out = check_output_path(out, force, ".xml", (".bin",))
    ov_model, records = convert(model_path, fallback=fallback, strict=strict)
    save(ov_model, records, out, force=force)
    return records
