"""Which reduced inference precisions this CPU's OpenVINO computes in, read from its own capabilities (not from the
code under test): a CPU without bf16 (AVX-512 BF16 / AMX) or f16 runs those hints in f32 without a word, so a
test that tells a reduced precision from f32 skips there, and one that names what ran expects f32."""

import pytest

# OpenVINO CPU's OPTIMIZATION_CAPABILITIES entry for each --precision value.
CAPABILITY = {"bf16": "BF16", "f16": "FP16"}


def cpu_computes(precision: str) -> bool:
    import openvino as ov

    return precision == "f32" or CAPABILITY[precision] in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def ran_at(precision: str) -> str:
    """What OpenVINO's CPU computes under ``precision``'s hint here."""
    return precision if cpu_computes(precision) else "f32"


def needs(precision: str):
    """Skip where this CPU does not compute in ``precision``: nothing to tell apart from f32."""
    if not cpu_computes(precision):
        pytest.skip(f"this CPU has no {precision}: OpenVINO runs the {precision} hint in f32 here")


def needs_bf16():
    needs("bf16")
