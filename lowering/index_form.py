"""What the OpenVINO and ONNX index decompositions of nearest Resize share (``openvino/nearest_index.py``,
``onnx/nearest_index.py``): the form itself (``semantics.nearest_index``, one formula), the length bound
of its int32 arithmetic, the grid of lengths its proof runs, the comparison with the oracle's taps, and where
the grid's verdicts are kept."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ..semantics.nearest_index import INT32_MAX_OUT, NearestIndex, NoNearestIndex, nearest_index, \
    oracle_nearest_taps
from ..semantics.ir import ResizeIR
from .passes import Refusal
from .compiled.build import cache_root, project_hash

# Every (in, out) in 1..48, and large pairs around the int32 bound.
GRID = [(i, o) for i in range(1, 49) for o in range(1, 49)] + \
    [(1000, 2000), (4097, 3), (3, 4097), (INT32_MAX_OUT, 7), (7, INT32_MAX_OUT), (INT32_MAX_OUT, INT32_MAX_OUT - 1),
     (12345, 12346)]


def form_of(ir) -> NearestIndex | Refusal:
    """The integer index form of ``ir``, or why there is none."""
    if not isinstance(ir, ResizeIR):
        return Refusal("not a Resize", "op")
    form = nearest_index(ir)
    if isinstance(form, NoNearestIndex):
        return Refusal(f"no exact integer index form: {form.reason}", form.field)
    return form


@functools.lru_cache(maxsize=None)
def _oracle(one: ResizeIR, in_len: int, out_len: int) -> tuple[np.ndarray, np.ndarray]:
    return oracle_nearest_taps(one, in_len, out_len)


# Equal input and output lengths the oracle is asked about before an axis is taken as a copy.
_EQUAL_LENGTHS = (1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 1000, 4097, INT32_MAX_OUT)


def copied_axes(ir: ResizeIR) -> tuple:
    """The resized axes an index form leaves as they are: their run-time size is X's own length there by the
    graph's arithmetic (``RuntimeValue.same_as_input``), and the oracle copies an axis of equal lengths."""
    pinned = ir.pinned_axes()
    if not pinned or not all(np.array_equal(oracle_indices(ir, n, n), np.arange(n)) and
                             oracle_inside(ir, n, n).all() for n in _EQUAL_LENGTHS):
        return ()
    return pinned


def axis_key(ir: ResizeIR) -> ResizeIR:
    """``ir`` reduced to what decides one axis' nearest taps (the modes), so every node of the same modes shares
    the exact-arithmetic taps and the grid verdicts."""
    return dataclasses.replace(ir, rank=1, axes=(0,), sizes=(1,), scales=None, roi=None, input_shape=None, pads=())


def index_ir(ir: ResizeIR) -> ResizeIR:
    """``ir`` as its index map reads it: exclude_outside moves no pick (it weighs a pick outside the input 0, which
    the OpenVINO rungs multiply in after each Gather), so the form is the one without it."""
    return dataclasses.replace(ir, exclude_outside=False) if ir.exclude_outside else ir


def oracle_indices(ir: ResizeIR, in_len: int, out_len: int) -> np.ndarray:
    """The oracle's nearest source indices of one axis of ``ir`` (cached by ``axis_key``)."""
    return _oracle(axis_key(ir), in_len, out_len)[0]


def oracle_inside(ir: ResizeIR, in_len: int, out_len: int) -> np.ndarray:
    """Which of those picks weigh 1 (all but those outside the input under exclude_outside)."""
    return _oracle(axis_key(ir), in_len, out_len)[1]


def grid_mismatch(ir: ResizeIR, grid, run) -> str | None:
    """None when ``run(in, out)`` (an index vector; ``out`` None: the subgraph has its length built in) equals
    the oracle's taps for every pair of ``grid``, else where it first does not. Under exclude_outside ``run``
    gives (the index vector, which picks lie inside the input), both checked."""
    for i, o in grid:
        got = run(i, o)
        got = got if ir.exclude_outside else [got]
        o = np.asarray(got[0]).size if o is None else o
        differs = first_difference(got, [oracle_indices(ir, i, o), oracle_inside(ir, i, o)])
        if differs is not None:
            return f"{differs[0]} differ from the oracle's taps at in={i}, out={o} ({differs[1]})"
    return None


def first_difference(got: list, want: list) -> tuple[str, str] | None:
    """(what, where) of the first of an index form's outputs (the index vector, then under exclude_outside which
    picks lie inside the input: 0 / 1 of any type) that is not the oracle's ``want`` (as many as ``got`` are
    checked); None where none differs."""
    for what, g, w in zip(("source indices", "picks inside the input"), got, want):
        g, w = np.asarray(g).reshape(-1).astype(np.float64), np.asarray(w).reshape(-1).astype(np.float64)
        if g.shape != w.shape:
            return what, f"length {g.size}, the oracle's {w.size}"
        if not np.array_equal(g, w):
            return what, f"index {int(np.flatnonzero(g != w)[0])}"
    return None


def version_of(package: str):
    """() -> "openvino 2026.4.1": what runs an index subgraph, named for ``Verdicts`` (imported when asked)."""
    def named() -> str:
        import importlib

        return f"{package} {importlib.import_module(package).__version__}"
    return named


class Verdicts:
    """Grid verdicts (None: exact; else where the subgraph differs) by key: the subgraph's whole structure,
    constants included, the form and the fixed lengths, so equal keys mean the same computation on the same
    grid. Kept in memory and, where ``runtime`` names one, on disk per machine (``compiled.build.cache_root()``)
    under a name hashed from the runtime and its version, this CPU's x86 level and every source a verdict rests
    on (the oracle, the form, the grid): the grid is 2,311 runs of the subgraph and of the oracle, 0.5 s of a
    0.6 s conversion (an FPN with run-time H/W), and each form (the coordinate and rounding modes) has one
    subgraph whatever the model."""

    def __init__(self, runtime=None):
        self.runtime = runtime  # () -> "openvino 2026.4.1", or None: in memory only
        self.memory: dict = {}
        self.disk: dict | None = None
        self.sources: str | None = None  # the hash of the sources, read once

    def _file(self) -> Path:
        if self.sources is None:
            here = Path(__file__).resolve().parent
            self.sources = project_hash(here.parent / "semantics", here / "index_form.py",
                                        here / "openvino" / "nearest_index.py", here / "onnx" / "nearest_index.py",
                                        here / "openvino" / "nearest_aspect.py",
                                        extra=f"index grid {self.runtime()}")
        return cache_root() / f"index-grid-{self.sources}.json"

    def _read(self) -> dict:
        if self.disk is None:
            try:
                self.disk = json.loads(self._file().read_text())
            except (OSError, ValueError):
                self.disk = {}
        return self.disk

    def get(self, key) -> tuple[bool, str | None]:
        """(found, verdict)."""
        if key in self.memory:
            return True, self.memory[key]
        if self.runtime is not None:
            got = self._read().get(_digest(key))
            if isinstance(got, list) and len(got) == 1:
                self.memory[key] = got[0]
                return True, got[0]
        return False, None

    def put(self, key, verdict: str | None) -> None:
        self.memory[key] = verdict
        if self.runtime is None:
            return
        path = self._file()
        try:
            disk = json.loads(path.read_text())  # another process may have added some since
        except (OSError, ValueError):
            disk = {}
        disk[_digest(key)] = [verdict]
        self.disk = disk
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(disk, sort_keys=True))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache: the verdict stays in memory

    def clear(self) -> None:
        self.memory.clear()
        self.disk = None


def _digest(key) -> str:
    return hashlib.sha256(repr(key).encode()).hexdigest()
