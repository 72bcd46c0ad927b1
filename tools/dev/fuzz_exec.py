"""Numbers for one fuzz case, in a process of its own (OpenVINO may die of SIGFPE on a bad model):

    python -m resample_bridge.tools.dev.fuzz_exec MODEL.onnx OUT.xml FEEDS.npz [FEEDS.npz ...]

For each probe: the oracle (``semantics.reference.run`` on the node's own inputs), the converted model on
OpenVINO CPU with f32 inference precision (loading the extension library beside OUT.xml if there is one),
onnxruntime and ``onnx.reference`` on the source model. One JSON object per line on stdout, a "stage" line
before each step, so a crash names the step it happened in.

OpenVINO vs oracle: bit-exact for integer dtypes; floats within 1e-5 * magnitude + 1e-4 * |want| (f16:
1e-3 and 2e-3). onnxruntime vs oracle: "agree", "explained by <IR fields>" (the oracle run on
``translate.onnxruntime.ort_semantics`` equals onnxruntime), "known: integer results truncated" (or wrapped
around their type),
"onnxruntime limitation: <what its kernels lack>" (it refuses a valid model), or "UNEXPLAINED" (a bad
outcome of its own). When onnxruntime and onnx.reference agree with each other and both differ from the
oracle, the oracle (and anything proven against it) is "disputed".
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import numpy as np


def emit(**kw) -> None:
    print(json.dumps(kw, default=str), flush=True)


def compare(got, want, mag: float = 1.0) -> dict:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return {"ok": False, "shape": f"{list(got.shape)} vs {list(want.shape)}"}
    if want.size == 0:
        return {"ok": True, "max_abs": 0.0}
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    d = np.where(same, 0.0, np.abs(g - w))
    d = np.where(np.isnan(d), np.inf, d)
    if np.issubdtype(want.dtype, np.integer):
        tol = np.zeros_like(w)
    elif want.dtype == np.float16:
        tol = 1e-3 * mag + 2e-3 * np.abs(w)
    else:
        tol = 1e-5 * mag + 1e-4 * np.abs(np.where(np.isfinite(w), w, 0))
    bad = d > tol
    i = np.unravel_index(int(np.argmax(np.where(bad, d, -1.0))), d.shape)
    return {"ok": not bool(bad.any()), "max_abs": float(d.max()), "n_bad": int(bad.sum()),
            "worst": [int(v) for v in i], "got": float(g[i]), "want": float(w[i])}


def _resampling_nodes(model):
    from ...translate.onnx import RESAMPLING_OPS
    return [n for n in model.graph.node if n.op_type in RESAMPLING_OPS and n.domain in ("", "ai.onnx")]


def _values(model, feeds):
    """Every input of the resampling nodes: initializers, feeds, and what the other nodes compute (Constant
    in any spelling, Shape/Slice/Concat/Cast chains), evaluated by onnx.reference, not by the code under
    test."""
    from onnx import helper, numpy_helper
    vals = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    vals.update(feeds)
    resampling = _resampling_nodes(model)
    wanted = sorted({t for n in resampling for t in n.input if t and t not in vals})
    if wanted:
        from onnx.reference import ReferenceEvaluator
        rest = [n for n in model.graph.node if all(n is not r for r in resampling)]
        g = helper.make_graph(rest, "params", list(model.graph.input), [helper.ValueInfoProto(name=t) for t in wanted],
                              list(model.graph.initializer))
        m = helper.make_model(g, opset_imports=model.opset_import, ir_version=model.ir_version)
        ev = ReferenceEvaluator(m)
        vals.update(zip(wanted, ev.run(wanted, {k: v for k, v in feeds.items() if k in ev.input_names})))
    return vals


def oracle(model, feeds) -> dict:
    """{output name: oracle array} for every resampling node whose inputs are all known."""
    from ...semantics.reference import run
    from ...translate.onnx import parse_model
    irs = [ir for _, ir in parse_model(model)]
    vals = _values(model, feeds)
    out = {}
    for node, ir in zip(_resampling_nodes(model), irs):
        args = [vals[n] if n else None for n in node.input]
        out[node.output[0]] = (run(ir, *args), ir, args)
    return out


def run_openvino(xml: str, feeds: dict, compiled=None):
    import openvino as ov
    if compiled is None:
        core = ov.Core()
        lib = os.path.join(os.path.dirname(os.path.abspath(xml)), "libresample_bridge_openvino.so")
        if os.path.exists(lib):
            core.add_extension(lib)
        compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    names = {n for p in compiled.inputs for n in p.get_names()}
    res = compiled({k: v for k, v in feeds.items() if k in names})
    out = {}
    for port, val in res.items():
        for n in port.get_names():
            out[n] = np.asarray(val)
    if len(res) == 1:
        out.setdefault("__only__", np.asarray(next(iter(res.values()))))
    return out, compiled


def run_onnxruntime(model, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    m = type(model)()
    m.CopyFrom(model)
    m.ir_version = min(m.ir_version, 10)
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {k: feeds[k] for k in names})))


def run_reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    ev = ReferenceEvaluator(model)
    return dict(zip(ev.output_names, ev.run(None, {k: feeds[k] for k in ev.input_names})))


def ort_verdict(ort_y, want, ir, args, mag) -> str:
    c = compare(ort_y, want, mag)
    if c["ok"]:
        return "agree"
    try:
        from ...semantics.reference import run
        from ...translate.onnxruntime import at_run_time, ort_semantics
        from ...lowering.model_reference import same_off_ties
        ir2 = ort_semantics(at_run_time(ir, args))
        fields = [f.name for f in dataclasses.fields(ir) if getattr(ir, f.name) != getattr(ir2, f.name)]
        theirs = run(ir2, *args) if ir2 != ir else None
        if theirs is not None and compare(ort_y, theirs, mag)["ok"]:
            return "explained by " + ",".join(fields)
        # nearest: onnxruntime's float32 coordinate on a tie (the whole-model check's own allowance)
        if theirs is not None and same_off_ties(ir, ir2, ort_y, theirs, args):
            return "explained by " + ",".join(fields) + " (float32 ties)"
        # both at once, as the whole-model check allows (``model_reference._named_departure``): its IR, and its
        # integer linear / cubic results truncated (int32 tf_crop_and_resize copying an equal-length N axis)
        if theirs is not None and _truncated(ort_y, theirs, ir):
            return "explained by " + ",".join(fields) + " (integer results truncated)"
    except Exception:
        pass
    if _truncated(ort_y, want, ir):
        return "known: integer results truncated"
    if _wraps(want, ort_y, ir):
        return "known: integer results wrap around their type (accumulated in it), else truncated"
    if _wraps(want, ort_y, ir, slack=2.0**-22):
        return "known: int32 computed in float32 (values above 2^24 lose their low bits), wrapped, truncated"
    if _axis_by_axis(ir, args, ort_y, mag):
        return "known: integer antialias resized axis by axis, innermost first, rounded between passes"
    return "UNEXPLAINED " + (c.get("shape") or f"max abs {c['max_abs']:.3g} at {c['worst']}")


def _truncated(got, want, ir) -> bool:
    """Integer linear / cubic results each within one step of ``want``'s (onnxruntime truncates them)."""
    got, want = np.asarray(got), np.asarray(want)
    return np.issubdtype(want.dtype, np.integer) and got.shape == want.shape and \
        getattr(getattr(ir, "sampler", None), "kind", "") in ("linear", "cubic") and \
        bool(np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= 1))


def _wraps(want, got, ir, slack: float = 0.0) -> bool:
    """onnxruntime's integer linear / cubic: each element within 2 of the exact result modulo 2^bits (an
    accumulation in the element type that overflows, then truncation); ``slack``: plus that share of the
    largest exact magnitude (int32 computed in float32: a few of its ulps there)."""
    want, got = np.asarray(want), np.asarray(got)
    if not np.issubdtype(want.dtype, np.integer) or want.shape != got.shape or \
            getattr(getattr(ir, "sampler", None), "kind", "") not in ("linear", "cubic"):
        return False
    m = 1 << (8 * want.dtype.itemsize)
    r = (got.astype(object) - want.astype(object)) % m
    tol = 2 + int(slack * float(np.abs(want.astype(np.float64)).max(initial=0)))
    return bool(np.all((r <= tol) | (r >= m - tol)))


def _axis_by_axis(ir, args, ort_y, mag) -> bool:
    """onnxruntime's integer antialias: one axis at a time from the innermost, each pass rounded and saturated
    to the element type (the oracle run per axis in that order reproduces it)."""
    from ...semantics.reference import run
    sampler = getattr(ir, "sampler", None)
    if (not getattr(sampler, "antialias", False) or not np.issubdtype(np.asarray(ort_y).dtype, np.integer)
            or len(ir.axes) < 2 or ir.roi is not None):
        return False
    try:
        x = args[0]
        for k in sorted(range(len(ir.axes)), key=lambda k: -ir.axes[k]):
            x = run(dataclasses.replace(ir, axes=(ir.axes[k],),
                                        scales=(ir.scales[k],) if isinstance(ir.scales, tuple) else ir.scales,
                                        sizes=(ir.sizes[k],) if isinstance(ir.sizes, tuple) else ir.sizes), x)
        return compare(ort_y, x, mag)["ok"]
    except Exception:
        return False


# onnxruntime's refusals of valid models, by what its CPU kernels lack: (text in the message, short name).
ORT_LIMITS = (
    ("Could not find an implementation", "no kernel for this op version and element type"),
    ("when anti-aliasing is set, Resize only supports", "antialias with nearest"),
    ("outside can be set to 1 when", "exclude_outside outside cubic / antialiased linear"),
    ("'Cubic' mode only supports", "cubic resizes only the two innermost axes"),
    ("Tensor type mismatch", "linear / cubic / antialias on an integer input"),
    ("Only 4-D or 5-D tensor is supported", "GridSample on other than 4-D / 5-D input"),
    ("must be 4D", "DeformConv on other than 4-D input"),
    ("Either `sizes` or `scales` must be provided", "an empty scales through Identity / Cast beside sizes"),
    ("Scale value should be greater than 0", "a zero-length output axis"),
    ("outermost 2 scale values being 1", "linear resizing N or C (outermost scales must be 1)"),
)


def ort_refusal(e: Exception) -> str:
    """One readable line for onnxruntime refusing a valid model: a named limitation, or the message's end."""
    text = " ".join(str(e).split())
    for needle, name in ORT_LIMITS:
        if needle in text:
            return "onnxruntime limitation: " + name
    return "onnxruntime refuses: " + text[-100:]


def main(argv=None) -> int:
    import onnx
    argv = sys.argv[1:] if argv is None else argv
    model_path, xml, feed_paths = argv[0], argv[1], argv[2:]
    model = onnx.load(model_path)
    compiled = None
    for p, fp in enumerate(feed_paths):
        with np.load(fp) as z:
            feeds = {k: z[k] for k in z.files}
        mag = max([1.0] + [float(np.max(np.abs(v.astype(np.float64)))) for v in feeds.values()
                           if v.size and np.issubdtype(v.dtype, np.number)])
        emit(stage="oracle", probe=p)
        try:
            want = oracle(model, feeds)
        except Exception as e:
            emit(probe=p, oracle_error=f"{type(e).__name__}: {str(e)[:300]}")
            return 0
        emit(stage="openvino", probe=p)
        try:
            got, compiled = run_openvino(xml, feeds, compiled)
        except Exception as e:
            emit(probe=p, openvino_error=f"{type(e).__name__}: {str(e)[:600]}")
            return 0
        for name, (w, ir, args) in want.items():
            y = got.get(name, got.get("__only__"))
            res = compare(y, w, mag) if y is not None else {"ok": False, "shape": "output missing"}
            emit(probe=p, output=name, openvino=res)
            emit(stage="onnxruntime", probe=p)
            try:
                o = run_onnxruntime(model, feeds)[name]
                ort = ort_verdict(o, w, ir, args, mag)
            except Exception as e:
                o, ort = None, ort_refusal(e)
            emit(stage="onnx.reference", probe=p)
            try:
                r = run_reference(model, feeds)[name]
                ref = "agree" if compare(r, w, mag)["ok"] else "differs"
            except Exception as e:
                r, ref = None, "error: " + f"{type(e).__name__}"
            disputed = (o is not None and r is not None and np.asarray(o).shape == np.asarray(r).shape
                        and not ort.startswith(("agree", "explained", "known")) and ref == "differs"
                        and compare(o, r.astype(o.dtype), mag)["ok"])
            emit(probe=p, output=name, onnxruntime=ort, reference=ref, disputed=bool(disputed),
                 reference_value=None if not disputed else compare(r, w, mag))
    emit(stage="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
