"""Shared by the torch tests: export a one-call module, parse it, and judge the oracle against PyTorch eager
under the one tolerance policy, tie indices of a float32 nearest excepted (the IR's own ``diff`` names them)."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np
import torch

from resample_bridge.semantics import reference
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.equivalence import diff, off_ties
from resample_bridge.semantics.ir import ResizeIR
from resample_bridge.translate.torch import parse_program


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def export(fn, *inputs, dynamic_shapes=None):
    return torch.export.export(Call(fn), tuple(inputs), dynamic_shapes=dynamic_shapes)


def probe(shape, dtype=torch.float32, seed=0):
    """Seeded noise with the extremes and a run of equal values in it."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 10
    flat = x.view(-1)
    flat[:4] = torch.tensor([1e6, -1e6, 0.0, 0.0], dtype=torch.float64)[: flat.numel()]
    return x.to(dtype)


def tie_mask(ir, shape, out_shape):
    """False at output indices on a floating-point tie of a float32 nearest ``ir`` (any axis)."""
    if not isinstance(ir, ResizeIR) or ir.arith == "exact":
        return np.ones(out_shape, dtype=bool)
    return off_ties(diff(ir, dataclasses.replace(ir, arith="exact"), tuple(shape)), len(shape), out_shape)


def judge(fn, *inputs, oracle_inputs=None):
    """(IR, CompareResult) of the oracle on the exported call's IR against PyTorch eager."""
    (name, ir), = parse_program(export(fn, *inputs))
    want_eager = fn(*inputs).numpy()
    arrays = oracle_inputs or [t.numpy() for t in inputs]
    got = reference.run(ir, *arrays)
    mask = tie_mask(ir, arrays[0].shape, want_eager.shape) if got.shape == want_eager.shape else None
    if mask is not None and not mask.all():
        got = np.where(mask, got, want_eager)
    return ir, against_oracle(ir, want_eager, got, arrays)


class TorchvisionBlocks(torch.nn.Module):
    """torchvision's FPN (F.interpolate(size=..., mode="nearest") per level) and a DeformConv2d block, seeded."""

    def __init__(self, tv):
        super().__init__()
        torch.manual_seed(0)
        self.fpn = tv.ops.FeaturePyramidNetwork([8, 16], 8)
        self.offset = torch.nn.Conv2d(8, 18, 3, padding=1)
        self.dcn = tv.ops.DeformConv2d(8, 6, 3, padding=1)

    def forward(self, a, b):
        out = self.fpn(OrderedDict([("a", a), ("b", b)]))["a"]
        return self.dcn(out, self.offset(out))


class SpatialTransformer(torch.nn.Module):
    """F.affine_grid feeding F.grid_sample, both with the same align_corners: an STN's warp."""

    def __init__(self, size, align: bool):
        super().__init__()
        self.size, self.align = size, align

    def forward(self, x, theta):
        grid = torch.nn.functional.affine_grid(theta, self.size, align_corners=self.align)
        return torch.nn.functional.grid_sample(x, grid, align_corners=self.align)
