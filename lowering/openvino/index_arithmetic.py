"""The user's own index arithmetic, computed in OpenVINO as onnxruntime and PyTorch compute it (issue 42: never
silently wrong; reduced precision may round values, never move an index).

Exporters write some resampling as plain arithmetic on shapes, no Resize node: the dynamo exporter spells
``F.interpolate(mode="nearest-exact")`` on dynamic H / W as Range, Add 0.5, Multiply by Div(n, 1.5 n), Cast to
int64 and a GatherND. Two things move its indices in OpenVINO, its importer's model and a model converted around it
alike (measured, OpenVINO 2026.4.1 CPU, scale 1.5, against onnxruntime):

* OpenVINO's float32 Divide is a * (1 / b), not IEEE division (``exact_division``): at W = 90 every third column was
  another one (1.0 off on [0, 1] data), at f32;
* under the CPU's default bf16 hint, with a Conv after the upsampling, the index arithmetic itself ran in bf16: at
  224 x 224 the output was garbage (64,768 off), at 333 x 517 of another shape.

``exact_index_arithmetic`` finds every float-to-integer Convert whose input is computed from shapes and constants
only (ShapeOf, Range, elementwise arithmetic: ``grid_pin.coordinate_op``; no model input's values, no learned
layer), respells each float Divide in that cone as ``exact_division.exact_quotient`` and marks the cone's float ops
``pinned.PRECISE`` (the graph-tail tie, ``pinned_tail``, keeps them in f32 in releases that do not read the mark).
Our own forms are left as they were proven (``stamp_form`` marks their ops while the frontend converts). Index
arithmetic on a model input's values (box coordinates, a predicted flow) is not touched: its values come from the
network, and its cost would scale with the data.
"""

from __future__ import annotations

import numpy as np

from .exact_division import exact_quotient, ieee_already, power_of_two
from .graph import all_ops, constant_of, ops
from .grid_pin import replaced, respelled, coordinate_op, mark_upstream
from .pinned import PRECISE, pin_f32
from .pinned_tail import TAIL_END
from .value_facts import integer_valued, non_negative

FORM = "resample_bridge_form"  # rt_info on the ops of one of our own forms until the pass has run
INDEX_KEY = "resample_bridge_index_arithmetic"  # the model's rt_info: what the pass changed (a deployed model says so)


def stamp_form(outputs, inputs) -> None:
    """Mark every op of a form built on ``inputs`` (OpenVINO outputs; None for an absent one) up to ``outputs``."""
    pin_f32(outputs, inputs, key=FORM)


def exact_index_arithmetic(ov_model, divisors=None) -> dict:
    """Respell and pin the index arithmetic of ``ov_model`` (bodies included; see the module note) and drop the
    form stamps; returns {"divisions": Divides made exact, "ops": the model's own float ops kept in f32}, also
    written into the model's rt_info where any. ``divisors``: ``constant_divisors`` of the ONNX source."""
    everything = list(all_ops(ov_model))
    derived: dict[str, bool] = {}
    done = {"divisions": 0, "ops": 0}
    for op in everything:
        if _is_root(op) and _from_shapes(op.input_value(0).get_node(), derived):
            _pin(op, done, divisors or {})
    for op in everything:
        rt = op.get_rt_info()
        if FORM in rt:
            del rt[FORM]
    if done["divisions"] or done["ops"]:
        ov_model.set_rt_info(f"{done['divisions']} divisions correctly rounded, {done['ops']} float ops kept in f32",
                             INDEX_KEY)
    return done


def constant_divisors(model) -> dict:
    """{output name: the divisor} of every float Div of the ONNX ``model``'s main graph whose divisor is a
    constant: OpenVINO's importer writes it as a Multiply by the divisor's float32 reciprocal (measured: 17 / 1.7
    became 9.9999999), which keeps the Div's output name."""
    from onnx import numpy_helper

    values = {t.name: t for t in model.graph.initializer}
    values.update({n.output[0]: a.t for n in model.graph.node if n.op_type == "Constant" for a in n.attribute
                   if a.name == "value"})
    found = {}
    for n in model.graph.node:
        if n.op_type == "Div" and len(n.input) == 2 and n.input[1] in values:
            d = numpy_helper.to_array(values[n.input[1]])
            if d.dtype.kind == "f":
                found[n.output[0]] = d.astype(np.float32)
    return found


def _operands(node, divisors: dict):
    """(a, b) where ``node`` computes a float a / b: a Divide, or a Multiply by a constant the importer made of a
    Div by ``divisors[name]`` (its constant the divisor's float32 reciprocal); else None. Only over scalars and
    vectors (lengths, scales, one axis's indices): over a grid of positions the ~260 ops per element would cost
    as much as the image (such a division is left as OpenVINO computes it; ``check`` names it where it moves an
    index)."""
    out = node.output(0)
    rank = out.get_partial_shape().rank
    if not out.get_element_type().is_real() or not rank.is_static or rank.get_length() > 1:
        return None
    if node.get_type_name() == "Divide":
        return None if ieee_already(node) else tuple(node.input_values())
    d = divisors.get(node.get_friendly_name())
    if node.get_type_name() != "Multiply" or d is None or power_of_two(d):
        return None
    for port in (0, 1):
        c = constant_of(node, 1 - port)
        if c is not None and c.size == d.size and np.array_equal(c.reshape(d.shape), np.float32(1) / d):
            return node.input_value(port), ops().constant(d.reshape(c.shape)).output(0)
    return None


def index_note(ov_model) -> str | None:
    """What ``exact_index_arithmetic`` changed in ``ov_model`` (its rt_info), or None."""
    rt = ov_model.get_rt_info()
    return str(rt[INDEX_KEY].astype(str)) if INDEX_KEY in rt else None


def _ours(node) -> bool:
    rt = node.get_rt_info()
    return FORM in rt or PRECISE in rt


def _is_root(op) -> bool:
    """A Convert of floats into integers or booleans, not one of our own forms' (nor already pinned)."""
    return (op.get_type_name() == "Convert" and op.input_value(0).get_element_type().is_real()
            and not op.output(0).get_element_type().is_real() and not _ours(op))


def _truncated(convert) -> None:
    """The Convert's input rounded toward zero first, as ONNX's Cast and PyTorch's conversion do: OpenVINO 2023.3's
    CPU rounded it to nearest (measured: the output length int(61 * 1.5) came out 92). Not where the input is an
    integer already (a length floored, a maximum of lengths): rounding cannot move it, and torchvision's detection
    transform has six such Casts, each a Select, a Less, a Ceiling and a Floor run on every inference; a Floor
    alone where it is nonnegative (a length scaled: kornia's rescale)."""
    o = ops()
    x = convert.input_value(0)
    if integer_valued(x):
        return
    if non_negative(x):
        convert.input(0).replace_source_output(o.floor(x).output(0))
        return
    zero = o.convert_like(o.constant(np.float32(0)), x)  # (x's element type may read dynamic until validated)
    convert.input(0).replace_source_output(o.select(o.less(x, zero), o.ceiling(x), o.floor(x)).output(0))


def _from_shapes(node, derived: dict) -> bool:
    """Whether ``node``'s value is computed from shapes and constants only (memoised by op name in ``derived``;
    iterative: a chain of elementwise ops may be deeper than Python's recursion)."""
    stack = [node]
    while stack:
        top = stack[-1]
        name = top.get_name()
        if name in derived:
            stack.pop()
            continue
        rt = top.get_rt_info()
        if top.get_type_name() in ("Constant", "ShapeOf") or (PRECISE in rt and FORM not in rt):
            derived[name] = True  # (pinned by this pass already: an exact quotient another root's cone shares)
        elif not coordinate_op(top) or FORM in rt:
            derived[name] = False
        else:
            pending = [v.get_node() for v in top.input_values() if v.get_node().get_name() not in derived]
            if pending:
                stack += pending
                continue
            derived[name] = all(derived[v.get_node().get_name()] for v in top.input_values())
        stack.pop()
    return derived[node.get_name()]


def _pin(root, done: dict, divisors: dict) -> None:
    """Mark the cone above ``root`` PRECISE (``grid_pin.mark_upstream``), each float Divide in it (and each
    Multiply the importer made of a Div by a constant) respelled as the exact quotient, each float-to-integer
    Convert truncating and closing a region of the graph's tail."""
    def respell(node):
        quotient = _operands(node, divisors)
        if quotient is not None:
            done["divisions"] += 1
            return replaced(node, exact_quotient(*quotient))
        if _is_root(node):  # the root, or one in its cone (a length floored, then a Range over it)
            _truncated(node)
            node.get_rt_info()[TAIL_END] = ""
        return respelled(node)  # (a Divide ``ieee_already`` stays OpenVINO's: ``grid_pin.respelled``)
    done["ops"] += mark_upstream([root], lambda n: n.get_type_name() not in ("Constant", "ShapeOf", "Parameter")
                                 and FORM not in n.get_rt_info(), respell)
