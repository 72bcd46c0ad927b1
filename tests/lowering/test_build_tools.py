"""What the first build of the C++ extension needs: CMake (declared from the package index by the extras that
build), make or Ninja, a C++17 compiler; without one, one line naming what to install and exit status 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.lowering.compiled import build

ROOT = Path(__file__).resolve().parents[2]


def test_the_extras_that_build_declare_cmake_and_ninja():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("openvino", "tensorrt", "test"):
        assert "cmake>=3.18" in extras[extra] and any(d.startswith("ninja") for d in extras[extra]), extra
    # The floor is the project's own: CMakeLists.txt's cmake_minimum_required.
    assert "cmake_minimum_required(VERSION 3.18)" in (ROOT / "lowering" / "CMakeLists.txt").read_text()


def _real_cmake() -> str | None:
    """The CMake binary itself (PATH may hold a wrapper script that needs more of PATH)."""
    exe = shutil.which("cmake")
    if exe is None:
        return None
    out = subprocess.run([exe, "-P", "/dev/stdin"], input='message("${CMAKE_COMMAND}")', text=True,
                         capture_output=True, timeout=60)
    return out.stderr.strip() or None


def _needs_extension_model(path: Path):
    """A dynamic-shape downscale under a crop box (``EXTENSION_ONLY``): only the extension computes it (rung 4)."""
    from tests.helpers.models import EXTENSION_ONLY, roi_initializer

    scales = numpy_helper.from_array(__import__("numpy").array([1, 1, 0.35, 0.35], "float32"), "scales")
    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], name="aa", **EXTENSION_ONLY)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [scales, roi_initializer()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), path)


@pytest.mark.parametrize("have, says, field", [
    (["cmake"], "a C++17 compiler is needed: apt-get install g++", "compiler"),
    ([], "CMake 3.18 or newer is needed: pip install 'cmake>=3.18'", "cmake"),
])
def test_a_missing_tool_is_one_line_naming_what_to_install(tmp_path, have, says, field):
    pytest.importorskip("openvino")
    real = _real_cmake()
    if "cmake" in have and real is None:
        pytest.skip("no CMake here to keep")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if "cmake" in have:
        (bindir / "cmake").symlink_to(real)
    model = tmp_path / "m.onnx"
    _needs_extension_model(model)
    env = {k: v for k, v in os.environ.items() if k not in ("CXX", "RESAMPLE_BRIDGE_OPENVINO_EXT")}
    env.update(PATH=str(bindir), RESAMPLE_BRIDGE_CACHE=str(tmp_path / "cache"))
    # The cmake wheel, where installed, would be found without PATH: keep it out of this process.
    env["PYTHONNOUSERSITE"] = "1"
    code = ("import sys, importlib.abc\n"
            "class NoCmake(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name in ('cmake', 'ninja'): raise ImportError(name)\n"
            "sys.meta_path.insert(0, NoCmake())\n"
            "from resample_bridge.tools.command import entry\n"
            "sys.argv = ['resample-bridge', 'convert', sys.argv[1], '-o', sys.argv[2]]\n"
            "entry()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(model), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and f"field '{field}'" in lines[0] and "node 'aa'" in lines[0], \
        proc.stderr
    assert not (tmp_path / "out").exists()


def test_cmake_from_the_package_index_when_path_has_none(monkeypatch, tmp_path):
    pkg = pytest.importorskip("cmake")  # the openvino / test extras install it
    monkeypatch.setenv("PATH", str(tmp_path))
    build._cmake_version.cache_clear()
    found = build.cmake()
    assert found == os.path.join(pkg.CMAKE_BIN_DIR, "cmake")
    assert subprocess.run([found, "--version"], capture_output=True, text=True).stdout.startswith("cmake version")
