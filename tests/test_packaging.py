"""The wheel: built without a setuptools warning, the workshop (tools/dev: benchmarks, fuzzer, corpus exporter)
left out, every C++/CUDA source that lowering/compiled builds on first use shipped."""

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Copied to a scratch folder before building: a stale build/ in the checkout would leak old files into the wheel.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                    "tests", "*.so", "fuzz-failures", "out")
NATIVE_DIRS = ("kernels", "kernels/rb", "openvino_ext", "cuda", "tensorrt_plugin")
WORKSHOP = re.compile(r"^resample_bridge/tools/(dev/|(fuzz|bench|export)\w*\.py$)")


def _isolation_flags():
    """``--no-build-isolation`` where this interpreter has what pyproject's build-system asks for (setuptools
    >= 77 with bdist_wheel); otherwise pip builds in an isolated environment from build-system.requires, as
    ``pip install`` does for a user."""
    try:
        import setuptools
    except ImportError:
        return []
    major = int(setuptools.__version__.split(".")[0])
    has_bdist_wheel = (importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
                       or importlib.util.find_spec("wheel") is not None)
    return ["--no-build-isolation"] if major >= 77 and has_bdist_wheel else []


def _native_sources():
    """Every file of lowering's C++/CUDA folders (and its CMakeLists.txt), as the wheel names them."""
    low = ROOT / "lowering"
    files = [low / "CMakeLists.txt"] + [p for d in NATIVE_DIRS for p in (low / d).iterdir() if p.is_file()]
    return {"resample_bridge/lowering/" + p.relative_to(low).as_posix() for p in files
            if p.suffix not in (".so", ".pyc")}


@pytest.mark.slow
def test_wheel_builds_quietly_without_the_workshop(tmp_path):
    src, out = tmp_path / "src", tmp_path / "wheel"
    shutil.copytree(ROOT, src, ignore=NOT_COPIED)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "-w", str(out), "--no-deps",
                        *_isolation_flags()], capture_output=True, text=True, timeout=600)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-3000:]
    # pip's own notes say "WARNING:"; setuptools' say BuildBackendWarning, SetuptoolsDeprecationWarning ...
    warnings = [line for line in log.splitlines() if "Warning" in line]
    assert not warnings, "\n".join(warnings)

    (wheel,) = out.glob("resample_bridge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "resample_bridge/tools/cli.py" in names
    assert not [n for n in names if WORKSHOP.match(n)], sorted(n for n in names if WORKSHOP.match(n))
    assert not _native_sources() - names, sorted(_native_sources() - names)
    assert "resample_bridge/lowering/openvino/cost_reference.json" in names  # the default policy's rates
    # The license travels with the wheel and is declared in its metadata.
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)[:20]
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in zipfile.ZipFile(wheel).read(meta).decode()
