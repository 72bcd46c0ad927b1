"""Rungs 1-2 for Resize: native Interpolate-11 candidates, each built, parsed back into IR and compared with the
source IR; with run-time scales/sizes, the one candidate fed the run-time tensor and the run-time conditions
under which it is exact."""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.coords import bind_resize, plain_coord
from ...semantics.taps import cache_if_hashable
from ...semantics.errors import BridgeError
from ...semantics.ir import RUNTIME_FIELDS, ResizeIR, RuntimeValue, has_runtime_params, is_static
from ...semantics.vocab import OPENVINO_COORD_MODES
from ..passes import BUILTIN, REWRITE, Candidate, Refusal
from .extension import needs_extension
from .graph import RUNTIME_SOURCES, compile_f32, dims, np_dtype, ops, tag
from ...semantics.equivalence import diff, field_differences
from ...semantics.reference import run
from ...translate import openvino as tov
from ..compiled import resize_inputs
from .length_free import REPRESENTATIVE_LENGTH, length_free
from .own_lengths import own_lengths
from .rank_view import first_spatial, leading_units, lifted_attrs, unlifted, unviewed, view_clause, view_proof, \
    viewed
from .round_bf16 import convert_to


def interpolate_mode(ir: ResizeIR) -> dict | None:
    """The Interpolate mode spelling the sampler, or None (antialias / exclude_outside: only the pillow modes
    come near, and only under their own conditions)."""
    s = ir.sampler
    if s.kind == "nearest":
        return dict(mode="nearest", nearest_mode=s.nearest)
    if s.antialias or ir.exclude_outside:
        return None
    return dict(mode="linear_onnx") if s.kind == "linear" else dict(mode="cubic", cube_coeff=float(s.cubic_a))


def resizes_nothing(ir: ResizeIR) -> bool:
    """The node is the identity on every shape: it lists no axis (static scales of 1 leave theirs out) and pads
    nothing, so its sampler, rounding and coordinate mode never act."""
    return not ir.axes and not any(ir.pads)


def candidates(ir: ResizeIR, bound, static: bool = False):
    """(rung, description, attrs) to try in order: the ONNX spelling first, then exact rewrites. Rung numbers
    never decrease along the list, so trying rung 1's and then rung 2's keeps this order. ``static``: the input
    shape is fully known (``bound`` is the node's own shape, not a representative one)."""
    if resizes_nothing(ir):
        # Nothing resized: the identity whatever the sampler and coordinate mode (antialias, exclude_outside,
        # a mode OpenVINO does not spell), so spelled as nearest at scale 1; on every axis where all are known,
        # else on the first alone (a dynamic axis listed would take OpenVINO's length bound, ``length_free``).
        listed = list(range(ir.rank)) if static else [0]
        yield BUILTIN, "Interpolate-11 of scale 1 (the node resizes no axis)", dict(
            mode="nearest", nearest_mode="floor", coord="asymmetric", calc="scales", values=[1.0] * len(listed),
            axes=None if static else listed)
        return
    axes = [a.axis for a in bound.axes] or list(ir.axes)
    sizes = [bound.out_shape[a] for a in axes]
    s = ir.sampler
    mode = interpolate_mode(ir)
    if mode is not None:
        coord = ir.coord if ir.coord in OPENVINO_COORD_MODES else None
        if coord and isinstance(ir.scales, tuple):
            # Spelled as OpenVINO's own importer does: every axis, no axes input (the same op, one Constant
            # fewer, measured 2-6% faster on CPU than passing only the resized axes). A dynamic axis stays
            # unlisted: listed, even with scale 1, it would take OpenVINO's length bound (``length_free``).
            scale = dict(zip(ir.axes, ir.scales))
            listed = list(range(ir.rank)) if static else list(ir.axes)
            yield BUILTIN, "Interpolate-11 with the same attributes", dict(
                mode, coord=coord, calc="scales", values=[float(scale.get(a, 1)) for a in listed],
                axes=None if listed == list(range(ir.rank)) else listed)
        if coord:
            full = static and not any(ir.pads)
            yield (BUILTIN if ir.sizes is not None and ir.aspect_policy == "stretch" else REWRITE,
                   "Interpolate-11 in sizes mode", dict(mode, coord=coord, calc="sizes",
                                                        values=list(bound.out_shape) if full else sizes,
                                                        axes=None if full else axes))
        for other in OPENVINO_COORD_MODES:  # another spelling of the same coordinate map for these lengths
            if other != coord:
                yield REWRITE, f"Interpolate-11, {ir.coord} spelled as {other}", dict(
                    mode, coord=other, calc="sizes", values=sizes, axes=axes)
    if s.antialias and ir.exclude_outside and len(axes) == 2 and \
            (s.kind == "linear" or s.cubic_a == Fraction(-1, 2)):
        pillow = "bilinear_pillow" if s.kind == "linear" else "bicubic_pillow"
        yield REWRITE, f"Interpolate-11 {pillow} (= antialias + exclude_outside, half_pixel)", dict(
            mode=pillow, coord="half_pixel", calc="sizes", values=sizes, axes=sorted(axes))


def build(x, attrs: dict):
    import openvino.opset11 as ops11

    dtype = np.float32 if attrs["calc"] == "scales" else np.int64
    axes = attrs.get("axes")
    values = attrs["values"]  # constants, or the run-time tensor itself
    if isinstance(values, (list, tuple)):
        values = ops11.constant(np.array(values, dtype=dtype))
    return ops11.interpolate(
        x, values, attrs["mode"], attrs["calc"],
        coordinate_transformation_mode=attrs["coord"], nearest_mode=attrs.get("nearest_mode", "round_prefer_floor"),
        cube_coeff=attrs.get("cube_coeff", -0.75),
        axes=None if axes is None else ops11.constant(np.array(axes, dtype=np.int64)),
    )


def ties_text(ties: dict, show: int = 6) -> str:
    """``H [1, 4]; W [0, 2, 4, 6, 8, 10, ... 160 in all]``: short enough for a one-line reason."""
    parts = []
    for ax, idx in ties.items():
        body = ", ".join(map(str, idx[:show])) + (f", ... {len(idx)} in all" if len(idx) > show else "")
        parts.append(f"{ax} [{body}]")
    return "; ".join(parts)


def _f32():
    import openvino as ov

    return ov.Type.f32


def _probe_matches(ir: ResizeIR, op, shape) -> bool:
    """Run one candidate (built on a float32 input) on distinct values and compare with the oracle: which
    element a resize reads depends on neither the data nor its type, so equality here proves how fp32
    coordinates resolve the ties on this shape."""
    import openvino as ov

    model = ov.Model([op.output(0)], [p.get_node() for p in op.input_values()
                                      if p.get_node().get_type_name() == "Parameter"])
    x = (np.random.default_rng(7).permutation(int(np.prod(shape))).reshape(shape) / 7.0).astype(np.float32)
    got = compile_f32(model)([x])[0]
    want = run(ir, x, None, None, None)
    return against_oracle(ir, got, want, (x, None, None, None)).ok


def _tie_probe(ir: ResizeIR, shape, attrs: dict):
    """(shape, attrs) for ``_probe_matches``: every axis ``ir`` does not resize cut to length 1. Both sides copy
    such an axis, and which element a resized axis reads depends on its own lengths only; a 16x96 batch and
    channel block made the oracle's run the bulk of a conversion (measured: 1.7 of 2.2 s for six resizes)."""
    if any(ir.pads):
        return shape, attrs
    small = tuple(d if a in ir.axes else 1 for a, d in enumerate(shape))
    if attrs["calc"] != "sizes":
        return small, attrs
    listed = attrs["axes"] if attrs.get("axes") is not None else range(len(shape))
    return small, dict(attrs, values=[v if a in ir.axes else 1 for a, v in zip(listed, attrs["values"])])


def _first_exact(node, rungs: tuple, shape, et, scales_only: bool = False):
    """(the first candidate of ``rungs`` whose parsed IR equals the source IR on ``shape``, fp32 ties settled by
    a probe run, as (description, attrs, ties), or None; why each candidate before it failed). Asked twice per
    node (the ladder, then the proof's rebuild on fresh inputs), answered once."""
    return _first_exact_cached(node.ir, rungs, tuple(shape), et, scales_only, is_static(dims(node.inputs[0])))


@cache_if_hashable(maxsize=256)
def _first_exact_cached(ir, rungs: tuple, shape: tuple, et, scales_only: bool, static: bool):
    import openvino.opset11 as ops11

    not_native = []
    for number, desc, attrs in _candidates(ir, shape, static):
        if number not in rungs or (scales_only and attrs["calc"] != "scales"):
            continue  # scales_only: a dynamic length needs the output length computed from it
        try:
            op = build(ops11.parameter(list(shape), et), attrs)
            d = diff(ir, tov.parse_node(op), shapes=shape)
        except (BridgeError, RuntimeError) as e:
            not_native.append(f"{desc}: {e}")
            continue
        if not d.same:
            not_native.append(f"{desc} differs in " + ", ".join(
                f.name for f in d.fields if not f.name.endswith("coordinate map")) or "its coordinate map")
            continue
        small, small_attrs = _tie_probe(ir, shape, attrs)
        if d.ties and not _probe_matches(ir, build(ops11.parameter(list(small), _f32()), small_attrs), small):
            not_native.append(f"{desc}: fp32 coordinates resolve the ties at {ties_text(d.ties)} differently")
            continue
        return (desc, attrs, d.ties or None), tuple(not_native)
    return None, tuple(not_native)


def inexact_spellings(not_native) -> str:
    """The clause a later rung's reason ends with: the first Interpolate spellings tried and why not."""
    return "; no native Interpolate is exact (" + "; ".join(not_native[:2]) + ")" if not_native else ""


@functools.lru_cache(maxsize=256)
def _candidates(ir, shape: tuple, static: bool) -> tuple:
    """The Interpolate-11 spellings of ``ir`` on ``shape`` (rungs 1 and 2 share them), computed once."""
    return tuple(candidates(ir, bind_resize(ir, shape), static=static))


# Element types Interpolate computes exactly only in float32 between Converts (the CPU plugin's own bf16
# path is not in translate/dtypes.py's table): the result, rounded once, is the bf16 policy's.
THROUGH_FLOAT32 = ("bfloat16",)


def _static_rung(node, rung: int):
    """Rung 1 or 2 for static scales/sizes/roi: proven on the node's shape (a dynamic dimension bound to a
    representative length where ``length_free`` says one stands for all), for the element types whose
    arithmetic translate/openvino models as exact (``dtype_reason``)."""

    x = node.inputs[0]
    shape = dims(x)
    if shape is None:
        return Refusal("the input rank is unknown")
    dynamic = not is_static(shape)
    # A resized axis of dynamic length needs its output length computed from it (scales); a dynamic axis that
    # is not resized (a batch) leaves sizes as good as scales.
    resized_dynamic = any(shape[a] is None for a in node.ir.axes) and not isinstance(node.ir.sizes, tuple)
    if dynamic:
        why = length_free(node.ir, shape)
        if why is not None:
            return Refusal(f"input shape {list(shape)}: {why}")
        shape = tuple(REPRESENTATIVE_LENGTH if d is None else d for d in shape)
    dtype = np_dtype(x.get_element_type()).name
    # bfloat16: the op in float32 between two Converts, rounded once -- a rewrite (rung 2), whichever spelling.
    through_f32 = dtype in THROUGH_FLOAT32
    if through_f32 and rung == BUILTIN:
        return Refusal(f"{dtype} is computed exactly only in float32 between Converts (rung 2)", "dtype")
    if through_f32 and dynamic:  # measured: some outputs a step off, where no midpoint excuses it
        return Refusal(f"OpenVINO's CPU computes a dynamic-shape Interpolate between Converts a {dtype} step off",
                       "dtype")
    identity = resizes_nothing(node.ir)  # spelled as nearest (``candidates``), whatever its sampler
    why = tov.dtype_reason("Interpolate", "nearest" if identity else node.ir.sampler.kind,
                           "float32" if through_f32 else dtype, node.ir.integer_rounding != "once" and not identity)
    if why is not None:
        return Refusal(why, "dtype")
    found, not_native = _first_exact(node, (BUILTIN, REWRITE) if through_f32 else (rung,), shape,
                                     _f32() if through_f32 else x.get_element_type(), scales_only=resized_dynamic)
    found_facts = {"not_native": tuple(not_native)}  # the decomposition's reason names them
    if found is None:
        return Refusal("no Interpolate-11 spelling is exact", facts=found_facts)
    desc, attrs, ties = found
    view = leading_units(node.ir)
    data = viewed(x, view)
    attrs = lifted_attrs(attrs, view)
    if resized_dynamic:
        attrs = own_lengths(data, attrs)
        if isinstance(attrs, Refusal):
            return attrs
    op = build(ops().convert(data, "f32").output(0) if through_f32 else data, attrs)
    tag(op, f"{node.name}/native")
    y = unviewed(op.output(0), view)
    out = convert_to(y, x.get_element_type()) if through_f32 else y
    reason = desc + (f" in float32 between Converts ({dtype} rounded once)" if through_f32 else "") + \
        " computes the same numbers" + (
        f" (fp32 ties at {ties_text(ties)} measured to resolve as exact arithmetic)" if ties else "") + (
        " for every length of the dynamic dimensions below 10^6" if dynamic else "") + (
        ", its output lengths k x the input's own in int64" if resized_dynamic else "") + view_clause(node.ir, view)
    return Candidate([out], reason, proof={"op": f"{node.name}/native", "shape": shape, "ties": ties,
                                           **view_proof(view)}, facts=found_facts)


def native(node):
    """Rung 1: the ONNX spelling as Interpolate-11; with run-time parameters, fed the run-time tensor."""
    if has_runtime_params(node.ir):
        return _runtime_native(node)
    return _static_rung(node, BUILTIN)


def rewrite(node):
    """Rung 2: Interpolate-11 after an exact rewrite (sizes for scales, another coordinate spelling, pillow)."""
    if has_runtime_params(node.ir):
        return Refusal("the rewrites need the values of scales / sizes / roi")
    return _static_rung(node, REWRITE)


# Fields in which a native Interpolate fed the run-time values may differ from the source IR, and the
# run-time condition under which that difference changes no number. Any other difference rules it out.
_RUNTIME_CONDITIONS = {
    "size_rule": "no L*s lies within 1e-6 below an integer (OpenVINO adds 1e-6 before flooring)",
    "equal_length_identity": "no resized axis keeps its length with a scale other than 1 (OpenVINO copies it)",
    "formula_length": "L*s is an integer on every resized axis (OpenVINO divides by the integer length)",
    "length1": "no output length is 1 (pytorch_half_pixel reads 0 there in OpenVINO, -1/2 in ONNX)",
    "arith": "no source coordinate falls on a rounding boundary (OpenVINO computes coordinates in float32)",
}


def _runtime_native(node):
    """Rung 1 with run-time scales/sizes: Interpolate-11 fed the run-time tensor, exact under the conditions it
    states. A refusal here is why the node needs the extension; so is --strict declining the conditions."""
    ir = node.ir
    key = next(k for k in RUNTIME_FIELDS if isinstance(getattr(ir, k), RuntimeValue))
    got = _runtime_interpolate(node)
    if isinstance(got, str):
        return needs_extension(f"{key} is fed at run time and {got}")
    op, conditions, view = got
    declined = {"why_custom": f"--strict: a native Interpolate is exact only if {'; and '.join(conditions)}"} \
        if conditions and node.strict else {}
    tag(op, f"{node.name}/native")
    return Candidate([unviewed(op.output(0), view)],
                     "Interpolate-11 fed the run-time " + key + view_clause(ir, view), conditions=tuple(conditions),
                     proof={"op": f"{node.name}/native", **view_proof(view)}, facts=declined)


def _runtime_interpolate(node):
    """(the Interpolate fed the run-time values, the conditions under which it is exact, the unit axes of its view:
    ``rank_view``), or why there is none."""

    ir = node.ir
    if ir.roi is not None or ir.aspect_policy != "stretch":
        return "roi / keep-aspect policies fed at run time have no native spelling"
    mode = interpolate_mode(ir)
    if mode is None:
        return "antialias / exclude_outside have no native spelling with run-time scales"
    coord = plain_coord(ir)  # half_pixel_symmetric of given sizes is half_pixel
    if coord not in OPENVINO_COORD_MODES:
        return f"coordinate mode {ir.coord} has no native spelling"
    why = tov.dtype_reason("Interpolate", ir.sampler.kind, np_dtype(node.inputs[0].get_element_type()).name,
                           ir.integer_rounding != "once")
    if why is not None:
        return why
    inputs = resize_inputs(ir, node.inputs)  # (X, roi, scales, sizes) also for Upsample / Resize-10
    calc, values = ("scales", inputs[2]) if isinstance(ir.scales, RuntimeValue) else ("sizes", inputs[3])
    view = leading_units(ir)
    data = viewed(node.inputs[0], view)
    op = build(data, lifted_attrs(dict(mode, coord=coord, calc=calc, values=values, axes=list(ir.axes)), view))
    try:
        got = unlifted(tov.parse_node(op), view)
    except BridgeError as e:
        return f"OpenVINO's Interpolate cannot take it: {e.message}"
    ok, conditions = runtime_conditions(ir, got, view)
    return (op, conditions, view) if ok else conditions


def outer_resized(ir: ResizeIR, view: int = 0) -> tuple:
    """The listed axes before ``first_spatial`` that the run-time scales / sizes may resize (the graph does not
    pin them to X's own length: ``RuntimeValue.same_as_input``); linear / cubic only (nearest measured exact).
    ``view``: the op reads ``ir``'s input with that many unit axes in front (``rank_view``)."""
    value = ir.scales if isinstance(ir.scales, RuntimeValue) else ir.sizes
    if ir.sampler.kind == "nearest" or not isinstance(value, RuntimeValue):
        return ()
    pinned = ir.pinned_axes(value)
    return tuple(a for a in ir.axes if a + view < first_spatial(ir.rank + view) and a not in pinned)


def runtime_conditions(ir: ResizeIR, got: ResizeIR, view: int = 0) -> tuple[bool, list | str]:
    """(True, conditions under which ``got`` computes ``ir``'s numbers) or (False, why it never does); ``got``
    read over a view of ``view`` leading unit axes (``rank_view.unlifted``)."""

    calc = "scales" if isinstance(ir.scales, RuntimeValue) else "sizes"
    if plain_coord(ir) != ir.coord:  # the same map at every length (``coords.plain_coord``)
        ir = dataclasses.replace(ir, coord=plain_coord(ir))
    conditions = []
    for f in field_differences(ir, got):
        if f.name in RUNTIME_SOURCES:
            continue
        if f.name == "formula_length" and ir.coord not in ("align_corners", "half_pixel_symmetric",
                                                          "tf_crop_and_resize"):
            continue  # only these modes use the output length in their formula
        if f.name == "length1" and ir.coord != "pytorch_half_pixel":
            continue
        if f.name == "arith" and ir.sampler.kind != "nearest":
            continue  # linear and cubic are continuous in the coordinate: no ties
        if f.name == "size_rule" and calc == "sizes":
            continue
        if f.name == "equal_length_identity" and calc == "sizes":
            continue  # sizes: an axis keeping its length has scale out/in = 1, an identity map in both
        if f.name == "unit_scale_identity" and got.equal_length_identity:
            continue  # a scale of exactly 1 keeps the length, and Interpolate copies every such axis
        if f.name not in _RUNTIME_CONDITIONS:
            return False, f"Interpolate differs in {f.name} ({f.a} vs {f.b})"
        conditions.append(_RUNTIME_CONDITIONS[f.name])
    outer = outer_resized(ir, view)
    if outer:
        conditions.append(f"the run-time {calc} keep the length of axis {', '.join(map(str, outer))} (OpenVINO's "
                          f"CPU Interpolate resizes {ir.sampler.kind} on the spatial axes only)")
    return True, conditions
