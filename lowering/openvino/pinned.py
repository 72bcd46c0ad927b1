"""Float arithmetic on graph tensors that OpenVINO's CPU keeps in f32 under a bf16 / f16 inference-precision hint,
for the in-graph forms whose float weights must not be computed at reduced precision (``antialias_taps``).

Under the bf16 hint the CPU plugin runs every f32 op in bf16 except the graph's tail (what reaches an output
without passing a Convolution, MatMul, Interpolate, ...) and ops marked with disable_fp16_compression's rt_info
(``PRECISE``; the plugin's keepOrigPrecision). The mark does not survive a rewrite: the plugin turns a Divide into
Multiply(a, Power(b, -1)), a Power by a constant into its PowerStatic, and a constant minus a tensor into a
Multiply by -1, new ops without the mark that run in bf16 (measured, runtime model of OpenVINO 2026.4.1). So a
quotient is spelled a * b^e with e = -1 computed at run time (a Power the plugin leaves as it is: a scalar pow per
element, for small tables); and a constant is never the left operand of a Subtract. (The user's own divisions, over
a grid, stay Divides: the tie to the graph's tail keeps the plugin's rewrite of them in f32, ``grid_pin``.)
"""

from __future__ import annotations

import numpy as np

from .graph import ops


class GraphValue:
    """A tensor of the graph with Python's arithmetic, so that ``WindowForm.weights`` (``taps``' filter pieces)
    is evaluated as ops: one expression, here and in the numpy table. A quotient is spelled ``quotient``'s way."""

    def __init__(self, v, minus_one=None):
        self.v, self.minus_one = v, minus_one

    @staticmethod
    def _in(x, like):
        if isinstance(x, GraphValue):
            return x.v
        return ops().constant(np.asarray(x, dtype=like.get_element_type().to_dtype())).output(0)

    def _bin(self, f, a, b):
        return GraphValue(f(self._in(a, self.v), self._in(b, self.v)), self.minus_one)

    def __add__(self, o): return self._bin(ops().add, self, o)
    def __radd__(self, o): return self._bin(ops().add, o, self)
    def __sub__(self, o): return self._bin(ops().subtract, self, o)
    def __rsub__(self, o): return self._bin(ops().subtract, o, self)
    def __mul__(self, o): return self._bin(ops().multiply, self, o)
    def __rmul__(self, o): return self._bin(ops().multiply, o, self)
    def __truediv__(self, o): return self._bin(lambda a, b: quotient(a, b, self.minus_one), self, o)
    def __le__(self, o): return self._bin(ops().less_equal, self, o)
    def __lt__(self, o): return self._bin(ops().less, self, o)


def quotient(a, b, minus_one):
    """a / b in float32 as a * b^e, e = -1 computed at run time (``run_time_minus_one``): no op the plugin
    rewrites (see the module note). CPU: pow(x, -1) within 0.502 float32 ulps of 1/x (measured, 400k values)."""
    o = ops()
    return o.multiply(a, o.power(b, minus_one)).output(0)


def run_time_minus_one(in_len, out_len):
    """-1.0 (f32) from the lengths, so that OpenVINO folds it to a constant only where both are known (then the
    whole window folds in f32): in, out >= 0."""
    o = ops()
    low = o.minimum(o.minimum(in_len, out_len), o.constant(np.int64(0)))
    return o.convert(o.subtract(low, o.constant(np.int64(1))), "f32").output(0)


# The rt_info key of OpenVINO's disable_fp16_compression (serialized as DisablePrecisionConversion "dynamic:f16"):
# the CPU plugin keeps an op so marked in its original precision under a bf16 / f16 hint.
PRECISE = "precise_0"
_POOL = 256  # attributes read per prototype model


def take_effect_in_memory(ov_model) -> int:
    """Turn every ``PRECISE`` string key of ``ov_model`` into OpenVINO's own attribute object, so that the marks
    take effect in the model compiled straight from memory as in one read from its IR; returns how many. Python
    writes rt_info as strings only: the string is serialized as the attribute, but compiled from memory the plugin
    ignores it (measured: an AffineGrid's cone ran in bf16, 0.065 off). Only for the model handed over in memory:
    a rewrite drops the attribute where it copies the string (measured: 38 of a run-time antialias window's 190
    marks lost between marking and writing), so the conversion itself carries the string. Each node gets an
    object of its own (a pass that edits one edits only that)."""
    marked = [op for op in ov_model.get_ordered_ops() if PRECISE in op.get_rt_info()]
    for op in marked:
        if not _attributes:
            _attributes.extend(_read_attributes(_POOL))
        if _attributes[-1] is None:
            return 0
        key, value = _attributes.pop()
        del op.get_rt_info()[PRECISE]
        op.set_rt_info(value, key)
    return len(marked)


_attributes: list = []


def _read_attributes(n: int) -> list:
    """``n`` (key, attribute) pairs from a chain of n marked Relus written and read back, or [None] where this
    release reads the mark back otherwise (then the string keys stay: their effect once written)."""
    import os
    import tempfile

    import openvino as ov

    o = ops()
    x = o.parameter([1], np.float32)
    y = x
    for _ in range(n):
        y = o.relu(y)
        y.get_rt_info()[PRECISE] = ""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "precise.xml")
        ov.save_model(ov.Model([y], [x]), path)
        read = ov.Core().read_model(path)
    found = []
    for op in read.get_ordered_ops():
        if op.get_type_name() == "Relu":
            keys = [k for k in op.get_rt_info().keys() if "precis" in k.lower()]
            if len(keys) != 1:
                return [None]
            found.append((keys[0], op.get_rt_info()[keys[0]]))
    return found


def pin_f32(outputs, stops, key: str = PRECISE) -> int:
    """Mark every op from ``outputs`` up to the ops ``stops`` (excluded; None for an absent input) ``PRECISE`` (or
    with another rt_info ``key``); returns how many."""
    stop = {s.get_node().get_name() for s in stops if s is not None}
    seen, stack = set(), [v.get_node() for v in outputs]
    while stack:
        node = stack.pop()
        name = node.get_name()
        if name in stop or name in seen or node.get_type_name() in ("Parameter", "Constant"):
            continue
        seen.add(name)
        node.get_rt_info()[key] = ""
        stack += [v.get_node() for v in node.input_values()]
    return len(seen)
