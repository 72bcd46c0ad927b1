"""Rung 3 for an 8- or 16-bit integer linear or cubic Resize whose lengths are known only at run time, or whose static
tap tables need a common den past int32 (``_given_length_as_scale``): the window of
``antialias_taps`` (every tap's position and distance n / den in integers, ``window_positions``) with its weights
kept as integer numerators, and the sum accumulated exactly in int32 and rounded once, half to even, as the oracle
does (``semantics.reference``: exact rational weights, one rounding). The float window (``antialias_taps``) sums
float32 weights, which put a result within a float32 rounding of .5 on either side; OpenVINO's Interpolate does
the same (one off near an exact half, measured); so this took the extension before.

Which windows. Linear, exclude_outside or not: any lengths (its den 2*out for half_pixel's sizes). Cubic and
antialias: a static scale, whose distances have a constant den (2k for half_pixel at a whole scale k, the sizes
form divided by in; 2P*Q at P/Q); Keys' weights are integer cubes over W = a.denominator * den^3. Where the
weights are divided by their sum (antialias that shrinks, exclude_outside) den is that sum, one per output
(``integer_taps``: every bound checked at conversion, or linear's run-time one where the kept taps sum to at most
den). Antialias where no axis shrinks (a static scale >= 1) is plain: the clamped stretch is 1 and the weights sum
to 1. Not: cubic or antialias on run-time sizes (den = 2*out*in: past int32).

Arithmetic. Values are offset to v - min >= 0 (below the type's range: 2^8, 2^16). The state after each resized
axis is value = F + G / D with F the whole part and 0 <= G < D, D the product of the axes' denominators (linear:
the window's den per axis, 2*out for half_pixel; cubic: W). An axis with taps k, numerators w_k (sum den) reads
U = sum w_k * F[i_k] (below the range times den) and V = sum w_k * G[i_k] (below D * den), so
value = floor(U / den) + (U mod den * D + V) / (D * den): the new whole part and remainder, the remainder's
carry (below 2 * D * den; with cubic's negative weights in -D * den .. 3 * D * den) folded in. Every intermediate
stays below 2^31 while D * den <= 2^30 (``MAX_DEN``: two resized axes of outputs up to 16384 each; three or more
resized axes are refused) and each den is below 2^31 over the type's range (``max_den``; cubic: bounded at
conversion), and every quotient is ``index_ops.floor_div``'s, fixed by its exact remainder. The last step rounds
half to even from the sign of 2G - D and the parity of F. No float op at all: no inference precision can move a
value.

Proof by numbers: each axis' window subgraph (index, numerators, den), compiled alone and re-read from the
produced model with parameters in place of its run-time lengths, gives the oracle's exact rational taps
(``semantics.taps.axis_taps``' exact weights) over ``antialias_taps.GRID``; the probes run the whole node against
the oracle (ties and extremes included).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from ...semantics.ir import ResizeIR
from ...semantics.nearest_index import NoNearestIndex
from ...semantics.taps import axis_taps
from ...semantics.window_form import WindowForm, one_axis_bound, window_form
from ..index_form import Verdicts
from ..passes import Candidate, Refusal
from .antialias_taps import GRID, _fixed, _out_length, copied, window_positions
from .graph import dims, ops, tag
from .index_ops import cached_verdict, floor_div, signature, tag_of
from .integer_taps import MAX_DEN, numerators, run_time_bound, taps, type_range
from .integer_taps import refusal as too_wide
from .antialias_proof import window_cut
from .interpolate import inexact_spellings
from .nearest_index import tags_in_copy

FORM = "integer_window"
DTYPES = ("uint8", "int8", "uint16", "int16")
MAX_AXES = 2
KINDS = ("linear", "cubic")
REASON = ("index decomposition: the {kind} window computed in integers from the input's lengths, its taps summed "
          "exactly in int32 and rounded once, half to even (no float op)")
VERDICTS = Verdicts()  # in memory: a grid of 261 small runs, a fraction of a second per form


_INTEGERS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def integer(ir: ResizeIR) -> bool:
    """Whether ``ir`` resizes an integer tensor (this form's, or no run-time window form's)."""
    return str(ir.dtype) in _INTEGERS


def takes(ir: ResizeIR) -> bool:
    """Whether rung 3 of the Resize ladder tries the integer window on ``ir``: an integer linear / cubic resize (on
    run-time lengths, or static ones the tap tables did not take)."""
    return integer(ir) and ir.sampler.kind in KINDS


def refusal(ir: ResizeIR) -> Refusal | None:
    """Why the integer window does not take ``ir`` (an integer linear Resize on run-time lengths), or None."""
    if str(ir.dtype) not in DTYPES:
        return Refusal(f"{ir.dtype}: the exact integer window takes 8- and 16-bit integers (their sums fit int32)",
                       "dtype")
    if ir.sampler.kind not in KINDS:
        return Refusal(f"{ir.sampler.kind}: the exact integer window takes linear and cubic", "mode")
    if len([a for a in ir.axes if a not in copied(ir)]) > MAX_AXES:
        return Refusal(f"more than {MAX_AXES} resized axes: the product of their denominators leaves int32", "axes")
    return None


def max_den(dtype: str) -> int:
    """The largest denominator of one axis whose whole-part sum U = sum w_k * F[i_k] (below the type's range
    times den) stays inside int32: 2^23 for 8-bit types, 2^15 for 16-bit (outputs up to 16383 for half_pixel's
    2*out)."""
    return (1 << 31) // type_range(dtype)


def integer_weights(form: WindowForm, in_len, out_len, scale=None):
    """(index i64 [K, out] clamped into the input, numerators i64 [K, out], den): the weight of each tap is its
    numerator over den, exactly (``integer_taps.numerators``: linear's den - |n|, Keys' integer cubes); under
    exclude_outside a tap outside the input has numerator 0; where the form divides the weights by their sum
    (antialias, exclude_outside) den is that sum per output, i64 [out], else one i64 scalar. ``scale``: the common
    scale's (I, S) where the form reads it (``window_form.aspect_window``)."""
    o = ops()
    zero, one = o.constant(np.int64(0)), o.constant(np.int64(1))
    pos, n, den = window_positions(form, in_len, out_len, 0, scale)
    num, den = numerators(form, o.abs(n).output(0), den)
    last = o.subtract(in_len, one)
    if form.exclude_outside:
        inside = o.logical_and(o.greater_equal(pos, zero), o.less_equal(o.subtract(pos, last), zero))
        num = o.select(inside, num, zero).output(0)
    if form.normalise:
        den = o.maximum(o.reduce_sum(num, o.constant(np.int64(0)), False), one).output(0)
    index = o.minimum(o.maximum(pos, zero), last).output(0)
    return index, num, den


def exact_sum(name: str, x, axes: list, rank: int, dtype: str, signed: bool = False):
    """The resized axes' taps (``axes``: (axis, index, numerators, den, taps) in order; den a scalar or one per
    output) summed exactly (the module note's arithmetic) and rounded half to even, in ``x``'s own integer type.
    ``signed``: cubic's negative weights put the whole part below 0 and the remainder's carry in -1 .. 2
    (``integer_taps.refusal``: the weights' magnitudes sum to less than 2 of their den)."""
    o = ops()
    lo, hi = (int(v) for v in (np.iinfo(dtype).min, np.iinfo(dtype).max))
    i64 = lambda v: o.constant(np.int64(v)).output(0)  # noqa: E731
    whole = o.subtract(o.convert(x, "i64"), i64(lo)).output(0)  # F >= 0
    rest, D = None, None  # G and D (none before the first axis: G = 0, D = 1)
    for axis, index, num, den, taps in axes:
        trail = o.constant(np.arange(1, rank - axis, dtype=np.int64)) if axis < rank - 1 else None
        if den.get_partial_shape().rank.get_length() == 1 and trail is not None:
            den = o.unsqueeze(den, trail).output(0)  # one per output: along its axis
        U = V = None
        for k in range(taps):
            pick = i64(k)
            at, w = o.gather(index, pick, i64(0)), o.gather(num, pick, i64(0))
            w = o.unsqueeze(w, trail) if trail is not None else w
            g = o.gather(whole, at, i64(axis))
            U = o.multiply(g, w) if U is None else o.add(U, o.multiply(g, w))
            if rest is not None:
                h = o.multiply(o.gather(rest, at, i64(axis)), w)
                V = h if V is None else o.add(V, h)
        F = floor_div(U.output(0), den, MAX_DEN)
        G = o.subtract(U, o.multiply(F, den)).output(0)
        if rest is None:
            whole, rest, D = F, G, den
            continue
        R = o.add(o.multiply(G, D), V).output(0)  # below 2 * D * den (linear), -D * den .. 3 * D * den (cubic)
        D = o.multiply(D, den).output(0)
        carry = _carry(R, D, signed)
        whole = o.add(F, carry).output(0)
        rest = o.subtract(R, o.multiply(carry, D)).output(0)
    # half to even: up where 2G > D, or 2G = D and F odd (signs of exact differences)
    t = o.subtract(o.add(rest, rest), D)
    odd = o.equal(o.floor_mod(whole, i64(2)), i64(1))
    up = o.logical_or(o.greater(t, i64(0)), o.logical_and(o.equal(t, i64(0)), odd))
    y = o.add(o.add(whole, o.convert(up, "i64")), i64(lo))
    y = o.convert(o.minimum(o.maximum(y, i64(lo)), i64(hi)), x.get_element_type())
    tag(y, f"{name}/{FORM}")
    return y.output(0)


def _carry(R, D, signed: bool):
    """floor(R / D) for R in [0, 2D), or in [-D, 3D) where ``signed``: from signs of exact int32 differences."""
    o = ops()
    zero = o.constant(np.int64(0))

    def at_least(k):
        step = D if k == 1 else o.multiply(D, o.constant(np.int64(k)))
        return o.convert(o.greater_equal(o.subtract(R, step), zero), "i64")

    if not signed:
        return at_least(1).output(0)
    return o.subtract(o.add(at_least(1), at_least(2)), o.convert(o.less(R, zero), "i64")).output(0)


def _standalone(form: WindowForm):
    import openvino as ov

    o = ops()
    pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
    index, num, den = integer_weights(form, pi.output(0), po.output(0))
    return ov.Model([index, num, den], [pi, po], "integer_window")


def grid_verdict(model, ir: ResizeIR, form: WindowForm, fixed: tuple = (None, None)) -> str | None:
    """None when ``model`` (parameters: the i64 scalars in and out, each unless ``fixed`` gives it; outputs:
    index [K, out], numerators [K, out], den) gives the oracle's exact rational taps of ``ir`` for every (in, out)
    of ``GRID``, else where it does not."""
    return cached_verdict(VERDICTS, (signature(model), form, fixed), model, "window",
                          lambda run: _grid_mismatch(run, ir, form, fixed))


def _grid_mismatch(run, ir: ResizeIR, form: WindowForm, fixed: tuple) -> str | None:
    fi, fo = fixed
    for i, o in sorted({(fi or i, fo or form.out_len(fi or i, o)) for i, o in GRID}):
        if o == 0:
            continue
        run.infer([np.array(v, np.int64) for v, f in ((i, fi), (o, fo)) if f is None])
        index, num, den = (run.get_output_tensor(k).data for k in range(3))
        den = np.broadcast_to(np.reshape(den, -1), (o,)) if np.size(den) in (1, o) else None
        if den is None or np.any(den <= 0):
            return f"the integer window's denominator is not one positive value (or one per output) at in={i}, " \
                f"out={o}"
        got = rational(index.T, [[Fraction(int(n), int(d)) for n in row] for row, d in zip(num.T, den)])
        if got != _oracle(ir, form, i, o):
            return f"the integer window differs from the oracle's taps at in={i}, out={o}"
    return None


def rational(index, weight) -> dict:
    """{(output, input): exact weight} of taps [out, K] (Fractions; clamped taps summed, zeros left out)."""
    out: dict = {}
    for o_, (row_i, row_w) in enumerate(zip(index, weight)):
        for i, w in zip(row_i, row_w):
            out[(o_, int(i))] = out.get((o_, int(i)), Fraction(0)) + Fraction(w)
    return {k: v for k, v in out.items() if v}


def _oracle(ir: ResizeIR, form: WindowForm, in_len: int, out_len: int) -> dict:
    bound = one_axis_bound(ir, in_len, out_len, form.scale)
    if not bound.axes:
        return {(o_, o_): Fraction(1) for o_ in range(out_len)}
    t = axis_taps(bound.axes[0], bound.sampler, bound.exclude_outside, exact=True)
    return rational(t.index, t.weight)


def axis_forms(ir: ResizeIR) -> list | NoNearestIndex:
    """[(the one-axis IR, its window form)] per resized axis of ``ir``, in order (each axis its own form: static
    scales may differ per axis), or why one has none."""
    out = []
    for i, a in enumerate(ir.axes):
        def pick(v):
            return (v[i],) if isinstance(v, tuple) else v
        one = _given_length_as_scale(dataclasses.replace(ir, axes=(a,), scales=pick(ir.scales), sizes=pick(ir.sizes)))
        form = window_form(_idle_antialias_dropped(one), constant_scalars=True)
        if isinstance(form, NoNearestIndex):
            return form
        out.append((one, form))
    return out


# The coordinate modes whose map of given lengths is the static scale's map at s = out / in (``window_form``'s
# scale form): pytorch_half_pixel is half_pixel's wherever out > 1
_SCALE_MAPS = {"asymmetric": "asymmetric", "half_pixel": "half_pixel", "tf_half_pixel_for_nn": "tf_half_pixel_for_nn",
               "pytorch_half_pixel": "half_pixel"}


def _given_length_as_scale(one: ResizeIR) -> ResizeIR:
    """``one`` (one resized axis) whose output length is given and whose input length is known at conversion, read
    as the static scale s = out / in: the same map ((o + 1/2) * in / out - 1/2 is (o + 1/2) / s - 1/2), the same
    length (floor(in * s) = out exactly) and the same stretch min(s, 1), but distances over a constant den (2P*Q at
    s = P/Q), where the given lengths' form divides by 2 * out * in, which the exact sums cannot bound at run time.
    The static tap tables put every output over one common den, which for torchvision's uint8 antialias (1080 x
    1920 -> 224 x 224) reached 10^38: the node was refused outright. Else ``one`` as it is."""
    a = one.axes[0]
    n = one.input_shape[a] if one.input_shape is not None and a < len(one.input_shape) else None
    if not (isinstance(one.sizes, tuple) and isinstance(n, int) and n > 0 and one.sizes[0] > 1
            and one.aspect_policy == "stretch" and one.coord in _SCALE_MAPS and not one.pads):
        return one
    return dataclasses.replace(one, sizes=None, scales=(Fraction(int(one.sizes[0]), n),), coord=_SCALE_MAPS[one.coord],
                               scale_source="user", size_rule="floor")


def _idle_antialias_dropped(one: ResizeIR) -> ResizeIR:
    """``one`` without antialias where its static scale is at least 1: the clamped stretch is f = 1 there and the
    weights sum to 1 exactly, so the oracle's normalisation changes nothing (the proof's grid compares the window
    against ``one`` itself)."""
    static = isinstance(one.scales, tuple) and all(isinstance(v, (int, float, Fraction)) for v in one.scales)
    if not (one.sampler.antialias and one.filter_stretch == "clamped" and static and one.sizes is None
            and all(Fraction(v) >= 1 for v in one.scales)):
        return one
    return dataclasses.replace(one, sampler=dataclasses.replace(one.sampler, antialias=False))


def lower(node, not_native=()):
    """Rung 3's integer window for an integer linear / cubic Resize on run-time lengths
    (``antialias_taps.applies``), or on static ones the tap tables did not take, or why not."""
    refused = refusal(node.ir)
    if refused is not None:
        return refused
    forms = axis_forms(node.ir)
    if isinstance(forms, NoNearestIndex):
        return Refusal(f"no run-time window form: {forms.reason}", forms.field)
    wide = too_wide([form for (_, form), a in zip(forms, node.ir.axes) if a not in copied(node.ir)],
                    str(node.ir.dtype))
    return Refusal(*wide) if wide else _rung(node, forms, not_native)


def _rung(node, forms: list, not_native=()):
    ir = node.ir
    for one, form in forms:
        verdict = grid_verdict(_standalone(form), one, form)
        if verdict is not None:
            return Refusal(verdict, "rung")
    o = ops()
    x = node.inputs[0]
    shape_of = o.shape_of(x, "i64").output(0)
    skipped, axes = copied(ir), []
    for i, axis in enumerate(ir.axes):
        if axis in skipped:
            continue
        in_len, out_len = _out_length(node, shape_of, i, axis, forms[i][1])
        index, num, den = integer_weights(forms[i][1], in_len, out_len)
        for role, v in (("index", index), ("num", num), ("den", den)):
            tag(v.get_node(), tag_of(node.name, axis, role))
        axes.append((axis, index, num, den, taps(forms[i][1])))
    kind = ir.sampler.kind
    y = exact_sum(node.name, x, axes, ir.rank, str(ir.dtype), signed=kind == "cubic") if axes else x
    fixed = {axis: _fixed(ir, forms[i][1], i, dims(x)[axis]) for i, axis in enumerate(ir.axes)}
    bounds = "every integer's bound checked at conversion (constant denominators)" \
        if not run_time_bound([form for _, form in forms]) else \
        f"exact while the product of the axes' denominators is at most {MAX_DEN} and each is below " \
        f"{max_den(str(ir.dtype))}"
    reason = REASON.format(kind=kind) + ", " + bounds + inexact_spellings(not_native)
    return Candidate([y], reason, proof={"form": FORM, "axes": [a for a, *_ in axes], "copied": list(skipped),
                                         "fixed": fixed})


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis' window subgraph, taken out of a copy of the produced model with parameters in place
    of the run-time lengths it reads, gives the oracle's exact taps over ``GRID``; the node's result is there."""
    forms = axis_forms(rec.ir)
    if isinstance(forms, NoNearestIndex):
        return [f"{rec.node}: the source IR has no run-time window form ({forms.reason})"]
    if f"{rec.node}/{FORM}" not in by_tag and rec.proof.get("axes"):
        return [f"{rec.node}: the exact integer sum is not in the produced model"]
    if list(rec.proof.get("copied", ())) != list(copied(rec.ir)):
        return [f"{rec.node}: the axes left as they are are not the ones the source IR copies"]
    tags = tags_in_copy(rec, by_tag, ov_model)
    out = []
    for axis in rec.proof.get("axes", ()):
        parts = [tags.get(tag_of(rec.node, axis, role)) for role in ("index", "num", "den")]
        if any(p is None for p in parts):
            out.append(f"{rec.node}: axis {axis}: the integer window is not in the produced model")
            continue
        cut = window_cut(tags, rec, axis, [p.output(0) for p in parts])
        one, form = forms[rec.ir.axes.index(axis)]
        verdict = cut if isinstance(cut, str) else grid_verdict(cut[0], one, form, cut[1])
        if verdict is not None:
            out.append(f"{rec.node}: axis {axis}: {verdict}")
    return out


__all__ = ["FORM", "axis_forms", "exact_sum", "grid_verdict", "integer", "integer_weights", "lower", "prove", "refusal",
           "takes"]
