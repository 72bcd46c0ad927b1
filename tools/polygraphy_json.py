"""Polygraphy's JSON files, read and written without Polygraphy: ``--save-inputs`` / ``--load-inputs`` hold a list of
feed dicts (one per iteration; ``save_json`` of the data loader's list), ``--save-outputs`` / ``--load-outputs`` a
``RunResults`` (per runner, one ``IterationResult`` per iteration). Arrays are objects tagged
``"polygraphy_class": "ndarray"`` whose ``"array"`` is ``numpy.save``'s bytes in base64; older files tag a type
with ``"__polygraphy_encoded_<type>": "polygraphy_serialized_json_type"`` instead, and an output array may be
wrapped in a ``LazyNumpyArray`` / ``LazyArray`` (``"values"``)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np

from ..semantics.errors import BridgeError, clip

MARKER = "polygraphy_class"
LEGACY_PREFIX, LEGACY_MARKER = "__polygraphy_encoded_", "polygraphy_serialized_json_type"
# Written as the older name, which every Polygraphy version reads (newer ones take it as an alias).
LAZY = "LazyNumpyArray"


def _encode_array(a: np.ndarray) -> dict:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), MARKER: "ndarray"}


def _type_of(d: dict) -> str | None:
    if MARKER in d:
        return d[MARKER]
    return next((k[len(LEGACY_PREFIX):] for k, v in d.items() if k.startswith(LEGACY_PREFIX) and v == LEGACY_MARKER),
                None)


def _decode(d: dict):
    """``json.loads``'s object hook: Polygraphy's tagged objects as numpy arrays and plain Python values."""
    kind = _type_of(d)
    if kind is None:
        return d
    if kind == "ndarray":
        raw = d["array"]
        try:
            data = base64.b64decode(raw.encode(), validate=True)
        except ValueError:
            data = raw.encode("latin-1")  # Polygraphy's oldest files
        arr = np.load(io.BytesIO(data), allow_pickle=False)
        return arr if isinstance(arr, np.ndarray) else next(iter(arr.values()))
    if kind in ("LazyArray", LAZY):
        return d["values"]
    if kind == "IterationResult":
        return {"outputs": d["outputs"], "runner_name": d.get("runner_name")}
    if kind == "RunResults":
        return {"runs": [(name, its) for name, its in d["lst"]]}
    raise ValueError(f"an object of type {kind!r}, which verify cannot read (a PyTorch tensor needs Polygraphy)")


def _load(path: str, field: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, object_hook=_decode)
    except OSError as e:
        raise BridgeError(f"cannot read {clip(path)}: {e.strerror or e}", field=field) from None
    except (ValueError, KeyError, TypeError) as e:
        raise BridgeError(f"{clip(path)} is not a Polygraphy JSON file: {clip(str(e), 160)}", field=field) from None


def _arrays(d, path: str, field: str, what: str) -> dict:
    if not isinstance(d, dict) or not all(isinstance(v, np.ndarray) for v in d.values()):
        raise BridgeError(f"{clip(path)}: {what} is not a dict of arrays by tensor name", field=field)
    return dict(d)


def load_feeds(path: str, field: str = "inputs") -> list[dict]:
    """The feed dicts of a ``--save-inputs`` JSON file, one per iteration (a single dict is one iteration)."""
    doc = _load(path, field)
    feeds = [doc] if isinstance(doc, dict) else doc
    if not isinstance(feeds, list) or not feeds:
        raise BridgeError(f"{clip(path)} holds no feed dicts (expected Polygraphy's list of them)", field=field)
    return [_arrays(f, path, field, f"iteration {i}") for i, f in enumerate(feeds)]


def dump_feeds(feeds: list[dict]) -> str:
    return json.dumps([{k: _encode_array(v) for k, v in f.items()} for f in feeds], indent=4)


def load_results(path: str, field: str = "load-outputs") -> list[tuple[str, list[dict]]]:
    """[(runner name, [outputs by name, one dict per iteration])] of a ``--save-outputs`` JSON file."""
    doc = _load(path, field)
    if not isinstance(doc, dict) or "runs" not in doc:
        raise BridgeError(f"{clip(path)} is not Polygraphy's RunResults (saved by --save-outputs)", field=field)
    out = []
    for name, its in doc["runs"]:
        if not isinstance(its, list):
            raise BridgeError(f"{clip(path)}: runner {clip(str(name), 60)!r} has no list of iterations", field=field)
        out.append((str(name), [_arrays(it["outputs"] if isinstance(it, dict) and "outputs" in it else it, path,
                                        field, f"runner {clip(str(name), 60)!r}") for it in its]))
    return out


def dump_results(runs: list[tuple[str, list[dict]]]) -> str:
    """Polygraphy's RunResults: per runner, one IterationResult per iteration."""
    def iteration(name, outputs):
        return {"outputs": {k: {"values": _encode_array(v), MARKER: LAZY} for k, v in outputs.items()},
                "runtime": None, "runner_name": name, MARKER: "IterationResult"}

    return json.dumps({"lst": [[name, [iteration(name, o) for o in its]] for name, its in runs],
                       MARKER: "RunResults"}, indent=4)


__all__ = ["load_feeds", "dump_feeds", "load_results", "dump_results"]
