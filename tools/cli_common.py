"""What every verb's command line shares: the extras a verb needs, the policy flags, printing text and JSON."""

from __future__ import annotations

import contextlib
import json
import warnings

from ..semantics.errors import BridgeError, clip
from ..translate.onnx import DEFAULT_CONVENTION, onnx_convention
from . import targets
from .api_terms import cli_terms
from ..translate.onnx_shapes import InputSpecs, parse_ovc_inputs, parse_polygraphy_shapes
from .logs import quiet_other_libraries, verbose

# What each verb needs beyond the core install, and the extra that brings it.
EXTRAS = {"openvino": "openvino", "onnxruntime": "runtime", "matplotlib": "report", "tensorrt": "tensorrt",
          "torch": "torch"}


def require(*modules: str, why: str = "") -> None:
    """Exit 2 with the ``pip install`` line when a module the verb needs is missing (before any work)."""
    import importlib

    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError:
            raise missing_module(mod, why) from None
    quiet_other_libraries(verbose())  # onnxruntime's default logger, now that it may be imported


def missing_module(mod: str, why: str = "") -> BridgeError:
    extra = EXTRAS.get(mod)
    fix = f"pip install 'resample-bridge[{extra}]'" if extra else f"pip install {mod}"
    return BridgeError(f"{why or 'this verb'} needs {mod}, which is not installed: {fix}", field="install")


def shapes(args) -> dict:
    """``--input`` (ovc's or trtexec's spelling) and ``--input-shapes`` (Polygraphy's) as one {name: shape}."""

    out = parse_ovc_inputs(args.input) if getattr(args, "input", None) else InputSpecs()
    for name, dims in parse_polygraphy_shapes(getattr(args, "input_shapes", None) or ()).items():
        if out.get(name) is not None:
            raise BridgeError(f"input {name!r} is given a shape by both --input and --input-shapes; give one",
                              field="input-shapes")
        out[name] = dims
    return out


def comma_list(values) -> list[str]:
    """A repeatable option's values, each comma-separated as ovc writes lists (``a.so,b.so``)."""
    return [v.strip() for item in values or () for v in str(item).split(",") if v.strip()]


def allow_conditional(args) -> bool | None:
    """--allow-conditional / --strict as the policy's allow_conditional (None: the ladder's default)."""
    if getattr(args, "allow_conditional", False):
        if getattr(args, "strict", False):
            raise BridgeError("--strict and --allow-conditional contradict each other; give one",
                              field="allow-conditional")
        return True
    return False if getattr(args, "strict", False) else None


def show(*texts: str) -> None:
    """Text for a terminal: every line escaped (names and messages come from the model and other libraries)
    and capped."""

    for text in texts:
        for line in str(text).split("\n"):
            print(clip(line, 1900))


def quiet_or(args, *texts: str) -> tuple[str, ...]:
    """``texts`` (the convention line, per-node lines), none under ``-q``: the verdict lines stay."""
    return () if getattr(args, "quiet", False) else texts


def emit_json(obj) -> None:
    """Strict JSON on stdout: no NaN/Infinity (``jsonable`` turns them into null beside a flag)."""
    print(json.dumps(jsonable(obj), indent=1, allow_nan=False))


def jsonable(x):
    """Plain JSON values; non-finite floats become None (the caller says why beside them)."""
    import math

    import numpy as np

    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (str, int, bool)):
        return x
    if hasattr(x, "to_dict"):
        return jsonable(x.to_dict())
    return str(x)


def convention_line(args) -> str:
    return f"ONNX convention: {args.onnx_convention}" + \
        (" (the spec text, as onnxruntime, OpenVINO and PyTorch compute it)" if args.onnx_convention == "spec"
         else " (onnx.reference and the conformance data)")


def report_needs(args) -> None:
    """``--report DIR``: OpenVINO only, and matplotlib checked before any work (exit 2 naming the extra)."""
    if getattr(args, "report", None):
        if not targets.entry(args.target).report:
            raise BridgeError("--report draws OpenVINO CPU runs; it needs --target openvino", field="report")
        require("matplotlib", why="--report")


@contextlib.contextmanager
def command_context(args):
    """What a verb runs under: the ONNX convention it names, the CLI's terms, and no library warning (one prints its
    source path and line: numpy's "invalid value" on a NaN grid, which the oracle reads as the spec says): the
    command's own lines say what the user needs."""
    with onnx_convention(getattr(args, "onnx_convention", DEFAULT_CONVENTION)), cli_terms(), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
