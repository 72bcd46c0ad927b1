"""What onnx-tensorrt's ONNX importer builds from a Resize / Upsample / GridSample / DeformConv node, predicted
without TensorRT (a sibling of ``translate/onnxruntime.py``: what one runtime computes, as IR).

``import_node(view, opset)``: the layer settings onnx-tensorrt 10.10-10.15 builds for the node
(``translate.tensorrt`` turns them into IR), or its refusal with the importer's own message. The rules are read
from the importer's checker and importer source (``onnxOpCheckers.cpp``, ``onnxOpImporters.cpp``,
``importerUtils.cpp``); messages are quoted from them where ``quoted`` is True, paraphrased otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, RuntimeValue, is_static
from ..semantics.vocab import ONNX_UPSAMPLE_MODES
from .dtypes import TENSORRT as TENSORRT_DTYPES
from .tensorrt.settings import UNVERIFIED, parse_settings


class Imported:
    """What the importer does with one node: ``settings`` of the layer it builds (or the plugin it calls), or
    ``rejected`` with its ``message``. ``quoted``: the message is the importer's own text; ``stage``: where it
    fails (checker / importer / build). ``ir``: what the built layer computes. ``notes``: silent choices the
    importer makes (an attribute it does not read, an unknown string it maps to a default)."""

    def __init__(self, settings=None, message=None, quoted=True, stage="checker", notes=None, ir=None,
                 fields=None):
        self.settings = settings
        self.message = message
        self.quoted = quoted
        self.stage = stage
        self.notes = list(notes or [])
        self.ir = ir
        self.fields = fields  # a textual difference where no IR value can carry the importer's result

    @property
    def rejected(self) -> bool:
        return self.message is not None

    def __repr__(self) -> str:
        return f"Imported(rejected: {self.message!r})" if self.rejected else f"Imported({self.settings!r})"


def _reject(msg, quoted=True, stage="checker") -> Imported:
    return Imported(message=msg, quoted=quoted, stage=stage)


def _s(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _flat(v):
    if v is None or isinstance(v, RuntimeValue):
        return v
    a = np.asarray(v).reshape(-1)
    return None if a.size == 0 else a


_BAD_TYPES = TENSORRT_DTYPES["refused"]


def import_node(view, opset: int) -> Imported:
    """What onnx-tensorrt 10.10-10.15 builds for ``view`` (a ``translate.onnx.NodeView``) in a model of
    default-domain ``opset``. The node's domain is ignored, as the importer ignores it."""
    op = view.op_type
    try:
        if op == "Resize":
            imp = _import_resize(view, opset)
        elif op == "Upsample":
            imp = _import_upsample(view, opset)
        elif op == "GridSample":
            imp = _import_gridsample(view)
        elif op == "DeformConv":
            return _import_deformconv(view)
        else:
            raise BridgeError(f"{op} is not a resampling op", view.name)
    except BridgeError as e:
        # A layer setting that TensorRT's API refuses (e.g. linear on more than 3 axes through setOutputDimensions).
        return Imported(message=e.message, quoted=False, stage="build")
    if not imp.rejected and imp.ir is None:
        try:
            imp.ir = parse_settings(imp.settings)
        except BridgeError as e:
            return Imported(message=e.message, quoted=False, stage="build", notes=imp.notes)
    return imp


def _input_checks(view) -> Imported | None:
    dt = view.dtype(0)
    if dt in _BAD_TYPES:
        return _reject(f"input of type {dt.upper()} is not supported (checkNotInvalidType BOOL, UINT8)", False,
                       "importer")
    shp = view.shape(0)
    if shp is not None and len(shp) == 0:
        return _reject("a scalar input is not supported", False, "importer")
    return None


def _scatter(values, axes, full, fill):
    out = list(full) if full is not None else [fill] * len(axes)
    for v, a in zip(values, axes):
        out[a] = v
    return out


def _import_resize(view, opset: int) -> Imported:
    a = view.attrs
    mode = _s(a.get("mode", "nearest"))
    # --- checker (onnxOpCheckers.cpp DEFINE_OP_CHECKER(Resize)), all static errors of the node
    errors = []
    if mode not in ("cubic", "linear", "nearest"):
        errors.append("Invalid Resize mode")
    coord = _s(a.get("coordinate_transformation_mode", "half_pixel"))
    nearest_mode = _s(a.get("nearest_mode", "round_prefer_floor"))
    if opset >= 11:
        if coord == "tf_half_pixel_for_nn" and nearest_mode != "round_prefer_floor":
            errors.append("This version of TensorRT only support round_prefer_floor nearest mode in "
                          "tf_half_pixel_for_nn!")
        if coord not in ("align_corners", "tf_half_pixel_for_nn", "pytorch_half_pixel", "half_pixel", "asymmetric"):
            errors.append("TensorRT only supports half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, asymmetric "
                          "and align_corners transformation modes!")
    if int(a.get("antialias", 0)) != 0:
        errors.append("Antialiasing is not supported currently.")
    if _s(a.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        errors.append("Only `stretch` is supported currently as `keep_aspect_ratio_policy`.")
    axes_attr = a.get("axes")
    if axes_attr is not None and len(set(axes_attr)) != len(list(axes_attr)):
        errors.append("The input axes must have unique elements.")
    if errors:
        return _reject("; ".join(errors))
    bad = _input_checks(view)
    if bad:
        return bad
    # --- importer (onnxOpImporters.cpp DEFINE_BUILTIN_OP_IMPORTER(Resize))
    shape = view.shape(0)
    rank = len(shape) if shape is not None else None
    notes = []
    s: dict[str, Any] = {"layer": "resize", "input_shape": shape, "dtype": view.dtype(0),
                         "resize_mode": {"cubic": "CUBIC", "linear": "LINEAR"}.get(mode, "NEAREST"),
                         "selector_for_single_pixel": "FORMULA", "nearest_rounding": "HALF_DOWN",
                         "cubic_coeff": -0.75, "exclude_outside": False}
    if opset < 11:
        s["coordinate_transformation"] = "ASYMMETRIC"
        s["nearest_rounding"] = "FLOOR"
        return _sizing_from_scales(view, 1, s, rank, None, notes, mode)
    if coord == "tf_half_pixel_for_nn":
        s["coordinate_transformation"] = "HALF_PIXEL"
        s["nearest_rounding"] = "CEIL"
        for key in ("exclude_outside", "cubic_coeff_a"):
            if key in a:
                notes.append(f"{key} is not read under tf_half_pixel_for_nn")
        if _flat(view.const(2)) is None and view.input(3):
            return _reject("tf_half_pixel_for_nn with sizes: the importer only reads the scales input, which is "
                           "empty here (it fails or errors)", False, "importer")
        axes = _axes(axes_attr, rank)
        return _sizing_from_scales(view, 2, s, rank, axes, notes, mode)
    s["coordinate_transformation"] = {"align_corners": "ALIGN_CORNERS", "asymmetric": "ASYMMETRIC"}.get(
        coord, "HALF_PIXEL")
    if coord == "pytorch_half_pixel":
        s["selector_for_single_pixel"] = "UPPER"
    if mode == "nearest":
        rounding = {"floor": "FLOOR", "ceil": "CEIL", "round_prefer_floor": "HALF_DOWN",
                    "round_prefer_ceil": "HALF_UP"}.get(nearest_mode)
        if rounding is None:
            notes.append(f"unknown nearest_mode {nearest_mode!r} silently kept at kHALF_DOWN")
            rounding = "HALF_DOWN"
        s["nearest_rounding"] = rounding
    s["exclude_outside"] = bool(int(a.get("exclude_outside", 0)))
    if mode == "cubic":
        s["cubic_coeff"] = float(np.float32(a.get("cubic_coeff_a", -0.75)))
    axes = _axes(axes_attr, rank)
    sizes = view.const(3) if view.input(3) else None
    if sizes is not None and not (isinstance(sizes, np.ndarray) and np.asarray(sizes).size == 0):
        if isinstance(sizes, RuntimeValue):
            s["shape_input"] = sizes.source
            return Imported(s, notes=notes)
        vals = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if axes is not None:
            if shape is None or any(shape[i] is None for i in range(rank) if i not in axes):
                s["shape_input"] = f"{sizes_name(view)} interlaced with shape(X)"
                return Imported(s, notes=notes)
            vals = _scatter(vals, axes, shape, None)
        s["shape"] = tuple(vals)
        return Imported(s, notes=notes)
    return _sizing_from_scales(view, 2, s, rank, axes, notes, mode)


def sizes_name(view) -> str:
    return view.input(3) or "sizes"


def _axes(axes_attr, rank):
    if axes_attr is None or rank is None:
        return None
    axes = [int(x) % rank for x in axes_attr]
    return None if axes == list(range(rank)) else axes


def _window_check(s, scales, mode) -> Imported | None:
    if mode in ("linear", "bilinear", "cubic"):
        n = 2 if mode == "cubic" else 3
        if len(scales) > n and any(v != 1 for v in scales[:len(scales) - n]):
            word = "cubic" if mode == "cubic" else "linear"
            return _reject(f"This version of TensorRT only supports {word} resizing on the outermost {n} dimensions",
                           True, "importer")
    return None


def _sizing_from_scales(view, idx, s, rank, axes, notes, mode) -> Imported:
    scales = view.const(idx) if view.input(idx) else None
    if isinstance(scales, RuntimeValue):
        if axes is not None:
            return _reject("axes with a run-time scales tensor must list every axis", False, "importer")
        s["shape_input"] = f"floor(float32(shape(X)) * {scales.source})"
        s["shape_input_scales"] = scales.source
        return Imported(s, notes=notes)
    vals = _flat(scales)
    if vals is None:
        return _reject("neither a constant sizes nor a scales input is given", False, "importer")
    vals = [float(np.float32(v)) for v in vals]
    if axes is not None:
        vals = _scatter(vals, axes, None if rank is None else [1.0] * rank, 1.0)
    if rank is not None and len(vals) != rank:
        return _reject("The shape of the scales input must aligin with the dimensions of the input.", True, "importer")
    bad = _window_check(s, vals, mode)
    if bad:
        return bad
    s["scales"] = tuple(vals)
    return Imported(s, notes=notes)


def _import_upsample(view, opset: int) -> Imported:
    a = view.attrs
    mode = _s(a.get("mode", "nearest"))
    if mode not in ONNX_UPSAMPLE_MODES:
        return _reject("The attribute mode can only be nearest, linear, or bilinear.")
    bad = _input_checks(view)
    if bad:
        return bad
    shape = view.shape(0)
    rank = len(shape) if shape is not None else None
    s = {"layer": "resize", "input_shape": shape, "dtype": view.dtype(0),
         "resize_mode": "NEAREST" if mode == "nearest" else "LINEAR", "coordinate_transformation": "ASYMMETRIC",
         "selector_for_single_pixel": "FORMULA", "nearest_rounding": "FLOOR"}
    if opset < 9:
        vals = [float(np.float32(v)) for v in a.get("scales", [])]
        bad = _window_check(s, vals, mode)
        if bad:
            return bad
        s["scales"] = tuple(vals)
        return Imported(s)
    return _sizing_from_scales(view, 1, s, rank, None, [], mode)


def _import_gridsample(view) -> Imported:
    a = view.attrs
    if len([i for i in view.inputs]) != 2:
        return _reject("GridSample takes exactly 2 inputs", False, "importer")
    for i in (0, 1):
        if view.dtype(i) in _BAD_TYPES:
            return _reject(f"input of type {view.dtype(i).upper()} is not supported", False, "importer")
    xs, gs_ = view.shape(0), view.shape(1)
    if xs is not None and gs_ is not None and len(xs) != len(gs_):
        return _reject("X and grid must have the same rank", False, "importer")
    notes = []
    padding = _s(a.get("padding_mode", "zeros"))
    sample = {"zeros": "FILL", "border": "CLAMP", "reflection": "REFLECT"}.get(padding)
    if sample is None:
        notes.append(f"unknown padding_mode {padding!r} silently becomes kFILL")
        sample = "FILL"
    mode = _s(a.get("mode", "bilinear"))  # the importer's default string is the opset-16 name
    interp = {"nearest": "NEAREST", "bilinear": "LINEAR", "bicubic": "CUBIC"}.get(mode)
    if interp is None:
        notes.append(f"mode {mode!r} is not one of nearest/bilinear/bicubic: the importer silently runs kNEAREST "
                     "(NVIDIA/TensorRT #4646, onnx-tensorrt PR #1060)")
        interp = "NEAREST"
    rank = len(xs) if xs is not None else (len(gs_) if gs_ is not None else None)
    if rank is not None and rank != 4:
        return Imported(message="INetworkDefinition::addGridSample: Error Code 3: API Usage Error (input and grid "
                        f"must be rank 4; this is rank {rank})", quoted=True, stage="build", notes=notes)
    s = {"layer": "grid_sample", "input_shape": xs, "grid_shape": gs_, "dtype": view.dtype(0),
         "interpolation_mode": interp, "align_corners": bool(int(a.get("align_corners", 0))), "sample_mode": sample}
    return Imported(s, notes=notes)


def _import_deformconv(view) -> Imported:
    """DeformConv -> the OSS ModulatedDeformConv2d plugin (importerUtils.cpp modulatedDeformableConvPluginHelper)."""
    a = view.attrs
    xs, ws = view.shape(0), view.shape(1)
    rank = len(xs) if xs is not None else (len(ws) if ws is not None else None)
    if rank not in (3, 4):
        return _reject("TensorRT only supports DeformConv on 3D, or 4D tensors!", True, "importer")
    types = {view.dtype(i) for i in (0, 1, 2)}
    if len(types) != 1 or types.pop() not in (*TENSORRT_DTYPES["deformconv"], None):
        return _reject("X, W and offset must all be FLOAT or all FLOAT16", False, "importer")
    D = rank - 2
    pads = [int(p) for p in a.get("pads", [0] * 2 * D)]
    if pads[:D] != pads[D:]:
        return _reject("TensorRT only supports DeformConv where the same number of pixels are added to the "
                       "beginning and the end of each axis (pads begin == end)", False, "importer")
    if view.input(4) and not view.input(3):
        return _reject("Trying to access weights or a null tensor! (an empty B with a mask)", True, "importer")
    stride = [int(v) for v in a.get("strides", [1] * D)]
    dil = [int(v) for v in a.get("dilations", [1] * D)]
    if D == 1:  # unsqueezed on axis 3 with stride 1, pad 0, dilation 1
        stride, pads, dil = stride + [1], [pads[0], 0], dil + [1]
    fields = {"stride": stride, "padding": pads[:2] if D == 2 else pads, "dilation": dil,
              "group": int(a.get("group", 1)), "deformable_group": int(a.get("offset_group", 1))}
    ks = a.get("kernel_shape")
    if ks is None and ws is not None and is_static(ws[2:]):
        ks = list(ws[2:])
    s = {"layer": "ModulatedDeformConv2d", "version": "1 (10.10) / 2 (10.15)", "fields": fields,
         "kernel_shape": tuple(int(k) for k in ks) if ks is not None and D == 2 else None,
         "input_shape": xs, "weight_shape": ws, "dtype": view.dtype(0), "has_bias": bool(view.input(3)),
         "has_mask": bool(view.input(4))}
    notes = [] if view.input(4) else ["the mask is a ones tensor made by the importer (harmless)"]
    if D == 1:
        s1, p1, d1 = stride[0], pads[0], dil[0]
        if (s1, p1, d1) == (1, 0, 1):
            ir = DeformConvIR(1, (int(ks[0]),) if ks is not None else None, (1,), (0, 0), (1,), fields["group"],
                              fields["deformable_group"], s["has_bias"], s["has_mask"], input_shape=xs,
                              weight_shape=ws, dtype=view.dtype(0), origin="ModulatedDeformConv2d")
            return Imported(s, notes=notes, ir=ir)
        return Imported(s, notes=notes, fields=[
            f"1-D stride {s1}, pad {p1}, dilation {d1} reach the plugin on the unsqueezed axis after its H/W swap "
            f"(derived from the plugin source; {UNVERIFIED})"])
    return Imported(s, notes=notes, ir=parse_settings(s))


__all__ = ["import_node", "Imported", "sizes_name"]
