"""Corpus cases: detection transforms that size the image at run time from min/max ratios (issue 40).

torchvision's GeneralizedRCNNTransform (Faster R-CNN, RetinaNet, FCOS, Mask R-CNN) resizes every image by
scale = min(min_size / min(H, W), max_size / max(H, W)) and pads it to a multiple of 32: the ONNX exporters write
that as Shape -> Cast -> ReduceMin/Max -> Div -> Min -> Mul -> Floor chains feeding Resize's sizes (or scales).
Our reading of such a chain once froze it to 224x224 where every runtime gives 224x320 (FCOS). The detector's
own transform code, with a small seeded head instead of a backbone (the resize is what these cases exercise; a
whole detector's boxes after NMS are not a stable reference)."""

from __future__ import annotations

from export_common import case, export_torch, gen, init_weights


def _transformed(min_size: int, max_size: int, seed: int):
    import torch
    from torchvision.models.detection.transform import GeneralizedRCNNTransform

    class Transformed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transform = GeneralizedRCNNTransform(min_size, max_size, [0.485, 0.456, 0.406],
                                                      [0.229, 0.224, 0.225])
            self.head = torch.nn.Conv2d(3, 2, 4, stride=4)  # small outputs: the corpus has a size budget

        def forward(self, img):
            images, _ = self.transform([img[0]])
            return self.head(images.tensors)

    return init_weights(Transformed(), seed)


def _picture(seed, shape):
    import torch

    return torch.rand(*shape, generator=gen(seed))  # values in [0, 1), as the transform expects


def _export(name, out, *, opset, dynamo, shape, seed, export_defect=None):
    export_torch(name, out, _transformed(224, 320, seed), {"image": _picture(seed, shape)}, opset=opset,
                 export_defect=export_defect,
                 dynamo=dynamo, dynamic={"image": {2: "H", 3: "W"}},
                 exercises="torchvision GeneralizedRCNNTransform: sizes from min/max ratios of the run-time "
                           "image shape, then padding to a multiple of 32")


@case
def ts16_tv_rcnn_transform_dynhw(out):
    _export("ts16_tv_rcnn_transform_dynhw", out, opset=16, dynamo=False, shape=(1, 3, 105, 150), seed=900)


@case
def ts11_tv_rcnn_transform_tall_dynhw(out):
    _export("ts11_tv_rcnn_transform_tall_dynhw", out, opset=11, dynamo=False, shape=(1, 3, 150, 70), seed=901)


@case
def dy18_tv_rcnn_transform_dynhw(out):
    # Measured (torch 2.14.1) at 250x190: eager resizes to 294x223 (the float32 scale 224/190 times 190 is
    # 223.99998), the dynamo export computes the size in float64 and writes 294x224; the padding to 32 hides it in
    # the output's shape. At the fed 125x95 the same happens (scale 224/95).
    _export("dy18_tv_rcnn_transform_dynhw", out, opset=18, dynamo=True, shape=(1, 3, 125, 95), seed=902,
            export_defect="dynamo computes the resized size in float64 where eager's float32 scale "
                          "gives one pixel less; every value moves")


def _pasted(seed: int):
    """torchvision's paste_masks_in_image (Mask R-CNN's last step): as ONNX, a Loop over the detections whose body
    resizes each 28x28 mask (bilinear) to its box's size, computed in the body at run time (no shape information
    for the body's tensors in a TorchScript export), and pads it into the image."""
    import torch
    from torchvision.models.detection.roi_heads import paste_masks_in_image

    class Pasted(torch.nn.Module):
        def forward(self, masks, boxes, image):
            return paste_masks_in_image(masks, boxes, (image.shape[-2], image.shape[-1]))

    return init_weights(Pasted(), seed)


@case
def ts11_tv_paste_masks_loop_dynhw(out):
    import torch

    masks = torch.rand(3, 1, 28, 28, generator=gen(910))
    # Boxes well inside the image and at least 2 pixels wide: at a box of one pixel OpenVINO's CPU reads
    # uninitialised memory for the zero padding around it (measured, its own importer too; not a resize).
    boxes = torch.tensor([[3.2, 4.7, 30.1, 25.9], [10.0, 2.5, 40.0, 33.3], [20.4, 12.1, 61.7, 45.0]])
    image = torch.rand(1, 3, 48, 64, generator=gen(911))
    export_torch("ts11_tv_paste_masks_loop_dynhw", out, _pasted(912),
                 {"masks": masks, "boxes": boxes, "image": image}, opset=11, dynamo=False,
                 dynamic={"masks": {0: "N"}, "boxes": {0: "N"}, "image": {2: "H", 3: "W"}},
                 exercises="torchvision paste_masks_in_image: a Loop whose body resizes each mask (bilinear) to "
                           "its box's run-time size, no shape information inside the body")
