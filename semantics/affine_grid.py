"""The affine grid generator (PyTorch's ``F.affine_grid`` / ``aten.affine_grid_generator``, ONNX AffineGrid-20):
the sampling grid a spatial transformer or a kornia warp feeds to ``grid_sample``. Not a resampling op (it reads
no image), so not one of ``opspec.SPECS``: no lowering of its own; ``check --source`` judges the exporters' and
OpenVINO's PyTorch frontend's forms of it against PyTorch (``tools/check_source_grid.py``). Imports numpy only.

grid[n, *pos, k] = sum_j theta[n, k, j] * base_j(pos) + theta[n, k, r], base_j the normalised coordinate of the
position on spatial axis j (x first: the last axis), r the spatial rank. Per axis of length L, exactly:

* ``align_corners=False``: (2i + 1) / L - 1 (pixel centres, -1 and 1 at the outer edges);
* ``align_corners=True``: 2i / (L - 1) - 1 (the corner pixels' centres at -1 and 1);
* length 1 (``length1``): PyTorch's ``linspace_from_neg_one`` returns 0 whatever align_corners says
  (``"zero"``); with align_corners=True, onnxruntime and the ONNX reference put -1 there, -1 + 0 * (2 / 0)
  (``"minus_one"``, measured on onnxruntime 1.32.0 and onnx 1.23.2; OpenVINO's ONNX frontend computes 0).
  Without align_corners both give 0.

Exact for floats: within the forward error bound of a float32 evaluation (``bound``): the base coordinate
rounded (linspace's -1 + i * step, then times (L-1)/L: a few roundings of terms up to 2), the products and the
sum of r + 1 terms.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

U = 2.0 ** -24  # float32 unit roundoff (error_bound.U)
C = 4  # roundings per term, with room for a fused or reordered evaluation (error_bound's constants)
LENGTH1 = ("zero", "minus_one")


@dataclass(frozen=True)
class AffineGridIR:
    spatial_rank: int  # 2 (theta N x 2 x 3) or 3 (N x 3 x 4)
    size: tuple  # (N, C, *spatial), the output grid's lengths
    align_corners: bool
    length1: str = "zero"  # an axis of length 1 with align_corners=True (module docstring)
    dtype: str | None = None
    origin: str = field(default="", compare=False)

    kind = "affinegrid"

    @property
    def grid_shape(self) -> tuple:
        return (self.size[0], *self.size[2:], self.spatial_rank)


def base_coordinates(L: int, align_corners: bool, length1: str = "zero") -> list[Fraction]:
    """The exact normalised coordinate of each of the L positions of one axis."""
    if L == 1:
        return [Fraction(-1) if align_corners and length1 == "minus_one" else Fraction(0)]
    if align_corners:
        return [Fraction(2 * i, L - 1) - 1 for i in range(L)]
    return [Fraction(2 * i + 1, L) - 1 for i in range(L)]


def _base_grid(ir: AffineGridIR) -> np.ndarray:
    """[*spatial, r + 1]: the homogeneous base coordinates (x, y[, z], 1) of every position, float64."""
    spatial = ir.size[2:]
    axes = [np.array([float(v) for v in base_coordinates(L, ir.align_corners, ir.length1)]) for L in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # mesh[j] varies along spatial axis j (D, H, W order)
    return np.stack([*mesh[::-1], np.ones(tuple(spatial))], axis=-1)


def run(ir: AffineGridIR, theta: np.ndarray) -> np.ndarray:
    """The oracle: the grid from the exact base coordinates, in float64 (compared within ``bound``)."""
    theta = np.asarray(theta, dtype=np.float64)
    _check_theta(ir, theta)
    return np.einsum("...j,nkj->n...k", _base_grid(ir), theta)


def bound(ir: AffineGridIR, theta: np.ndarray) -> np.ndarray:
    """Per grid element: how far a float32 evaluation may land from the oracle's grid. Each base coordinate is
    off by C*u per unit of its terms (|-1| + |i * step| + the (L-1)/L factor: at most 3); the sum of r + 1
    products by C*u each, relative to their magnitudes (the output's own rounding included)."""
    t = np.abs(np.asarray(theta, dtype=np.float64))
    terms = np.einsum("...j,nkj->n...k", np.abs(_base_grid(ir)), t)
    weights = t[:, :, :-1].sum(axis=2).reshape((t.shape[0],) + (1,) * ir.spatial_rank + (ir.spatial_rank,))
    return C * U * (3 * weights + (ir.spatial_rank + 1) * terms)


def _check_theta(ir: AffineGridIR, theta: np.ndarray) -> None:
    r = ir.spatial_rank
    if theta.shape != (ir.size[0], r, r + 1):
        raise ValueError(f"theta of shape {list(theta.shape)} for an affine grid of size {list(ir.size)}: "
                         f"[{ir.size[0]}, {r}, {r + 1}] expected")


def field_differences(a: AffineGridIR, b: AffineGridIR) -> list[tuple[str, object, object, bool]]:
    """(field, a's value, b's value, whether it changes a number at these lengths): each field that differs,
    material where giving ``a`` that one field of ``b`` moves some base coordinate."""
    out = []
    for f in dataclasses.fields(a):
        if f.name in ("dtype", "origin"):
            continue
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if va != vb:
            changed = dataclasses.replace(a, **{f.name: vb})
            out.append((f.name, va, vb, f.name == "size" or _bases(changed) != _bases(a)))
    return out


def _bases(ir: AffineGridIR) -> list:
    return [base_coordinates(L, ir.align_corners, ir.length1) for L in ir.size[2:]]
