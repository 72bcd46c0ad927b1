"""``verify --target openvino``: runs the source on onnxruntime and the converted model on OpenVINO CPU (f32) and
reports per model output and per resampling node the max abs/rel error and where the worst element is. Each
resampling node is also checked against the oracle on the same inputs, since onnxruntime follows a few
conventions of its own (``translate.onnxruntime``)."""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ...semantics.errors import BridgeError
from .graph import compile_f32


def _with_node_tensors_as_outputs(model):
    """A copy of ``model`` whose outputs also include every resampling node's inputs and outputs."""
    import onnx

    from ...translate.onnx import RESAMPLING_OPS

    m = onnx.ModelProto()
    m.CopyFrom(model)
    # onnx >= 1.23 writes IR version 14, onnxruntime 1.31 reads <= 13; these ops need nothing past IR 10.
    m.ir_version = min(m.ir_version, 10)
    have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input} | \
        {i.name for i in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type in RESAMPLING_OPS:
            for name in list(node.input) + list(node.output):
                if name and name not in have:
                    m.graph.output.append(onnx.ValueInfoProto(name=name))
                    have.add(name)
    return m


def make_inputs(model, seed: int = 0) -> dict:
    """Seeded inputs for every graph input, chosen by what reads them (``check``'s probes: N(0,1) data, grids
    reaching outside [-1, 1], offsets of a few pixels, masks in [0, 1], sensible run-time scales/sizes/roi)."""
    from .check import probe

    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    infos = {vi.name: vi for vi in model.graph.input}
    readers = {}
    for node in model.graph.node:
        for pos, name in enumerate(node.input):
            readers.setdefault(name, (node.op_type, pos, infos.get(node.input[0])))
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        op_type, pos, x_info = readers.get(vi.name, ("", 0, None))
        feeds[vi.name] = probe(op_type, pos, vi, rng, x_info)
    return feeds


def _err(a: np.ndarray, b: np.ndarray) -> dict:
    if a.shape != b.shape:
        return {"shape": f"{a.shape} vs {b.shape}", "max_abs": float("inf"), "max_rel": float("inf"),
                "worst": None}
    if a.size == 0:
        return {"max_abs": 0.0, "max_rel": 0.0, "worst": None}
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    i = np.unravel_index(int(np.argmax(d)), d.shape)
    rel = d / np.maximum(np.abs(b.astype(np.float64)), 1e-12)
    return {"max_abs": float(d.max()), "max_rel": float(rel.max()), "worst": tuple(int(x) for x in i),
            "got": float(a[i]), "want": float(b[i])}


def _ok(e: dict, a_dtype) -> bool:
    if e.get("shape"):
        return False
    tol = 1e-5 if np.dtype(a_dtype) == np.float32 else 1e-2 if np.dtype(a_dtype) == np.float16 else 0.5
    return e["max_abs"] <= tol + 1e-4 * abs(e.get("want", 0.0))


def verify_openvino(model_path: str, *, inputs: dict | None = None, fallback: str = "decompose") -> dict:
    """Run source (onnxruntime, oracle per node) and converted (OpenVINO CPU f32); report the errors."""
    import onnx
    import onnxruntime as ort

    from ...semantics.reference import run as oracle
    from .target import convert
    from ...translate.onnx import RESAMPLING_OPS, load, node_name, parse_model

    model = load(model_path)
    feeds = inputs if inputs is not None else make_inputs(model)
    aug = _with_node_tensors_as_outputs(model)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "augmented.onnx")
        onnx.save(aug, p)
        try:
            sess = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
            ort_out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        except Exception as e:
            raise BridgeError(f"onnxruntime cannot run the source model: {str(e).splitlines()[0]}") from None
        ov_model, records = convert(p, fallback=fallback)
        compiled = compile_f32(ov_model)
        res = compiled({k: v for k, v in feeds.items()})
        ov_out = {}
        for port, val in res.items():
            for name in port.get_names():
                ov_out[name] = val
    irs = dict(parse_model(model))
    report = {"outputs": [], "nodes": [], "rungs": [r.summary() for r in records]}
    consts = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    deviating: set[str] = set()
    for i, node in enumerate(model.graph.node):
        if node.op_type not in RESAMPLING_OPS:
            continue
        name = node_name(node, i)
        args = [None if not n else (consts[n] if n in consts else ort_out.get(n, feeds.get(n)))
                for n in node.input]
        want = oracle(irs[name], *args)
        got = ov_out[node.output[0]]
        e = _err(got, want)
        ort_dev = _err(ort_out[node.output[0]], want)
        e.update(name=name, ok=_ok(e, want.dtype), onnxruntime_vs_oracle=ort_dev)
        report["nodes"].append(e)
        if not _ok(ort_dev, want.dtype):
            deviating.add(node.output[0])
    # onnxruntime is the reference for model outputs only where no resampling node upstream of them has
    # onnxruntime computing something other than the ONNX semantics.
    for node in model.graph.node:
        if any(n in deviating for n in node.input):
            deviating.update(node.output)
    for o in model.graph.output:
        e = _err(ov_out[o.name], ort_out[o.name])
        e.update(name=o.name, ok=None if o.name in deviating else _ok(e, ort_out[o.name].dtype))
        report["outputs"].append(e)
    report["ok"] = all(r["ok"] is not False for r in report["outputs"]) and all(r["ok"] for r in report["nodes"])
    return report


def format_verify(report: dict) -> str:
    lines = ["lowering:"] + [f"  {r}" for r in report["rungs"]]

    def row(kind, r):
        if r.get("shape"):
            return f"  {kind} {r['name']}: SHAPE {r['shape']}"
        w = f" worst at {r['worst']} ({r['got']:.7g} vs {r['want']:.7g})" if r.get("worst") is not None else ""
        verdict = {True: "ok", False: "MISMATCH",
                   None: "(not judged: onnxruntime deviates from the ONNX semantics upstream)"}[r["ok"]]
        return f"  {kind} {r['name']}: max abs {r['max_abs']:.3g}, max rel {r['max_rel']:.3g}{w} {verdict}"

    lines.append("model outputs (OpenVINO CPU f32 vs onnxruntime):")
    lines += [row("output", r) for r in report["outputs"]]
    lines.append("resampling nodes (OpenVINO CPU f32 vs the oracle on the same inputs):")
    for r in report["nodes"]:
        lines.append(row("node", r))
        o = r["onnxruntime_vs_oracle"]
        if o.get("max_abs", 0) > 1e-4:
            lines.append(f"      (onnxruntime itself differs from the ONNX semantics here by {o['max_abs']:.3g}; "
                         f"see `inspect` and translate/onnxruntime.py)")
    lines.append("verdict: " + ("exact within float tolerance" if report["ok"] else "MISMATCH"))
    return "\n".join(lines)
