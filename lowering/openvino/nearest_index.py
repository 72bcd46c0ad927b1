"""Rung 3 for nearest Resize on shapes known only at run time: the source index of every output position is
computed in the graph by exact integer arithmetic from the run-time lengths (``semantics.coords.
nearest_index``: floor((p*x + q) / r) clamped to [0, in-1], p, q, r integer-linear in (in, out)), then one
Gather per resized axis. No float coordinate, so no float32 rounding boundary: exact for every dtype the
Gather moves. Under exclude_outside each Gather's result is multiplied by which picks lie inside the input.

Arithmetic. OpenVINO's CPU plugin runs i64 as i32 (measured: an i64 Multiply wraps at 2^31) and divides
integers in float32 (measured: Divide and FloorMod of i64 values past 2^24 are wrong; Divide truncates toward
zero although the op says python_division). So every division is that integer Divide as an estimate fixed by
its exact integer remainder (``floor_div``; integer ops only, which the bf16 hint leaves alone), and
the graph never forms p*x + q: with p = a*r + b and q = c*r + d (0 <= b, d < r, reduced once per run on
scalars) the index is a*x + c + floor((b*x + d) / r), whose largest intermediate b*x + d stays below r*out.
The index is therefore exact while r*out < 2^31, r at most 4*out
(half-pixel modes with rounding): every output length up to 23000 (``MAX_OUT``).

Output lengths from a static scale that is not a whole number (a constant p, q, r near 2^26, output lengths by
the node's size rule): ``nearest_scale``, taken by the same rung and proven here per axis.

Proof by numbers of the index computation itself (``grid_verdict``): the subgraph is compiled alone on CPU
and run for every (in, out) in 1..48 and a few large pairs against the oracle's own nearest taps; the rung
runs it on the subgraph it builds, ``prove`` on the one re-read from the produced model. Verdicts are cached
by the subgraph's structure.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...semantics.nearest_index import NearestIndex, NoNearestIndex, integer_scales, nearest_index
from ...semantics.ir import ResizeIR, RuntimeValue, is_static
from ...translate.dtypes import OPENVINO as OPENVINO_DTYPES
from ..index_form import GRID, INT32_MAX_OUT as MAX_OUT, copied_axes, form_of, grid_mismatch, index_ir, \
    oracle_indices, oracle_inside
from ..passes import Candidate, Refusal
from .graph import all_ops, dims, ops, tag
from . import index_ops
from .index_ops import cached_verdict, cut, index_graph, signature, tag_of, upstream_names, zeroed_outside
from . import nearest_scale
from .interpolate import inexact_spellings

REASON = "index decomposition: source indices computed in int64 for every run-time size (Gather)"


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers of the index subgraph, over a grid of lengths


def grid_verdict(model, ir: ResizeIR, fixed: tuple = (None, None)) -> str | None:
    """None when ``model`` (parameters: the i64 scalars in and out, each unless ``fixed`` gives its value;
    output: the index vector) computes the oracle's nearest taps of ``ir`` on OpenVINO CPU for every (in,
    out) of ``GRID`` (those with the fixed length(s)), else where it does not. Under exclude_outside its second
    output says which picks lie inside the input, checked too."""
    form = nearest_index(index_ir(ir))
    fi, fo = fixed
    # fo "length": the subgraph has its output length built in; each run is checked at that length.
    # fi "out" / fo "in": the subgraph reads one length for both (OpenVINO found them equal); checked on the
    # diagonal.
    if fi == "out" or fo == "in":
        grid = sorted({(o, o) for _, o in GRID})
    elif fo == "length":
        grid = sorted({(fi or i, 0) for i, _ in GRID})
    else:
        grid = sorted({(fi or i, fo or o) for i, o in GRID})

    def check(run):
        import openvino as ov

        # Thousands of scalar runs: the feeds are set once and written in place, which skips the Python
        # wrapper's per-call input dispatch (about 3x the run itself).
        feeds = [ov.Tensor(np.zeros((), np.int64)) for f in (fi, fo) if f is None]
        for k, t in enumerate(feeds):
            run.set_input_tensor(k, t)

        def run_at(i, o):
            for t, v in zip(feeds, [v for v, f in ((i, fi), (o, fo)) if f is None]):
                t.data[...] = v
            run.start_async()
            run.wait()
            got = [run.get_output_tensor(k).data.copy() for k in range(2 if ir.exclude_outside else 1)]
            return got if ir.exclude_outside else got[0]
        return grid_mismatch(ir, [(i, None if fo == "length" else o) for i, o in grid], run_at)
    return cached_verdict(index_ops.VERDICTS, (signature(model), form, fixed, ir.exclude_outside), model, "index",
                          check)


def _standalone(form: NearestIndex, inside: bool = False):
    import openvino as ov

    o = ops()
    pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
    got = index_graph(form, pi.output(0), po.output(0), inside=inside)
    return ov.Model(list(got) if inside else [got], [pi, po], "nearest_index")


# ----------------------------------------------------------------------------------------------------------
# The rung


def _lengths(node, shape_of, i: int, axis: int, floor: int = 0):
    """(in, out) as i64 scalars for the i-th resized axis: in from ShapeOf(X), out from the sizes input, the
    IR's constant sizes or in*k (a static integer scale k). Each ends in a Maximum with ``floor`` (0, or another
    number <= 0: a no-op on lengths; out's one below) carrying the tag the proof finds it by: OpenVINO rewrites the Gather of a
    Concat'ed sizes input, and its tag goes astray, but it leaves a Maximum of a run-time value alone. (A floor of
    the node's own keeps two nodes' lengths apart, which OpenVINO would merge, one tag kept: ``nearest_aspect``.)"""
    o = ops()
    # the out length's floor one below the in length's: sizes that read X's own length there (F.interpolate's
    # size=(..., x.shape[-1])) would otherwise give two identical ops, which OpenVINO merges, one tag kept
    zero, low = o.constant(np.int64(0)), o.constant(np.int64(floor - 1))
    in_len = _in_length(node, shape_of, axis, floor)
    if isinstance(node.ir.sizes, RuntimeValue):
        sizes = node.inputs[3] if len(node.inputs) > 3 else None
        if sizes is None:
            raise ValueError("the run-time sizes input is missing")
        if sizes.get_element_type().get_type_name() != "i64":
            sizes = o.convert(sizes, "i64").output(0)
        out_len = o.maximum(o.gather(sizes, o.constant(np.int64(i)), zero), low)
    elif node.ir.sizes is not None:
        out_len = o.constant(np.int64(node.ir.sizes[i]))
    else:  # a static integer scale k on this axis: out = k*in exactly (semantics.nearest_index.integer_scales)
        k = Fraction(node.ir.scales[i])
        if k.denominator != 1:
            raise ValueError(f"axis {axis}: the scale {float(k)} is not a whole number")
        out_len = o.maximum(o.multiply(in_len, o.constant(np.int64(int(k)))), low)
    tag(out_len, tag_of(node.name, axis, "out"))
    return in_len, out_len.output(0)


def _in_length(node, shape_of, axis: int, floor: int = 0):
    """X's run-time length on ``axis`` (i64 scalar), ending in the tagged Maximum with ``floor`` (``_lengths``)."""
    o = ops()
    zero = o.constant(np.int64(0))
    in_len = o.maximum(o.gather(shape_of, o.constant(np.int64(axis)), zero), o.constant(np.int64(floor)))
    tag(in_len, tag_of(node.name, axis, "in"))
    return in_len.output(0)


def applies(node) -> bool:
    """A Resize whose lengths are known only at run time: a dynamic input shape or sizes fed at run time."""
    return isinstance(node.ir, ResizeIR) and (not is_static(dims(node.inputs[0]))
                                              or isinstance(node.ir.sizes, RuntimeValue))


def rung(node, not_native=(), unless=lambda node: None):
    """Rung 3 for nearest with run-time lengths: taken where the static decomposition cannot build tables
    (a dynamic input shape or sizes fed at run time). ``not_native``: as for the tap tables' rung. ``unless``:
    a refusal to answer with instead of proving the form (the cost model's), or None."""
    ir = node.ir
    form, scaled = form_of(index_ir(ir)), None
    if isinstance(form, Refusal) and form.field == "scales":  # not a whole-number scale: its own form
        form = scaled = nearest_scale.forms(index_ir(ir))
    if isinstance(form, Refusal):
        return form
    x = node.inputs[0]
    if not applies(node):
        return Refusal("static lengths: the tap-table decomposition applies")
    if str(ir.dtype) in OPENVINO_DTYPES["wide"]:
        return Refusal(f"OpenVINO's CPU plugin runs {ir.dtype} as a 32-bit type, so a Gather of it is not exact",
                       "dtype")
    skipped = unless(node)
    if skipped is not None:
        return skipped
    verdict = grid_verdict(_standalone(form, ir.exclude_outside), ir) if scaled is None else \
        next(filter(None, (nearest_scale.grid_verdict(nearest_scale.standalone(f, ir.exclude_outside), ir, f)
                           for f in scaled)), None)
    if verdict is not None:
        return Refusal(verdict, "rung")
    o = ops()
    shape_of = o.shape_of(x, "i64").output(0)
    y = x
    copied = copied_axes(ir)
    order = gather_order(ir, scaled)
    for i, axis in order:
        if axis in copied:
            continue  # X's own length at run time, and the oracle copies it: nothing to gather
        keep = None
        if scaled is None:
            idx = index_graph(form, *_lengths(node, shape_of, i, axis), inside=ir.exclude_outside)
            idx, keep = idx if ir.exclude_outside else (idx, None)
        else:
            idx, _, *keep = nearest_scale.axis_graph(scaled[i], _in_length(node, shape_of, axis), ir.exclude_outside)
            keep = keep[0] if keep else None
        g = o.gather(y, idx, o.constant(np.int64(axis)))
        tag(g, tag_of(node.name, axis, "gather"))
        y = g.output(0) if keep is None else zeroed_outside(node.name, g.output(0), keep, ir.rank, axis)
    reason = (REASON + f", exact for output lengths up to {MAX_OUT}" if scaled is None else
              nearest_scale.reason(scaled)) + inexact_spellings(not_native)
    fixed = {axis: _fixed(ir, i, _static_len(dims(x)[axis]), scaled) for i, axis in enumerate(ir.axes)}
    return Candidate([y], reason, proof={"form": "nearest_index", "axes": [a for _, a in order if a not in copied],
                                         "copied": list(copied), "fixed": fixed, "scaled": scaled is not None})


def gather_order(ir: ResizeIR, scaled) -> list[tuple[int, int]]:
    """(i, axis) in the order the Gathers run. OpenVINO's CPU gathers the innermost axis element by element and an
    outer one by whole rows, so the innermost goes first where the outer axes' static scales add rows (an upscale:
    measured 1x32x240x320 x2, 15% faster); with lengths known only at run time, the IR's order."""
    order = list(enumerate(ir.axes))
    if len(order) < 2:
        return order  # one Gather or none (every axis copied, as a Resize to its input's own size): no order to pick
    scales = [float(f.scale) for f in scaled] if scaled is not None else \
        (integer_scales(ir) if ir.sizes is None else None)
    last = order[-1]
    if scales is not None and last[1] == ir.rank - 1 and \
            np.prod([scales[i] for i, _ in order[:-1]]) > 1:
        return [last] + order[:-1]
    return order


def _static_len(d):
    return None if d is None else int(d)


def _fixed(ir: ResizeIR, i: int, in_len, scaled=None):
    """(in, out) of the i-th resized axis where known here (None where known only at run time)."""
    if scaled is not None:
        return in_len, (scaled[i].out_len(in_len) if in_len is not None else None)
    if isinstance(ir.sizes, tuple):
        return in_len, ir.sizes[i]
    k = integer_scales(ir)
    return in_len, (k[i] * in_len if k is not None and in_len is not None else None)


# ----------------------------------------------------------------------------------------------------------
# The proof: the index subgraphs re-read from the produced model


def tags_in_copy(rec, by_tag, ov_model) -> dict:
    """{tag: op} of ``rec``'s ops in a copy of ``ov_model`` (cut apart by the proof of a run-time form), found by
    friendly name: a model re-read from disk has lost its tags; ``by_tag`` already maps them through the names
    recorded in memory."""
    names = {op.get_friendly_name(): op for op in all_ops(ov_model.clone())}  # bodies too: a node in a Loop
    copied = {t: names[op.get_friendly_name()] for t, op in by_tag.items() if op.get_friendly_name() in names}
    own = {t: op for t, op in copied.items() if t.startswith(rec.node + "/")}
    return {**_merged_lengths(rec.node, own, copied), **own}


# The tagged run-time values a form's index subgraph reads (``_lengths``, ``scale_taps``, ``scale_nearest``).
BOUNDARY_ROLES = ("in", "out", "scale")


def _merged_lengths(node: str, own: dict, copied: dict) -> dict:
    """This node's run-time lengths and scales that OpenVINO merged into another node's identical op (its shared
    op optimisation: two Resizes of one tensor compute the same in length; an out length read from a shape is
    another node's in length once OpenVINO has resolved the Gather of the Concat'ed sizes), which keeps the other
    node's tag: {this node's tag: that op}. Found at the run-time leaves of each index Gather's subgraph (the walk
    stops at tagged lengths and scales and at ShapeOf): a leaf another node tagged fills the role it was tagged
    with where that role is missing here, else the one role missing (a float: the scale). A wrong attribution
    cannot prove anything: the proof cuts the subgraph at the ops it names and refuses one that still reads
    another run-time value, and runs it over the grid against the oracle's taps."""
    tag_of_op = {op.get_name(): t for t, op in copied.items() if t.rpartition("/")[2] in BOUNDARY_ROLES}
    found: dict = {}
    for t, g in own.items():
        if not t.endswith("/gather") or g.get_type_name() != "Gather" or g.get_input_size() < 2:
            continue
        part = t[len(node) + 1:].rpartition("/")[0]  # index_<axis>
        foreign = {op.get_name(): (tag_of_op[op.get_name()], op) for op in _leaves(g.input_value(1).get_node(),
                                                                                 tag_of_op)
                   if not tag_of_op[op.get_name()].startswith(node + "/")}
        for other, op in foreign.values():
            other_part, _, role = other.rpartition("/")
            axis_part = other_part.rpartition("/")[2]
            mine = f"{node}/{axis_part if axis_part == f'index_{index_ops.JOINT}' else part}/{role}"
            if mine not in own:
                found.setdefault(mine, []).append(op)
        missing = [r for r in BOUNDARY_ROLES if f"{node}/{part}/{r}" not in own and f"{node}/{part}/{r}" not in found]
        lengths = [r for r in missing if r != "scale"]
        unplaced = [op for _, op in foreign.values() if all(op is not v for ops_ in found.values() for v in ops_)]
        for op in unplaced[:1] if len(unplaced) == 1 else ():
            role = "scale" if op.get_output_element_type(0).is_real() else (lengths[0] if len(lengths) == 1 else None)
            if role is not None and role in missing:
                found.setdefault(f"{node}/{part}/{role}", []).append(op)
    return {t: ops_[0] for t, ops_ in found.items() if len({o.get_name() for o in ops_}) == 1}


def _leaves(op, tagged: dict) -> list:
    """The tagged ops (``tagged``: name -> tag) where ``op``'s upstream walk ends: it stops at them and at ShapeOf
    (a length's source, not a leaf of the index arithmetic)."""
    seen, todo, out = set(), [op], []
    while todo:
        n = todo.pop()
        if n.get_name() in seen:
            continue
        seen.add(n.get_name())
        if n.get_name() in tagged:
            out.append(n)
        elif n.get_type_name() != "ShapeOf":
            todo += [v.get_node() for v in n.input_values()]
    return out


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather (on that axis, fed by the one before), and its index subgraph, taken
    out of a copy of the produced model with parameters in place of the run-time lengths it reads (the
    tagged Maximum ops), computes the oracle's taps over ``GRID``. Lengths OpenVINO folded into constants
    must be the static ones recorded at lowering; an index vector folded whole must equal the taps. Under
    exclude_outside each Gather is followed by its tagged Multiply by which picks lie inside, proven with it."""
    form, scaled = nearest_index(index_ir(rec.ir)), None
    if isinstance(form, NoNearestIndex) and form.field == "scales":
        scaled = nearest_scale.forms(index_ir(rec.ir))
        form = NoNearestIndex(scaled.reason, scaled.field) if isinstance(scaled, Refusal) else scaled
    if isinstance(form, NoNearestIndex):
        return [f"{rec.node}: the source IR has no integer index form ({form.reason})"]
    tags = tags_in_copy(rec, by_tag, ov_model)
    out = []
    if list(rec.proof.get("copied", ())) != list(copied_axes(rec.ir)):
        out.append(f"{rec.node}: the axes left as they are ({rec.proof.get('copied')}) are not the ones the source "
                   f"IR copies ({list(copied_axes(rec.ir))})")
    chained, gathers = index_gathers(rec, tags, rec.proof.get("axes", rec.ir.axes))
    out += chained
    for axis, g in gathers.items():
        fixed = tuple(rec.proof.get("fixed", {}).get(axis, (None, None)))
        keep = index_ops.inside_read(rec, tags, axis)
        got = _prove_axis(g.input_value(1), tags, rec, axis, fixed, keep) if scaled is None else \
            nearest_scale.prove_axis(g.input_value(1), tags.get(tag_of(rec.node, axis, "in")), rec.ir,
                                     scaled[rec.ir.axes.index(axis)], fixed[0], keep)
        out += [f"{rec.node}: axis {axis}: {m}" for m in got]
    return out


def index_gathers(rec, tags, axes) -> tuple[list[str], dict]:
    """(failures, {axis: its Gather}): every axis has its index Gather (``tag_of`` "gather"), on that axis, fed
    by the one before (under exclude_outside: by the tagged Multiply that reads the one before)."""
    out, found, prev = [], {}, None
    for axis in axes:
        g = tags.get(tag_of(rec.node, axis, "gather"))
        if g is None or g.get_type_name() != "Gather":
            out.append(f"{rec.node}: axis {axis}: no index Gather in the produced model")
            continue
        ax = g.input_value(2).get_node()
        if ax.get_type_name() != "Constant" or int(ax.get_data().reshape(-1)[0]) != axis:
            out.append(f"{rec.node}: axis {axis}: the Gather reads another axis")
        if prev is not None and g.input_value(0).get_node().get_name() != prev.get_name():
            out.append(f"{rec.node}: axis {axis}: the Gather does not read the previous axis' result")
        found[axis] = prev = g
        if rec.ir.exclude_outside:
            zeroed = tags.get(tag_of(rec.node, axis, "outside"))
            if zeroed is None or zeroed.get_type_name() != "Multiply" or \
                    zeroed.input_value(0).get_node().get_name() != g.get_name():
                out.append(f"{rec.node}: axis {axis}: no Multiply of the Gather by which picks lie inside")
                del found[axis]
                continue
            prev = zeroed
    return out, found


def _prove_axis(indices, tags, rec, axis: int, fixed: tuple, keep=None) -> list[str]:
    """The index subgraph of one axis (in the model copy), with ``keep`` (which picks lie inside, under
    exclude_outside): its run-time lengths replaced by parameters, run over the grid; or, folded to a constant,
    compared with the taps at the static lengths."""
    import openvino as ov

    src = indices.get_node()
    if src.get_type_name() == "Constant":
        fi, fo = fixed
        got = src.get_data().reshape(-1)
        if fi is None or (fo is not None and fo != got.size):
            return ["the index vector is a constant but the lengths are not static"]
        if keep is not None and (keep.get_node().get_type_name() != "Constant" or not np.array_equal(
                keep.get_node().get_data().reshape(-1).astype(np.float64), oracle_inside(rec.ir, fi, got.size))):
            return ["the constant index vector's picks inside the input differ from the oracle's taps"]
        return [] if np.array_equal(got, oracle_indices(rec.ir, fi, got.size)) else \
            ["the constant index vector differs from the oracle's taps"]
    # The lengths: the tagged Maximum ops, unless OpenVINO folded one (a static length, recorded at lowering).
    roles, boundary = [], []
    for role in ("in", "out"):
        op = tags.get(tag_of(rec.node, axis, role))
        if op is not None and op.get_type_name() != "Constant":
            roles.append(role)
            boundary.append(op.output(0))
    fi, fo = fixed
    if "in" in roles and "out" not in roles and fo is None:
        # OpenVINO derived out == in from the shapes' symbols (sizes[k] = Shape(X)[k]) and, the copy of an axis
        # of equal lengths then being the whole map, left the out length out: checked on the diagonal.
        fo = "in"
    missing = [r for r, f in (("in", fi), ("out", fo)) if r not in roles and f is None]
    if missing:
        return [f"the index subgraph's run-time {' and '.join(missing)} length is not in the produced model"]
    o = ops()
    params = {}
    for v, role in zip(boundary, roles):
        p = params[role] = o.parameter([], np.int64, name=role)
        cut(v, p.output(0))
    # A length OpenVINO folded into the subgraph (e.g. sizes[0] = Shape(X)[0] with a static batch) leaves its
    # tagged op unread: it is then fixed, to the static length (in) or to the length of the index vector (out).
    reached = upstream_names(indices.get_node()) | (upstream_names(keep.get_node()) if keep is not None else set())
    roles = [r for r in roles if params[r].get_name() in reached]
    if "in" not in roles and "out" in roles and fi is None:  # (a static in stays fixed: a constant resized)
        # OpenVINO derived in == out from the shapes' symbols (sizes[k] = Shape(X)[k]) and reads out for both.
        fi = "out"
    elif "in" not in roles and fi is None:
        return ["the index subgraph does not read the input's run-time length"]
    try:
        model = ov.Model([indices] + ([keep] if keep is not None else []),
                         [params[r] for r in ("in", "out") if r in roles], "nearest_index_proof")
    except RuntimeError as e:
        return [f"the index subgraph depends on more than its lengths ({str(e).splitlines()[-1][:120]})"]
    verdict = grid_verdict(model, rec.ir, (None if "in" in roles else fi,
                                           None if "out" in roles else (fo or "length")))
    return [] if verdict is None else [verdict]
