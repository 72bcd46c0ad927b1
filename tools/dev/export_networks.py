"""Corpus cases: whole networks (ViT position embedding, UNet, DBNet), ultralytics' own YOLOv8 export, and a
model shipped as ONNX in a pip package (PP-OCRv4 det)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

# A sibling by its plain name: the exporter runs as a file (see export_models.py).
from export_common import PINS, case, export_torch, finish, gen, init_weights, randn, run_ort, to_np


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
                self.cls = torch.nn.Parameter(torch.randn(1, 1, 8, generator=gen(70)))
                self.pos = torch.nn.Parameter(torch.randn(1, 1 + 16, 8, generator=gen(71)))

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
    export_torch("dy18_vit_posembed_const", out, _ViTEmbedFactory.build(), {"img": randn(73, 1, 3, 24, 28)},
                 opset=18, dynamo=True, optimize=False,
                 exercises="ViT position-embedding interpolation, static shapes, dynamo with optimize=False (the "
                           "default before torch 2.7): Resize(bicubic) of a constant 4x4 grid to constant sizes "
                           "6x7, a node an importer folds into a Constant (with optimize=True the exporter itself "
                           "folds it and no Resize is left)")


@case
def dy18_vit_posembed_dynhw(out):
    export_torch("dy18_vit_posembed_dynhw", out, _ViTEmbedFactory.build(), {"img": randn(74, 2, 3, 20, 32)},
                 trace_inputs={"img": randn(75, 1, 3, 24, 28)}, opset=18, dynamo=True,
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

    m = init_weights(UNet(), 80)
    export_torch("dy18_unet_bilinear", out, m, {"x": randn(81, 1, 3, 20, 28)}, opset=18, dynamo=True,
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

    m = init_weights(Seg(), 82)
    export_torch("ts13_unet_align_corners_dynbatch", out, m, {"x": randn(83, 2, 3, 16, 12)},
                 trace_inputs={"x": randn(84, 1, 3, 16, 12)}, opset=13, dynamo=False,
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

    m = init_weights(DB(), 90)
    export_torch("ts11_dbnet_head", out, m, {"x": randn(91, 1, 3, 64, 96)},
                 trace_inputs={"x": randn(92, 1, 3, 64, 64)}, opset=11, dynamo=False,
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
        init_weights(model.model, seed)
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
        img = torch.rand(*fed_shape, generator=gen(seed + 1))
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
        finish(name, out, f, {"images": to_np(img)}, {"output0": to_np(y)}, meta)


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
        g = gen(120)
        import torch
        # A synthetic "page": light background with dark strokes, normalised as rapidocr does ((x/255-0.5)/0.5).
        page = torch.full((1, 3, 64, 96), 230.0)
        for r in range(3):
            page[:, :, 10 + 18 * r: 16 + 18 * r, 8: 88] = 30.0
        page += torch.randn(page.shape, generator=g) * 8
        feeds = {"x": ((page / 255.0 - 0.5) / 0.5).numpy().astype(np.float32)}
        expected = run_ort(path, feeds)
        meta = {"exporter": "Paddle2ONNX (shipped as rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx in "
                            "rapidocr-onnxruntime 1.4.4)", "dynamo": None, "requested_opset": None,
                "reference": "onnxruntime 1.32.0 CPU (PaddlePaddle is not installable here)",
                "exercises": "real Paddle2ONNX DBNet text detector: 6 Resize-11 nearest asymmetric/floor x2..x8 "
                             "with constant roi/scales, dynamic N/H/W (fed 64x96)",
                "dynamic_axes": {"x": {0: "N", 2: "H", 3: "W"}},
                "license": "Apache-2.0 (rapidocr-onnxruntime; model from PaddleOCR, Apache-2.0); see LICENSE"}
        finish(name, out, path, feeds, expected, meta)
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
