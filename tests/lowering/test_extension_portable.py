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
