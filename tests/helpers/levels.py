"""Kernels at another x86 level than this process's: a fresh Python process whose kernels are built for ``level``
(RB_ISA), for the paths that only the AVX2 or the plain build takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from resample_bridge.lowering.compiled import build, isa

# The kernels' tests where this machine can build them (a C++ compiler and CMake).
needs_build = pytest.mark.skipif(build.missing_tools() is not None, reason=str(build.missing_tools()))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def skip_unless_runs(level: str) -> None:
    if isa.LEVELS.index(level) > isa.LEVELS.index(isa.best_level(isa.cpu_flags())):
        pytest.skip(f"this CPU does not run {level}")


def value_at_level(level: str, module: str, expr: str):
    """The JSON value of ``expr``, evaluated in ``module``'s namespace in a process with RB_ISA=level (its own build
    of the kernels, not RESAMPLE_BRIDGE_KERNELS_LIB's)."""
    code = f"import json, {module} as m; print(json.dumps(eval({expr!r}, vars(m))))"
    env = dict(os.environ, RB_ISA=level)
    env.pop("RESAMPLE_BRIDGE_KERNELS_LIB", None)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def failures_at_level(level: str, module: str, judged: str, cases: list) -> list:
    """(case, verdict) for each oracle verdict (``against_oracle(...).to_dict()``) that is not ok among ``judged``
    (an expression listing one verdict per element of ``cases``) in ``module`` at ``level``; skipped where this CPU
    does not run the level."""
    skip_unless_runs(level)
    verdicts = value_at_level(level, module, judged)
    return [(case, v) for case, v in zip(cases, verdicts) if not v["ok"]]
