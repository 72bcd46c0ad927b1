"""TensorRT's optimization profile for the follow-up commands of ``convert --target tensorrt``: min / opt / max
shapes of every input the written model leaves dynamic, from ovc's ``--input`` (a fixed length gives all three,
a range ``1..4`` min 1 and opt = max 4) or from ``--trt-min-shapes / --trt-opt-shapes / --trt-max-shapes``
(Polygraphy's ``NAME:[d0,d1,...]``, which win). trtexec spells them ``--minShapes=NAME:1x3x224x224``, polygraphy
``--trt-min-shapes NAME:[1,3,224,224]``; onnxruntime's run of the source is fed the opt shapes
(``--input-shapes``), never Polygraphy's default of 1 for a dynamic dimension."""

from __future__ import annotations

import re
import shlex

from ..semantics.errors import BridgeError, clip
from ..translate.onnx_shapes import _BOUNDED, parse_ovc_inputs

KINDS = ("min", "opt", "max")


def _bounds(text: str) -> list[tuple[int, int] | None]:
    """ovc's dimensions as (low, high): ``224`` -> (224, 224), ``1..4`` -> (1, 4), ``..4`` -> (1, 4); ``?``, -1
    and ``1..`` -> None (no upper bound: TensorRT needs one)."""

    out = []
    for p in (p for p in re.split(r"[,\s]+", text.strip()) if p):
        b = _BOUNDED.fullmatch(p)
        if b:
            out.append((int(b.group(1) or 1), int(b.group(2))) if b.group(2) else None)
        else:
            out.append((int(p), int(p)) if re.fullmatch(r"\d+", p) else None)
    return out


def requested(input_spec: str | None = None, trt_shapes: dict | None = None) -> dict:
    """{input name ("" for ovc's unnamed shape): {"min" | "opt" | "max": [int | None, ...]}} the user asked for:
    ``--input`` (already validated by ``parse_ovc_inputs``) overlaid by ``trt_shapes`` ({kind: {name: dims}},
    parsed ``--trt-*-shapes``)."""

    out: dict = {}
    if input_spec:
        for name, text in parse_ovc_inputs(input_spec).text.items():
            dims = _bounds(text)
            out[name] = {"min": [d and d[0] for d in dims], "opt": [d and d[1] for d in dims],
                               "max": [d and d[1] for d in dims]}
    for kind, shapes in (trt_shapes or {}).items():
        for name, dims in shapes.items():
            out.setdefault(name, {})[kind] = list(dims)
    return out


def settle(inputs: list[tuple[str, list]], asked: dict) -> tuple[dict, list[str]]:
    """(profile {name: {"min", "opt", "max": [int, ...]}} for the inputs ``inputs`` ([(name, declared dims)] of the
    written model) leaves dynamic, the names still missing a length). A dimension static in the model is its
    length in all three; BridgeError for a name the model has not, a rank or a static length that disagrees, or
    min <= opt <= max broken."""
    names = [n for n, _ in inputs]
    if "" in asked and len(inputs) == 1:
        asked = {names[0]: asked[""], **{k: v for k, v in asked.items() if k}}
    for name in asked:
        if name not in names:
            raise BridgeError(f"the written model has no input {clip(name, 80)!r} (its inputs: "
                              f"{', '.join(clip(n, 40) for n in names[:8]) or 'none'})", field="trt-shapes")
    profile, missing = {}, []
    for name, decl in inputs:
        if decl is not None and all(isinstance(d, int) and d > 0 for d in decl):
            continue
        want = asked.get(name, {})
        shapes = {}
        for kind in KINDS:
            dims = want.get(kind)
            if dims is not None and decl is not None and len(dims) != len(decl):
                raise BridgeError(f"input {clip(name, 80)!r} has rank {len(decl)}; {len(dims)} dimensions given for "
                                  f"its {kind} shape", field=f"trt-{kind}-shapes")
            rank = len(decl) if decl is not None else len(dims or ())
            got = []
            for i in range(rank):
                static = decl[i] if decl is not None and isinstance(decl[i], int) and decl[i] > 0 else None
                d = dims[i] if dims is not None else None
                if static is not None and d is not None and d != static:
                    raise BridgeError(f"input {clip(name, 80)!r} dimension {i} is {static} in the model; {kind} "
                                      f"shape says {d}", field=f"trt-{kind}-shapes")
                got.append(static if static is not None else d)
            shapes[kind] = got
        if decl is None and not any(want.get(k) for k in KINDS) or any(None in shapes[k] for k in KINDS):
            missing.append(name)
            continue
        for i, (lo, opt, hi) in enumerate(zip(*(shapes[k] for k in KINDS))):
            if not lo <= opt <= hi:
                raise BridgeError(f"input {clip(name, 80)!r} dimension {i}: min {lo}, opt {opt}, max {hi} is not "
                                  "min <= opt <= max", field="trt-shapes")
        profile[name] = shapes
    return profile, missing


def trtexec_flags(profile: dict) -> str:
    if not profile:
        return ""
    flag = {"min": "--minShapes", "opt": "--optShapes", "max": "--maxShapes"}
    return "".join(" " + shlex.quote(f"{flag[k]}=" + ",".join(f"{n}:{'x'.join(map(str, s[k]))}"
                                                             for n, s in profile.items())) for k in KINDS)


def polygraphy_shapes(flag: str, shapes: dict) -> str:
    """`` --input-shapes a:[1,3,8,8] b:[2]`` (Polygraphy's spelling; empty for no shapes)."""
    if not shapes:
        return ""
    return f" {flag} " + " ".join(shlex.quote(f"{n}:[{','.join(map(str, d))}]") for n, d in shapes.items())


def polygraphy_trt_flags(profile: dict) -> str:
    return "".join(polygraphy_shapes(f"--trt-{k}-shapes", {n: s[k] for n, s in profile.items()}) for k in KINDS)


def missing_line(names: list[str], inputs: list[tuple[str, list]]) -> str:
    """What to add to the convert command when an input's dynamic dimensions have no lengths for TensorRT."""
    decl = dict(inputs)

    def dims(n):
        return ",".join(str(d) if isinstance(d, int) and d > 0 else "?" for d in decl[n] or ["?"])

    shown = "; ".join(f"{clip(n, 40)}[{dims(n)}]" for n in names[:4])
    example = clip(names[0], 40)
    return (f"dynamic input dimensions without lengths for TensorRT ({shown}): the commands below carry no "
            f"optimization profile; add to convert --input '{example}[{dims(names[0])}]' with each ? a length or a "
            f"range such as 1..8, or --trt-min-shapes / --trt-opt-shapes / --trt-max-shapes {example}:[...]")


__all__ = ["requested", "settle", "trtexec_flags", "polygraphy_shapes", "polygraphy_trt_flags", "missing_line"]
