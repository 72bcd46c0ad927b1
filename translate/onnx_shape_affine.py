"""Shape arithmetic read symbolically: each element of a shape chain as an integer-affine expression of the
run-time lengths (issue 42/45).

``F.interpolate(x, scale_factor=2, recompute_scale_factor=True)`` with dynamic H/W is exported as Resize
``sizes`` = Concat(Shape(x)[:2], floor(float(H) * 2.0), ...) (TorchScript) or Concat(Shape(x)[:2], H * 2)
(dynamo). Whether such a size is ``k * H`` for EVERY length cannot be told from numbers at a few stand-ins
(``floor(1.5 * H)`` is ``1.5 * H`` at even stand-ins); it is told from the ops: a value is carried as
``c + sum(a_i * L_i)`` with exact rational ``c, a_i`` over the dynamic lengths ``L_i``, through the ops that keep
such a value exact (Shape, Gather, Slice, Squeeze/Unsqueeze/Reshape/Flatten, Concat, Identity, Cast, Add/Sub,
Mul by a constant, Div by a constant, Neg, Floor/Ceil/Round of an integer-valued expression). Anything else is
unknown, and so is every element it touches.

Bound: Cast of a length to float32 and the float32 products are exact while every value stays below 2^24
(float64: 2^53); lengths are taken to be below 2^24 / k (16.7 M / k elements on one axis), which every tensor a
runtime can allocate satisfies. A float product by a non-integer constant is kept as the exact rational, and
Floor of a non-integral expression is unknown: ``floor(1.5 * H)`` is never read as ``1.5 * H``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from onnx import helper

_INT_KINDS = "iu"  # numpy dtype kinds of integer tensors
_EXACT_FLOATS = ("float32", "float64")  # hold every length below 2^24 exactly (float16 would not)


class Affine:
    """``const + sum(coef * length[key])``, exact; keys are the dynamic lengths' numbers (onnx_shape_eval)."""

    __slots__ = ("const", "terms")

    def __init__(self, const, terms=()):
        self.const = Fraction(const)
        self.terms = tuple(sorted((k, Fraction(c)) for k, c in terms if c != 0))

    @classmethod
    def length(cls, key: int) -> "Affine":
        return cls(0, ((key, 1),))

    def integral(self) -> bool:
        return self.const.denominator == 1 and all(c.denominator == 1 for _, c in self.terms)

    def at(self, values: dict) -> Fraction:
        return self.const + sum(c * values[k] for k, c in self.terms)

    def _combine(self, other, sign):
        merged = dict(self.terms)
        for k, c in other.terms:
            merged[k] = merged.get(k, 0) + sign * c
        return Affine(self.const + sign * other.const, merged.items())

    def __add__(self, other):
        return self._combine(other, 1) if isinstance(other, Affine) else None

    def __sub__(self, other):
        return self._combine(other, -1) if isinstance(other, Affine) else None

    def scaled(self, f: Fraction) -> "Affine":
        return Affine(self.const * f, ((k, c * f) for k, c in self.terms))

    def __mul__(self, other):
        if not isinstance(other, Affine):
            return None
        if not other.terms:
            return self.scaled(other.const)
        return other.scaled(self.const) if not self.terms else None  # a product of lengths: not affine


def _map(f, *arrays):
    """``f`` elementwise over broadcast object arrays; an element whose operand is unknown (None) is None."""
    arrays = np.broadcast_arrays(*arrays)
    out = np.empty(arrays[0].shape, object)
    for i in np.ndindex(out.shape):
        args = [a[i] for a in arrays]
        out[i] = None if any(a is None for a in args) else f(*args)
    return out


def _constant(value) -> np.ndarray:
    v = np.asarray(value)
    out = np.empty(v.shape, object)
    for i in np.ndindex(v.shape):
        x = v[i].item()
        out[i] = Affine(Fraction(x)) if np.isfinite(x) else None
    return out


def _const_ints(arr) -> list | None:
    """The values of a fully constant integral array, else None."""
    flat = list(np.asarray(arr, object).reshape(-1))
    if any(a is None or a.terms or not a.integral() for a in flat):
        return None
    return [int(a.const) for a in flat]


def _integral(a: Affine):
    """Floor / Ceil / Round, Cast to an integer type (which truncates) and float arithmetic are read exactly
    only where the expression is an integer for every length."""
    return a if a.integral() else None


def affine_values(order, leaves: dict, shape_leaves: dict, shape_keys, numbers: dict) -> dict:
    """{tensor: object array of Affine or None} for the chain ``order`` (onnx_shape_eval.chain). ``shape_keys``
    (node) gives a Shape leaf's elements as keys (> 0) or constants; ``numbers`` (one run of the numeric chain)
    gives each tensor's shape, which Reshape-like ops take."""
    vals = {t: (_constant(v), np.asarray(v).dtype.kind in _INT_KINDS) for t, v in leaves.items()}
    for t, node in shape_leaves.items():
        keys = shape_keys(node)
        arr = np.empty(len(keys), object)
        for i, (is_key, v) in enumerate(keys):
            arr[i] = Affine.length(v) if is_key else Affine(v)
        vals[t] = (arr, True)
    for node in order:
        ins = [vals.get(i) if i else None for i in node.input]
        try:
            got = _node(node, ins, numbers.get(node.output[0]))
        except Exception:  # a shape or parameter these rules do not follow: unknown, never a wrong reading
            got = None
        if got is not None and not got[1]:
            # A float value is kept only where it is an integer for every length: below 2^24 float32 holds it
            # exactly, so each correctly rounded op computed it exactly (a fraction such as H / 3 is rounded).
            got = _map(_integral, got[0]), False
        if got is None:
            return vals  # an op this evaluator does not know: everything after it is unknown
        vals[node.output[0]] = got
    return vals


def _node(node, ins, out_number):
    op = node.op_type
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if out_number is None or any(v is None for v, i in zip(ins, node.input) if i):
        return None
    x, is_int = ins[0]
    if op in ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten"):
        return x.reshape(np.shape(out_number)), is_int
    if op == "Concat":
        return np.concatenate([v for v, _ in ins], axis=attrs.get("axis", 0)), is_int
    if op == "Gather":
        idx = _const_ints(ins[1][0])
        return (None if idx is None else
                (np.array(np.take(x, np.reshape(idx, np.shape(ins[1][0])), axis=attrs.get("axis", 0)), object),
                 is_int))
    if op == "Slice":
        return _slice(node, attrs, ins, x), is_int
    if op == "Cast":
        to = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
        if to.kind not in _INT_KINDS and to.name not in _EXACT_FLOATS:
            return None
        return x, to.kind in _INT_KINDS  # every value is an integer already (see _node)
    if op in ("Floor", "Ceil", "Round"):
        return _map(_integral, x), is_int
    if op == "Neg":
        return _map(lambda a: a.scaled(Fraction(-1)), x), is_int
    if op in ("Add", "Sub", "Mul"):
        f = {"Add": Affine.__add__, "Sub": Affine.__sub__, "Mul": Affine.__mul__}[op]
        return _map(f, x, ins[1][0]), is_int
    if op == "Div":
        return _map(lambda a, b: _divide(a, b, is_int), x, ins[1][0]), is_int
    return None


def _divide(a: Affine, b: Affine, is_int: bool):
    if b.terms or b.const == 0:
        return None
    q = a.scaled(1 / b.const)
    return q if not is_int or q.integral() else None  # integer Div truncates: exact only when it divides


def _slice(node, attrs, ins, x):
    params = [None if v is None else _const_ints(v[0]) for v in ins[1:]]
    if any(p is None for p in params[:2]):
        return None
    return x[slices(node, attrs, [None, *params], x.ndim)]


def slices(node, attrs, ins_v, rank) -> tuple:
    """Slice's starts / ends / axes / steps (inputs, or Slice-1's attributes) as a numpy index."""
    if len(node.input) > 1:  # Slice-10+: starts, ends, axes, steps as inputs
        starts, ends = (np.asarray(v).tolist() for v in ins_v[1:3])
        axes = np.asarray(ins_v[3]).tolist() if len(ins_v) > 3 and ins_v[3] is not None else range(len(starts))
        steps = np.asarray(ins_v[4]).tolist() if len(ins_v) > 4 and ins_v[4] is not None else [1] * len(starts)
    else:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    index = [slice(None)] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[a % rank] = slice(int(s), int(e), int(st))  # Python clamps as ONNX does
    return tuple(index)
