"""Corpus cases: F.interpolate / nn.Upsample, static and dynamic shapes (TorchScript and dynamo exporters)."""

from __future__ import annotations

# A sibling by its plain name: the exporter runs as a file (see export_models.py).
from export_common import case, export_torch, fn_module, init_weights, ints, randn


def _interp(**kw):
    import torch.nn.functional as F
    return fn_module(lambda x: F.interpolate(x, **kw))


def _fpn(mode, align_corners=None):
    """FPN-style top-down merge: ``F.interpolate(x, size=y.shape[-2:]) + y``."""
    import torch.nn.functional as F
    kw = {} if align_corners is None else {"align_corners": align_corners}
    return fn_module(lambda x, y: F.interpolate(x, size=y.shape[-2:], mode=mode, **kw) + y)


# ------------------------------------------------------------------------------------- F.interpolate cases


@case
def ts11_nearest_size_fpn(out):
    export_torch("ts11_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": randn(1, 1, 4, 5, 7), "y": randn(2, 1, 4, 11, 13)}, opset=11, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='nearest') + y (FPN merge); 5x7 -> 11x13, "
                           "non-integer ratio; TorchScript writes Resize-11 with empty roi/scales constants + sizes")


@case
def ts13_bilinear_size_fpn(out):
    export_torch("ts13_bilinear_size_fpn", out, _fpn("bilinear", False),
                 {"x": randn(3, 1, 4, 6, 5), "y": randn(4, 1, 4, 9, 12)}, opset=13, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='bilinear', align_corners=False) + y; 6x5 -> "
                           "9x12; Resize-13 with empty roi/scales + sizes")


@case
def ts16_bicubic_size_align_corners(out):
    export_torch("ts16_bicubic_size_align_corners", out, _fpn("bicubic", True),
                 {"x": randn(5, 1, 3, 5, 6), "y": randn(6, 1, 3, 8, 13)}, opset=16, dynamo=False,
                 exercises="F.interpolate(x, size=y.shape[-2:], mode='bicubic', align_corners=True) + y; "
                           "cubic_coeff_a=-0.75, align_corners")


@case
def ts11_bilinear_scale_1_5(out):
    export_torch("ts11_bilinear_scale_1_5", out, _interp(scale_factor=1.5, mode="bilinear", align_corners=False),
                 {"x": randn(7, 1, 3, 6, 7)}, opset=11, dynamo=False,
                 exercises="F.interpolate(scale_factor=1.5, bilinear): non-integer scale; 7*1.5=10.5 -> 10, "
                           "PyTorch keeps 1/1.5 in the coordinate map (scales constant)")


@case
def ts13_nearest_scale_2_3(out):
    export_torch("ts13_nearest_scale_2_3", out, _interp(scale_factor=2.3, mode="nearest"),
                 {"x": ints(8, 1, 2, 5, 4)}, opset=13, dynamo=False,
                 exercises="F.interpolate(scale_factor=2.3, nearest): non-integer scale, 5 -> 11, 4 -> 9; "
                           "integer-valued input")


@case
def ts11_bicubic_scale_0_75(out):
    export_torch("ts11_bicubic_scale_0_75", out, _interp(scale_factor=0.75, mode="bicubic", align_corners=False),
                 {"x": randn(9, 1, 2, 8, 10)}, opset=11, dynamo=False,
                 exercises="F.interpolate(scale_factor=0.75, bicubic) downscale without antialias: 8 -> 6, "
                           "10 -> 7 (7.5 floored)")


@case
def ts13_bilinear_recompute_0_75(out):
    export_torch("ts13_bilinear_recompute_0_75", out,
                 _interp(scale_factor=0.75, mode="bilinear", align_corners=False, recompute_scale_factor=True),
                 {"x": randn(10, 1, 3, 10, 9)}, opset=13, dynamo=False,
                 exercises="F.interpolate(scale_factor=0.75, recompute_scale_factor=True, bilinear): the output "
                           "size floor(L*0.75) is computed in the graph (Shape/Mul/Floor) and the coordinate map "
                           "uses in/out, not 1/0.75")


@case
def dy18_nearest_recompute_1_7(out):
    export_torch("dy18_nearest_recompute_1_7", out,
                 _interp(scale_factor=1.7, mode="nearest", recompute_scale_factor=True),
                 {"x": ints(11, 1, 3, 7, 5)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=1.7, recompute_scale_factor=True, nearest), dynamo: "
                           "7 -> 11, 5 -> 8, the map uses in/out")


@case
def ts13_bilinear_align_corners_x2(out):
    export_torch("ts13_bilinear_align_corners_x2", out,
                 _interp(scale_factor=2.0, mode="bilinear", align_corners=True),
                 {"x": randn(12, 1, 3, 5, 6)}, opset=13, dynamo=False,
                 exercises="nn.Upsample-style bilinear x2, align_corners=True (classic UNet)")


# Not exportable with torch 2.14.1, so not in the corpus: antialias=True with the TorchScript exporter
# ("aten::_upsample_bilinear2d_aa ... not supported", any opset); mode='nearest-exact' with the TorchScript exporter
# ("aten::_upsample_nearest_exact2d ... not supported"). The dynamo exporter writes no Resize for 'nearest-exact'
# nor for 1-D linear with align_corners=True: it decomposes them into GatherND/arithmetic (nothing to convert).


@case
def dy18_bilinear_antialias_down(out):
    export_torch("dy18_bilinear_antialias_down", out,
                 _interp(scale_factor=0.5, mode="bilinear", align_corners=False, antialias=True),
                 {"x": randn(14, 1, 3, 16, 12)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=0.5, antialias=True, bilinear) downscale 16x12 -> 8x6, "
                           "dynamo (Resize-18 antialias=1, exclude_outside=1)")


@case
def dy18_bilinear_antialias_scale_0_4(out):
    export_torch("dy18_bilinear_antialias_scale_0_4", out,
                 _interp(scale_factor=0.4, mode="bilinear", align_corners=False, antialias=True),
                 {"x": randn(140, 1, 3, 15, 12)}, opset=18, dynamo=True,
                 export_defect="the dynamo exporter writes sizes=[6,4] and drops scale_factor=0.4: PyTorch maps "
                               "W with 1/0.4=2.5, ONNX with 12/4=3 (onnxruntime differs from PyTorch by ~0.6)",
                 exercises="F.interpolate(scale_factor=0.4, antialias=True, bilinear) 15x12 -> 6x4 "
                           "(12*0.4=4.8): the export is not faithful to PyTorch")


@case
def dy18_bilinear_scale_2_3(out):
    export_torch("dy18_bilinear_scale_2_3", out, _interp(scale_factor=2.3, mode="bilinear", align_corners=False),
                 {"x": randn(141, 1, 2, 5, 4)}, opset=18, dynamo=True,
                 exercises="F.interpolate(scale_factor=2.3, bilinear) 5x4 -> 11x9, dynamo exporter")


@case
def dy18_bicubic_antialias_down(out):
    export_torch("dy18_bicubic_antialias_down", out,
                 _interp(size=(6, 5), mode="bicubic", align_corners=False, antialias=True),
                 {"x": randn(15, 1, 2, 14, 17)}, opset=18, dynamo=True,
                 exercises="F.interpolate(antialias=True, bicubic) downscale 14x17 -> 6x5, dynamo (PyTorch's aa "
                           "bicubic uses a=-0.5)")


@case
def ts13_trilinear_3d(out):
    export_torch("ts13_trilinear_3d", out, _interp(scale_factor=(1.5, 2.0, 1.25), mode="trilinear",
                                                   align_corners=False),
                 {"x": randn(16, 1, 2, 4, 3, 4)}, opset=13, dynamo=False,
                 exercises="F.interpolate 5-D trilinear, per-axis scales (1.5, 2, 1.25)")


@case
def dy20_trilinear_size_3d(out):
    import torch.nn.functional as F
    export_torch("dy20_trilinear_size_3d", out,
                 fn_module(lambda x, y: F.interpolate(x, size=y.shape[-3:], mode="trilinear", align_corners=True) + y),
                 {"x": randn(17, 1, 2, 3, 4, 3), "y": randn(18, 1, 2, 5, 6, 7)}, opset=20, dynamo=True,
                 exercises="F.interpolate 5-D trilinear size=y.shape[-3:], align_corners=True, dynamo opset 20")


@case
def ts11_linear_1d(out):
    export_torch("ts11_linear_1d", out, _interp(scale_factor=2.5, mode="linear", align_corners=False),
                 {"x": randn(19, 2, 3, 7)}, opset=11, dynamo=False,
                 exercises="F.interpolate 3-D linear (1-D signal), scale 2.5")


@case
def dy16_bilinear_size_fpn(out):
    export_torch("dy16_bilinear_size_fpn", out, _fpn("bilinear", False),
                 {"x": randn(23, 1, 4, 5, 5), "y": randn(24, 1, 4, 10, 10)}, opset=16, dynamo=True,
                 exercises="FPN merge bilinear size=y.shape[-2:], dynamo exporter asked for opset 16 "
                           "(onnxscript version-converts down from 18)")


@case
def dy18_nearest_size_fpn(out):
    export_torch("dy18_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": randn(25, 1, 4, 4, 6), "y": randn(26, 1, 4, 8, 12)}, opset=18, dynamo=True,
                 exercises="FPN merge nearest size=y.shape[-2:] (x2), dynamo opset 18")


# ------------------------------------------------------------------------------------------ dynamic shapes


@case
def ts18_nearest_size_dynhw(out):
    export_torch("ts18_nearest_size_dynhw", out, _fpn("nearest"),
                 {"x": randn(37, 1, 3, 3, 4), "y": randn(38, 1, 3, 7, 9)},
                 trace_inputs={"x": randn(39, 1, 3, 4, 4), "y": randn(139, 1, 3, 8, 8)}, opset=18, dynamo=False,
                 dynamic={"x": {2: "h", 3: "w"}, "y": {2: "h2", 3: "w2"}, "out0": {2: "h2", 3: "w2"}},
                 exercises="FPN merge nearest size=y.shape[-2:] with dynamic H/W, TorchScript opset 18 (Resize-18, "
                           "sizes from Shape/Slice/Concat at run time; traced x2, fed 3x4 -> 7x9)")


@case
def ts11_dynbatch_nearest_x2(out):
    from torch import nn
    export_torch("ts11_dynbatch_nearest_x2", out, nn.Upsample(scale_factor=2, mode="nearest"),
                 {"x": randn(27, 3, 3, 5, 6)}, trace_inputs={"x": randn(28, 2, 3, 5, 6)}, opset=11, dynamo=False,
                 dynamic={"x": {0: "batch"}, "out0": {0: "batch"}},
                 exercises="nn.Upsample(scale_factor=2, nearest) with a dynamic batch, static H/W (traced at batch 2, "
                           "fed batch 3): built-in Interpolate is exact for every batch")


@case
def dy18_dynbatch_bilinear_x2(out):
    import torch.nn.functional as F
    export_torch("dy18_dynbatch_bilinear_x2", out,
                 fn_module(lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)),
                 {"x": randn(29, 3, 2, 4, 5)}, trace_inputs={"x": randn(30, 2, 2, 4, 5)}, opset=18, dynamo=True,
                 dynamic={"x": {0: "batch"}},
                 exercises="bilinear x2 with a dynamic batch (dynamo dynamic_shapes), static H/W")


@case
def ts11_dynhw_bilinear_x2(out):
    export_torch("ts11_dynhw_bilinear_x2", out, _interp(scale_factor=2.0, mode="bilinear", align_corners=False),
                 {"x": randn(31, 1, 2, 7, 5)}, trace_inputs={"x": randn(32, 1, 2, 4, 4)}, opset=11, dynamo=False,
                 dynamic={"x": {0: "batch", 2: "h", 3: "w"}, "out0": {0: "batch", 2: "h2", 3: "w2"}},
                 exercises="bilinear x2 with dynamic N/H/W (traced at 4x4, fed 7x5): integer scale, exact for "
                           "every length")


@case
def ts13_dynhw_nearest_recompute_x2(out):
    export_torch("ts13_dynhw_nearest_recompute_x2", out,
                 _interp(scale_factor=2.0, mode="nearest", recompute_scale_factor=True),
                 {"x": randn(41, 1, 2, 7, 5)}, trace_inputs={"x": randn(42, 1, 2, 4, 4)}, opset=13, dynamo=False,
                 dynamic={"x": {2: "h", 3: "w"}, "out0": {2: "h2", 3: "w2"}},
                 exercises="nearest x2, recompute_scale_factor=True, dynamic H/W: run-time sizes "
                           "floor(float(L) * 2) from the input's own shape, a static scale 2 for every length")


@case
def dy18_dynhw_bilinear_recompute_x3(out):
    export_torch("dy18_dynhw_bilinear_recompute_x3", out,
                 _interp(scale_factor=3.0, mode="bilinear", align_corners=False, recompute_scale_factor=True),
                 {"x": randn(43, 1, 2, 7, 5)}, trace_inputs={"x": randn(44, 1, 2, 4, 6)}, opset=18, dynamo=True,
                 dynamic={"x": {2: "h", 3: "w"}},
                 exercises="bilinear x3, recompute_scale_factor=True, dynamic H/W, dynamo: run-time sizes "
                           "L * 3 (int64) from the input's own shape, a static scale 3 for every length")


@case
def dy18_dynhw_nearest_size_fpn(out):
    export_torch("dy18_dynhw_nearest_size_fpn", out, _fpn("nearest"),
                 {"x": randn(33, 1, 4, 3, 5), "y": randn(34, 1, 4, 6, 10)},
                 trace_inputs={"x": randn(35, 1, 4, 4, 4), "y": randn(36, 1, 4, 8, 8)}, opset=18, dynamo=True,
                 dynamic={"x": {2: "h", 3: "w"}, "y": {2: "h2", 3: "w2"}},
                 exercises="FPN merge nearest size=y.shape[-2:] with dynamic H/W (dynamo): sizes from "
                           "Shape/Slice/Concat at run time")


def _nearest_exact_then_conv(seed):
    """F.interpolate(scale_factor=1.5, mode="nearest-exact") and a 3x3 Conv after it (a decoder step)."""
    import torch
    import torch.nn.functional as F

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return self.conv(F.interpolate(x, scale_factor=1.5, mode="nearest-exact"))
    return init_weights(Decoder(), seed)


@case
def dy18_dynhw_nearest_exact_conv_x1_5(out):
    export_torch("dy18_dynhw_nearest_exact_conv_x1_5", out, _nearest_exact_then_conv(45),
                 {"x": randn(46, 1, 3, 60, 90)}, trace_inputs={"x": randn(47, 1, 3, 32, 48)}, opset=18,
                 dynamo=True, dynamic={"x": {2: "h", 3: "w"}},
                 exercises="nearest-exact x1.5 on dynamic H/W, dynamo, then a Conv: no Resize node, the indices "
                           "trunc((i + 0.5) * Div(n, 1.5 n)) in the graph (OpenVINO's Divide is a * (1 / b): every "
                           "third column at W = 90; under the bf16 default the index arithmetic ran in bf16)")


@case
def dy18_dyn3d_nearest_exact_x1_5(out):
    export_torch("dy18_dyn3d_nearest_exact_x1_5", out, _interp(scale_factor=1.5, mode="nearest-exact"),
                 {"x": randn(48, 1, 2, 3, 5, 41)}, trace_inputs={"x": randn(49, 1, 2, 6, 8, 10)}, opset=18,
                 dynamo=True, dynamic={"x": {2: "d", 3: "h", 4: "w"}},
                 exercises="nearest-exact x1.5 on a volume with dynamic D/H/W, dynamo: three index vectors through "
                           "Div(n, 1.5 n) and a GatherND, no Resize (OpenVINO's importer: 22 of 40 random shapes, "
                           "this one's W = 41 among them, read other elements at f32)")
