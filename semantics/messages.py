"""Relayed messages, cleaned: what OpenVINO and onnxruntime say when they refuse, without what means nothing
to a user (C++ source locations, "Check '...' failed at" wrappers, conversion-report framing, C++ signatures).
Text in, text out: no framework is imported here. Escaping and capping for display stay in
``semantics/errors.py`` (``clip``), which also cleans every BridgeError message with ``without_source``.

* ``without_source``: any relayed C++ message, source locations dropped (kept otherwise whole);
* ``openvino_error_reason``: the one line of an OpenVINO conversion (ONNX frontend) report that says why;
* ``plugin_sentence``: the last sentence of an OpenVINO runtime exception (compile / infer / read);
* ``onnxruntime_text``: an onnxruntime exception without its status prefix and C++ signatures.
"""

from __future__ import annotations

import re

# ----------------------------------------------------------------------------------------------------------
# Any C++ library

# Relayed C++ messages ("Exception from src/inference/src/cpp/core.cpp:117:", "Check 'x' failed at
# src/core/...cpp:78:"): the source location means nothing to a user and is dropped.
_SOURCE = re.compile(r"(?:Exception from\s+)?(?<![\w./-])[\w./-]{0,200}\.(?:cpp|cc|cxx|hpp|h|py)(?::\d+)+:?\s*")
_CHECK = re.compile(r"Check '([^']{0,200})' failed at\s*")


def without_source(text: str) -> str:
    """``text`` without C++ source locations and "Check '...' failed at" wrappers."""
    text = _CHECK.sub(lambda m: f"check ({m.group(1)}) failed: ", text)
    return _SOURCE.sub("", text).strip()


# ----------------------------------------------------------------------------------------------------------
# OpenVINO

# The wrapper lines of the ONNX frontend's conversion report.
_NOISE = ("Check 'false' failed at src/frontends/common_translators", "FrontEnd API failed", "Model wasn't fully",
          "Failed operations detailed log", "[ONNX Frontend] Conversion failed", "Summary:",
          "-- Conversion is failed", "While validating", "Check '")


def openvino_error_reason(text: str) -> str:
    """OpenVINO's own words for a refusal, without the wrapper lines of its conversion report."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        # A Python exception raised inside a conversion extension: keep its type and message.
        if ln.startswith("While validating ONNX node") and "Error: " in ln:
            return "internal error in a conversion extension: " + ln.split(">': ", 1)[-1][:300]
    useful = [ln for ln in lines if not ln.startswith(_NOISE) and not (ln.startswith("--") and "message" in ln)]
    reason = useful[-1] if useful else (lines[-1] if lines else "unknown error")
    return _PYTHON_REPR.sub(r"\1", reason.lstrip("- "))[:300]


# A Python object's repr in a frontend's message ("<built-in function trunc>", "<function sym_float at 0x7f...>"):
# its name is what the user can look for; the address changes from run to run.
_PYTHON_REPR = re.compile(r"<(?:built-in )?(?:function|method) ([\w.]+)(?: at 0x[0-9a-f]+)?>")


# A runtime exception's own wrappers: stricter than without_source (a whole line goes, "[CPU] " too), since
# only its last sentence is kept.
_PLUGIN_SOURCE = re.compile(r"(Exception from )?\S*src/[\w/.\-]+\.(?:cpp|hpp|h|cc)(:\d+)?:?")
_PLUGIN_CHECK = re.compile(r"Check '.*?' failed at\s*")


def plugin_sentence(text: str) -> str:
    """The meaningful sentence of an OpenVINO exception: no "Exception from <source path>" lines, no
    "Check '...' failed at" preambles, no control characters; "[CPU] " prefixes dropped."""
    lines = []
    for ln in str(text).splitlines():
        ln = _PLUGIN_CHECK.sub("", _PLUGIN_SOURCE.sub("", ln)).strip(" :")
        ln = "".join(c for c in ln if c.isprintable())
        if ln:
            lines.append(ln)
    if not lines:
        return "OpenVINO gave no reason"
    s = lines[-1]
    s = re.sub(r"^\[[A-Z_]+\]\s*", "", s)
    return s[:300]


# ----------------------------------------------------------------------------------------------------------
# onnxruntime

# onnxruntime's error text: a status prefix and C++ signatures ("onnxruntime::X<T>::Compute(...) const
# [with T = float]") before the sentence that says what is wrong.
_ORT_NOISE = re.compile(r"\[ONNXRuntimeError\] : \d+ : \w+ : |(?:(?:void|bool|int|auto|size_t|\w+(?:::[\w<>]+)+) )?"
                        r"\b\w+(?:::[\w<>]+)+\([^()]*\)"
                        r"(?: const)?(?: \[with [^\]]*\])?\s*")


def onnxruntime_text(msg: str) -> str:
    """An onnxruntime message without its status prefix, C++ signatures and source locations."""
    return _ORT_NOISE.sub("", without_source(msg)).strip()


__all__ = ["without_source", "openvino_error_reason", "plugin_sentence", "onnxruntime_text"]
