"""The cost model's rates on this machine (``cost.calibration()`` once the extension library is built here): each
rate timed (``cost_timing``) the first time a conversion needs it and cached in a file per machine (CPU, OpenVINO
version, kernel sources, the calibration models); the rates an estimate for the extension read timed again first,
each then the median of ``CONFIRM_RUNS`` timings (``confirmed``)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import statistics
import time
from pathlib import Path

from . import cost_matmul, cost_plane, cost_timing
from .cost_timing import DYNAMIC, time_rates
from ..compiled.build import KERNELS_DIR, cache_root, project_hash

log = logging.getLogger("resample_bridge")

# A shared machine's bursts: one timing of Interpolate's linear x2 rate came out 7.2 ns among 2.1-2.3 (the
# extension's beside it 0.64 among 0.38: not alike), and a bench model took the extension on such a table and ran
# 1.08x the built-in op. So the rates that would send a node to the extension are first timed again, each then
# the median of this many timings (a few seconds, once per machine and class); the built-in op, which needs
# nothing beside the model, is kept on one timing.
CONFIRM_RUNS = 3


def _time(key: str, convert) -> dict:
    """``key`` timed on this machine (its models converted by ``convert``): the matrix form's rates per
    multiply-accumulate (``cost_matmul``) and the in-graph forms' by plane (``cost_plane``) apart."""
    if "/plane" in key or key == cost_plane.LAYOUT:
        return cost_plane.time_rates(key, convert)
    matmul = key.removeprefix("fixed/") in (cost_matmul.KEY, cost_matmul.GUARD)  # timed together
    return cost_matmul.time_rates() if matmul else time_rates(key, convert)


def cache_file() -> Path:
    import openvino

    # The calibration models' own source too: a rate timed (or found missing) by other models is not reused.
    models = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (cost_timing, cost_plane))).hexdigest()[:16]
    key = project_hash(KERNELS_DIR, extra=f"cost layout openvino {openvino.__version__} models {models}")
    return cache_root() / f"cost-{key}.json"


def cached() -> dict:
    """The rates cached on this machine ({} where none are)."""
    try:
        return json.loads(cache_file().read_text())
    except (OSError, ValueError):
        return {}


def runs_key(key: str) -> str:
    """The cache's count of the timings whose median ``key``'s rate is (absent: one)."""
    return f"runs/{key}"


_announced = []  # the calibration's progress line, once per process


def timed(key: str, rates: dict, convert) -> float | None:
    """``key`` timed on this machine (with what its models show on the way; ``convert``: the target's, as a
    user's model is converted), added to ``rates`` and the cache."""
    if not _announced:
        # The first conversion on a machine times OpenVINO's ops and the extension (tens of seconds): say so
        # before, or the wait has no name.
        _announced.append(True)
        log.info(f"cost model: timing OpenVINO's ops and the resample-bridge extension on this machine, once "
                 f"(cached in {cache_file()}; later runs skip it) ...")
    t0 = time.perf_counter()
    found = {key: None, **_time(key, convert)}  # None, cached too: not asked again
    log.info(f"cost model: timed {key} on this machine in {time.perf_counter() - t0:.1f} s (cached)")
    _cache(found, rates)
    return found.get(key)


def confirmed(keys, rates: dict, convert) -> bool:
    """Each rate of ``keys`` in ``rates`` (and what its models show on the way) timed again until it is the median of
    ``CONFIRM_RUNS`` timings, with its count, in ``rates`` and the cache; True where any was timed again."""
    def due(k):
        return rates.get(k) is not None and rates.get(runs_key(k), 1) < CONFIRM_RUNS and runs_key(k) not in found

    found: dict = {}
    for key in dict.fromkeys(_timed_with(k) for k in keys):
        if not due(key):  # confirmed already, or just now beside an earlier key
            continue
        t0 = time.perf_counter()
        again = [_time(key, convert) for _ in range(CONFIRM_RUNS - 1)]
        for k in set().union(*again):
            if due(k):
                got = [rates[k]] + [a[k] for a in again if a.get(k) is not None]
                found[k], found[runs_key(k)] = statistics.median(got), len(got)
        log.info(f"cost model: timed {key} {CONFIRM_RUNS - 1} times more on this machine in "
                 f"{time.perf_counter() - t0:.1f} s (the extension estimated faster; cached)")
    if found:
        _cache(found, rates)
    return bool(found)


def _timed_with(key: str) -> str:
    """The key ``time_rates`` times ``key`` with: a fixed cost's with its rate."""
    return key[len("fixed/"):] if key.startswith("fixed/") and key != DYNAMIC else key


def _cache(found: dict, rates: dict) -> None:
    """Add ``found`` to ``rates`` and to this machine's cache file (another process may have added to it)."""
    rates.update(found)
    path = cache_file()
    try:
        on_file = json.loads(path.read_text())
    except (OSError, ValueError):
        on_file = {}
    on_file.update(found)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(on_file, indent=1, sort_keys=True))
    os.replace(tmp, path)
