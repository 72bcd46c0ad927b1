"""``check --target openvino`` for one node: the node cut out into a one-node model (its constant inputs kept
as initializers, everything else a graph input of the inferred shape, fed probe values), OpenVINO's own
importer's verdict on it (``check_openvino``'s module docstring says what each verdict means) and the rung
resample-bridge takes."""

from __future__ import annotations

import numpy as np

from ..lowering.openvino.target import convert
from ..semantics.errors import BridgeError
from ..lowering.probes import sizes_of_scales
from ..semantics.ir import ResizeIR, RuntimeValue, is_static
from ..lowering.openvino.probe import declared_batch
from .node_probe import PROBE_SEED, dims as _dims, dynamic_length as _dynamic_length, probe_input
from ..translate.onnx import RESAMPLING_OPS, parse_model
from ..translate.onnx_walk import node_name, walk
from ..translate.onnx_shapes import declared_shape


def single_node_models(model, unproven: bool = False):
    """(node name, IR, one-node ModelProto, feeds) for every resampling node of ``model``. A node input with
    no shape known to ONNX's or OpenVINO's shape inference is refused, or with ``unproven`` yields
    (name, IR, None, the reason)."""
    import onnx
    from onnx import helper, numpy_helper, shape_inference

    frontend = _FrontendShapes(model)
    try:
        irs = dict(parse_model(model))
    except BridgeError as e:
        # An input rank only OpenVINO's importer infers (convert reads it there too): the model with its shapes.
        annotated = frontend.annotated(model)
        if annotated is None:
            raise
        try:
            irs = dict(parse_model(annotated))
        except BridgeError:
            if not unproven:
                raise e from None
            # Nodes of unknown input rank (inside a Loop body, say) are left out here and reported unproven.
            irs = dict(parse_model(annotated, lenient=True))
        model = annotated
    try:
        inferred = shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:
        inferred = model
    g = inferred.graph
    infos = {vi.name: vi for vi in list(g.input) + list(g.value_info) + list(g.output)}
    consts = {i.name: i for i in g.initializer}
    for node in g.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    t = onnx.TensorProto()
                    t.CopyFrom(a.t)
                    t.name = node.output[0]
                    consts[node.output[0]] = t
    opset = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    top = {node_name(n, i) for i, n in enumerate(g.node)}  # walk names body nodes "<outer>/<attr>/<node>"
    for name, node in walk(g):
        if node.op_type not in RESAMPLING_OPS or node.domain not in ("", "ai.onnx"):
            continue
        ir = irs.get(name)
        if name not in top:
            # A node inside an If / Loop / Scan body: no one-node model stands for it (its inputs are the body's,
            # known only in the whole model); it is judged there, by the whole model's conversion.
            if unproven:
                yield name, ir or node.op_type, None, IN_BODY + ": its inputs are known only in the whole model"
            continue
        if ir is None:
            if unproven:
                yield name, node.op_type, None, "the input rank is unknown (no shape inference gives it)"
                continue
            raise BridgeError("no IR for this node (its name is not unique?); check needs one", name)
        inits, inputs, feeds = [], [], {}
        # A fresh generator per node: the same configuration gets the same probe, whichever nodes come first.
        rng = np.random.default_rng(PROBE_SEED)
        dyn = _tied_batch(_dynamic_length(ir), ir, node, infos)
        x_vi = frontend.better(node.input[0], infos.get(node.input[0]))
        for pos, inp in enumerate(node.input):
            if not inp:
                continue
            if inp in consts:
                inits.append(consts[inp])
                continue
            known = _known_parameter(node, pos, ir, infos.get(inp), inp)
            if known is not None:
                # The whole model's value (folded from a static graph): the importer of the whole model sees
                # a constant here too, and the oracle computes with it.
                inits.append(known)
                continue
            vi = frontend.better(inp, infos.get(inp))  # as convert does: the shapes OpenVINO's importer infers
            if vi is None:
                why = f"input {inp!r} has no known shape (neither ONNX's nor OpenVINO's shape inference gives one)"
                if unproven:
                    break
                raise BridgeError(why + "; check needs one: give --input", name, "X")
            inputs.append(vi)
            # A parameter the IR knows on the resized axes, fed along with X's own (probe) lengths elsewhere.
            fed = _known_parameter(node, pos, _with_shape(ir, tuple(_dims(x_vi, dyn))), vi, inp) \
                if x_vi is not None and x_vi.type.tensor_type.HasField("shape") else None
            if fed is not None:
                feeds[inp] = numpy_helper.to_array(fed)
                continue
            feeds[inp] = probe_input(node.op_type, pos, vi, rng, x_vi, dyn=dyn)
        else:
            why = None
        if why is not None:
            yield name, ir, None, why
            continue
        if pos_shape := next((v for v in inputs if v.name == node.input[0]), None):
            ir = _with_shape(ir, _shape_of_vi(pos_shape))
        if node.input[0] in consts:  # a constant X (a position embedding): its own element type
            elem = consts[node.input[0]].data_type
        else:
            elem = x_vi.type.tensor_type.elem_type if x_vi is not None else onnx.TensorProto.FLOAT
        out = helper.make_tensor_value_info(node.output[0], elem, None)
        one = helper.make_model(helper.make_graph([node], name, inputs, [out], inits), opset_imports=opset,
                                ir_version=min(model.ir_version, 10))
        yield name, ir, one, feeds


IN_BODY = "inside a control-flow body (If / Loop / Scan)"


def _tied_batch(dyn, ir, node, infos):
    """``dyn`` with X's unknown batch read from an input that shares it and declares it (``probe.declared_batch``),
    so that the node's probes run (a data batch of 1 against a grid of 2 does not: check once called the importer
    refused)."""
    shapes = [None if vi is None or (dims := declared_shape(vi)) is None else
              tuple(d if isinstance(d, int) and d > 0 else None for d in dims)
              for vi in (infos.get(name) for name in node.input)]
    n = declared_batch(ir, shapes)
    return dyn if n is None else (lambda ax: n if ax == 0 else dyn(ax))


class _FrontendShapes:
    """Shapes and element types OpenVINO's importer infers for the tensors of the whole model, read lazily
    (only where ONNX's shape inference leaves a node input without a shape)."""

    def __init__(self, model):
        self.model, self._by_name = model, None

    def _load(self):
        import openvino as ov

        import os
        import tempfile

        import onnx
        from onnx import helper

        self._by_name = {}
        # Every resampling node's inputs become model outputs too: the importer keeps their names (an inner
        # tensor's name can vanish in a fused op otherwise).
        m = onnx.ModelProto()
        m.CopyFrom(self.model)
        have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input} | \
            {t.name for t in m.graph.initializer}
        for node in m.graph.node:
            if node.op_type in RESAMPLING_OPS:
                for inp in node.input:
                    if inp and inp not in have:
                        m.graph.output.append(helper.make_empty_tensor_value_info(inp))
                        have.add(inp)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            try:
                onnx.save(m, path)
                ov_model = ov.convert_model(path)
            except Exception:  # noqa: BLE001 -- no shapes from the importer: the caller says so
                return
        for op in ov_model.get_ops():
            for out in op.outputs():
                for n in out.get_names():
                    self._by_name.setdefault(n, out)

    def annotated(self, model):
        """A copy of ``model`` whose resampling nodes' inputs without a known shape carry the shape OpenVINO
        infers (None when that adds nothing)."""
        import onnx

        known = {vi.name for vi in list(model.graph.input) + list(model.graph.value_info)
                 if vi.type.tensor_type.HasField("shape")}
        known |= {t.name for t in model.graph.initializer}
        added = []
        for node in model.graph.node:
            for name in node.input if node.op_type in RESAMPLING_OPS else ():
                if name and name not in known:
                    vi = self.value_info(name, None)
                    if vi is not None:
                        added.append(vi)
                        known.add(name)
        if not added:
            return None
        m = onnx.ModelProto()
        m.CopyFrom(model)
        keep = [vi for vi in m.graph.value_info if vi.name not in {a.name for a in added}]
        del m.graph.value_info[:]
        m.graph.value_info.extend(keep + added)
        return m

    def better(self, name, vi):
        """``vi``, or OpenVINO's view of the tensor where ONNX's lacks a shape or leaves dimensions unknown that
        OpenVINO knows (a model whose value_info was dropped, as ``--input`` does)."""
        if vi is not None and vi.type.tensor_type.HasField("shape") and \
                all(d > 0 for d in (x.dim_value for x in vi.type.tensor_type.shape.dim)):
            return vi
        mine = self.value_info(name, vi)
        if mine is None:
            return vi if vi is not None and vi.type.tensor_type.HasField("shape") else None
        if vi is None or not vi.type.tensor_type.HasField("shape"):
            return mine
        old, new = _shape_of_vi(vi), _shape_of_vi(mine)
        if len(old) == len(new) and sum(d is not None for d in new) > sum(d is not None for d in old):
            return mine
        return vi

    def value_info(self, name, vi):
        from onnx import helper

        if self._by_name is None:
            self._load()
        out = self._by_name.get(name)
        if out is None or out.get_partial_shape().rank.is_dynamic:
            return None
        dims = [d.get_length() if d.is_static else f"{name}_d{i}" for i, d in enumerate(out.get_partial_shape())]
        if vi is not None and vi.type.tensor_type.elem_type:
            elem = vi.type.tensor_type.elem_type
        else:
            try:
                elem = helper.np_dtype_to_tensor_dtype(np.dtype(out.get_element_type().to_dtype()))
            except Exception:  # noqa: BLE001
                return None
        return helper.make_tensor_value_info(name, elem, dims)


def _shape_of_vi(vi):
    return tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                 for d in vi.type.tensor_type.shape.dim)


def _with_shape(ir, shape):
    """``ir`` with the input shape filled in where its own is unknown (rank included)."""
    import dataclasses

    have = getattr(ir, "input_shape", None)
    if not hasattr(ir, "input_shape") or not shape:
        return ir
    if have is None:
        return dataclasses.replace(ir, input_shape=tuple(shape))
    if len(have) == len(shape) and None in have:
        return dataclasses.replace(ir, input_shape=tuple(h if h is not None else s for h, s in zip(have, shape)))
    return ir


def _known_parameter(node, pos, ir, vi, name):
    """An initializer for a Resize roi/scales/sizes input whose value the IR knows (the whole model folds it:
    a Shape chain on a static graph), or None."""
    import onnx
    from onnx import numpy_helper

    if node.op_type != "Resize" or pos not in (1, 2, 3) or not isinstance(ir, ResizeIR):
        return None
    value = getattr(ir, {1: "roi", 2: "scales", 3: "sizes"}[pos], None)
    if pos == 3 and ir.scales_from_sizes and is_static(ir.input_shape):
        return numpy_helper.from_array(sizes_of_scales(ir, ir.input_shape, np.int64), name)
    if value is None or isinstance(value, RuntimeValue):
        return None
    axes_attr = [list(a.ints) for a in node.attribute if a.name == "axes"]
    listed = [a % ir.rank for a in axes_attr[0]] if axes_attr else list(range(ir.rank))
    elem = vi.type.tensor_type.elem_type if vi is not None and vi.type.tensor_type.elem_type else \
        (onnx.TensorProto.INT64 if pos == 3 else onnx.TensorProto.FLOAT)
    dt = onnx.helper.tensor_dtype_to_np_dtype(elem)
    where = {ax: i for i, ax in enumerate(ir.axes)}
    n = len(ir.axes)
    vals = []
    for ax in listed:
        i = where.get(ax)
        if i is None:  # an axis the op leaves alone, as the ONNX input spells it
            if pos == 3:
                length = (ir.input_shape or [None] * ir.rank)[ax]
                if length is None:
                    return None
                vals.append(length)
            else:
                vals.append(1.0)
        elif pos == 1:
            vals.append((float(value[i]), float(value[i + n])))
        else:
            vals.append(float(value[i]) if pos == 2 else int(value[i]))
    if pos == 1:
        vals = [v[0] if isinstance(v, tuple) else 0.0 for v in vals] + \
               [v[1] if isinstance(v, tuple) else 1.0 for v in vals]
    arr = np.array(vals, dtype=dt)
    exact = [float(v) for v in vals]
    if pos != 3 and not np.array_equal(arr.astype(np.float64), np.array(exact)):
        return None  # not representable in the input's type: leave it fed at run time
    if vi is not None and vi.type.tensor_type.HasField("shape"):
        dims = _shape_of_vi(vi)
        if len(dims) != 1 or (dims[0] is not None and dims[0] != arr.size):
            return None  # listed over other axes than the IR's: leave it fed at run time
    return numpy_helper.from_array(arr, name)


def _ours(path) -> dict:
    """Which rung resample-bridge takes for the one-node model at ``path``, or why it refuses."""
    try:
        _, (rec,) = convert(path)
    except BridgeError as e:
        return {"rung": None, "reason": e.message}
    return _ours_row(rec)


def _ours_row(rec) -> dict:
    return {"rung": rec.rung, "rung_name": rec.rung_name, "reason": rec.reason, "condition": rec.condition}
