"""The corpus exporter's writer and the helpers every case uses: seeded inputs and weights, ``export_torch``
(one torch.onnx.export) and ``finish`` (model.onnx + inputs/outputs/meta beside it). See export_models.py."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

PINS = {
    "torch": "2.14.1",
    "torchvision": "0.29.1",
    "onnx": "1.23.2",
    "onnxscript": "0.7.2",
    "onnxruntime": "1.32.0",
    "ultralytics": "8.4.190",
    "rapidocr-onnxruntime": "1.4.4",  # only the wheel's ch_PP-OCRv4_det_infer.onnx (Apache-2.0), no code
}

RESAMPLING_OPS = {"Resize", "Upsample", "GridSample", "DeformConv"}

CASES: dict[str, callable] = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# --------------------------------------------------------------------------------------------------- helpers


def versions():
    import importlib.metadata as md
    out = {}
    for name in PINS:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def gen(seed):
    import torch
    return torch.Generator().manual_seed(seed)


def randn(seed, *shape):
    import torch
    return torch.randn(*shape, generator=gen(seed))


def ints(seed, *shape, lo=-4, hi=5):
    """Integer-valued float tensor: ties in the values, exact products."""
    import torch
    return torch.randint(lo, hi, shape, generator=gen(seed)).float()


def init_weights(module, seed):
    """Deterministic random weights (default init under a fixed seed), eval mode."""
    import torch
    torch.manual_seed(seed)
    for m in module.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
        if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
            g = gen(seed + 1)
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return module.eval()


def _resampling_nodes(model):
    """[{op, name, opset, attributes, inputs}] of every resampling node, subgraphs included."""
    import onnx
    from onnx import helper
    opset = {o.domain: o.version for o in model.opset_import}
    out = []

    def walk(graph):
        for n in graph.node:
            if n.op_type in RESAMPLING_OPS and n.domain in ("", "ai.onnx"):
                attrs = {}
                for a in n.attribute:
                    v = helper.get_attribute_value(a)
                    attrs[a.name] = v.decode() if isinstance(v, bytes) else (list(v) if isinstance(v, (list, tuple))
                                                                             else v)
                out.append({"op": n.op_type, "name": n.name, "opset": opset.get("", None),
                            "inputs": list(n.input), "attributes": attrs})
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g)
    walk(model.graph)
    return out


def _dims(vi):
    return [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else None)
            for d in vi.type.tensor_type.shape.dim]


def run_ort(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def finish(name, out_dir, onnx_path, feeds, expected, meta):
    """Write inputs/outputs/meta beside model.onnx; check names against the graph; print the ORT sanity error."""
    import onnx
    d = Path(out_dir) / name
    model = onnx.load(str(onnx_path))
    assert not any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer), name
    graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    graph_outputs = [o.name for o in model.graph.output]
    assert sorted(graph_inputs) == sorted(feeds), (name, graph_inputs, list(feeds))
    assert sorted(graph_outputs) == sorted(expected), (name, graph_outputs, list(expected))
    d.mkdir(parents=True, exist_ok=True)
    if Path(onnx_path).resolve() != (d / "model.onnx").resolve():
        shutil.copyfile(onnx_path, d / "model.onnx")
    np.savez(d / "inputs.npz", **feeds)
    np.savez(d / "outputs.npz", **expected)
    got = run_ort(d / "model.onnx", feeds)
    err = {k: float(np.max(np.abs(got[k].astype(np.float64) - expected[k].astype(np.float64))))
           if got[k].shape == expected[k].shape else f"shape {got[k].shape} != {expected[k].shape}"
           for k in expected}
    meta = dict(meta)
    meta.setdefault("reference", "pytorch eager (float32, CPU)")
    meta.update({
        "case": name,
        "opset": {o.domain or "ai.onnx": o.version for o in model.opset_import},
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "inputs": {i.name: _dims(i) for i in model.graph.input if i.name in feeds},
        "outputs": {o.name: _dims(o) for o in model.graph.output},
        "fed_shapes": {k: list(v.shape) for k, v in feeds.items()},
        "resampling_nodes": _resampling_nodes(model),
        "onnxruntime_vs_reference_max_abs_err": err,
        "exported_with": versions(),
        "size_bytes": os.path.getsize(d / "model.onnx"),
    })
    (d / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"  {name}: {meta['size_bytes']} B, {len(meta['resampling_nodes'])} resampling node(s), "
          f"ORT vs reference {err}")


def to_np(t):
    return t.detach().cpu().numpy().copy()


def export_torch(name, out_dir, module, inputs, *, opset, dynamo, exercises, dynamic=None, output_names=None,
                 trace_inputs=None, custom_translation_table=None, optimize=True, export_defect=None,
                 reference=None):
    """torch.onnx.export one module. ``inputs``: {name: tensor} fed at test time (and traced with unless
    ``trace_inputs`` is given, e.g. another batch size for a dynamic case). ``dynamic``: {input or output name:
    {axis: dim name}} (dynamic_axes for TorchScript; turned into dynamic_shapes for dynamo). ``reference``: what
    computed the saved outputs, where not PyTorch eager in float32."""
    import torch
    module = module.eval()
    trace = trace_inputs or inputs
    args = tuple(trace.values())
    with torch.no_grad():
        ref = module(*inputs.values())
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    output_names = output_names or [f"out{i}" for i in range(len(ref))]
    kwargs = dict(input_names=list(inputs), output_names=output_names, opset_version=opset, dynamo=dynamo)
    if dynamo:
        kwargs.update(external_data=False, report=False, verbose=False, optimize=optimize)
        if custom_translation_table:
            kwargs["custom_translation_table"] = custom_translation_table
        if dynamic:
            dims = {}
            kwargs["dynamic_shapes"] = tuple(
                {a: dims.setdefault(n, torch.export.Dim(n, min=1, max=4096)) for a, n in dynamic[k].items()}
                if dynamic.get(k) else None for k in inputs)
    else:
        if dynamic:
            kwargs["dynamic_axes"] = dynamic
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        torch.onnx.export(module, args, str(path), **kwargs)
        feeds = {k: to_np(v) for k, v in inputs.items()}
        expected = {n: to_np(r) for n, r in zip(output_names, ref)}
        meta = {"exporter": "torch.onnx.export" + ("" if optimize else "(optimize=False)"), "dynamo": dynamo,
                "requested_opset": opset, "exercises": exercises, "dynamic_axes": dynamic or {}}
        if export_defect:
            meta["export_defect"] = export_defect
        if reference:
            meta["reference"] = reference
        finish(name, out_dir, path, feeds, expected, meta)


def fn_module(fn):
    """A module whose forward is ``fn`` (no parameters; one or two tensor arguments)."""
    import inspect

    import torch

    class M1(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    class M2(torch.nn.Module):
        def forward(self, x, y):
            return fn(x, y)
    return (M1 if len(inspect.signature(fn).parameters) == 1 else M2)()
