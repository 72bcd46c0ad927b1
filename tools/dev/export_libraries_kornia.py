"""Corpus cases (issue 20 item 6), continued: kornia's geometry (warps with a matrix fed at run time, remap,
Gaussian pyramids, antialiased resize, 3-D warps) and segmentation-models-pytorch decoders on a MobileNetV2 trunk
at depth 3 (encoder_weights=None). Helpers in export_libraries.py."""

from __future__ import annotations

# Siblings by their plain names: the exporter runs as a file (see export_models.py).
from export_common import case, fn_module, gen, init_weights, randn
from export_libraries import DYN_NHW, lib_case


# ------------------------------------------------------------------------------------------------- kornia


def _homography(seed, n=1):
    """A mild random projective warp (identity + small terms), as a camera-rectification matrix."""
    import torch
    h = torch.eye(3).repeat(n, 1, 1) + torch.randn(n, 3, 3, generator=gen(seed)) * torch.tensor(
        [[0.05, 0.05, 2.0], [0.05, 0.05, 2.0], [1e-3, 1e-3, 0.0]])
    return h


def _affine(seed, n=1):
    import torch
    return torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]).repeat(n, 1, 1) + torch.randn(
        n, 2, 3, generator=gen(seed)) * torch.tensor([[0.1, 0.1, 3.0], [0.1, 0.1, 3.0]])


@case
def ts16_kornia_warp_perspective(out):
    from kornia.geometry.transform import warp_perspective
    lib_case("ts16_kornia_warp_perspective", out, fn_module(lambda img, m: warp_perspective(img, m, (24, 30))),
             {"img": randn(300, 1, 3, 24, 30), "m": _homography(301)}, library="kornia", opset=16, dynamo=False,
             exercises="kornia warp_perspective(bilinear, zeros, align_corners=True) with the homography fed at "
                       "run time: GridSample-16 on a grid computed in the graph (meshgrid, MatMul, divide)")


@case
def dy18_kornia_warp_affine_border_dynhw(out):
    from kornia.geometry.transform import warp_affine
    lib_case("dy18_kornia_warp_affine_border_dynhw", out,
             fn_module(lambda img, m: warp_affine(img, m, (20, 26), padding_mode="border")),
             {"img": randn(302, 1, 3, 18, 30), "m": _affine(303)},
             trace_inputs={"img": randn(304, 1, 3, 22, 24), "m": _affine(305)}, library="kornia", opset=18,
             dynamo=True, dynamic={"img": {2: "h", 3: "w"}},
             exercises="kornia warp_affine(bilinear, border, align_corners=True) to 20x26, matrix fed at run time, "
                       "dynamic input H/W (traced 22x24, fed 18x30); a dynamic batch is refused by ORT at run time "
                       "(the exporter ties the matrix's batch to 1)")


@case
def dy20_kornia_remap_reflection(out):
    import torch
    from kornia.geometry.transform import remap
    ys, xs = torch.meshgrid(torch.arange(16.0), torch.arange(20.0), indexing="ij")
    g = gen(306)
    map_x = (xs + torch.randn(16, 20, generator=g) * 3).unsqueeze(0)
    map_y = (ys + torch.randn(16, 20, generator=g) * 3).unsqueeze(0)
    lib_case("dy20_kornia_remap_reflection", out,
             fn_module(lambda img, mx: remap(img, mx, map_y, mode="bilinear", padding_mode="reflection",
                                             align_corners=True)),
             {"img": randn(307, 1, 2, 16, 20), "mx": map_x}, library="kornia", opset=20, dynamo=True,
             exercises="kornia remap (OpenCV-style pixel maps, map_x fed, map_y a constant) bilinear reflection "
                       "align_corners: GridSample-20 on a grid normalised in the graph")


@case
def ts13_kornia_pyramid_dynhw(out):
    from kornia.geometry.transform import build_pyramid, pyrup

    def pyramid(x):
        levels = build_pyramid(x, 3)
        return tuple(levels[1:]) + (pyrup(levels[-1]),)
    lib_case("ts13_kornia_pyramid_dynhw", out, fn_module(pyramid), {"x": randn(310, 1, 2, 30, 44)},
             trace_inputs={"x": randn(311, 1, 2, 32, 32)}, library="kornia", opset=13, dynamo=False,
             dynamic={"x": DYN_NHW},
             exercises="kornia build_pyramid (Gaussian blur + bilinear to H//2 x W//2, three levels) and pyrup "
                       "(bilinear x2 to a size from Shape): image pyramid on dynamic N/H/W (fed 30x44: levels "
                       "15x22 and 7x11, pyrup 7x11 -> 14x22)")


@case
def dy18_kornia_resize_antialias(out):
    from kornia.geometry.transform import resize
    lib_case("dy18_kornia_resize_antialias", out,
             fn_module(lambda x: resize(x, (20, 27), interpolation="bilinear", antialias=True)),
             {"x": randn(312, 1, 3, 48, 64)}, library="kornia", opset=18, dynamo=True,
             exercises="kornia resize(antialias=True): its own Gaussian blur, then bilinear 48x64 -> 20x27")


@case
def dy18_kornia_rescale_half_dynhw(out):
    from kornia.geometry.transform import rescale
    lib_case("dy18_kornia_rescale_half_dynhw", out,
             fn_module(lambda x: rescale(x, 0.5, interpolation="bicubic", align_corners=False)),
             {"x": randn(318, 2, 3, 30, 45)}, trace_inputs={"x": randn(319, 1, 3, 32, 32)}, library="kornia",
             opset=18, dynamo=True, dynamic={"x": DYN_NHW},
             exercises="kornia rescale(0.5, bicubic): under ONNX export kornia switches to F.interpolate("
                       "scale_factor=0.5, recompute_scale_factor=True) so H/W stay dynamic: Resize-18 cubic, output "
                       "floor(L/2) from Shape (fed 30x45 -> 15x22)")


@case
def ts20_kornia_rotate_nearest(out):
    import torch
    from kornia.geometry.transform import rotate
    lib_case("ts20_kornia_rotate_nearest", out,
             fn_module(lambda x: rotate(x, torch.tensor([17.0]), mode="nearest", align_corners=False)),
             {"x": randn(313, 1, 3, 18, 22)}, library="kornia", opset=20, dynamo=False,
             exercises="kornia rotate by 17 degrees, nearest, zeros, align_corners=False: AffineGrid-20 + "
                       "GridSample nearest (TorchScript refuses affine_grid_generator below opset 20)")


@case
def ts20_kornia_warp_affine3d(out):
    import torch
    from kornia.geometry.transform import warp_affine3d
    m = torch.cat([torch.eye(3), torch.zeros(3, 1)], 1).unsqueeze(0) + torch.randn(1, 3, 4, generator=gen(314)) \
        * torch.tensor([0.05, 0.05, 0.05, 1.0])
    lib_case("ts20_kornia_warp_affine3d", out, fn_module(lambda v, a: warp_affine3d(v, a, (6, 8, 10))),
             {"vol": randn(315, 1, 2, 6, 8, 10), "a": m}, library="kornia", opset=20, dynamo=False,
             exercises="kornia warp_affine3d (trilinear, zeros, align_corners=True), matrix fed at run time: "
                       "5-D GridSample-20")


@case
def ts20_kornia_warp_perspective_double(out):
    from kornia.geometry.transform import warp_perspective

    def warp64(img, m):
        return warp_perspective(img.double(), m.double(), (20, 24)).float()
    lib_case("ts20_kornia_warp_perspective_double", out, fn_module(warp64),
             {"img": randn(316, 1, 3, 20, 24), "m": _homography(317)}, library="kornia", opset=20, dynamo=False,
             exercises="kornia warp_perspective computed in float64 (image and homography cast to double, as "
                       "geometry code does for precision): GridSample-20 with a double-typed grid and input "
                       "(onnxruntime has no double GridSample-16 kernel)")


# ---------------------------------------------------------------------------------- segmentation_models_pytorch


def _smp(arch, seed, **kw):
    import segmentation_models_pytorch as smp
    """timm's MobileNetV3-small x0.5 through smp's universal timm encoder (few weights at depth 3-4)."""
    m = getattr(smp, arch)("tu-mobilenetv3_small_050", encoder_weights=None, classes=2, **kw)
    return init_weights(m, seed)


@case
def ts11_smp_unet(out):
    lib_case("ts11_smp_unet", out, _smp("Unet", 400, encoder_depth=3, decoder_channels=(16, 8, 4)),
             {"x": randn(401, 1, 3, 48, 64)}, library="segmentation_models_pytorch", opset=11, dynamo=False,
             exercises="smp Unet (timm mobilenetv3_small_050, depth 3): decoder blocks "
                       "F.interpolate(scale_factor=2, nearest)")


@case
def dy18_smp_unet_dynhw(out):
    lib_case("dy18_smp_unet_dynhw", out, _smp("Unet", 402, encoder_depth=3, decoder_channels=(16, 8, 4)),
             {"x": randn(403, 2, 3, 40, 48)}, trace_inputs={"x": randn(404, 1, 3, 64, 64)},
             library="segmentation_models_pytorch", opset=18, dynamo=True, dynamic={"x": DYN_NHW},
             exercises="smp Unet as above, dynamo, dynamic N/H/W (traced 64x64, fed 2x40x48)")


@case
def ts15_smp_unet_dynhw(out):
    lib_case("ts15_smp_unet_dynhw", out, _smp("Unet", 405, encoder_depth=3, decoder_channels=(16, 8, 4)),
             {"x": randn(406, 1, 3, 40, 48)}, trace_inputs={"x": randn(407, 1, 3, 64, 64)},
             library="segmentation_models_pytorch", opset=15, dynamo=False,
             dynamic={"x": DYN_NHW, "out0": DYN_NHW},
             exercises="smp Unet through the TorchScript exporter, dynamic N/H/W (the dynamo twin is "
                       "dy18_smp_unet_dynhw): nearest x2 with scales constant, run-time sizes")


@case
def ts12_smp_fpn(out):
    lib_case("ts12_smp_fpn", out, _smp("FPN", 410, encoder_depth=3, decoder_pyramid_channels=16,
                                       decoder_segmentation_channels=32, upsampling=1),
             {"x": randn(411, 1, 3, 32, 48)}, library="segmentation_models_pytorch", opset=12, dynamo=False,
             exercises="smp FPN: nearest x2 top-down, segmentation blocks bilinear x2 (align_corners=True); "
                       "upsampling=1 (the default x4 head would make the output 4x the input at depth 3)")


@case
def ts14_smp_pspnet(out):
    lib_case("ts14_smp_pspnet", out, _smp("PSPNet", 420, encoder_depth=3, psp_out_channels=16),
             {"x": randn(421, 1, 3, 48, 48)}, library="segmentation_models_pytorch", opset=14, dynamo=False,
             exercises="smp PSPNet: adaptive pools 1/2/3/6 bilinear align_corners back to 6x6 (sizes from Shape), "
                       "UpsamplingBilinear2d x8")


@case
def ts11_smp_pspnet_1_to_12(out):
    import segmentation_models_pytorch as smp
    m = init_weights(smp.PSPNet("tu-mobilenetv3_small_050", encoder_weights=None, in_channels=1, classes=1,
                                encoder_depth=3, psp_out_channels=8), 422)
    lib_case("ts11_smp_pspnet_1_to_12", out, m, {"x": randn(423, 1, 1, 96, 96)},
             library="segmentation_models_pytorch", opset=11, dynamo=False,
             exercises="smp PSPNet at opset 11 on a 12x12 feature map: the pyramid-pooling decoder upsamples "
                       "1x1 -> 12x12 (and 2, 3, 6 -> 12) bilinear align_corners=True with sizes from Shape and "
                       "empty roi/scales (TorchScript, static graph); grayscale in, one class out")


@case
def ts19_smp_deeplabv3plus_dynbatch(out):
    lib_case("ts19_smp_deeplabv3plus_dynbatch", out,
             _smp("DeepLabV3Plus", 430, encoder_depth=4, encoder_output_stride=16, decoder_channels=16),
             {"x": randn(431, 2, 3, 32, 48)}, trace_inputs={"x": randn(432, 1, 3, 32, 48)},
             library="segmentation_models_pytorch", opset=19, dynamo=False, dynamic={"x": {0: "batch"}},
             exercises="smp DeepLabV3Plus: ASPP pooling branch (1x1 -> feature size, half_pixel), decoder "
                       "UpsamplingBilinear2d x4 and head x4 (align_corners=True); dynamic batch")


@case
def dy18_smp_upernet(out):
    lib_case("dy18_smp_upernet", out, _smp("UPerNet", 450, encoder_depth=3, decoder_channels=8),
             {"x": randn(451, 1, 3, 48, 80)},
             library="segmentation_models_pytorch", opset=18, dynamo=True,
             exercises="smp UPerNet: PSP pooling resized to the feature size, FPN bilinear to size, fused to the "
                       "finest level, final x4; dynamo, static (TorchScript refuses it: adaptive_avg_pool2d "
                       "to 3x3/6x6 on a 6x10 map, and with dynamic H/W 'input size not accessible')")

