"""Corpus cases: F.grid_sample (4-D and 5-D) and torchvision's DeformConv2d (both exporters)."""

from __future__ import annotations

# A sibling by its plain name: the exporter runs as a file (see export_models.py).
from export_common import case, export_torch, fn_module, gen, init_weights, ints, randn


# ----------------------------------------------------------------------------------------------- grid_sample


def _grid(seed, n, *out_shape, spread=1.2):
    """A random grid in [-spread, spread] (some samples outside, for the padding modes)."""
    import torch
    g = torch.rand(n, *out_shape, len(out_shape), generator=gen(seed)) * 2 * spread - spread
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
    return fn_module(lambda x, grid: F.grid_sample(x, grid, **kw))


@case
def ts16_gridsample_bilinear_zeros(out):
    export_torch("ts16_gridsample_bilinear_zeros", out,
                 _gs(mode="bilinear", padding_mode="zeros", align_corners=False),
                 {"x": randn(40, 2, 3, 6, 7), "grid": _grid(41, 2, 5, 4)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D bilinear/zeros/align_corners=False, GridSample-16, grid partly "
                           "outside")


@case
def ts16_gridsample_nearest_border_ties(out):
    export_torch("ts16_gridsample_nearest_border_ties", out,
                 _gs(mode="nearest", padding_mode="border", align_corners=True),
                 {"x": ints(42, 1, 2, 5, 6), "grid": _tie_grid(1, 5, 6, 8, 11, True)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D nearest/border/align_corners=True; grid exactly on pixel centres and "
                           "half-way between them (round-half-even ties) and beyond the border")


@case
def ts16_gridsample_bicubic_reflection(out):
    export_torch("ts16_gridsample_bicubic_reflection", out,
                 _gs(mode="bicubic", padding_mode="reflection", align_corners=False),
                 {"x": randn(43, 1, 2, 6, 5), "grid": _grid(44, 1, 4, 6, spread=1.6)}, opset=16, dynamo=False,
                 exercises="F.grid_sample 4-D bicubic/reflection/align_corners=False (coordinate reflected before "
                           "the taps)")


@case
def dy20_gridsample_nearest_zeros_ties(out):
    export_torch("dy20_gridsample_nearest_zeros_ties", out,
                 _gs(mode="nearest", padding_mode="zeros", align_corners=False),
                 {"x": ints(45, 1, 2, 4, 6), "grid": _tie_grid(1, 4, 6, 7, 12, False)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D nearest/zeros/align_corners=False with tie coordinates, dynamo "
                           "GridSample-20 (mode='nearest')")


@case
def dy20_gridsample_bicubic_border(out):
    export_torch("dy20_gridsample_bicubic_border", out,
                 _gs(mode="bicubic", padding_mode="border", align_corners=True),
                 {"x": randn(46, 2, 2, 5, 5), "grid": _grid(47, 2, 3, 4, spread=1.4)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D bicubic/border/align_corners=True, dynamo GridSample-20 "
                           "(mode='cubic')")


@case
def dy20_gridsample_bilinear_reflection_align(out):
    export_torch("dy20_gridsample_bilinear_reflection_align", out,
                 _gs(mode="bilinear", padding_mode="reflection", align_corners=True),
                 {"x": randn(48, 1, 3, 4, 7), "grid": _grid(49, 1, 6, 5, spread=2.5)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 4-D bilinear/reflection/align_corners=True, grid far outside "
                           "(multiple reflections)")


@case
def dy20_gridsample_5d_bilinear_zeros(out):
    export_torch("dy20_gridsample_5d_bilinear_zeros", out,
                 _gs(mode="bilinear", padding_mode="zeros", align_corners=False),
                 {"x": randn(50, 1, 2, 3, 4, 5), "grid": _grid(51, 1, 2, 3, 4)}, opset=20, dynamo=True,
                 exercises="F.grid_sample 5-D (volumetric) trilinear/zeros/align_corners=False, dynamo "
                           "GridSample-20")


@case
def ts20_gridsample_5d_nearest_border(out):
    export_torch("ts20_gridsample_5d_nearest_border", out,
                 _gs(mode="nearest", padding_mode="border", align_corners=True),
                 {"x": ints(52, 1, 2, 4, 3, 5), "grid": _grid(53, 1, 3, 2, 4, spread=1.3)}, opset=20,
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
        init_weights(b, seed)
        return b


@case
def ts19_deformconv_mask(out):
    _register_deform_symbolic()
    m = _DeformBlock.build(4, 6, 3, 1, 1, 1, 2, 2, True, 60)
    export_torch("ts19_deformconv_mask", out, m, {"x": randn(61, 1, 4, 7, 6)}, opset=19, dynamo=False,
                 exercises="torchvision.ops.DeformConv2d with mask (DCNv2), groups=2, offset_groups=2, offsets "
                           "from a conv; TorchScript exporter with a user symbolic -> DeformConv-19")


@case
def ts19_deformconv_nomask_stride2(out):
    _register_deform_symbolic()
    m = _DeformBlock.build(3, 4, 3, 2, 2, 2, 1, 1, False, 62)
    export_torch("ts19_deformconv_nomask_stride2", out, m, {"x": randn(63, 2, 3, 9, 8)}, opset=19,
                 dynamo=False,
                 exercises="torchvision.ops.DeformConv2d without mask (DCNv1), stride 2, pad 2, dilation 2")


@case
def dy19_deformconv_mask(out):
    m = _DeformBlock.build(4, 4, 3, 1, 1, 1, 1, 1, True, 64)
    export_torch("dy19_deformconv_mask", out, m, {"x": randn(65, 1, 4, 6, 6)}, opset=19, dynamo=True,
                 custom_translation_table=_deform_translation(),
                 exercises="torchvision.ops.DeformConv2d with mask, dynamo exporter with a custom translation "
                           "-> DeformConv-19")
