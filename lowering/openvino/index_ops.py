"""The integer arithmetic OpenVINO's CPU computes exactly, as graph pieces shared by the run-time index forms
(``nearest_index``, ``nearest_scale``, ``antialias_taps``), and the structure and reach of a compiled index
subgraph, by which their proofs cache and find it.

OpenVINO's CPU plugin runs i64 as i32 (measured: an i64 Multiply wraps at 2^31) and divides integers in
float32 (measured: Divide and FloorMod of i64 values past 2^24 are wrong; Divide truncates toward zero although
the op says python_division), so every division here is a float estimate refined by its exact integer
remainder (``floor_div``).
"""

from __future__ import annotations

import numpy as np

from ...semantics.nearest_index import NearestIndex
from ..index_form import Verdicts, version_of
from ...semantics.messages import plugin_sentence
from .graph import F32, ops

VERDICTS = Verdicts(version_of("openvino"))  # grid verdicts of the nearest index forms, by subgraph structure


def tag_of(name: str, axis: int, what: str) -> str:
    return f"{name}/index_{axis}/{what}"


def linear(f, in_len, out_len):
    """c_in*in + c_out*out + c_one as ops on i64 scalars (no op for a zero term)."""
    o = ops()
    terms = []
    for c, v in ((f.c_in, in_len), (f.c_out, out_len)):
        if c == 1:
            terms.append(v)
        elif c:
            terms.append(o.multiply(v, o.constant(np.int64(c))).output(0))
    if f.c_one or not terms:
        terms.append(o.constant(np.int64(f.c_one)).output(0))
    acc = terms[0]
    for t in terms[1:]:
        acc = o.add(acc, t).output(0)
    return acc


def quotient_estimate(n, r):
    o = ops()
    return o.convert(o.floor(o.divide(o.convert(n, "f32"), o.convert(r, "f32"))), "i64").output(0)


# Under the bf16 hint OpenVINO's CPU runs an f32 Divide between two Conv layers in bf16 (measured: a sizes index form
# between 1x1 Convs read other rows from output length 510 on); a bf16 quotient is within 2^-7 of the exact one, so
# each estimate of the remainder's quotient cuts the error by 2^7: three bring a quotient below 2^22 within one.
REFINEMENTS = 3


def floor_div(n, r):
    """floor(n / r) exactly for r > 0, |n| < 2^31 / (1 + 2^-7) and a quotient below 2^22, at the f32 or bf16
    precision OpenVINO's CPU runs the estimates in: it divides integers in float32 (measured: i64 Divide and
    FloorMod wrong past 2^24), so the float quotient is refined by the quotients of its exact integer remainder
    (``REFINEMENTS``; in f32 the first is already within one) and fixed by the last remainder's sign. Comparisons
    read only the sign of an integer, which a float copy keeps."""
    o = ops()
    q = quotient_estimate(n, r)
    for _ in range(REFINEMENTS):
        q = o.add(q, quotient_estimate(o.subtract(n, o.multiply(q, r)).output(0), r)).output(0)
    rem = o.subtract(n, o.multiply(q, r)).output(0)
    zero = o.constant(np.int64(0))
    q = o.subtract(q, o.convert(o.less(rem, zero), "i64")).output(0)
    return o.add(q, o.convert(o.greater_equal(o.subtract(rem, r), zero), "i64")).output(0)


def index_graph(form: NearestIndex, in_len, out_len):
    """The index vector [out] (i64) for i64 scalar outputs ``in_len``, ``out_len``: ``form`` in integer ops
    whose intermediates stay below r*out (see the module note)."""
    o = ops()
    i64 = "i64"
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    x = o.range(zero, out_len, one, i64).output(0)
    # r > 0 wherever the formula is used; the max keeps a division by zero (out == 1 in align_corners,
    # out == 0) out of the graph, where a piece or the empty range takes over.
    r = o.maximum(linear(form.r, in_len, out_len), one).output(0)
    p, q = linear(form.p, in_len, out_len), linear(form.q, in_len, out_len)
    a, c = floor_div(p, r), floor_div(q, r)
    b = o.subtract(p, o.multiply(a, r)).output(0)  # p mod r, in [0, r)
    d = o.subtract(q, o.multiply(c, r)).output(0)
    frac = floor_div(o.add(o.multiply(x, b), d).output(0), r)
    return finish_index(form, o.add(o.add(o.multiply(x, a), c), frac).output(0), x, in_len, out_len)


def finish_index(form: NearestIndex, idx, x, in_len, out_len):
    """``form``'s pieces around its formula ``idx`` (i64 [out]): out == 1, the clamp to [0, in-1], a copied
    axis of equal lengths."""
    o = ops()
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    if form.out1 is not None:
        idx = o.select(o.equal(out_len, one), o.constant(np.int64(form.out1)), idx).output(0)
    idx = o.minimum(o.maximum(idx, zero), o.subtract(in_len, one)).output(0)
    if form.copy_equal:
        idx = o.select(o.equal(in_len, out_len), x, idx).output(0)
    return idx


def signature(model) -> tuple:
    """The structure of a compiled-alone index subgraph: op types, attributes, constants, wiring."""
    order = {op.get_friendly_name(): k for k, op in enumerate(model.get_ordered_ops())}
    sig = []
    for op in model.get_ordered_ops():
        t = op.get_type_name()
        data = op.get_data().tobytes() if t == "Constant" else None
        ins = tuple(order[v.get_node().get_friendly_name()] for v in op.input_values())
        attrs = tuple(sorted((k, str(v)) for k, v in op.get_attributes().items())) if t != "Constant" else ()
        sig.append((t, attrs, data, ins))
    return tuple(sig)


def upstream_names(op) -> set:
    """The unique names of the ops ``op`` depends on (itself included)."""
    seen, todo = set(), [op]
    while todo:
        n = todo.pop()
        if n.get_name() not in seen:
            seen.add(n.get_name())
            todo += [v.get_node() for v in n.input_values()]
    return seen


def cached_verdict(cache, key, model, what: str, check) -> str | None:
    """A run-time form's grid verdict: ``check(infer_request)`` on ``model`` compiled alone on CPU (None where it
    computes the oracle's numbers, else where not), cached under ``key`` (the subgraph's structure and form); a
    subgraph the plugin cannot compile is its own verdict, in the plugin's words."""
    found, verdict = cache.get(key)
    if found:
        return verdict
    import openvino as ov

    try:
        run = ov.Core().compile_model(model, "CPU", F32).create_infer_request()
    except Exception as e:  # noqa: BLE001 -- the plugin's words
        verdict = f"the {what} subgraph does not compile: {plugin_sentence(e)}"
    else:
        verdict = check(run)
    cache.put(key, verdict)
    return verdict
