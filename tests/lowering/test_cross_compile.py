"""The kernels compile for 64-bit ARM (the plain build: every x86 intrinsic sits behind __AVX2__ / __AVX512F__)
with another compiler, Zig's clang. Compile only: nothing runs ARM code here. Skips without the ``ziglang``
package (`pip install ziglang`; `make cross` installs it and compiles every target)."""

import pytest

from resample_bridge.tools.dev import cross_compile as cc

pytestmark = [pytest.mark.slow, pytest.mark.compiled,
              pytest.mark.skipif(not cc.zig_available(), reason="Zig's compiler is not installed (pip install ziglang)")]


def test_the_kernels_compile_for_arm_linux(tmp_path):
    target, name, err = cc.compile_one("aarch64-linux-gnu", cc.KERNELS / "capi.cpp", [], str(tmp_path))
    assert err is None, err


def test_an_unguarded_x86_intrinsic_fails_the_check(tmp_path):
    """What the check catches: an AVX intrinsic outside its guard does not compile for ARM."""
    src = tmp_path / "x86_only.cpp"
    src.write_text("#include <immintrin.h>\nfloat f(const float* p) { return _mm256_cvtss_f32(_mm256_loadu_ps(p)); }\n")
    target, name, err = cc.compile_one("aarch64-linux-gnu", src, [], str(tmp_path))
    assert err is not None


def test_the_architecture_is_read_from_the_header():
    assert cc.architecture(b"\x7fELF" + bytes(14) + (183).to_bytes(2, "little")) == "elf-aarch64"
    assert cc.architecture(b"\x7fELF" + bytes(14) + (62).to_bytes(2, "little")) == "elf-machine-62"  # x86-64
    assert cc.architecture(b"\xcf\xfa\xed\xfe" + (0x0100000C).to_bytes(4, "little")) == "macho-arm64"
