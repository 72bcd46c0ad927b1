"""Export the corpus of real exported models in tests/models/<case>/ (issue 9, item 6).

Each case directory holds
  model.onnx   the model as the exporter wrote it (no simplification, no post-processing);
  inputs.npz   graph input name -> array fed to every runtime;
  outputs.npz  graph output name -> the SOURCE framework's output on those inputs (PyTorch eager, float32), or,
               for a model shipped as ONNX only, onnxruntime's output (meta.json "reference" says which);
  meta.json    exporter, dynamo, opset, what the case exercises, dynamic axes, the resampling nodes, pins.

Not part of the project's dependencies and not run by CI: CI only reads the files this writes
(tests/test_real_models.py). Run it from a separate virtual environment OUTSIDE the repository:

    python3 -m venv /work/exportenv
    /work/exportenv/bin/pip install torch==2.14.1 torchvision==0.29.1
    /work/exportenv/bin/pip install onnx==1.23.2 onnxscript==0.7.2 onnxruntime==1.32.0 ultralytics==8.4.190 \\
        torch==2.14.1 torchvision==0.29.1
    YOLO_OFFLINE=1 /work/exportenv/bin/python tools/dev/export_models.py [--only CASE ...] [--out tests/models]

Pins (the versions the committed corpus was exported with; the script records the versions it ran with in
each meta.json and warns when they differ):
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
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

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "models"
RESAMPLING_OPS = {"Resize", "Upsample", "GridSample", "DeformConv"}

CASES: dict[str, callable] = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# --------------------------------------------------------------------------------------------------- helpers


def _versions():
    import importlib.metadata as md
    out = {}
    for name in PINS:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def _gen(seed):
    import torch
    return torch.Generator().manual_seed(seed)


def _randn(seed, *shape):
    import torch
    return torch.randn(*shape, generator=_gen(seed))


def _ints(seed, *shape, lo=-4, hi=5):
    """Integer-valued float tensor: ties in the values, exact products."""
    import torch
    return torch.randint(lo, hi, shape, generator=_gen(seed)).float()


def _init(module, seed):
    """Deterministic random weights (default init under a fixed seed), eval mode."""
    import torch
    torch.manual_seed(seed)
    for m in module.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
        if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
            g = _gen(seed + 1)
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


def _ort(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _finish(name, out_dir, onnx_path, feeds, expected, meta):
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
    got = _ort(d / "model.onnx", feeds)
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
        "exported_with": _versions(),
        "size_bytes": os.path.getsize(d / "model.onnx"),
    })
    (d / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"  {name}: {meta['size_bytes']} B, {len(meta['resampling_nodes'])} resampling node(s), "
          f"ORT vs reference {err}")


def _to_np(t):
    return t.detach().cpu().numpy().copy()


def export_torch(name, out_dir, module, inputs, *, opset, dynamo, exercises, dynamic=None, output_names=None,
                 trace_inputs=None, custom_translation_table=None, optimize=True, export_defect=None):
    """torch.onnx.export one module. ``inputs``: {name: tensor} fed at test time (and traced with unless
    ``trace_inputs`` is given, e.g. another batch size for a dynamic case). ``dynamic``: {input or output name:
    {axis: dim name}} (dynamic_axes for TorchScript; turned into dynamic_shapes for dynamo)."""
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
        feeds = {k: _to_np(v) for k, v in inputs.items()}
        expected = {n: _to_np(r) for n, r in zip(output_names, ref)}
        meta = {"exporter": "torch.onnx.export" + ("" if optimize else "(optimize=False)"), "dynamo": dynamo,
                "requested_opset": opset, "exercises": exercises, "dynamic_axes": dynamic or {}}
        if export_defect:
            meta["export_defect"] = export_defect
        _finish(name, out_dir, path, feeds, expected, meta)


def _mod(fn):
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


def _interp(**kw):
    import torch.nn.functional as F
    return _mod(lambda x: F.interpolate(x, **kw))


def _fpn(mode, align_corners=None):
    """FPN-style top-down merge: ``F.interpolate(x, size=y.shape[-2:]) + y``."""
    import torch.nn.functional as F
    kw = {} if align_corners is None else {"align_corners": align_corners}
    return _mod(lambda x, y: F.interpolate(x, size=y.shape[-2:], mode=mode, **kw) + y)


# ------------------------------------------------------------------------------------- F.interpolate cases


@case
def ts11_nearest_size_fpn(out):
    export_torch("ts11_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": _randn(1, 1, 4, 5, 7), "y": _randn(2, 1, 4, 11, 13)}, opset=11, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='nearest') + y (FPN merge); 5x7 -> 11x13, "
                           "non-integer ratio; TorchScript writes Resize-11 with empty roi/scales constants + sizes")


@case
def ts13_bilinear_size_fpn(out):
    export_torch("ts13_bilinear_size_fpn", out, _fpn("bilinear", False),
                 {"x": _randn(3, 1, 4, 6, 5), "y": _randn(4, 1, 4, 9, 12)}, opset=13, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='bilinear', align_corners=False) + y; 6x5 -> "
                           "9x12; Resize-13 with empty roi/scales + sizes")


@case
def ts16_bicubic_size_align_corners(out):
    export_torch("ts16_bicubic_size_align_corners", out, _fpn("bicubic", True),
                 {"x": _randn(5, 1, 3, 5, 6), "y": _randn(6, 1, 3, 8, 13)}, opset=16, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='bicubic', align_corners=True) + y; "
                           "cubic_coeff_a=-0.75, align_corners")


@case
def ts11_bilinear_scale_1_5(out):
    export_torch("ts11_bilinear_scale_1_5", out, _interp(scale_factor=1.5, mode="bilinear", align_corners=False),
                 {"x": _randn(7, 1, 3, 6, 7)}, opset=11, dynamo=False,
                 exercises="F.interpolate(scale_factor=1.5, bilinear): non-integer scale; 7*1.5=10.5 -> 10, "
                           "PyTorch keeps 1/1.5 in the coordinate map (scales constant)")


@case
def ts13_nearest_scale_2_3(out):
    export_torch("ts13_nearest_scale_2_3", out, _interp(scale_factor=2.3, mode="nearest"),
                 {"x": _ints(8, 1, 2, 5, 4)}, opset=13, dynamo=False,
                 exercises="F.interpolate(scale_factor=2.3, nearest): non-integer scale, 5 -> 11, 4 -> 9; "
                           "integer-valued input")


@case
def ts11_bicubic_scale_0_75(out):
    export_torch("ts11_bicubic_scale_0_75", out, _interp(scale_factor=0.75, mode="bicubic", align_corners=False),
                 {"x": _randn(9, 1, 2, 8, 10)}, opset=11, dynamo=False,
                 exercises="F.interpolate(scale_factor=0.75, bicubic) downscale without antialias: 8 -> 6, "
                           "10 -> 7 (7.5 floored)")


@case
def ts13_bilinear_recompute_0_75(out):
    export_torch("ts13_bilinear_recompute_0_75", out,
                 _interp(scale_factor=0.75, mode="bilinear", align_corners=False, recompute_scale_factor=True),
                 {"x": _randn(10, 1, 3, 10, 9)}, opset=13, dynamo=False,
                 exercises="F.interpolate(scale_factor=0.75, recompute_scale_factor=True, bilinear): the output "
                           "size floor(L*0.75) is computed in the graph (Shape/Mul/Floor) and the coordinate map "
                           "uses in/out, not 1/0.75")


@case
def dy18_nearest_recompute_1_7(out):
    export_torch("dy18_nearest_recompute_1_7", out,
                 _interp(scale_factor=1.7, mode="nearest", recompute_scale_factor=True),
                 {"x": _ints(11, 1, 3, 7, 5)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=1.7, recompute_scale_factor=True, nearest), dynamo: "
                           "7 -> 11, 5 -> 8, the map uses in/out")


@case
def ts13_bilinear_align_corners_x2(out):
    export_torch("ts13_bilinear_align_corners_x2", out,
                 _interp(scale_factor=2.0, mode="bilinear", align_corners=True),
                 {"x": _randn(12, 1, 3, 5, 6)}, opset=13, dynamo=False,
                 exercises="nn.Upsample-style bilinear x2, align_corners=True (classic UNet)")


# Not exportable with torch 2.14.1, so not in the corpus: antialias=True with the TorchScript exporter
# ("aten::_upsample_bilinear2d_aa ... not supported", any opset); mode='nearest-exact' with the TorchScript exporter
# ("aten::_upsample_nearest_exact2d ... not supported"). The dynamo exporter writes no Resize for 'nearest-exact'
# nor for 1-D linear with align_corners=True: it decomposes them into GatherND/arithmetic (nothing to convert).


@case
def dy18_bilinear_antialias_down(out):
    export_torch("dy18_bilinear_antialias_down", out,
                 _interp(scale_factor=0.5, mode="bilinear", align_corners=False, antialias=True),
                 {"x": _randn(14, 1, 3, 16, 12)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=0.5, antialias=True, bilinear) downscale 16x12 -> 8x6, "
                           "dynamo (Resize-18 antialias=1, exclude_outside=1)")


@case
def dy18_bilinear_antialias_scale_0_4(out):
    export_torch("dy18_bilinear_antialias_scale_0_4", out,
                 _interp(scale_factor=0.4, mode="bilinear", align_corners=False, antialias=True),
                 {"x": _randn(140, 1, 3, 15, 12)}, opset=18, dynamo=True,
                 export_defect="the dynamo exporter writes sizes=[6,4] and drops scale_factor=0.4: PyTorch maps "
                               "W with 1/0.4=2.5, ONNX with 12/4=3 (onnxruntime differs from PyTorch by ~0.6)",
                 exercises="F.interpolate(scale_factor=0.4, antialias=True, bilinear) 15x12 -> 6x4 "
                           "(12*0.4=4.8): the export is not faithful to PyTorch")


@case
def dy18_bilinear_scale_2_3(out):
    export_torch("dy18_bilinear_scale_2_3", out, _interp(scale_factor=2.3, mode="bilinear", align_corners=False),
                 {"x": _randn(141, 1, 2, 5, 4)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=2.3, bilinear) 5x4 -> 11x9, dynamo exporter")


@case
def dy18_bicubic_antialias_down(out):
    export_torch("dy18_bicubic_antialias_down", out,
                 _interp(size=(6, 5), mode="bicubic", align_corners=False, antialias=True),
                 {"x": _randn(15, 1, 2, 14, 17)}, opset=18, dynamo=True,
                 exercises="F.interpolate(antialias=True, bicubic) downscale 14x17 -> 6x5, dynamo (PyTorch's aa "
                           "bicubic uses a=-0.5)")


@case
def ts13_trilinear_3d(out):
    export_torch("ts13_trilinear_3d", out, _interp(scale_factor=(1.5, 2.0, 1.25), mode="trilinear",
                                                   align_corners=False),
                 {"x": _randn(16, 1, 2, 4, 3, 4)}, opset=13, dynamo=False,
                 exercises="F.interpolate 5-D trilinear, per-axis scales (1.5, 2, 1.25)")


@case
def dy20_trilinear_size_3d(out):
    import torch.nn.functional as F
    export_torch("dy20_trilinear_size_3d", out,
                 _mod(lambda x, y: F.interpolate(x, size=y.shape[-3:], mode="trilinear", align_corners=True) + y),
                 {"x": _randn(17, 1, 2, 3, 4, 3), "y": _randn(18, 1, 2, 5, 6, 7)}, opset=20, dynamo=True,
                 exercises="F.interpolate 5-D trilinear size=y.shape[-3:], align_corners=True, dynamo opset 20")


@case
def ts11_linear_1d(out):
    export_torch("ts11_linear_1d", out, _interp(scale_factor=2.5, mode="linear", align_corners=False),
                 {"x": _randn(19, 2, 3, 7)}, opset=11, dynamo=False,
                 exercises="F.interpolate 3-D linear (1-D signal), scale 2.5")


@case
def dy16_bilinear_size_fpn(out):
    export_torch("dy16_bilinear_size_fpn", out, _fpn("bilinear", False),
                 {"x": _randn(23, 1, 4, 5, 5), "y": _randn(24, 1, 4, 10, 10)}, opset=16, dynamo=True,
                 exercises="FPN merge bilinear size=y.shape[-2:], dynamo exporter asked for opset 16 "
                           "(onnxscript version-converts down from 18)")


@case
def dy18_nearest_size_fpn(out):
    export_torch("dy18_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": _randn(25, 1, 4, 4, 6), "y": _randn(26, 1, 4, 8, 12)}, opset=18, dynamo=True,
                 exercises="FPN merge nearest size=y.shape[-2:] (x2), dynamo opset 18")


# ------------------------------------------------------------------------------------------ dynamic shapes


@case
def ts18_nearest_size_dynhw(out):
    export_torch("ts18_nearest_size_dynhw", out, _fpn("nearest"),
                 {"x": _randn(37, 1, 3, 3, 4), "y": _randn(38, 1, 3, 7, 9)},
                 trace_inputs={"x": _randn(39, 1, 3, 4, 4), "y": _randn(139, 1, 3, 8, 8)}, opset=18, dynamo=False,
                 dynamic={"x": {2: "h", 3: "w"}, "y": {2: "h2", 3: "w2"}, "out0": {2: "h2", 3: "w2"}},
                 exercises="FPN merge nearest size=y.shape[-2:] with dynamic H/W, TorchScript opset 18 (Resize-18, "
                           "sizes from Shape/Slice/Concat at run time; traced x2, fed 3x4 -> 7x9)")


@case
def ts11_dynbatch_nearest_x2(out):
    from torch import nn
    export_torch("ts11_dynbatch_nearest_x2", out, nn.Upsample(scale_factor=2, mode="nearest"),
                 {"x": _randn(27, 3, 3, 5, 6)}, trace_inputs={"x": _randn(28, 2, 3, 5, 6)}, opset=11, dynamo=False,
                 dynamic={"x": {0: "batch"}, "out0": {0: "batch"}},
                 exercises="nn.Upsample(scale_factor=2, nearest) with a dynamic batch, static H/W (traced at batch 2, "
                           "fed batch 3): built-in Interpolate is exact for every batch")


@case
def dy18_dynbatch_bilinear_x2(out):
    import torch.nn.functional as F
    export_torch("dy18_dynbatch_bilinear_x2", out,
                 _mod(lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)),
                 {"x": _randn(29, 3, 2, 4, 5)}, trace_inputs={"x": _randn(30, 2, 2, 4, 5)}, opset=18, dynamo=True,
                 dynamic={"x": {0: "batch"}},
                 exercises="bilinear x2 with a dynamic batch (dynamo dynamic_shapes), static H/W")


@case
def ts11_dynhw_bilinear_x2(out):
    export_torch("ts11_dynhw_bilinear_x2", out, _interp(scale_factor=2.0, mode="bilinear", align_corners=False),
                 {"x": _randn(31, 1, 2, 7, 5)}, trace_inputs={"x": _randn(32, 1, 2, 4, 4)}, opset=11, dynamo=False,
                 dynamic={"x": {0: "batch", 2: "h", 3: "w"}, "out0": {0: "batch", 2: "h2", 3: "w2"}},
                 exercises="bilinear x2 with dynamic N/H/W (traced at 4x4, fed 7x5): integer scale, exact for "
                           "every length")


@case
def dy18_dynhw_nearest_size_fpn(out):
    export_torch("dy18_dynhw_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": _randn(33, 1, 4, 3, 5), "y": _randn(34, 1, 4, 6, 10)},
                 trace_inputs={"x": _randn(35, 1, 4, 4, 4), "y": _randn(36, 1, 4, 8, 8)}, opset=18, dynamo=True,
                 dynamic={"x": {2: "h", 3: "w"}, "y": {2: "h2", 3: "w2"}},
                 exercises="FPN merge nearest size=y.shape[-2:] with dynamic H/W (dynamo): sizes from "
                           "Shape/Slice/Concat at run time")


# ----------------------------------------------------------------------------------------------- grid_sample


def _grid(seed, n, *out_shape, spread=1.2):
    """A random grid in [-spread, spread] (some samples outside, for the padding modes)."""
    import torch
    g = torch.rand(n, *out_shape, len(out_shape), generator=_gen(seed)) * 2 * spread - spread
    return g


def _tie_grid(n, h_in, w_in, h_out, w_out, align_corners):
    """Grid points exactly on pixel centres and exactly half-way between them (nearest ties), plus the
    borders and beyond (padding), in normalised coordinates."""
    import torch
    def norm(p, size):  # pixel coordinate -> normalised
        return (2 * p / (size - 1) - 1) if align_corners else ((2 * p + 1) / size - 1)
    ys = torch.arange(h_out, dtype=torch.float64) * 0.5 - 1.0
    xs = torch.arange(w_out, dtype=torch.float64) * 0.5 - 0.5
    gy, gx = torch.meshgrid(norm(ys, h_in), norm(xs, w_in), indexing="ij")
    g = torch.stack([gx, gy], -1).float()
    return g.unsqueeze(0).repeat(n, 1, 1, 1)


def _gs(**kw):
    import torch.nn.functional as F
    return _mod(lambda x, grid: F.grid_sample(x, grid, **kw))


@case
def ts16_gridsample_bilinear_zeros(out):
    export_torch("ts16_gridsample_bilinear_zeros", out,
                 _gs(mode="bilinear", padding_mode="zeros", align_corners=False),
                 {"x": _randn(40, 2, 3, 6, 7), "grid": _grid(41, 2, 5, 4)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D bilinear/zeros/align_corners=False, GridSample-16, grid partly "
                           "outside")


@case
def ts16_gridsample_nearest_border_ties(out):
    export_torch("ts16_gridsample_nearest_border_ties", out,
                 _gs(mode="nearest", padding_mode="border", align_corners=True),
                 {"x": _ints(42, 1, 2, 5, 6), "grid": _tie_grid(1, 5, 6, 8, 11, True)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D nearest/border/align_corners=True; grid exactly on pixel centres and "
                           "half-way between them (round-half-even ties) and beyond the border")


@case
def ts16_gridsample_bicubic_reflection(out):
    export_torch("ts16_gridsample_bicubic_reflection", out,
                 _gs(mode="bicubic", padding_mode="reflection", align_corners=False),
                 {"x": _randn(43, 1, 2, 6, 5), "grid": _grid(44, 1, 4, 6, spread=1.6)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D bicubic/reflection/align_corners=False (coordinate reflected before "
                           "the taps)")


@case
def dy20_gridsample_nearest_zeros_ties(out):
    export_torch("dy20_gridsample_nearest_zeros_ties", out,
                 _gs(mode="nearest", padding_mode="zeros", align_corners=False),
                 {"x": _ints(45, 1, 2, 4, 6), "grid": _tie_grid(1, 4, 6, 7, 12, False)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D nearest/zeros/align_corners=False with tie coordinates, dynamo "
                           "GridSample-20 (mode='nearest')")


@case
def dy20_gridsample_bicubic_border(out):
    export_torch("dy20_gridsample_bicubic_border", out,
                 _gs(mode="bicubic", padding_mode="border", align_corners=True),
                 {"x": _randn(46, 2, 2, 5, 5), "grid": _grid(47, 2, 3, 4, spread=1.4)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D bicubic/border/align_corners=True, dynamo GridSample-20 "
                           "(mode='cubic')")


@case
def dy20_gridsample_bilinear_reflection_align(out):
    export_torch("dy20_gridsample_bilinear_reflection_align", out,
                 _gs(mode="bilinear", padding_mode="reflection", align_corners=True),
                 {"x": _randn(48, 1, 3, 4, 7), "grid": _grid(49, 1, 6, 5, spread=2.5)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D bilinear/reflection/align_corners=True, grid far outside "
                           "(multiple reflections)")


@case
def dy20_gridsample_5d_bilinear_zeros(out):
    export_torch("dy20_gridsample_5d_bilinear_zeros", out,
                 _gs(mode="bilinear", padding_mode="zeros", align_corners=False),
                 {"x": _randn(50, 1, 2, 3, 4, 5), "grid": _grid(51, 1, 2, 3, 4)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 5-D (volumetric) trilinear/zeros/align_corners=False, dynamo "
                           "GridSample-20")


@case
def ts20_gridsample_5d_nearest_border(out):
    export_torch("ts20_gridsample_5d_nearest_border", out,
                 _gs(mode="nearest", padding_mode="border", align_corners=True),
                 {"x": _ints(52, 1, 2, 4, 3, 5), "grid": _grid(53, 1, 3, 2, 4, spread=1.3)}, opset=20,
                 dynamo=False,
                 exercises="F.grid_sample 5-D nearest/border/align_corners=True, TorchScript exporter opset 20")


# ------------------------------------------------------------------------------------------- DeformConv2d


def _deform_symbolic(g, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                     n_weight_grps, n_offset_grps, use_mask):
    """torchvision::deform_conv2d -> ONNX DeformConv-19 for the TorchScript exporter (torchvision registers
    none; this is what a user writes)."""
    from torch.onnx import symbolic_helper as sh
    ints = [sh._get_const(v, "i", n) for v, n in ((stride_h, "stride_h"), (stride_w, "stride_w"),
                                                  (pad_h, "pad_h"), (pad_w, "pad_w"), (dil_h, "dil_h"),
                                                  (dil_w, "dil_w"), (n_weight_grps, "g"), (n_offset_grps, "og"))]
    sh_, sw, ph, pw, dh, dw, ng, nog = ints
    use = sh._get_const(use_mask, "b", "use_mask")
    args = [input, weight, offset, bias] + ([mask] if use else [])
    return g.op("DeformConv", *args, strides_i=[sh_, sw], pads_i=[ph, pw, ph, pw], dilations_i=[dh, dw],
                group_i=ng, offset_group_i=nog)


def _register_deform_symbolic():
    import torch
    torch.onnx.register_custom_op_symbolic("torchvision::deform_conv2d", _deform_symbolic, 19)


def _deform_translation():
    """torchvision::deform_conv2d -> ONNX DeformConv-19 for the dynamo exporter (custom_translation_table)."""
    import torch
    import torchvision  # noqa: F401  (registers the op)
    from onnxscript import opset19 as op

    def deform_conv2d(input, weight, offset, mask, bias, stride_h: int, stride_w: int, pad_h: int, pad_w: int,
                      dil_h: int, dil_w: int, n_weight_grps: int, n_offset_grps: int, use_mask: bool):
        kw = dict(strides=[stride_h, stride_w], pads=[pad_h, pad_w, pad_h, pad_w], dilations=[dil_h, dil_w],
                  group=n_weight_grps, offset_group=n_offset_grps)
        if use_mask:
            return op.DeformConv(input, weight, offset, bias, mask, **kw)
        return op.DeformConv(input, weight, offset, bias, **kw)
    return {torch.ops.torchvision.deform_conv2d.default: deform_conv2d}


class _DeformBlock:
    """Offsets (and mask) predicted by a conv from the input, as in DCNv2 blocks (mmdet/detectron2 style)."""

    @staticmethod
    def build(cin, cout, k, stride, pad, dil, groups, offset_groups, with_mask, seed):
        import torch
        import torchvision

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                n = offset_groups * k * k
                self.offset = torch.nn.Conv2d(cin, 2 * n, 3, stride=stride, padding=1)
                self.mask = torch.nn.Conv2d(cin, n, 3, stride=stride, padding=1) if with_mask else None
                self.dcn = torchvision.ops.DeformConv2d(cin, cout, k, stride=stride, padding=pad, dilation=dil,
                                                        groups=groups, bias=True)

            def forward(self, x):
                off = self.offset(x) * 2.0  # a few pixels: some samples land outside
                m = torch.sigmoid(self.mask(x)) if self.mask is not None else None
                return self.dcn(x, off, m)
        b = Block()
        _init(b, seed)
        return b


@case
def ts19_deformconv_mask(out):
    _register_deform_symbolic()
    m = _DeformBlock.build(4, 6, 3, 1, 1, 1, 2, 2, True, 60)
    export_torch("ts19_deformconv_mask", out, m, {"x": _randn(61, 1, 4, 7, 6)}, opset=19, dynamo=False,
                 exercises="torchvision.ops.DeformConv2d with mask (DCNv2), groups=2, offset_groups=2, offsets "
                           "from a conv; TorchScript exporter with a user symbolic -> DeformConv-19")


@case
def ts19_deformconv_nomask_stride2(out):
    _register_deform_symbolic()
    m = _DeformBlock.build(3, 4, 3, 2, 2, 2, 1, 1, False, 62)
    export_torch("ts19_deformconv_nomask_stride2", out, m, {"x": _randn(63, 2, 3, 9, 8)}, opset=19,
                 dynamo=False,
                 exercises="torchvision.ops.DeformConv2d without mask (DCNv1), stride 2, pad 2, dilation 2")


@case
def dy19_deformconv_mask(out):
    m = _DeformBlock.build(4, 4, 3, 1, 1, 1, 1, 1, True, 64)
    export_torch("dy19_deformconv_mask", out, m, {"x": _randn(65, 1, 4, 6, 6)}, opset=19, dynamo=True,
                 custom_translation_table=_deform_translation(),
                 exercises="torchvision.ops.DeformConv2d with mask, dynamo exporter with a custom translation "
                           "-> DeformConv-19")


# ---------------------------------------------------------------------------------------------- networks


class _ViTEmbedFactory:
    @staticmethod
    def build():
        """ViT / DINO position-embedding interpolation: a constant parameter (trained on a 4x4 patch grid) resized
        bicubically to the patch grid of the input, concatenated with the cls token's."""
        import torch
        import torch.nn.functional as F

        class ViTEmbed(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.patch = torch.nn.Conv2d(3, 8, 4, stride=4)
                self.cls = torch.nn.Parameter(torch.randn(1, 1, 8, generator=_gen(70)))
                self.pos = torch.nn.Parameter(torch.randn(1, 1 + 16, 8, generator=_gen(71)))

            def forward(self, img):
                x = self.patch(img)
                h, w = x.shape[-2:]
                x = x.flatten(2).transpose(1, 2)
                pos_cls, pos = self.pos[:, :1], self.pos[:, 1:]
                pos = pos.reshape(1, 4, 4, 8).permute(0, 3, 1, 2)
                pos = F.interpolate(pos, size=(h, w), mode="bicubic", align_corners=False)
                pos = pos.permute(0, 2, 3, 1).reshape(1, h * w, 8)
                tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1)
                return tokens + torch.cat([pos_cls, pos], 1)

        m = ViTEmbed()
        torch.manual_seed(72)
        m.patch.reset_parameters()
        return m.eval()


@case
def dy18_vit_posembed_const(out):
    export_torch("dy18_vit_posembed_const", out, _ViTEmbedFactory.build(), {"img": _randn(73, 1, 3, 24, 28)},
                 opset=18, dynamo=True, optimize=False,
                 exercises="ViT position-embedding interpolation, static shapes, dynamo with optimize=False (the "
                           "default before torch 2.7): Resize(bicubic) of a constant 4x4 grid to constant sizes "
                           "6x7, a node an importer folds into a Constant (with optimize=True the exporter itself "
                           "folds it and no Resize is left)")


@case
def dy18_vit_posembed_dynhw(out):
    export_torch("dy18_vit_posembed_dynhw", out, _ViTEmbedFactory.build(), {"img": _randn(74, 2, 3, 20, 32)},
                 trace_inputs={"img": _randn(75, 1, 3, 24, 28)}, opset=18, dynamo=True,
                 dynamic={"img": {0: "batch", 2: "h", 3: "w"}},
                 exercises="ViT position-embedding interpolation with dynamic N/H/W: Resize(bicubic) of a "
                           "constant with sizes computed from the input's shape (traced 24x28, fed 20x32 -> 5x8)")


@case
def dy18_unet_bilinear(out):
    """A small UNet: decoder upsamples with F.interpolate(bilinear, size=skip.shape[-2:]) and the head x4."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    def cbr(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = cbr(3, 4), cbr(4, 8), cbr(8, 8)
            self.d2, self.d1 = cbr(16, 4), cbr(8, 4)
            self.head = nn.Conv2d(4, 3, 1)

        def forward(self, x):
            s1 = self.e1(x)
            s2 = self.e2(F.max_pool2d(s1, 2))
            b = self.e3(F.max_pool2d(s2, 2))
            u2 = F.interpolate(b, size=s2.shape[-2:], mode="bilinear", align_corners=False)
            d2 = self.d2(torch.cat([u2, s2], 1))
            u1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False)
            d1 = self.d1(torch.cat([u1, s1], 1))
            logits = self.head(F.avg_pool2d(d1, 2))
            return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)

    m = _init(UNet(), 80)
    export_torch("dy18_unet_bilinear", out, m, {"x": _randn(81, 1, 3, 20, 28)}, opset=18, dynamo=True,
                 exercises="small UNet + segmentation head: bilinear to skip size, x2 and back to the input size "
                           "(dynamo)")


@case
def ts13_unet_align_corners_dynbatch(out):
    """The same kind of decoder as exported by segmentation_models-style code: nn.Upsample(bilinear,
    align_corners=True) with a dynamic batch."""
    from torch import nn

    class Seg(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Conv2d(3, 6, 3, stride=2, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                                     nn.Conv2d(6, 6, 3, stride=2, padding=1), nn.ReLU())
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.dec = nn.Conv2d(6, 2, 3, padding=1)

        def forward(self, x):
            return self.up(self.dec(self.up(self.enc(x))))

    m = _init(Seg(), 82)
    export_torch("ts13_unet_align_corners_dynbatch", out, m, {"x": _randn(83, 2, 3, 16, 12)},
                 trace_inputs={"x": _randn(84, 1, 3, 16, 12)}, opset=13, dynamo=False,
                 dynamic={"x": {0: "batch"}, "out0": {0: "batch"}},
                 exercises="segmentation decoder nn.Upsample(bilinear x2, align_corners=True) twice, dynamic batch")


@case
def ts11_dbnet_head(out):
    """DBNet-style OCR text detector: FPN top-down with nearest x2 upsampling, each level upsampled to 1/4 and
    concatenated, then the probability head (ConvTranspose x2 + sigmoid); dynamic N/H/W like real DBNet
    exports."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class DB(nn.Module):
        def __init__(self):
            super().__init__()
            ch = [4, 6, 8, 8]
            layers, cin = [], 3
            for i, c in enumerate(ch):
                layers.append(nn.Sequential(nn.Conv2d(cin, c, 3, stride=4 if i == 0 else 2, padding=1),
                                            nn.BatchNorm2d(c), nn.ReLU()))
                cin = c
            self.body = nn.ModuleList(layers)
            self.lat = nn.ModuleList([nn.Conv2d(c, 8, 1, bias=False) for c in ch])
            self.smooth = nn.ModuleList([nn.Conv2d(8, 2, 3, padding=1, bias=False) for _ in ch])
            self.head = nn.Sequential(nn.Conv2d(8, 2, 3, padding=1, bias=False), nn.BatchNorm2d(2), nn.ReLU(),
                                      nn.ConvTranspose2d(2, 2, 2, 2), nn.BatchNorm2d(2), nn.ReLU(),
                                      nn.ConvTranspose2d(2, 1, 2, 2), nn.Sigmoid())

        def forward(self, x):
            feats = []
            for b in self.body:
                x = b(x)
                feats.append(x)
            c2, c3, c4, c5 = [lat(f) for lat, f in zip(self.lat, feats)]
            p4 = c4 + F.interpolate(c5, scale_factor=2, mode="nearest")
            p3 = c3 + F.interpolate(p4, scale_factor=2, mode="nearest")
            p2 = c2 + F.interpolate(p3, scale_factor=2, mode="nearest")
            p5, p4, p3, p2 = [s(p) for s, p in zip(self.smooth[::-1], (c5, p4, p3, p2))]
            p5 = F.interpolate(p5, scale_factor=8, mode="nearest")
            p4 = F.interpolate(p4, scale_factor=4, mode="nearest")
            p3 = F.interpolate(p3, scale_factor=2, mode="nearest")
            return self.head(torch.cat([p5, p4, p3, p2], 1))

    m = _init(DB(), 90)
    export_torch("ts11_dbnet_head", out, m, {"x": _randn(91, 1, 3, 64, 96)},
                 trace_inputs={"x": _randn(92, 1, 3, 64, 64)}, opset=11, dynamo=False,
                 dynamic={"x": {0: "batch", 2: "h", 3: "w"}, "out0": {0: "batch", 2: "h", 3: "w"}},
                 exercises="DBNet-style text detector: FPN nearest x2 top-down, x8/x4/x2 nearest to 1/4 + concat, "
                           "ConvTranspose head; dynamic N/H/W (traced 64x64, fed 64x96)")


# -------------------------------------------------------------------------------------------- ultralytics


_YOLO_YAML_SCALE = "[0.33, 0.0625, 64]"  # depth, width, max_channels: yolov8n's layout at 1/4 of its width


def _yolo(name, out, *, imgsz, dynamic, seed, fed_shape, opset=None):
    """ultralytics YOLOv8 built from its own yolov8.yaml (scale 'n' narrowed so the file stays small), random
    weights, exported by ultralytics' own ``YOLO.export(format='onnx')``; the source outputs are those of the
    very module ultralytics exported (captured from its exporter, fused, export mode), run eagerly."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
    import ultralytics
    from ultralytics import YOLO

    src = Path(ultralytics.__file__).parent / "cfg" / "models" / "v8" / "yolov8.yaml"
    text = src.read_text()
    lines = []
    for line in text.splitlines():
        if line.startswith("nc:"):
            line = "nc: 4 # number of classes (80 in the original)"
        if line.strip().startswith("n: ["):
            line = line[: line.index("n: [")] + f"n: {_YOLO_YAML_SCALE}"
        lines.append(line)
    with tempfile.TemporaryDirectory() as tmp:
        yaml = Path(tmp) / "yolov8n.yaml"
        yaml.write_text("\n".join(lines) + "\n")
        torch.manual_seed(seed)
        model = YOLO(str(yaml))
        _init(model.model, seed)
        captured = {}
        model.add_callback("on_export_end", lambda exporter: captured.setdefault("exporter", exporter))
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            f = Path(tmp) / model.export(format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=False, device="cpu",
                                         opset=opset)
        finally:
            os.chdir(cwd)
        exp = captured["exporter"]
        img = torch.rand(*fed_shape, generator=_gen(seed + 1))
        with torch.no_grad():
            y = exp.model(img)
        y = y[0] if isinstance(y, (tuple, list)) else y
        meta = {"exporter": f"ultralytics {ultralytics.__version__} YOLO.export(format='onnx', imgsz={imgsz}, "
                            f"dynamic={dynamic}, simplify=False, opset={opset}) -> torch.onnx.export(dynamo=False)",
                "dynamo": False, "requested_opset": opset,
                "exercises": f"YOLOv8 from yolov8.yaml (scale n, width 0.0625, max_channels 64, nc 4), random weights: "
                             f"nn.Upsample(nearest x2) + Concat in the neck, Detect head; imgsz {imgsz}"
                             + (", dynamic N/H/W (fed " + "x".join(map(str, fed_shape[2:])) + ")" if dynamic else ""),
                "dynamic_axes": {"images": {0: "batch", 2: "height", 3: "width"}} if dynamic else {},
                "license_note": "architecture from ultralytics' yolov8.yaml (AGPL-3.0); weights random"}
        _finish(name, out, f, {"images": _to_np(img)}, {"output0": _to_np(y)}, meta)


@case
def yolov8_static_64(out):
    _yolo("yolov8_static_64", out, imgsz=64, dynamic=False, seed=100, fed_shape=(1, 3, 64, 64))


@case
def yolov8_dynamic_96_opset12(out):
    _yolo("yolov8_dynamic_96_opset12", out, imgsz=96, dynamic=True, seed=110, fed_shape=(2, 3, 64, 128), opset=12)


# --------------------------------------------------------------------------------- shipped in a pip package


@case
def ppocrv4_det_rapidocr(out):
    """PaddleOCR's PP-OCRv4 mobile text detector (DBNet), as shipped in rapidocr-onnxruntime 1.4.4's wheel
    (Apache-2.0; exported by Paddle2ONNX, opset 12, dynamic N/H/W). Paddle cannot be installed here, so the
    reference outputs are onnxruntime's (meta says so): this case checks the converter against the runtime the
    model ships for."""
    import onnx
    name = "ppocrv4_det_rapidocr"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp,
                        f"rapidocr-onnxruntime=={PINS['rapidocr-onnxruntime']}"], check=True)
        whl = next(Path(tmp).glob("rapidocr_onnxruntime-*.whl"))
        with zipfile.ZipFile(whl) as z:
            data = z.read("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx")
        path = Path(tmp) / "model.onnx"
        path.write_bytes(data)
        onnx.checker.check_model(str(path))
        g = _gen(120)
        import torch
        # A synthetic "page": light background with dark strokes, normalised as rapidocr does ((x/255-0.5)/0.5).
        page = torch.full((1, 3, 64, 96), 230.0)
        for r in range(3):
            page[:, :, 10 + 18 * r: 16 + 18 * r, 8: 88] = 30.0
        page += torch.randn(page.shape, generator=g) * 8
        feeds = {"x": ((page / 255.0 - 0.5) / 0.5).numpy().astype(np.float32)}
        expected = _ort(path, feeds)
        meta = {"exporter": "Paddle2ONNX (shipped as rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx in "
                            "rapidocr-onnxruntime 1.4.4)", "dynamo": None, "requested_opset": None,
                "reference": "onnxruntime 1.32.0 CPU (PaddlePaddle is not installable here)",
                "exercises": "real Paddle2ONNX DBNet text detector: 6 Resize-11 nearest asymmetric/floor x2..x8 "
                             "with constant roi/scales, dynamic N/H/W (fed 64x96)",
                "dynamic_axes": {"x": {0: "N", 2: "H", 3: "W"}},
                "license": "Apache-2.0 (rapidocr-onnxruntime; model from PaddleOCR, Apache-2.0); see LICENSE"}
        _finish(name, out, path, feeds, expected, meta)
    lic = Path(out) / name / "LICENSE"
    lic.write_text(
        "ch_PP-OCRv4_det_infer.onnx: PaddleOCR PP-OCRv4 mobile text detection model (PaddlePaddle/PaddleOCR,\n"
        "Apache License 2.0), converted to ONNX by RapidAI/RapidOCR and redistributed unmodified from the\n"
        "rapidocr-onnxruntime 1.4.4 wheel on PyPI (License: Apache-2.0).\n\n"
        "Licensed under the Apache License, Version 2.0 (the \"License\"); you may not use this file except in\n"
        "compliance with the License. You may obtain a copy of the License at\n\n"
        "    http://www.apache.org/licenses/LICENSE-2.0\n\n"
        "Unless required by applicable law or agreed to in writing, software distributed under the License is\n"
        "distributed on an \"AS IS\" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or\n"
        "implied. See the License for the specific language governing permissions and limitations under the\n"
        "License.\n")


# ---------------------------------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--keep-going", action="store_true", help="report a failing case and go on")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    have = _versions()
    for k, v in PINS.items():
        if have.get(k) not in (v, None):
            print(f"warning: {k} {have.get(k)} installed, corpus pinned at {v}", file=sys.stderr)
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    names = args.only or list(CASES)
    failed = []
    for n in names:
        print(f"{n}:", flush=True)
        try:
            CASES[n](args.out)
        except Exception as e:
            if not args.keep_going:
                raise
            failed.append(n)
            print(f"  FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
    total = sum(p.stat().st_size for p in Path(args.out).rglob("*") if p.is_file())
    print(f"corpus: {total} bytes in {args.out}" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
