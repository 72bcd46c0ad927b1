"""The API's wording of a refusal: BridgeError messages are written for the command line (``give --input``,
``pass --force``); a function of ``resample_bridge.api`` says the parameter instead. One mapping, CLI flag ->
API parameter, used for the message and the field alike."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re

from ..semantics.errors import BridgeError

# CLI spelling -> the API's parameter (as a caller writes it).
PARAMETERS = {
    "--input": "input_shapes", "--input-shapes": "input_shapes", "--output": "outputs", "-o": "output",
    "--output_model": "output", "--output-model": "output", "--target": "target", "--force": "force=True",
    "--strict": "strict=True", "--allow-conditional": "allow_conditional=True", "--fallback": "fallback",
    "--prefer": "prefer", "--extension": "extensions", "--compress_to_fp16": "compress_to_fp16",
    "--compress-to-fp16": "compress_to_fp16", "--onnx-convention": "convention", "--report": "report",
    "--fail-on": "fail_on", "--converted": "converted", "--atol": "atol", "--rtol": "rtol", "--seed": "seed",
    "--precision": "precision", "--val-range": "val_range", "--check-error-stat": "error_stat",
    "--fail-fast": "fail_fast", "--validate": "validate", "--decompose-gridsample": "decompose_gridsample",
    "--trt-min-shapes": "trt_shapes", "--trt-opt-shapes": "trt_shapes", "--trt-max-shapes": "trt_shapes",
}
# Longest first, so that --input-shapes is not read as --input; a flag ends where no word character follows.
_FLAG = re.compile("(?<![\\w-])(" + "|".join(re.escape(f) for f in sorted(PARAMETERS, key=len, reverse=True))
                   + ")(?![\\w-])")


def in_api_terms(text: str | None) -> str | None:
    """``text`` with every CLI flag it names replaced by the API parameter."""
    return None if text is None else _FLAG.sub(lambda m: PARAMETERS[m.group(1)], text)


# A field named after a flag (``field='input'`` is ``--input``) as the parameter's name; "output" stays: the CLI
# names both the -o path and --output's tensors so, and the message says which.
FIELDS = {f[2:]: p.split("=")[0] for f, p in PARAMETERS.items() if f.startswith("--") and f != "--output"}


def _field(field: str | None) -> str | None:
    return FIELDS.get(field, field) if field is not None else None


_IN_CLI = contextvars.ContextVar("resample_bridge_in_cli", default=False)


@contextlib.contextmanager
def cli_terms():
    """The command line calls the API: its errors keep naming flags."""
    token = _IN_CLI.set(True)
    try:
        yield
    finally:
        _IN_CLI.reset(token)


def api_terms(fn):
    """``fn`` raising its BridgeErrors in the API's words (unless the command line called it)."""
    @functools.wraps(fn)
    def wrapped(*args, **kw):
        try:
            return fn(*args, **kw)
        except BridgeError as e:
            if _IN_CLI.get():
                raise
            raise _reworded(e) from None
    return wrapped


def _reworded(e: BridgeError) -> BridgeError:
    """``e`` (its class and everything it carries kept) with the message and field in the API's words."""
    new = type(e).__new__(type(e))
    new.__dict__.update(e.__dict__)
    new.message, new.brief, new.field = in_api_terms(e.message), in_api_terms(e.brief), _field(e.field)
    new.args = (new.message,)
    return new
