"""PyTorch resampling calls -> IR: one parser per aten / torchvision op family. No torch import here: the
caller (``translate/torch.py``) hands each call over as plain values (``Call``), so these rules read and test
without torch installed.

PyTorch's rules, as IR fields (aten/src/ATen/native/UpSample.h of torch 2.14, and measured against eager CPU):

* output length from ``scale_factors``: ``compute_output_size``, the float64 product L * s truncated
  (``size_rule="floor_fp64"``).
* scale in the coordinate map: ``compute_scales_value``, 1/s where a scale is given (``scale_source="user"``,
  also for ``.vec`` with ``recompute_scale_factor`` not True, which passes the scales on), in/out otherwise
  (``"ratio"``; ``F.interpolate(recompute_scale_factor=True)`` passes sizes and no scales).
* ``align_corners=True``: ``area_pixel_compute_scale``, (in-1)/(out-1) from the integer lengths and 0 at output
  length 1, whatever the scale (``coord="align_corners"``, ``formula_length="integer"``).
* linear / cubic, ``align_corners=False``: ``area_pixel_compute_source_index``, scale*(dst+0.5)-0.5 at every
  output length (``half_pixel``: no length-1 rule). Linear clamps a negative source to 0, which reads what
  the two edge-clamped taps would (element 0); cubic keeps it and clamps each tap
  (``upsample_get_value_bounded``: ``exclude_outside=False``), Keys A = -0.75.
* linear copies an axis whose lengths agree (``compute_source_index_and_lambda``): ``equal_length_identity``;
  so does antialias (measured: scale_factor (1.05, 2.5) on 10x13 equals (1.0, 2.5)); bicubic does not.
* nearest: ``nearest_neighbor_compute_source_index``, floorf(dst * scale) (``asymmetric`` + ``floor``);
  nearest-exact: ``nearest_neighbor_exact_compute_source_index``, floorf((dst + 0.5) * scale), the half-up
  rounding of the half_pixel coordinate (``half_pixel`` + ``round_prefer_ceil``). Both in float32 whatever
  the dtype (``arith="fp32"``: ``diff`` reports the tie indices).
* ``nearest_idx`` (nearest only) copies an axis whose lengths agree and reads dst >> 1 where out == 2*in.
  Measured on CPU: the 2-D kernel copies equal lengths always (``equal_length_identity``), the 1-D and 3-D
  kernels never; the 2-D kernel's dst >> 1 depends on the tensor (L=10..50, s=2.001..2.097 take it, L=100,
  s=2.009 takes floorf(dst/s)), so a 2-D nearest whose user scale can land on exactly 2*in is refused.
* antialias (``_upsample_*_aa``): ``_compute_indices_min_size_weights_aa``, centre scale*(dst+0.5), support
  R/min(1/scale, 1), only taps inside the input, weights normalised: ONNX's antialias + exclude_outside on
  ``half_pixel``; its bicubic filter is PIL's, A = -0.5. Measured: to an output width of 1 with the height
  resized, the kernel writes one value down the column (1x3x10x2 -> 20x1); refused where the lengths are known.
* grid_sampler: ``grid_sampler_compute_source_index`` (unnormalise in the input dtype, then clip / reflect),
  nearest ``nearbyint`` (half to even) of the reflected coordinate (ONNX rounds first: refused where that differs,
  reflection with align_corners=False), bicubic pads each tap (``padding_on="taps"``), A = -0.75.
* affine_grid_generator (``F.affine_grid``): not a resampling op but the grid a spatial transformer feeds to
  grid_sampler: ``linspace_from_neg_one``, 0 for an axis of length 1 (``semantics/affine_grid.py``).
* torchvision deform_conv2d: ``bilinear_interpolate`` reads 0 for a tap outside the input (``zero_taps``);
  its offset layout [N, offset_groups*kh*kw*2, H, W], (dy, dx) pairs, is ONNX DeformConv's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..semantics.affine_grid import AffineGridIR
from ..semantics.lengths import output_length
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler


@dataclass(frozen=True)
class Tensor:
    """What a parser needs of a tensor argument: its shape (None for a dimension known only at run time)
    and dtype (numpy's name)."""

    shape: tuple
    dtype: str


@dataclass(frozen=True)
class Call:
    """One call: ``op`` is the overload's name ("aten.upsample_bilinear2d.vec"), ``args`` every schema
    argument by name (defaults filled in), tensors as ``Tensor``, a length known only at run time as None."""

    name: str
    op: str
    args: dict = field(hash=False)

    @property
    def packet(self) -> str:
        """The op without namespace and overload: "upsample_bilinear2d"."""
        return self.op.split(".")[1]


# aten op -> (sampler family, spatial rank)
RESIZE_OPS = {
    **{f"upsample_nearest{d}d": ("nearest", d) for d in (1, 2, 3)},
    **{f"_upsample_nearest_exact{d}d": ("nearest_exact", d) for d in (1, 2, 3)},
    "upsample_linear1d": ("linear", 1),
    "upsample_bilinear2d": ("linear", 2),
    "upsample_trilinear3d": ("linear", 3),
    "upsample_bicubic2d": ("cubic", 2),
    "_upsample_bilinear2d_aa": ("linear_aa", 2),
    "_upsample_bicubic2d_aa": ("cubic_aa", 2),
}
GRID_OPS = ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d")
DEFORM_OPS = ("deform_conv2d",)
GENERATOR_OPS = ("affine_grid_generator",)  # grid producers: checked against their call, never lowered
GRID_MODES = ("bilinear", "nearest", "bicubic")  # aten's interpolation_mode enum, in order
GRID_PADDINGS = ("zeros", "border", "reflection")  # aten's padding_mode enum, in order
# A call's tensor arguments in the order the IR's oracle and the ladders take a node's inputs (ONNX's: Resize X;
# GridSample X, grid; DeformConv X, W, offset, B, mask), by schema name ("self" stands for "input" where so named).
ORACLE_INPUTS = {"resize": ("input",), "gridsample": ("input", "grid"),
                 "deformconv": ("input", "weight", "offset", "bias", "mask")}
_SCALE_ARGS = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}

_SAMPLERS = {
    "nearest": Sampler("nearest", nearest="floor"),
    "nearest_exact": Sampler("nearest", nearest="round_prefer_ceil"),
    "linear": Sampler("linear"),
    "cubic": Sampler("cubic", cubic_a=Fraction(-3, 4)),
    "linear_aa": Sampler("linear", antialias=True),
    "cubic_aa": Sampler("cubic", cubic_a=Fraction(-1, 2), antialias=True),
}


# The families that copy an axis whose lengths agree, whatever the scale (module docstring).
_COPY_EQUAL = ("linear", "linear_aa", "cubic_aa")


def is_resampling(packet: str) -> bool:
    return packet in RESIZE_OPS or packet in GRID_OPS or packet in DEFORM_OPS


def is_grid_generator(packet: str) -> bool:
    return packet in GENERATOR_OPS


_INTERPOLATE_MODES = {"nearest": "nearest", "nearest_exact": "nearest-exact", "linear": None, "cubic": "bicubic",
                      "linear_aa": None, "cubic_aa": "bicubic"}
_LINEAR_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}


def user_call(op: str, args: dict) -> str:
    """The Python call that produces ``op`` with ``args``, as the user wrote it (F.interpolate, F.grid_sample,
    torchvision.ops.deform_conv2d); the op itself where no such spelling exists."""
    packet = op.split(".")[1]
    if packet in RESIZE_OPS:
        family, d = RESIZE_OPS[packet]
        parts = [f"mode={_INTERPOLATE_MODES[family] or _LINEAR_MODES[d]!r}"]
        scales = args.get("scale_factors") or [args[k] for k in _SCALE_ARGS[d] if args.get(k) is not None]
        if args.get("output_size") is not None:
            parts.append(f"size={tuple(args['output_size'])}")
        if scales:
            parts.append(f"scale_factor={tuple(scales)}")
        if "align_corners" in args and not family.endswith("_aa"):
            parts.append(f"align_corners={args['align_corners']}")
        if family.endswith("_aa"):
            parts.append("antialias=True")
        return f"F.interpolate({', '.join(parts)})"
    if packet in GRID_OPS:
        m, p = int(args["interpolation_mode"]), int(args["padding_mode"])
        mode = GRID_MODES[m] if 0 <= m < len(GRID_MODES) else m
        pad = GRID_PADDINGS[p] if 0 <= p < len(GRID_PADDINGS) else p
        return f"F.grid_sample(mode={mode!r}, padding_mode={pad!r}, align_corners={args['align_corners']})"
    if packet in DEFORM_OPS:
        return (f"torchvision.ops.deform_conv2d(stride=({args['stride_h']}, {args['stride_w']}), "
                f"padding=({args['pad_h']}, {args['pad_w']}), dilation=({args['dilation_h']}, "
                f"{args['dilation_w']}){', mask=...' if args.get('use_mask') else ''})")
    if packet in GENERATOR_OPS:
        return f"F.affine_grid(theta, size={list(args['size'])}, align_corners={args['align_corners']})"
    return op


def parse_call(call: Call):
    if call.packet in RESIZE_OPS:
        return parse_upsample(call)
    if call.packet in GRID_OPS:
        return parse_grid_sampler(call)
    if call.packet in DEFORM_OPS:
        return parse_deform_conv2d(call)
    if call.packet in GENERATOR_OPS:
        return parse_affine_grid(call)
    raise BridgeError(f"{call.op} is not a resampling op", call.name, "op")


def _input(call: Call) -> Tensor:
    x = call.args.get("input", call.args.get("self"))
    if not isinstance(x, Tensor):
        raise BridgeError("the input is not a tensor", call.name, "input")
    return x


def _arith(dtype: str) -> str:
    return "fp64" if dtype == "float64" else "fp32"


def _check_float(call: Call, x: Tensor) -> None:
    if x.dtype not in ("float32", "float64"):
        raise BridgeError(f"dtype {x.dtype}: only float32 and float64 calls are parsed (PyTorch's "
                          f"reduced-precision and integer kernels are not measured)", call.name, "dtype")


def _lengths(call: Call, d: int):
    """(scales or None, sizes or None) as the call gives them, per spatial axis."""
    a = call.args
    if call.op.endswith(".vec"):
        sizes, scales = a.get("output_size"), a.get("scale_factors")
        if (sizes is None) == (scales is None):
            raise BridgeError("exactly one of output_size and scale_factors must be given", call.name,
                              "scale_factors")
    else:
        sizes = a.get("output_size")
        scales = [a.get(k) for k in _SCALE_ARGS[d]]
        if all(s is None or s <= 0 for s in scales):
            scales = None  # compute_scales_value ignores a scale <= 0
        elif any(s is None or s <= 0 for s in scales):
            raise BridgeError(f"scales {scales} are given for some axes only (the kernel would mix user "
                              f"scales and length ratios)", call.name, _SCALE_ARGS[d][0])
    if scales is not None:
        if len(scales) != d:
            raise BridgeError(f"{len(scales)} scales for {d} spatial axes", call.name, "scale_factors")
        scales = tuple(Fraction(float(s)) for s in scales)
    if sizes is not None:
        if len(sizes) != d:
            raise BridgeError(f"{len(sizes)} sizes for {d} spatial axes", call.name, "output_size")
        sizes = tuple(sizes)
    return scales, sizes


def parse_upsample(call: Call) -> ResizeIR:
    family, d = RESIZE_OPS[call.packet]
    x = _input(call)
    _check_float(call, x)
    rank = len(x.shape)
    if rank != d + 2:
        raise BridgeError(f"input has rank {rank}, {call.packet} takes {d + 2}", call.name, "input")
    scales, sizes = _lengths(call, d)
    axes = tuple(range(2, rank))
    align = bool(call.args.get("align_corners", False))
    if family.endswith("_aa") and align:
        raise BridgeError("antialias with align_corners=True centres the filter at (in-1)/(out-1)*(dst+0.5), "
                          "which no IR coordinate map expresses", call.name, "align_corners")
    if scales is not None and sizes is not None:
        scales = _scales_with_sizes(call, x, scales, sizes, axes)
        sizes = None
    if sizes is not None:
        sizes = tuple(int(s) for s in sizes) if all(isinstance(s, int) for s in sizes) else \
            RuntimeValue(f"{call.name}.output_size")
    if family == "nearest" and d == 2 and scales is not None:
        _refuse_double_shortcut(call, x, scales)
    if family.endswith("_aa"):
        _refuse_aa_width_one(call, x, scales, sizes)
    coord = "align_corners" if align else ("asymmetric" if family == "nearest" else "half_pixel")
    return ResizeIR(
        rank=rank, axes=axes, scales=scales, sizes=sizes, roi=None, coord=coord, sampler=_SAMPLERS[family],
        exclude_outside=family.endswith("_aa"), size_rule="floor_fp64",
        scale_source="user" if scales is not None else "ratio", formula_length="integer", length1="zero",
        equal_length_identity=family in _COPY_EQUAL or (family == "nearest" and d == 2),
        arith="fp32" if family.startswith("nearest") else _arith(x.dtype),
        input_shape=tuple(x.shape), dtype=x.dtype, origin=call.op)


def _scales_with_sizes(call: Call, x: Tensor, scales, sizes, axes):
    """``.default`` with both: the lengths are the sizes and the coordinate map takes the user scales. The IR
    holds scales whose float64 rule gives those very lengths; where it does not (or the input length is
    known only at run time), refused."""
    for s, n, ax in zip(scales, sizes, axes):
        L = x.shape[ax]
        if L is None or not isinstance(n, int) or output_length(L, s, "floor_fp64") != n:
            raise BridgeError(f"output_size {list(sizes)} with scales {[float(v) for v in scales]}: the lengths do "
                              f"not follow from the scales (the kernel maps coordinates by the scale)",
                              call.name, _SCALE_ARGS[len(axes)][0])
    return scales


def _refuse_aa_width_one(call: Call, x: Tensor, scales, sizes) -> None:
    """Antialias to an output width of 1 with the height resized: PyTorch's kernel writes one value down every
    column (measured: 1x3x10x2 -> 20x1 is constant, 10x1 is right); refused where the lengths are known."""
    H, W = x.shape[2:]
    if isinstance(sizes, tuple):
        out = sizes
    elif scales is not None and None not in (H, W):
        out = tuple(output_length(L, s, "floor_fp64") for L, s in zip((H, W), scales))
    else:
        return
    if out[1] == 1 and out[0] not in (1, H):
        raise BridgeError(f"antialias to width 1 with the height resized ({H} -> {out[0]}): PyTorch's kernel "
                          f"writes one value down the whole column (measured)", call.name, "output_size")


def _refuse_double_shortcut(call: Call, x: Tensor, scales) -> None:
    """2-D nearest: where a user scale other than 2 gives out == 2*in, the kernel reads dst >> 1 or
    floorf(dst/s) depending on the tensor (module docstring); refuse that one case."""
    for s, L in zip(scales, x.shape[2:]):
        if s == 2:
            continue
        if L is None:
            hit = 2 < s < 3  # floor(L*s) == 2L needs 2 <= s < 2 + 1/L
        else:
            hit = output_length(L, s, "floor_fp64") == 2 * L
        if hit:
            raise BridgeError(f"scale_factor {float(s)} gives twice the input length, where PyTorch's 2-D nearest "
                              f"kernel reads dst >> 1 on some tensors and floor(dst/scale) on others; give "
                              f"scale_factor=2.0 or size=", call.name, "scale_factor")


def parse_grid_sampler(call: Call) -> GridSampleIR:
    a = call.args
    x, grid = a.get("input"), a.get("grid")
    _check_float(call, x)
    d = len(x.shape) - 2
    if d not in (2, 3) or len(grid.shape) != d + 2:
        raise BridgeError(f"input rank {len(x.shape)}, grid rank {len(grid.shape)}: grid_sampler takes 4-D or "
                          f"5-D", call.name, "grid")
    mode, padding = int(a["interpolation_mode"]), int(a["padding_mode"])
    if not 0 <= mode < len(GRID_MODES):
        raise BridgeError(f"interpolation_mode {mode} is not one of {list(GRID_MODES)}", call.name, "mode")
    if not 0 <= padding < len(GRID_PADDINGS):
        raise BridgeError(f"padding_mode {padding} is not one of {list(GRID_PADDINGS)}", call.name,
                          "padding_mode")
    if d == 3 and GRID_MODES[mode] == "bicubic":
        raise BridgeError("bicubic is 2-D only in PyTorch", call.name, "mode")
    if GRID_MODES[mode] == "nearest" and GRID_PADDINGS[padding] == "reflection" and not a["align_corners"]:
        # PyTorch reflects the coordinate and then rounds it; ONNX's GridSample (onnxruntime) and OpenVINO's round
        # and then reflect the tap, which half to even about the edge -0.5 is not the same where a reflected
        # coordinate lies on a half (measured: H = 16, y = -1.5: PyTorch row 4, onnxruntime row 3).
        raise BridgeError("nearest, reflection, align_corners=False: PyTorch reflects before it rounds (y = -1.5 "
                          "on 16 rows reads row 4), ONNX and OpenVINO round first (row 3); no form computes "
                          "PyTorch's order", call.name, "padding_mode")
    sampler = {"bilinear": Sampler("linear"), "nearest": Sampler("nearest", nearest="half_even"),
               "bicubic": Sampler("cubic", cubic_a=Fraction(-3, 4))}[GRID_MODES[mode]]
    return GridSampleIR(spatial_rank=d, sampler=sampler, padding=GRID_PADDINGS[padding],
                        align_corners=bool(a["align_corners"]), padding_on="taps", arith=_arith(x.dtype),
                        input_shape=tuple(x.shape), grid_shape=tuple(grid.shape), dtype=x.dtype, origin=call.op)


def parse_deform_conv2d(call: Call) -> DeformConvIR:
    a = call.args
    x, w = a["input"], a["weight"]
    _check_float(call, x)
    ints = {k: a[k] for k in ("stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w", "groups",
                              "offset_groups")}
    unknown = [k for k, v in ints.items() if not isinstance(v, int)]
    if unknown:
        raise BridgeError(f"{unknown[0]} is known only at run time", call.name, unknown[0])
    kernel = tuple(w.shape[2:])
    return DeformConvIR(
        spatial_rank=2, kernel_shape=kernel if None not in kernel else None,
        strides=(ints["stride_h"], ints["stride_w"]), pads=(ints["pad_h"], ints["pad_w"]) * 2,
        dilations=(ints["dilation_h"], ints["dilation_w"]), group=ints["groups"],
        offset_group=ints["offset_groups"], has_bias=True, has_mask=bool(a["use_mask"]),
        input_shape=tuple(x.shape), weight_shape=tuple(w.shape), dtype=x.dtype, origin=call.op)


def parse_affine_grid(call: Call) -> AffineGridIR:
    a = call.args
    theta, size = a.get("theta"), a.get("size")
    if not isinstance(theta, Tensor):
        raise BridgeError("theta is not a tensor", call.name, "theta")
    _check_float(call, theta)
    if not isinstance(size, (list, tuple)) or len(size) not in (4, 5):
        raise BridgeError(f"size {size}: affine_grid takes [N, C, H, W] or [N, C, D, H, W]", call.name, "size")
    if not all(isinstance(n, int) for n in size):
        raise BridgeError(f"size {list(size)} is known only at run time", call.name, "size")
    r = len(size) - 2
    if len(theta.shape) != 3 or tuple(theta.shape[1:]) != (r, r + 1):
        raise BridgeError(f"theta of shape {list(theta.shape)} for a {r}-D grid: [N, {r}, {r + 1}] expected",
                          call.name, "theta")
    return AffineGridIR(spatial_rank=r, size=tuple(size), align_corners=bool(a["align_corners"]), length1="zero",
                        dtype=theta.dtype, origin=call.op)
