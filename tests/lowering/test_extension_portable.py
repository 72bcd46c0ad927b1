"""The extension library as it travels beside a converted model (issue 42): no path of the converting machine in
it (no RUNPATH / RPATH, no absolute source or venv path in its strings), and loaded into a process whose OpenVINO
is another release, one line naming both instead of a crash."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from resample_bridge.lowering import compiled as cpp
from resample_bridge.semantics.errors import BridgeError

ov = pytest.importorskip("openvino")
pytestmark = pytest.mark.compiled


@pytest.fixture(scope="module")
def library():
    try:
        return cpp.openvino_extension()
    except BridgeError as e:
        pytest.skip(f"the extension cannot be built here: {e.message}")


def _dynamic_tags(path) -> set[str]:
    """DT_RPATH / DT_RUNPATH present in the ELF's dynamic section (read with the ELF layout, no tool needed)."""
    import struct

    data = open(path, "rb").read()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "a 64-bit ELF"
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    found = set()
    for i in range(e_phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, e_phoff + i * e_phentsize)
        if p_type != 2:  # PT_DYNAMIC
            continue
        for k in range(p_filesz // 16):
            tag, _ = struct.unpack_from("<qQ", data, p_offset + 16 * k)
            found |= {15: {"RPATH"}, 29: {"RUNPATH"}}.get(tag, set())
    return found


def test_no_path_of_the_converting_machine(library):
    assert not _dynamic_tags(library)
    data = open(library, "rb").read()
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for path in {here, sys.prefix, os.path.dirname(ov.__file__), os.path.expanduser("~")}:
        assert path.encode() not in data, path


def test_loaded_beside_another_release_it_refuses_in_one_line(library):
    """Another release's core in the process (here: a second libopenvino.so.<n> name, made by copying this
    release's core under another release's name and loading it beside) makes the extension refuse, naming both.
    Measured with a real one too: OpenVINO 2025.4.1 in its own venv, with this release's libs on LD_LIBRARY_PATH
    (without them the loader itself says "libopenvino.so.2641: cannot open shared object file")."""
    libs = os.path.join(os.path.dirname(ov.__file__), "libs")
    core = next(f for f in os.listdir(libs) if f.startswith("libopenvino.so."))
    code = textwrap.dedent(f"""
        import ctypes, os, shutil, tempfile
        import openvino as ov  # first: the copy's own dependencies (TBB) come with it
        d = tempfile.mkdtemp()
        fake = os.path.join(d, "libopenvino.so.2541")
        shutil.copy({os.path.join(libs, core)!r}, fake)
        ctypes.CDLL(fake, mode=os.RTLD_LOCAL)
        try:
            ov.Core().add_extension({library!r})
            print("LOADED")
        except Exception as e:
            print("REFUSED", str(e).strip().splitlines()[-1])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    version = ov.get_version().split("-")[0]
    assert f"built for OpenVINO {version} and is loaded into OpenVINO 2025.4.1" in out, out


def _written_with_extension(tmp_path):
    """A cubic Resize and a linear antialias Resize written with the extension (--fallback extension), their
    inputs and onnxruntime's outputs."""
    import numpy as np
    import onnx

    from resample_bridge.tools.cli import main
    from tests.helpers.models import resize_model

    ort = pytest.importorskip("onnxruntime")
    cases = []
    for name, model in (("cubic", resize_model((1, 3, 20, 24), scales=[1, 1, 2, 1.5], mode="cubic")),
                        ("antialias", resize_model((1, 3, 20, 24), scales=[1, 1, 0.6, 0.4], mode="linear",
                                                   antialias=1))):
        src = tmp_path / f"{name}.onnx"
        onnx.save(model, src)
        assert main(["convert", str(src), "-o", str(tmp_path / "out" / f"{name}.xml"), "--fallback",
                     "extension"]) == 0
        x = np.random.default_rng(0).standard_normal((1, 3, 20, 24)).astype(np.float32)
        np.save(tmp_path / f"{name}_x.npy", x)
        want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
        cases.append((name, want))
    return cases


_RUN = textwrap.dedent("""
    import sys, numpy as np, openvino as ov
    core = ov.Core()
    core.add_extension(sys.argv[2])
    c = core.compile_model(core.read_model(sys.argv[1]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.save(sys.argv[4], c([np.load(sys.argv[3])])[0])
""")


def _run_each(tmp_path, cases, prefix, env=None):
    import numpy as np

    lib = str(tmp_path / "out" / "libresample_bridge_openvino.so")
    for name, want in cases:
        got_path = tmp_path / f"{name}_got.npy"
        run = subprocess.run([*prefix, sys.executable, "-c", _RUN, str(tmp_path / "out" / f"{name}.xml"), lib,
                              str(tmp_path / f"{name}_x.npy"), str(got_path)],
                             capture_output=True, text=True, timeout=600, env=env)
        assert run.returncode == 0, (prefix, name, run.stderr[-1500:])
        got = np.load(got_path)
        assert got.shape == want.shape and np.abs(got - want).max() < 1e-5, (prefix, name)


def test_every_level_of_the_one_library_computes_the_same(library, tmp_path):
    """RB_ISA picks a lower level's copy at load (base, x86-64-v3): each computes onnxruntime's numbers."""
    from resample_bridge.lowering.compiled import isa

    cases = _written_with_extension(tmp_path)
    for level in isa.LEVELS[:isa.LEVELS.index(isa.best_level(isa.cpu_flags())) + 1]:
        _run_each(tmp_path, cases, [], env=dict(os.environ, RB_ISA=level))


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["Haswell", "Nehalem"])
def test_the_written_library_runs_on_older_cpus(library, cpu, tmp_path):
    """What convert writes, run as an AVX2-only (Haswell) or SSE4.2 (Nehalem) CPU would (Debian's qemu-user): the
    library picks the copy the CPU runs and computes onnxruntime's numbers; a library built for this CPU's level
    alone stopped on an illegal instruction on both (measured). numpy's own OpenBLAS misreads qemu's CPU: it is
    told the core type."""
    import shutil

    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("qemu-user is not installed (apt-get install qemu-user)")
    cases = _written_with_extension(tmp_path)
    env = dict(os.environ, OPENBLAS_CORETYPE="Prescott")
    env.pop("RB_ISA", None)
    _run_each(tmp_path, cases, [qemu, "-cpu", cpu], env=env)
