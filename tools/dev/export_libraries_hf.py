"""Corpus cases (issue 20 item 6), continued: transformers (ViT, DPT, Depth Anything, SegFormer, UperNet), timm
(ViT with dynamic_img_size) and diffusers (UNet2DModel, the AutoencoderKL decoder), each built from a tiny config
with seeded random weights (nothing from a hub). Helpers in export_libraries.py."""

from __future__ import annotations

# Siblings by their plain names: the exporter runs as a file (see export_models.py).
from export_common import case, init_weights, randn
from export_libraries import DYN_NHW, Pick, lib_case


def _seeded(build, seed):
    """Build under a fixed seed (the libraries' own init), eval mode."""
    import torch
    torch.manual_seed(seed)
    return init_weights(build(), seed)


class Method:
    """A module whose forward is ``inner.<method>(x)`` (then ``.<attr>`` if given): decode, forward_features."""

    @staticmethod
    def of(inner, method, attr=None):
        import torch

        class Called(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                res = getattr(self.inner, method)(x)
                return getattr(res, attr) if attr else res
        return Called().eval()


# ------------------------------------------------------------------------------------------- transformers


def _vit(seed):
    from transformers import ViTConfig, ViTModel
    cfg = ViTConfig(image_size=56, patch_size=4, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32)
    return Pick.of(_seeded(lambda: ViTModel(cfg, add_pooling_layer=False), seed), "last_hidden_state",
                   interpolate_pos_encoding=True)


@case
def dy18_hf_vit_interp_pos_static(out):
    lib_case("dy18_hf_vit_interp_pos_static", out, _vit(500), {"pixel_values": randn(501, 1, 3, 64, 72)},
             library="transformers", opset=18, dynamo=True, optimize=False,
             exercises="transformers ViTModel(interpolate_pos_encoding=True), trained at 56x56 (14x14 patches), fed "
                       "64x72: the position embedding (a constant) bicubic 14x14 -> 16x18, static; "
                       "optimize=False (with the default optimize=True the exporter folds the Resize away)")


@case
def ts14_hf_vit_interp_pos_dynhw(out):
    lib_case("ts14_hf_vit_interp_pos_dynhw", out, _vit(502), {"pixel_values": randn(503, 2, 3, 48, 60)},
             trace_inputs={"pixel_values": randn(504, 1, 3, 64, 72)}, library="transformers", opset=14,
             dynamo=False, dynamic={"pixel_values": DYN_NHW},
             exercises="transformers ViT position-embedding bicubic resize of a constant to sizes from the input's "
                       "shape (TorchScript, dynamic N/H/W, fed 48x60 -> 12x15)")


def _dpt(seed):
    from transformers import DPTConfig, DPTForDepthEstimation
    cfg = DPTConfig(image_size=32, patch_size=4, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                    intermediate_size=32, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 8, 16, 16],
                    fusion_hidden_size=8, reassemble_factors=[4, 2, 1, 0.5], head_in_index=-1)
    cfg._attn_implementation = "eager"  # explicit softmax(QK^T)V: exportable below opset 14, as users do
    return Pick.of(_seeded(lambda: DPTForDepthEstimation(cfg), seed), "predicted_depth")


@case
def dy18_hf_dpt_fusion_11(out):
    lib_case("dy18_hf_dpt_fusion_11", out, _dpt(510), {"pixel_values": randn(511, 1, 3, 44, 44)},
             library="transformers", opset=18, dynamo=True,
             exercises="transformers DPT (ViT 8x8 position grid, fed 44x44 -> 11x11 patches): position embedding "
                       "bilinear 8x8 -> 11x11 (a constant); fusion stages resize residuals 11 -> 12, 22 -> 24, 44 "
                       "-> 48 to the upsampled size, x2 bilinear align_corners, head x2; static")


@case
def ts12_hf_dpt_dynhw(out):
    lib_case("ts12_hf_dpt_dynhw", out, _dpt(512), {"pixel_values": randn(513, 1, 3, 40, 40)},
             trace_inputs={"pixel_values": randn(514, 1, 3, 44, 44)}, library="transformers", opset=12,
             dynamo=False, dynamic={"pixel_values": DYN_NHW},
             exercises="transformers DPT as above, TorchScript, dynamic N/H/W (traced 44x44, fed 40x40; DPT "
                       "itself takes square inputs only)")


def _depth_anything(seed):
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config
    bb = Dinov2Config(image_size=32, patch_size=4, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                      mlp_ratio=2, out_features=["stage1", "stage2", "stage3", "stage4"],
                      reshape_hidden_states=False)
    cfg = DepthAnythingConfig(backbone_config=bb, patch_size=4, reassemble_hidden_size=16,
                              reassemble_factors=[4, 2, 1, 0.5], neck_hidden_sizes=[8, 8, 16, 16],
                              fusion_hidden_size=8, head_hidden_size=8,
                              depth_estimation_type="metric")  # sigmoid head: ReLU of random weights gave zeros
    return Pick.of(_seeded(lambda: DepthAnythingForDepthEstimation(cfg), seed), "predicted_depth")


@case
def dy18_hf_depth_anything_dynhw(out):
    lib_case("dy18_hf_depth_anything_dynhw", out, _depth_anything(520),
             {"pixel_values": randn(521, 2, 3, 28, 36)},
             library="transformers", opset=18, dynamo=True, dynamic={"pixel_values": {0: "batch"}},
             exercises="transformers Depth Anything (DINOv2 backbone): bicubic position-embedding resize, DPT "
                       "fusion, depth head bilinear align_corners to patch grid x patch size on [?,1,?,?]; dynamic "
                       "batch (fed 2x28x36; with dynamic H/W torch.export specialises them: int() of the patch grid)")


@case
def ts17_hf_depth_anything_dynhw(out):
    lib_case("ts17_hf_depth_anything_dynhw", out, _depth_anything(523), {"pixel_values": randn(524, 2, 3, 28, 36)},
             trace_inputs={"pixel_values": randn(525, 1, 3, 32, 32)}, library="transformers", opset=17,
             dynamo=False, dynamic={"pixel_values": DYN_NHW, "out0": {0: "batch", 1: "h", 2: "w"}},
             export_defect="the trace keeps int(patch_height * patch_size) as a constant: the depth head resizes "
                           "to the traced 32x32 whatever the input (PyTorch gives 28x36)",
             exercises="transformers Depth Anything through the TorchScript exporter with dynamic N/H/W (traced "
                       "32x32, fed 2x28x36): the position embedding bicubic to the run-time patch grid, the fusion "
                       "stages on run-time sizes, the depth head bilinear align_corners on [?,1,?,?] to a size the "
                       "trace froze")


def _segformer(seed):
    from transformers import SegformerConfig, SegformerForSemanticSegmentation
    cfg = SegformerConfig(depths=[1, 1, 1, 1], hidden_sizes=[8, 8, 16, 16], num_attention_heads=[1, 1, 1, 1],
                          mlp_ratios=[2, 2, 2, 2], decoder_hidden_size=16, num_labels=3)
    return Pick.of(_seeded(lambda: SegformerForSemanticSegmentation(cfg), seed), "logits")


@case
def dy19_hf_segformer(out):
    lib_case("dy19_hf_segformer", out, _segformer(530), {"pixel_values": randn(531, 1, 3, 60, 76)},
             library="transformers", opset=19, dynamo=True,
             exercises="transformers SegFormer: the all-MLP decode head resizes each stage (8x10, 4x5, 2x3) "
                       "bilinear to the first stage's 15x19 (non-integer ratios); static")


@case
def ts14_hf_segformer_dynhw(out):
    lib_case("ts14_hf_segformer_dynhw", out, _segformer(532), {"pixel_values": randn(533, 1, 3, 52, 44)},
             trace_inputs={"pixel_values": randn(534, 1, 3, 64, 64)}, library="transformers", opset=14,
             dynamo=False, dynamic={"pixel_values": DYN_NHW, "out0": DYN_NHW},
             exercises="transformers SegFormer, TorchScript, dynamic N/H/W: resizes to encoder_hidden_states[0]"
                       ".size()[2:] at run time (fed 52x44 -> 13x11)")


@case
def dy20_hf_upernet_convnext(out):
    from transformers import ConvNextConfig, UperNetConfig, UperNetForSemanticSegmentation
    bb = ConvNextConfig(hidden_sizes=[8, 8, 16, 16], depths=[1, 1, 1, 1],
                        out_features=["stage1", "stage2", "stage3", "stage4"])
    cfg = UperNetConfig(backbone_config=bb, hidden_size=16, pool_scales=[1, 2, 3, 6], use_auxiliary_head=False,
                        num_labels=3)
    m = Pick.of(_seeded(lambda: UperNetForSemanticSegmentation(cfg), 540), "logits")
    lib_case("dy20_hf_upernet_convnext", out, m, {"pixel_values": randn(541, 1, 3, 64, 64)},
             library="transformers", opset=20, dynamo=True,
             exercises="transformers UperNet (ConvNeXt backbone): PSP module pools 1/2/3/6 of a 2x2 map, each "
                       "bilinear back to 2x2 (from 6x6: a downscale), FPN top-down bilinear to size, all to 16x16, "
                       "logits to the input size; static")


def _rt_detr(seed):
    """RT-DETR: the decoder's multi-scale deformable attention samples each level with grid_sample(bilinear,
    zeros, align_corners=False) on a grid computed from the predicted reference points and offsets."""
    from transformers import RTDetrConfig, RTDetrForObjectDetection, RTDetrResNetConfig
    bb = RTDetrResNetConfig(embedding_size=8, hidden_sizes=[8, 8, 8, 8], depths=[1, 1, 1, 1], layer_type="basic",
                            out_features=["stage2", "stage3", "stage4"])
    cfg = RTDetrConfig(backbone_config=bb, encoder_in_channels=[8, 8, 8], encoder_hidden_dim=16,
                       encoder_ffn_dim=32, encoder_attention_heads=2, d_model=16, decoder_in_channels=[16, 16, 16],
                       decoder_ffn_dim=32, decoder_layers=1, decoder_attention_heads=2, decoder_n_points=2,
                       num_queries=10, num_denoising=0, num_labels=3)
    return Pick.of(_seeded(lambda: RTDetrForObjectDetection(cfg), seed), "logits", "pred_boxes")


@case
def dy18_hf_rt_detr(out):
    lib_case("dy18_hf_rt_detr", out, _rt_detr(550), {"pixel_values": randn(551, 1, 3, 64, 64)},
             library="transformers", opset=18, dynamo=True,
             exercises="transformers RT-DETR (tiny ResNet backbone, 1 decoder layer, 10 queries): deformable "
                       "attention GridSample bilinear zeros align_corners=False per level (8x8, 4x4, 2x2), grid "
                       "computed at run time; static")


@case
def ts16_hf_rt_detr(out):
    lib_case("ts16_hf_rt_detr", out, _rt_detr(552), {"pixel_values": randn(553, 1, 3, 64, 64)},
             library="transformers", opset=16, dynamo=False,
             exercises="transformers RT-DETR as above through the TorchScript exporter (GridSample-16)")


# --------------------------------------------------------------------------------------------------- timm


def _timm_vit(seed):
    import timm
    m = _seeded(lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=56, patch_size=4,
                                          embed_dim=16, depth=1, num_heads=2, mlp_ratio=2.0,
                                          dynamic_img_size=True), seed)
    return Method.of(m, "forward_features")


@case
def dy18_timm_vit_dynimg_static(out):
    lib_case("dy18_timm_vit_dynimg_static", out, _timm_vit(600), {"x": randn(601, 1, 3, 64, 72)},
             library="timm", opset=18, dynamo=True, optimize=False,
             exercises="timm VisionTransformer(dynamic_img_size=True), trained 56x56 (14x14), fed 64x72: "
                       "resample_abs_pos_embed bicubic antialias 14x14 -> 16x18 of a constant, static, optimize=False")


@case
def dy18_timm_vit_dynimg_dynhw(out):
    lib_case("dy18_timm_vit_dynimg_dynhw", out, _timm_vit(602), {"x": randn(603, 2, 3, 36, 44)},
             trace_inputs={"x": randn(604, 1, 3, 64, 72)}, library="timm", opset=18, dynamo=True,
             dynamic={"x": DYN_NHW},
             exercises="timm ViT dynamic_img_size: bicubic antialias resample of the constant position grid to "
                       "run-time sizes (fed 36x44 -> 9x11: a downscale, so antialias matters)")


# ----------------------------------------------------------------------------------------------- diffusers


def _unet2d(seed):
    from diffusers import UNet2DModel
    return Pick.of(_seeded(lambda: UNet2DModel(
        sample_size=16, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=4, attention_head_dim=4), seed), "sample", n_inputs=2)


@case
def ts14_diffusers_unet2d(out):
    import torch
    lib_case("ts14_diffusers_unet2d", out, _unet2d(700), {"sample": randn(701, 1, 3, 16, 16),
                                                         "timestep": torch.tensor([10.0])},
             library="diffusers", opset=14, dynamo=False,
             exercises="diffusers UNet2DModel (DDPM-style, tiny): Upsample2D F.interpolate(scale_factor=2, nearest)")


def _vae(seed):
    from diffusers import AutoencoderKL
    vae = _seeded(lambda: AutoencoderKL(
        in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), block_out_channels=(8, 16), layers_per_block=1,
        latent_channels=4, norm_num_groups=4), seed)
    return Method.of(vae, "decode", "sample")


@case
def ts16_diffusers_vae_decoder_dynhw(out):
    lib_case("ts16_diffusers_vae_decoder_dynhw", out, _vae(710), {"z": randn(711, 1, 4, 6, 10)},
             trace_inputs={"z": randn(712, 1, 4, 8, 8)}, library="diffusers", opset=16, dynamo=False,
             dynamic={"z": DYN_NHW},
             exercises="diffusers AutoencoderKL decoder (tiny): Upsample2D nearest x2, dynamic N/H/W latents")


@case
def dy19_diffusers_vae_decoder_dynhw(out):
    lib_case("dy19_diffusers_vae_decoder_dynhw", out, _vae(713), {"z": randn(714, 1, 4, 5, 9)},
             trace_inputs={"z": randn(715, 1, 4, 8, 8)}, library="diffusers", opset=19, dynamo=True,
             dynamic={"z": {2: "h", 3: "w"}},
             exercises="diffusers AutoencoderKL decoder, dynamo, dynamic H/W latents (fed 5x9); a dynamic batch "
                       "fails torch.export (the decoder's guard 2 <= batch <= 63)")
