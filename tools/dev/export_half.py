"""Corpus cases, continued: float16 models as a GPU deployment exports them (``model.half()``, then
``torch.onnx.export``): every tensor float16, the upsampling lengths computed in the graph. The reference is
PyTorch eager in float16 on the CPU (meta.json "reference"); the tests judge float16 outputs by float16's
tolerance. Builders from export_libraries.py; the corpus stays under its 15 MiB (a float16 SegFormer, 0.3 MB, did
not fit)."""

from __future__ import annotations

# Siblings by their plain names: the exporter runs as a file (see export_models.py).
from export_common import case, randn
from export_libraries import DYN_NHW, _deeplabv3, lib_case

REFERENCE = "pytorch eager (float16, CPU)"


def _half(inputs: dict) -> dict:
    return {k: v.half() for k, v in inputs.items()}


@case
def ts17_tv_deeplabv3_half_dynhw(out):
    lib_case("ts17_tv_deeplabv3_half_dynhw", out, _deeplabv3(240).half(), _half({"x": randn(241, 1, 3, 40, 56)}),
             trace_inputs=_half({"x": randn(242, 1, 3, 64, 64)}), library="torchvision", opset=17, dynamo=False,
             dynamic={"x": DYN_NHW}, reference=REFERENCE,
             exercises="torchvision DeepLabV3 in float16, TorchScript, dynamic N/H/W: ASPP pooling resizes 1x1 to "
                       "the feature size and the logits to the input size, both sizes Concat(Shape[:2], Shape(..)"
                       "[2:]) at run time (fed 40x56)")
