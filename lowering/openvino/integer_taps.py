"""The exact integer window's tap numerators (``integer_window``) and the bounds that keep its sums in int32.

At a tap's distance n / den (integers from ``antialias_taps.window_positions``) a weight is an integer numerator
over one den: linear's den - |n| inside |n| < den; Keys' cubic an integer cube over W = a.denominator * den^3
(``_keys_terms``; a = the Keys coefficient as an exact fraction: -3/4, TensorFlow's -1/2). A form that divides the
weights by their sum (antialias, exclude_outside) has one den per output: that sum.

Bounds. Linear without a division by the sum keeps the bounds the integer window states at run time (den = 2*out
for sizes). Everything else needs a constant den (a static scale: ``constant_den``), and then every integer the
graph computes is bounded at conversion, by the same polynomials on Python integers for every phase a tap can
meet (``axis_bound``) and the two axes' products (``refusal``)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...semantics.window_form import WindowForm
from .graph import ops

MAX_DEN = 1 << 30  # the integer window's D * den: the remainder's carry 2 * D * den stays inside int32


def _keys_terms(a: Fraction, an, den, multiply, subtract, add):
    """Keys' two pieces at d = an / den times a.denominator * den^3, as integer polynomials in (an, den): one
    expression for the graph (``numerators``) and the conversion's bound (``axis_bound``). The inner piece
    ((a+2)d - (a+3))d^2 + 1 and the outer ((a d - 5a)d + 8a)d - 4a of ``taps.cubic_inner`` / ``cubic_outer``."""
    c3, c2, ad = a.numerator + 2 * a.denominator, a.numerator + 3 * a.denominator, a.denominator
    d2 = multiply(den, den)
    d3 = multiply(d2, den)
    W = multiply(d3, ad)  # one op: a second identical one would be merged into it by OpenVINO, and its tag lost
    inner = add(multiply(multiply(subtract(multiply(an, c3), multiply(den, c2)), an), an), W)
    outer = subtract(multiply(an, add(multiply(an, subtract(an, multiply(den, 5))), multiply(d2, 8))),
                     multiply(d3, 4))
    return inner, multiply(outer, a.numerator), W


def numerators(form: WindowForm, an, den):
    """(numerators i64 [K, out], their den i64 scalar) of the taps at |distance| an / den: 0 outside the filter's
    support, each piece chosen by the sign of an exact difference (OpenVINO's CPU compares integers in float32)."""
    o = ops()
    i64 = lambda v: o.constant(np.int64(v)).output(0)  # noqa: E731
    if form.kind == "linear":
        return o.select(o.less(o.subtract(an, den), i64(0)), o.subtract(den, an), i64(0)).output(0), den
    wrap = lambda f: lambda u, v: f(u, i64(v) if isinstance(v, int) else v).output(0)  # noqa: E731
    inner, outer, W = _keys_terms(Fraction(form.cubic_a), an, den, wrap(o.multiply), wrap(o.subtract), wrap(o.add))
    near = o.less_equal(o.subtract(an, den), i64(0))
    support = o.less(o.subtract(an, o.multiply(den, i64(2))), i64(0))
    return o.select(near, inner, o.select(support, outer, i64(0))).output(0), W


def _value(form: WindowForm, n: int, den: int, terms: list | None = None) -> int:
    """``numerators`` of one distance n / den on Python integers (every intermediate appended to ``terms``)."""
    an = abs(n)
    if form.kind == "linear":
        return den - an if an < den else 0
    keep = (lambda f: lambda u, v: terms.append(f(u, v)) or terms[-1]) if terms is not None else (lambda f: f)
    inner, outer, _ = _keys_terms(Fraction(form.cubic_a), an, den, keep(lambda u, v: u * v),
                                  keep(lambda u, v: u - v), keep(lambda u, v: u + v))
    return inner if an <= den else outer if an < 2 * den else 0


def type_range(dtype: str) -> int:
    """How many values the integer type holds (2^8, 2^16): the offset values' bound."""
    info = np.iinfo(dtype)
    return int(info.max) - int(info.min) + 1


def _constant(v) -> int | None:
    """A window form's scalar (a Linear of the lengths) where it is a constant, else None."""
    return None if v.c_in or v.c_out else v.c_one


def constant_den(form: WindowForm) -> int | None:
    """The distances' denominator r * fd where both are constants (a static scale's form), else None."""
    if any((_constant(v) or 0) <= 0 for v in (form.r, form.fd, form.fn)):
        return None
    den = form.r.c_one * form.fd.c_one
    return max(den, form.out1.denominator) if form.out1 is not None else den


def taps(form: WindowForm) -> int:
    """K = 2m, m = ceil(R * fd / fn): the taps per output (``window_positions``); 2R where the filter is not
    stretched. Its fn and fd are constants wherever the integer window takes the form."""
    fn, fd = _constant(form.fn), _constant(form.fd)
    return 2 * -(-form.radius * fd // fn) if fn and fd else 2 * form.radius


@dataclass(frozen=True)
class AxisBound:
    den: int  # the largest den (the sum of the numerators where the form divides by it)
    magnitude: int  # the largest sum of |numerators|
    ratio: Fraction  # the largest sum of |numerators| over its den


def axis_bound(form: WindowForm, limit: int = MAX_DEN) -> AxisBound | str:
    """The bounds of one axis whose distances are over a constant den, from every phase tn in (0, r] of its K taps
    n = (i*r - tn)*fn (under exclude_outside every run of taps that can stay inside), or why an integer of
    ``numerators`` could leave int32.

    A run that stays inside holds one of the two taps around the source, i = 0 or 1 (x0 = ceil(src) - 1 and
    x0 + 1): every map a window form takes puts the source in (-1, in) (``_BASE``'s modes, no crop box: half_pixel's
    least source is 1/(2s) - 1/2 > -1/2, its greatest (out - 1/2)/s - 1/2 < in), so x0 or x0 + 1 lies in
    [0, in - 1] and the kept taps, contiguous, reach it. Counting the runs of outer lobes alone (cubic's negative
    taps with a small positive one: a sum near 0) gave torchvision's bicubic antialias a ratio of 7 and refused it;
    the runs that can occur have 1.35 and 1.51 there."""
    den, r, fn = constant_den(form), form.r.c_one, form.fn.c_one
    K = taps(form)
    terms: list = []
    dens, mags, ratios = [], [], []
    left = K // 2 - 1  # tap i = 0 of i in 1 - K/2 .. K/2
    for tn in range(1, r + 1):
        row = [_value(form, (i * r - tn) * fn, den, terms) for i in range(1 - K // 2, K // 2 + 1)]
        runs = [row[a:b] for a in range(K) for b in range(a + 1, K + 1) if a <= left + 1 and b > left] \
            if form.exclude_outside else [row]
        for run in runs:
            total = sum(run) if form.normalise else _w(form, den)
            if total <= 0:
                continue
            dens.append(total)
            mags.append(sum(abs(v) for v in run))
            ratios.append(Fraction(mags[-1], total))
    if max((abs(t) for t in terms), default=0) > limit:
        return f"{form.kind} weights over {den}: their integer terms leave int32"
    return AxisBound(max(dens), max(mags), max(ratios))


def run_time_bound(forms: list) -> bool:
    """Whether linear's run-time bound holds for every axis (``integer_window``'s D * den <= MAX_DEN, stated in its
    reason): linear whose filter is not stretched (fn = fd = 1), where the weights' den is the window's, or under
    exclude_outside the kept taps' sum, at most that."""
    return all(f.kind == "linear" and (not f.normalise or _constant(f.fn) == _constant(f.fd) == 1) for f in forms)


def _w(form: WindowForm, den: int) -> int:
    """The numerators' den where the form does not divide by their sum: den (linear), a.denominator * den^3."""
    if form.kind == "linear":
        return den
    return _keys_terms(Fraction(form.cubic_a), 0, den, lambda u, v: u * v, lambda u, v: u - v, lambda u, v: u + v)[2]


def refusal(forms: list, dtype: str) -> tuple[str, str] | None:
    """Why the resized axes' ``forms`` could leave int32 (the reason, the IR field that decides it), or None:
    linear whose filter is not stretched keeps its run-time bound (``integer_window``); any other needs
    constant dens on every axis, and then the first axis' sum of taps over the type's range, the second's over the
    first's whole parts, and the remainder's carry (below (3 + ratio) * D1 * D2, which the signed carry reads in
    -1 .. 2: ratio below 2) stay within MAX_DEN."""
    if run_time_bound(forms):
        return None
    if any(constant_den(f) is None for f in forms):
        return ("cubic or antialias on run-time sizes: the weights' den grows with the lengths (2 * out * in), past "
                "int32 (a static scale's is constant)", "sizes")
    bounds = [axis_bound(f) for f in forms]
    for b in bounds:
        if isinstance(b, str):
            return b, "scales"
        if b.ratio >= 2:
            return f"the weights' magnitudes sum to {float(b.ratio):.3g} of their den (2 or more)", "scales"
    reach = type_range(dtype)
    first = bounds[0]
    if reach * first.magnitude > MAX_DEN:
        return f"weights over {first.den}: a sum of {dtype} taps leaves int32", "scales"
    if len(bounds) == 2:
        second = bounds[1]
        if (3 + second.ratio) * first.den * second.den > MAX_DEN or \
                reach * first.ratio * second.magnitude > MAX_DEN:
            return f"weights over {first.den} and {second.den}: the two axes' exact sum leaves int32", "scales"
    return None
