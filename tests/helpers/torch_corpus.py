"""A corpus of modules users ship (issue 44), built from configs with seeded weights at small input sizes: each
``MODELS[name]()`` gives (module in eval mode, example inputs). torchvision, timm, kornia and transformers are
imported inside the builders, so a test can skip the ones whose library is missing."""

from __future__ import annotations

import torch

F = torch.nn.functional


def _inputs(*shapes, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.rand(*s, generator=g) for s in shapes)


class _Tensors(torch.nn.Module):
    """A model whose output is a dict or a ModelOutput, as the tuple of its tensors (``keys``)."""

    def __init__(self, model, *keys, **call):
        super().__init__()
        self.model, self.keys, self.call = model, keys, call

    def forward(self, *xs):
        out = self.model(*xs, **self.call)
        return tuple(out[k] for k in self.keys) if len(self.keys) > 1 else out[self.keys[0]]


class DetectorFront(torch.nn.Module):
    """What torchvision's Faster R-CNN computes before its heads: GeneralizedRCNNTransform (the image resized by
    the scale min_size / its shorter side, bilinear with recompute_scale_factor=True, normalized, padded to a
    multiple of 32), then its ResNet-18 FPN backbone (nearest upsampling to each finer level's size)."""

    def __init__(self):
        super().__init__()
        from torchvision.models.detection.backbone_utils import resnet_fpn_backbone
        from torchvision.models.detection.transform import GeneralizedRCNNTransform

        torch.manual_seed(0)
        self.transform = GeneralizedRCNNTransform(64, 128, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        self.backbone = resnet_fpn_backbone(backbone_name="resnet18", weights=None, trainable_layers=5)

    def forward(self, x):
        images, _ = self.transform([x[0]])
        return tuple(self.backbone(images.tensors).values())


def fpn_detector():
    return DetectorFront().eval(), _inputs((1, 3, 47, 67))


def deeplabv3_mobilenet():
    """torchvision's DeepLabV3 (MobileNetV3 backbone): ASPP pooling upsampled from 1x1, logits to the input."""
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

    torch.manual_seed(0)
    m = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=3, aux_loss=False)
    return _Tensors(m, "out").eval(), _inputs((1, 3, 64, 80))


def timm_vit_dynamic():
    """timm's ViT with dynamic_img_size: at 80x96 (trained at 64x64) the position embedding is resampled 4x4 ->
    5x6 (bicubic, antialias, as timm.layers.resample_abs_pos_embed does)."""
    from timm.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    m = VisionTransformer(img_size=64, patch_size=16, embed_dim=32, depth=1, num_heads=2, num_classes=5,
                          dynamic_img_size=True)
    return m.eval(), _inputs((1, 3, 80, 96))


class ConvNextFPN(torch.nn.Module):
    """timm's ConvNeXt-atto features into an FPN-style segmentation head: top-down bilinear to each finer
    level's size, the logits upsampled x4 by scale_factor."""

    def __init__(self):
        super().__init__()
        import timm

        torch.manual_seed(0)
        self.body = timm.create_model("convnext_atto", pretrained=False, features_only=True)
        self.lateral = torch.nn.ModuleList(torch.nn.Conv2d(c, 16, 1) for c in self.body.feature_info.channels())
        self.head = torch.nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        feats = [lat(f) for lat, f in zip(self.lateral, self.body(x))]
        y = feats[-1]
        for f in reversed(feats[:-1]):
            y = f + F.interpolate(y, size=f.shape[-2:], mode="bilinear", align_corners=False)
        return F.interpolate(self.head(y), scale_factor=4.0, mode="bilinear", align_corners=False)


def timm_convnext_fpn():
    return ConvNextFPN().eval(), _inputs((1, 3, 64, 96))


class KorniaWarps(torch.nn.Module):
    """kornia's resize with antialias (a Gaussian blur, then bilinear), warp_affine (a rotation and scale:
    affine_grid + grid_sample where traced, its own base grid + grid_sample otherwise) and remap (a sine
    displacement field, grid_sample over pixel coordinates)."""

    def forward(self, x):
        import kornia.geometry.transform as T

        h, w = x.shape[-2:]
        small = T.resize(x, (17, 23), antialias=True)
        a = torch.tensor([[[0.9, -0.3, 4.0], [0.35, 0.85, -2.5]]], dtype=x.dtype)
        warped = T.warp_affine(x, a, (h, w), mode="bilinear", padding_mode="border", align_corners=False)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype), torch.arange(w, dtype=x.dtype), indexing="ij")
        map_x = (xs + 1.7 * torch.sin(ys / 3.0))[None]
        map_y = (ys + 1.3 * torch.cos(xs / 4.0))[None]
        remapped = T.remap(x, map_x, map_y, mode="bilinear", padding_mode="zeros", align_corners=True)
        return small, warped, remapped


def kornia_warps():
    return KorniaWarps().eval(), _inputs((1, 3, 40, 52))


def hf_vit_interpolate():
    """transformers' ViT run at 48x40 (configured for 32x32) with interpolate_pos_encoding=True: its position
    embedding resampled bicubic by size."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    cfg = ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64)
    m = ViTModel(cfg, add_pooling_layer=False)
    return _Tensors(m, "last_hidden_state", interpolate_pos_encoding=True).eval(), _inputs((1, 3, 48, 40))


def hf_segformer():
    """transformers' SegFormer (MiT encoder, all-MLP decoder): each stage's features upsampled bilinear to the
    first stage's size."""
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    cfg = SegformerConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1], sr_ratios=[8, 4, 2, 1],
                          hidden_sizes=[8, 16, 24, 32], num_attention_heads=[1, 1, 2, 2], decoder_hidden_size=32,
                          num_labels=3)
    return _Tensors(SegformerForSemanticSegmentation(cfg), "logits").eval(), _inputs((1, 3, 72, 88))


MODELS = {f.__name__: f for f in (fpn_detector, deeplabv3_mobilenet, timm_vit_dynamic, timm_convnext_fpn,
                                  kornia_warps, hf_vit_interpolate, hf_segformer)}
