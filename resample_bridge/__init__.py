"""resample-bridge: one semantic IR for resampling ops (ONNX Resize / Upsample / GridSample / DeformConv,
OpenVINO Interpolate / GridSample / DeformableConvolution, TensorRT IResizeLayer / IGridSampleLayer): where two
frameworks disagree and why, and a conversion that computes the same numbers, proven, or a refusal with reasons.

    from resample_bridge import api

    api.inspect("model.onnx")                  # the canonical semantics of every resampling node
    api.check("model.onnx")                    # what OpenVINO's own importer does with each of them
    conv = api.convert("model.onnx", "out/model.xml")
    api.verify("model.onnx", converted=conv.output)

``help(resample_bridge.api)`` documents the functions; the command line is ``resample-bridge --help``.
Subpackages (the checkout's top-level folders, mapped by pyproject's package-dir): ``semantics`` (the IR, the
oracle, the error bound; numpy only), ``translate`` (parsers), ``lowering`` (the targets' rungs), ``tools`` (the
CLI and the API's implementation), ``api``.

This file holds only the package's docstring and version: importing ``resample_bridge`` imports nothing else.
"""


def _version() -> str:
    """The installed distribution's version; from a checkout without one, pyproject.toml's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("resample-bridge")
    except PackageNotFoundError:
        import re
        from pathlib import Path

        try:
            text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
        except OSError:
            return "unknown"
        m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
        return m.group(1) if m else "unknown"


def __getattr__(name: str):
    """``__version__`` read when first asked for (PEP 562), not at import: reading it imports importlib.metadata
    (zipfile, email, ...: tens of milliseconds), and ``python -m resample_bridge.tools.command`` imports this
    package before the command's signal handlers are in place, so a Ctrl-C then printed a traceback."""
    if name == "__version__":
        globals()["__version__"] = value = _version()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__"]
