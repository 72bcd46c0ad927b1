"""Whether a scales- or sizes-mode Interpolate proven on one length of the input's dynamic dimensions is exact
at every length (``length_free``), and the length the proof binds a dynamic one to."""

from __future__ import annotations

from fractions import Fraction

from ...semantics.lengths import floor_agrees_below
from ...semantics.ir import ResizeIR

# A dynamic length stands for every length: the one the proof binds it to. Any works where ``length_free``
# holds (the tap tables then repeat with the length); 16 covers several periods of every power-of-two scale.
REPRESENTATIVE_LENGTH = 16
LENGTH_FREE_BELOW = 10**6  # ``length_free``'s claim: the source's own output length rule is L * s below it
_DYADIC_COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "tf_half_pixel_for_nn")


def length_free(ir: ResizeIR, shape) -> str | None:
    """None when a scales-mode Interpolate proven on one value of the dynamic dimensions of ``shape`` is exact
    for every value below 10^6, else why not. Its output lengths are fed as k x the input's own in int64
    (``own_lengths``): OpenVINO's scales mode computes floor(float32(L) * (s + 1e-6)), L * s + 1 from
    L = 983040 at s = 2, 393216 at s = 16 (``lengths.floor_agrees_below``; its own importer shares that, on every
    dynamic axis the op lists: a scale-1 axis stays unlisted). A dynamic axis that is not resized
    (scale 1: copied by both) is irrelevant; a resized one needs an integer scale (output length L * s, and
    the source coordinate of output o depends on o and s only); nearest needs a coordinate mode whose formula
    does not read the length (align_corners and half_pixel_symmetric do) and a power-of-two scale, so float32
    evaluates every source coordinate exactly and no rounding boundary moves; linear and cubic read the length
    through the same formula as the source, their float32 steps within the error bound (tf_crop_and_resize
    aside: its roi)."""
    if isinstance(ir.sizes, tuple) and ir.roi is None:
        # Sizes: an axis that is not resized is copied whatever its length; a resized one's map reads it,
        # through the same formula on both sides (sizes mode: the scale is out/L at run time). Linear and
        # cubic are continuous in the coordinate, their float32 steps within the error bound at every length;
        # nearest's ties move with the length.
        resized = [a for a in ir.axes if shape[a] is None]
        if resized and ir.aspect_policy != "stretch":
            # The output lengths and the common scale come from every resized axis's length: a square
            # representative shape hides the policy (sizes as given), another one fixes other lengths.
            return f"axis {resized[0]} has a dynamic length and keep_aspect_ratio_policy {ir.aspect_policy} " \
                   "derives the output lengths from it"
        if resized and ir.sampler.kind == "nearest":
            return f"axis {resized[0]} has a dynamic length and a given size: nearest's rounding ties move " \
                   "with the length"
        return None
    if not isinstance(ir.scales, tuple) or ir.roi is not None:
        return "sizes / roi with a dynamic input length change the coordinate map with the length"
    scale = dict(zip(ir.axes, ir.scales))
    for i, d in enumerate(shape):
        s = scale.get(i, Fraction(1))
        if d is not None or s == 1:
            continue
        if s.denominator != 1:
            return f"axis {i} has a dynamic length and the non-integer scale {float(s)}"
        if floor_agrees_below(s, ir.size_rule) < LENGTH_FREE_BELOW:
            return f"axis {i} has a dynamic length and the {ir.size_rule} rule's float product of the scale {s} " \
                   f"rounds below {LENGTH_FREE_BELOW}"
        if ir.coord not in _DYADIC_COORDS and (ir.sampler.kind == "nearest" or ir.coord == "tf_crop_and_resize"):
            # Linear and cubic read the length through the same formula on both sides (the IR diff is
            # symbolic), and float32 steps stay within the error bound; nearest's ties move with the length.
            return f"axis {i} has a dynamic length and {ir.coord} reads the length in its formula"
        if ir.sampler.kind == "nearest" and s.numerator & (s.numerator - 1):
            return f"axis {i} has a dynamic length and nearest with the scale {s}, not a power of two"
    return None
