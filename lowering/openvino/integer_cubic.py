"""Keys' cubic weights in integers for the exact integer window (``integer_window``): at a tap's distance an / den
(integers from ``antialias_taps.window_positions``) the weight is an integer numerator over
W = a.denominator * den^3, a = the Keys coefficient as an exact fraction (-3/4, TensorFlow's -1/2). The window takes
cubic only where den is a constant (a static scale), so every integer the graph computes is bounded at conversion,
by evaluating the very same polynomial (``_keys_terms``) on Python integers for every distance it can meet."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...semantics.window_form import WindowForm
from .graph import ops

MAX_DEN = 1 << 30  # the integer window's D * den: the remainder's carry 2 * D * den stays inside int32


def _keys_terms(a: Fraction, an, den, multiply, subtract, add):
    """Keys' two pieces at d = an / den times a.denominator * den^3, as integer polynomials in (an, den): one
    expression for the graph (``cubic_numerators``) and the conversion's bound (``cubic_bound``). The inner piece
    ((a+2)d - (a+3))d^2 + 1 and the outer ((a d - 5a)d + 8a)d - 4a of ``taps.cubic_inner`` / ``cubic_outer``."""
    c3, c2, ad = a.numerator + 2 * a.denominator, a.numerator + 3 * a.denominator, a.denominator
    d2 = multiply(den, den)
    d3 = multiply(d2, den)
    W = multiply(d3, ad)  # one op: a second identical one would be merged into it by OpenVINO, and its tag lost
    inner = add(multiply(multiply(subtract(multiply(an, c3), multiply(den, c2)), an), an), W)
    outer = subtract(multiply(an, add(multiply(an, subtract(an, multiply(den, 5))), multiply(d2, 8))),
                     multiply(d3, 4))
    return inner, multiply(outer, a.numerator), W


def cubic_numerators(cubic_a: float, an, den):
    """(numerators i64 [K, out], W i64 scalar): Keys' weight at |distance| an / den as an integer over
    W = a.denominator * den^3, 0 outside its support an < 2 den (the piece from the sign of an exact difference)."""
    o = ops()
    i64 = lambda v: o.constant(np.int64(v)).output(0)  # noqa: E731
    wrap = lambda f: lambda u, v: f(u, i64(v) if isinstance(v, int) else v).output(0)  # noqa: E731
    inner, outer, W = _keys_terms(Fraction(cubic_a), an, den, wrap(o.multiply), wrap(o.subtract), wrap(o.add))
    near = o.less_equal(o.subtract(an, den), i64(0))
    support = o.less(o.subtract(an, o.multiply(den, i64(2))), i64(0))
    return o.select(near, inner, o.select(support, outer, i64(0))).output(0), W


def cubic_bound(cubic_a: float, den: int, dtype: str, limit: int = MAX_DEN) -> tuple[int, Fraction] | str:
    """(W, the largest sum of |weights| over the phases) of the cubic window whose distances are over the
    constant ``den``, or why its integers could leave int32: every term of ``_keys_terms`` for every distance
    an in 0 .. 2 den, and the first axis' sum of taps over the type's range, stay within ``limit``."""
    a = Fraction(cubic_a)
    terms = []
    keep = lambda f: lambda u, v: terms.append(f(u, v)) or terms[-1]  # noqa: E731
    for an in range(2 * den + 1):
        _keys_terms(a, an, den, keep(lambda u, v: u * v), keep(lambda u, v: u - v), keep(lambda u, v: u + v))
    W = a.denominator * den ** 3
    if max(abs(t) for t in terms) > limit:
        return f"cubic weights over {den}^3 * {a.denominator}: their integer terms leave int32"
    info = np.iinfo(dtype)
    # every phase tn in (0, den] of the four taps x0 - 1 .. x0 + 2 (``window_positions``: n = i*den - tn)
    total = max(sum(abs(_keys_value(a, k * den - tn, den)) for k in range(-1, 3)) for tn in range(1, den + 1))
    if total >= 2:  # the carry of ``integer_window.exact_sum`` counts on -1 .. 2
        return f"Keys coefficient {float(a)}: the weights' magnitudes sum to {float(total):.3g} (2 or more)"
    if (int(info.max) - int(info.min) + 1) * total * W > limit:
        return f"cubic weights over {W}: a sum of {dtype} taps leaves int32"
    return W, total


def _keys_value(a: Fraction, n: int, den: int) -> Fraction:
    """The weight at distance n / den, exactly, from the graph's own integer pieces."""
    an = abs(n)
    inner, outer, W = _keys_terms(a, an, den, lambda u, v: u * v, lambda u, v: u - v, lambda u, v: u + v)
    return Fraction(inner if an <= den else outer if an < 2 * den else 0, W)


def constant_den(form: WindowForm) -> int | None:
    """The distances' denominator r * fd where both are constants (a static scale's form), else None."""
    if any(v.c_in or v.c_out for v in (form.r, form.fd)):
        return None
    den = form.r.c_one * form.fd.c_one
    return max(den, form.out1.denominator) if form.out1 is not None else den


def cubic_refusal(forms: list, resized: list, dtype: str) -> str | None:
    """Why the cubic window's integers could leave int32 (``cubic_bound`` per axis; for two axes the second's
    sum over the first's results, and the remainder's carry (3 + its sum) * W1 * W2), or None."""
    if not resized or forms[0][1].kind != "cubic":
        return None
    bounds = []
    for _, form in (forms[i] for i in resized):
        got = cubic_bound(form.cubic_a, constant_den(form), dtype)
        if isinstance(got, str):
            return got
        bounds.append(got)
    if len(bounds) == 2:
        (w1, t1), (w2, t2) = bounds
        info = np.iinfo(dtype)
        if (3 + t2) * w1 * w2 > MAX_DEN or (int(info.max) - int(info.min) + 1) * t1 * t2 * w2 > MAX_DEN:
            return f"cubic weights over {w1} and {w2}: the two axes' exact sum leaves int32"
    return None
