"""Corpus cases (issue 20 item 6): whole models as users ship them, built from the libraries' own code with seeded
random weights (no hub download): torchvision (segmentation heads, FPN, RAFT, DeformConv2d, transforms), kornia
(warps, remap, pyramids, resize) and segmentation-models-pytorch. Widths are cut so each file stays small; the
resampling code paths are the libraries' own. export_libraries_hf.py holds transformers, timm and diffusers."""

from __future__ import annotations

import json
from pathlib import Path

# Siblings by their plain names: the exporter runs as a file (see export_models.py).
from export_common import case, export_torch, init_weights, randn
from export_grid_deform import _register_deform_symbolic as register_deform_symbolic


def lib_case(name, out, module, inputs, *, library, prepare=None, **kw):
    """export_torch, then record which library (and its version) the model's code came from in meta.json. A
    dynamo export loses its per-node metadata_props (see strip_node_metadata)."""
    import importlib.metadata as md
    if prepare:
        prepare()
    export_torch(name, out, module, inputs, **kw)
    path = Path(out) / name / "meta.json"
    meta = json.loads(path.read_text())
    meta["library"] = {library: md.version(library)}
    if kw.get("dynamo"):
        meta.update(strip_node_metadata(Path(out) / name / "model.onnx"))
    path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


def strip_node_metadata(path):
    """Drop every node's metadata_props (the dynamo exporter's stack traces, class hierarchies, fx nodes: ~75% of
    a small model's bytes; the corpus has a 15 MiB budget). Nothing the graph computes changes; the cases from
    export_interpolate/export_networks keep theirs, so the converter still meets them."""
    import os

    import onnx
    model = onnx.load(str(path))
    before = os.path.getsize(path)

    def strip(graph):
        for n in graph.node:
            del n.metadata_props[:]
            for a in n.attribute:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    strip(g)
    strip(model.graph)
    for f in model.functions:
        for n in f.node:
            del n.metadata_props[:]
    onnx.save(model, str(path))
    return {"postprocess": f"node metadata_props stripped ({before} -> {os.path.getsize(path)} bytes)",
            "size_bytes": os.path.getsize(path)}


class Pick:
    """A module returning ``module(*args)[key]`` (or those keys, in order): the libraries return dicts and
    dataclasses; the exporters want tensors. Explicit arguments (not ``*args``): dynamo's dynamic_shapes are
    matched to them one by one."""

    @staticmethod
    def of(module, *keys, n_inputs=1, **call_kw):
        import torch

        def pick(res):
            got = tuple(res[k] if not isinstance(k, str) or isinstance(res, dict) else getattr(res, k)
                        for k in keys)
            return got[0] if len(got) == 1 else got

        class Picked1(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = module

            def forward(self, x):
                return pick(self.inner(x, **call_kw))

        class Picked2(Picked1):
            def forward(self, x, y):
                return pick(self.inner(x, y, **call_kw))
        return (Picked1 if n_inputs == 1 else Picked2)().eval()


DYN_NHW = {0: "batch", 2: "h", 3: "w"}


# ---------------------------------------------------------------------------------------------- torchvision


def _mnv3_features(seed):
    """MobileNetV3-small trunk at width 0.1, its stem and first four blocks (8 channels, output stride 16): the
    heads see the strides they were built for; the file stays small."""
    from torchvision.models import mobilenet_v3_small
    return init_weights(mobilenet_v3_small(width_mult=0.1), seed).features[:5]


def _deeplabv3(seed):
    """torchvision DeepLabV3: ASPP (its image-pooling branch resizes a 1x1 map to the feature size, computed at
    run time) and the model's final resize to the input size."""
    from torch import nn
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.segmentation.deeplabv3 import ASPP, DeepLabV3
    feats = _mnv3_features(seed)
    c = feats[-1].out_channels
    head = nn.Sequential(ASPP(c, [12, 24, 36], 16), nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                         nn.ReLU(), nn.Conv2d(16, 3, 1))
    m = DeepLabV3(IntermediateLayerGetter(feats, {str(len(feats) - 1): "out"}), head)
    return Pick.of(init_weights(m, seed), "out")


@case
def ts11_tv_deeplabv3_mnv3(out):
    lib_case("ts11_tv_deeplabv3_mnv3", out, _deeplabv3(200), {"x": randn(201, 1, 3, 48, 64)}, library="torchvision",
             opset=11, dynamo=False,
             exercises="torchvision DeepLabV3 (MobileNetV3-small x0.1 trunk, ASPP out 16): ASPP pooling resizes 1x1 "
                       "-> 3x4 with sizes from Shape (static graph), final bilinear to the input size 48x64")


@case
def dy18_tv_deeplabv3_mnv3_dynhw(out):
    lib_case("dy18_tv_deeplabv3_mnv3_dynhw", out, _deeplabv3(202), {"x": randn(203, 2, 3, 32, 48)},
             trace_inputs={"x": randn(204, 1, 3, 64, 64)}, library="torchvision", opset=18, dynamo=True,
             dynamic={"x": DYN_NHW},
             exercises="torchvision DeepLabV3 as above, dynamic N/H/W (traced 64x64, fed 2x32x48)")


def _lraspp(seed):
    """torchvision LRASPP as _lraspp_mobilenetv3 wires it (C2 at stride 8, C5 at 16), inter channels 16."""
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.segmentation.lraspp import LRASPP
    feats = _mnv3_features(seed)
    cn = [i for i, b in enumerate(feats) if getattr(b, "_is_cn", False)]
    low, high = cn[-2], len(feats) - 1
    body = IntermediateLayerGetter(feats, {str(low): "low", str(high): "high"})
    m = LRASPP(body, feats[low].out_channels, feats[high].out_channels, 3, inter_channels=16)
    return Pick.of(init_weights(m, seed), "out")


@case
def ts12_tv_lraspp_mnv3(out):
    lib_case("ts12_tv_lraspp_mnv3", out, _lraspp(210), {"x": randn(211, 1, 3, 40, 56)}, library="torchvision",
             opset=12, dynamo=False,
             exercises="torchvision LRASPP: high (3x4) bilinear to low (5x7) and the result to the input 40x56, "
                       "sizes from Shape on a static graph, non-integer ratios")


@case
def dy20_tv_lraspp_dynbatch(out):
    lib_case("dy20_tv_lraspp_dynbatch", out, _lraspp(212), {"x": randn(213, 2, 3, 40, 56)},
             trace_inputs={"x": randn(214, 1, 3, 40, 56)}, library="torchvision", opset=20, dynamo=True,
             dynamic={"x": {0: "batch"}}, exercises="torchvision LRASPP as above, dynamo, dynamic batch")


@case
def ts13_tv_fcn_aux_dynhw(out):
    from torchvision.models._utils import IntermediateLayerGetter
    from torchvision.models.segmentation.fcn import FCN, FCNHead
    feats = _mnv3_features(220)
    body = IntermediateLayerGetter(feats, {"2": "aux", str(len(feats) - 1): "out"})
    m = FCN(body, FCNHead(feats[-1].out_channels, 3), FCNHead(feats[2].out_channels, 3))
    lib_case("ts13_tv_fcn_aux_dynhw", out, Pick.of(init_weights(m, 221), "out", "aux"),
             {"x": randn(222, 1, 3, 40, 72)}, trace_inputs={"x": randn(223, 1, 3, 64, 64)},
             library="torchvision", opset=13, dynamo=False,
             dynamic={"x": DYN_NHW, "out0": DYN_NHW, "out1": DYN_NHW},
             exercises="torchvision FCN with aux head: two bilinear resizes to the input size, dynamic N/H/W")


class _FPNNet:
    @staticmethod
    def build(seed):
        """torchvision.ops.FeaturePyramidNetwork over a 3-level trunk whose last level is dilated (stride 4 like
        the one before it): the top-down step resizes 8x10 -> 8x10, a resize to its own size."""
        from torch import nn
        from torchvision.ops import FeaturePyramidNetwork
        from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.BatchNorm2d(4), nn.ReLU())
                self.c2 = nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
                self.c3 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 2, dilation=2), nn.ReLU())
                self.fpn = FeaturePyramidNetwork([4, 8, 8], 8, extra_blocks=LastLevelMaxPool())

            def forward(self, x):
                f1 = self.c1(x)
                f2 = self.c2(f1)
                outs = self.fpn({"p1": f1, "p2": f2, "p3": self.c3(f2)})
                return tuple(outs.values())
        return init_weights(Net(), seed)


@case
def ts11_tv_fpn_own_size(out):
    lib_case("ts11_tv_fpn_own_size", out, _FPNNet.build(230), {"x": randn(231, 1, 3, 32, 40)},
             library="torchvision", opset=11, dynamo=False,
             exercises="torchvision.ops.FeaturePyramidNetwork: nearest to size=feat.shape[-2:] (Shape->Gather->"
                       "Concat at opset 11, static graph), one a resize 8x10 -> 8x10 to its own size, one 8x10 -> "
                       "16x20; LastLevelMaxPool")


@case
def ts16_tv_fpn_dynhw(out):
    lib_case("ts16_tv_fpn_dynhw", out, _FPNNet.build(232), {"x": randn(233, 2, 3, 36, 28)},
             trace_inputs={"x": randn(234, 1, 3, 32, 40)}, library="torchvision", opset=16, dynamo=False,
             dynamic={"x": DYN_NHW},
             exercises="torchvision FPN as above with dynamic N/H/W (fed 36x28: 9x7 levels, 18x14)")


@case
def ts11_tv_fpn_own_size_dynbatch(out):
    lib_case("ts11_tv_fpn_own_size_dynbatch", out, _FPNNet.build(235), {"x": randn(236, 3, 3, 32, 40)},
             trace_inputs={"x": randn(237, 1, 3, 32, 40)}, library="torchvision", opset=11, dynamo=False,
             dynamic={"x": {0: "batch"}},
             exercises="torchvision FPN with its 8x10 -> 8x10 resize to its own size, opset 11, dynamic batch only "
                       "(H/W static, sizes still from Shape->Gather->Concat)")


def _raft_tiny(seed):
    """torchvision RAFT through its own builder, every width cut (raft_small's layout at ~1/8): the correlation
    lookup is grid_sample(bilinear, align_corners=True) on absolute coordinates, the flow upsampled x8."""
    from torchvision.models.optical_flow.raft import BottleneckBlock, _raft
    m = _raft(feature_encoder_layers=(8, 8, 8, 8, 16), feature_encoder_block=BottleneckBlock,
              feature_encoder_norm_layer=None, context_encoder_layers=(8, 8, 8, 8, 16),
              context_encoder_block=BottleneckBlock, context_encoder_norm_layer=None, corr_block_num_levels=3,
              corr_block_radius=2, motion_encoder_corr_layers=(8,), motion_encoder_flow_layers=(8, 8),
              motion_encoder_out_channels=14, recurrent_block_hidden_state_size=8,
              recurrent_block_kernel_size=(3,), recurrent_block_padding=(1,), flow_head_hidden_size=8,
              use_mask_predictor=False)
    return Pick.of(init_weights(m, seed), -1, n_inputs=2, num_flow_updates=2)


@case
def ts16_tv_raft_tiny(out):
    lib_case("ts16_tv_raft_tiny", out, _raft_tiny(240), {"img1": randn(241, 1, 3, 64, 64),
                                                         "img2": randn(242, 1, 3, 64, 64)},
             library="torchvision", opset=16, dynamo=False,
             exercises="torchvision RAFT (tiny widths, 2 flow updates): correlation pyramid looked up with "
                       "GridSample bilinear align_corners zeros (grid computed at run time), flow upsampled x8 "
                       "bilinear align_corners")


class _DCNBlock:
    @staticmethod
    def build(seed):
        """The DCNv2 block as detection necks write it: a conv predicts offsets and a sigmoid mask for
        torchvision.ops.DeformConv2d."""
        import torch
        from torch import nn
        from torchvision.ops import DeformConv2d

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Conv2d(3, 4, 3, padding=1)
                self.offset = nn.Conv2d(4, 27, 3, padding=1)
                self.dcn = DeformConv2d(4, 6, 3, padding=1)

            def forward(self, x):
                x = self.stem(x)
                o = self.offset(x)
                return self.dcn(x, o[:, :18] * 2.0, torch.sigmoid(o[:, 18:]))
        return init_weights(Block(), seed)


@case
def ts19_tv_dcn_block_dynbatch(out):
    lib_case("ts19_tv_dcn_block_dynbatch", out, _DCNBlock.build(250), {"x": randn(251, 2, 3, 12, 14)},
             trace_inputs={"x": randn(252, 1, 3, 12, 14)}, library="torchvision", opset=19, dynamo=False,
             prepare=register_deform_symbolic,
             dynamic={"x": {0: "batch"}}, exercises="torchvision.ops.DeformConv2d DCNv2 block: predicted offsets "
                                                    "(x2) and sigmoid mask; DeformConv-19, dynamic batch")


@case
def dy20_tv_dcn_block_dynhw(out):
    lib_case("dy20_tv_dcn_block_dynhw", out, _DCNBlock.build(253), {"x": randn(254, 1, 3, 10, 17)},
             trace_inputs={"x": randn(255, 1, 3, 12, 14)}, library="torchvision", opset=20, dynamo=True,
             dynamic={"x": DYN_NHW}, exercises="torchvision DeformConv2d DCNv2 block, dynamo, dynamic N/H/W")


def _preprocess(size=None, scale=None):
    """PIL-style preprocessing on tensors: torchvision.transforms.v2 Resize (bicubic, antialias) + Normalize."""
    import torch
    from torchvision.transforms import InterpolationMode, v2
    from torchvision.transforms.v2 import functional as TF

    class Pre(torch.nn.Module):
        def forward(self, x):
            hw = size or [x.shape[-2] // 2, x.shape[-1] // 2]
            x = TF.resize(x, hw, interpolation=InterpolationMode.BICUBIC, antialias=True)
            return v2.functional.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    return Pre()


@case
def dy18_tv_preprocess_bicubic_aa_static(out):
    lib_case("dy18_tv_preprocess_bicubic_aa_static", out, _preprocess(size=[28, 26]),
             {"x": randn(260, 1, 3, 64, 60).abs()}, library="torchvision", opset=18, dynamo=True,
             exercises="torchvision.transforms.v2 resize(bicubic, antialias=True) 64x60 -> 28x26 + normalize: "
                       "Resize-18 cubic antialias exclude_outside downscale, static")


@case
def dy18_tv_preprocess_half_dynamic(out):
    lib_case("dy18_tv_preprocess_half_dynamic", out, _preprocess(), {"x": randn(261, 2, 3, 50, 64).abs()},
             trace_inputs={"x": randn(262, 1, 3, 64, 60).abs()}, library="torchvision", opset=18, dynamo=True,
             dynamic={"x": DYN_NHW},
             exercises="torchvision.transforms.v2 resize to (H//2, W//2), bicubic antialias, on a dynamic "
                       "X[N,3,H,W]: sizes from the input's shape (fed 50x64 -> 25x32)")


# ------------------------------------------------------------------------------------------------- kornia
