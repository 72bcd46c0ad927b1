"""What the producers of an OpenVINO value say about its elements, read off the graph without running it: whether
every finite element is an integer (``integer_valued``), whether none is negative (``non_negative``). The index
arithmetic pass (``index_arithmetic``) spends no op where a fact already holds: a Cast of a floored length needs
no truncation, a Cast of a nonnegative length only a Floor. False wherever a producer is not one the tables know.
"""

from __future__ import annotations

import numpy as np

# Ops that move, pick or compare elements without making new values: a fact of their inputs at these ports holds
# for their output (None: every input; "all": every input, however many).
_MOVES = {
    "Concat": "all", "Select": (1, 2), "Convert": (0,), "Reshape": (0,), "Squeeze": (0,), "Unsqueeze": (0,),
    "Transpose": (0,), "Gather": (0,), "Slice": (0,), "StridedSlice": (0,), "Broadcast": (0,), "Tile": (0,),
    "Split": (0,), "VariadicSplit": (0,), "ReduceMax": (0,), "ReduceMin": (0,), "Maximum": (0, 1),
    "Minimum": (0, 1),
}

# A float32 sum, difference or product of integers rounds to an integer (exact below 2^24, every float32 above is
# one); a rounding op makes one of anything (None: whatever the inputs).
_INTEGER = {**_MOVES, "Floor": None, "Ceiling": None, "Round": None, "Add": (0, 1), "Subtract": (0, 1),
            "Multiply": (0, 1), "Abs": (0,), "Negative": (0,), "Sign": (0,), "ReduceSum": (0,), "ReduceProd": (0,)}

# Sums, products and quotients of nonnegative numbers stay so (rounding never crosses 0), a shape is one, and an
# Abs or a square root gives one (or NaN, which a truncation and a Floor leave alike).
_NON_NEGATIVE = {**_MOVES, "ShapeOf": None, "Abs": None, "Sqrt": None, "Floor": (0,), "Ceiling": (0,),
                 "Round": (0,), "Add": (0, 1), "Multiply": (0, 1), "Divide": (0, 1), "ReduceSum": (0,),
                 "ReduceProd": (0,)}


def integer_valued(value) -> bool:
    """Whether every finite element of ``value`` (an OpenVINO output) is an integer: any integer type, or a float
    its producers make integers (``_INTEGER``, constants of integers)."""
    return _holds(value, _INTEGER, lambda d: np.all(d[np.isfinite(d)] == np.floor(d[np.isfinite(d)])), True)


def non_negative(value) -> bool:
    """Whether no element of ``value`` is negative (NaN aside): a shape, or what its producers keep so
    (``_NON_NEGATIVE``, constants >= 0)."""
    return _holds(value, _NON_NEGATIVE, lambda d: np.all(d[~np.isnan(d)] >= 0), False)


def _holds(value, rules: dict, constant, any_integer: bool, depth: int = 48) -> bool:
    node = value.get_node()
    kind = node.get_type_name()
    if any_integer and not value.get_element_type().is_real():
        return True
    if kind == "Constant":
        return bool(constant(np.asarray(node.get_data(), np.float64)))
    ports = rules.get(kind, ())
    if ports is None:
        return True
    if ports == "all":
        ports = range(node.get_input_size())
    return depth > 0 and bool(ports) and all(_holds(node.input_value(i), rules, constant, any_integer, depth - 1)
                                             for i in ports)
