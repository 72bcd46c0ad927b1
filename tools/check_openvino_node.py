"""``check --target openvino`` for one node: the node cut out into a one-node model (its constant inputs kept
as initializers, everything else a graph input of the inferred shape, fed probe values), OpenVINO's own
importer's verdict on it (``check_openvino``'s module docstring says what each verdict means) and the rung
resample-bridge takes."""

from __future__ import annotations

import numpy as np

from ..lowering.openvino.frontend import openvino_error_reason
from ..lowering.openvino.graph import compile_f32
from ..lowering.openvino.interpolate import runtime_conditions
from ..lowering.openvino.target import convert
from ..semantics.compare import outside
from ..semantics.errors import BridgeError
from ..semantics.ir import ResizeIR, has_runtime_params
from ..semantics.tolerance import float_bound


def single_node_models(model):
    """(node name, IR, one-node ModelProto, feeds) for every resampling node of ``model``."""
    import onnx
    from onnx import helper, shape_inference

    from ..translate.onnx import RESAMPLING_OPS, node_name, parse_model

    irs = dict(parse_model(model))
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
    rng = np.random.default_rng(0)
    for i, node in enumerate(g.node):
        if node.op_type not in RESAMPLING_OPS or node.domain not in ("", "ai.onnx"):
            continue
        name = node_name(node, i)
        inits, inputs, feeds = [], [], {}
        for pos, inp in enumerate(node.input):
            if not inp:
                continue
            if inp in consts:
                inits.append(consts[inp])
                continue
            vi = infos.get(inp)
            if vi is None or not vi.type.tensor_type.HasField("shape"):
                raise BridgeError(f"input {inp!r} has no known shape; check needs one", name, "X")
            inputs.append(vi)
            feeds[inp] = probe_input(node.op_type, pos, vi, rng, infos.get(node.input[0]))
        out = helper.make_tensor_value_info(node.output[0], infos[node.input[0]].type.tensor_type.elem_type, None)
        one = helper.make_model(helper.make_graph([node], name, inputs, [out], inits), opset_imports=opset,
                                ir_version=min(model.ir_version, 10))
        yield name, irs[name], one, feeds


def _dims(vi) -> list[int]:
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1
            for d in vi.type.tensor_type.shape.dim]


def probe_input(op_type: str, pos: int, vi, rng, x_info=None) -> np.ndarray:
    """Probe values that expose differences: N(0,1) data, grids reaching outside [-1, 1], offsets of a few
    pixels, masks in [0, 1]; run-time Resize parameters get a fractional up-scale of the spatial axes
    (x1.7, lengths to match) and an off-centre roi."""
    import onnx

    t = vi.type.tensor_type
    shape = _dims(vi)
    dt = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
    if op_type == "Resize" and pos in (1, 2, 3):
        n = shape[0] if shape else 0
        lens = _dims(x_info)[-n:] if x_info is not None and n else [1] * n
        spatial = [i >= n - 2 for i in range(n)]  # the last two axes
        if pos == 1:
            k = n // 2
            return np.array([0.1] * k + [0.85] * k, dtype=dt)
        if pos == 2:
            return np.array([1.7 if s else 1.0 for s in spatial], dtype=dt)
        return np.array([int(L * 1.7) if s else L for L, s in zip(lens, spatial)], dtype=dt)
    if op_type == "GridSample" and pos == 1:
        v = rng.uniform(-1.2, 1.2, shape)
    elif op_type == "DeformConv" and pos == 2:
        v = rng.normal(0, 2.0, shape)
    elif op_type == "DeformConv" and pos == 4:
        v = rng.uniform(0, 1, shape)
    elif np.issubdtype(dt, np.integer):
        v = rng.integers(0, 200, shape)
    else:
        v = rng.standard_normal(shape)
    return v.astype(dt)


def _native_verdict(path, ir, one, feeds) -> dict:
    """What OpenVINO's own importer does with the one-node model ``one`` (saved at ``path``)."""
    import openvino as ov

    from ..translate import openvino as tov

    try:
        ov_model = ov.convert_model(path)
    except Exception as e:
        return {"verdict": "refused", "reason": openvino_error_reason(str(e))}
    try:
        parsed = tov.parse_model(ov_model)
    except BridgeError:
        parsed = None  # an op our OpenVINO parser refuses: judged by numbers below
    try:
        got = compile_f32(ov_model)(feeds)[0]
    except Exception as e:
        return {"verdict": "refused", "reason": "converts but does not run on CPU: " + openvino_error_reason(str(e))}
    return _judge(ir, one, feeds, parsed, got)


def _judge(ir, one, feeds, parsed, got) -> dict:
    """``_verdict``, with a flag where the output shape differs (its max_error is infinite: JSON null)."""
    v = _verdict(ir, one, feeds, parsed, got)
    if not np.isfinite(v.get("max_error", 0.0)):
        v["output_shape_differs"] = True
    return v


def _verdict(ir, one, feeds, parsed, got) -> dict:
    """The verdict on what the importer produced for one node: ``parsed`` its resampling ops as IR (None: one
    our parser refuses), ``got`` its output on the probe ``feeds``."""
    from ..semantics.equivalence import diff
    from ..semantics.reference import run

    parsed = parsed or []
    node_inputs = [None if not n else feeds.get(n, _const(one, n)) for n in one.graph.node[0].input]
    want = run(ir, *node_inputs)
    # A different output shape is an infinite error (JSON output writes null and the flag beside it).
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max(initial=0)) \
        if got.shape == want.shape else float("inf")
    bound = float_bound(ir, *node_inputs)  # the one policy: the float32 error bound of the spec's formula
    matches = got.shape == want.shape and not outside(got, want, bound).any()
    # Where the IR cannot be compared, the probe's numbers are the verdict.
    by_numbers = {"verdict": "exact" if matches else "silently different", "fields": [], "max_error": err}
    if got.shape != want.shape:
        by_numbers["fields"] = [f"output shape {list(got.shape)} where the model's is {list(want.shape)}"]
    if len(parsed) != 1:
        # The importer produced no single resampling op (e.g. a decomposition).
        return {**by_numbers, "reason": f"OpenVINO produced {len(parsed)} resampling ops"}
    _, ov_ir = parsed[0]
    if isinstance(ir, ResizeIR) and isinstance(ov_ir, ResizeIR) and has_runtime_params(ir):
        # Run-time parameters: say under which run-time condition OpenVINO's op computes the ONNX numbers.
        ok, conds = runtime_conditions(ir, ov_ir)
        if not ok:
            return {"verdict": "silently different", "fields": [conds], "max_error": err}
        if conds:
            return {"verdict": "exact only if", "conditions": conds, "max_error": err}
        return {"verdict": "exact", "max_error": err}
    shape = ir.input_shape
    try:
        d = diff(ir, ov_ir, shapes=shape, runtime=None)
    except BridgeError as e:
        return {**by_numbers, "reason": str(e)}
    if not d.same:
        return {"verdict": "silently different", "fields": [str(f) for f in d.fields], "max_error": err}
    if d.ties:
        # Which input element a resize reads does not depend on the data, so one run on distinct probe
        # values settles, for this shape, how OpenVINO's fp32 coordinates resolve the tie indices.
        if matches:
            return {"verdict": "exact", "max_error": err, "ties_resolved": d.ties}
        bad = _mismatched_indices(got, want, bound, ir.rank, d.ties)
        same = {ax: [i for i in idx if i not in bad.get(ax, [])] for ax, idx in d.ties.items()}
        return {"verdict": "silently different", "fields": ["fp32 coordinates resolve ties differently"],
                "ties": bad, "ties_resolved": {k: v for k, v in same.items() if v}, "max_error": err}
    return {"verdict": "exact", "max_error": err}


def _mismatched_indices(got, want, bound, rank, ties) -> dict:
    """Per axis name, the tie indices that read another element. An index counts only through a mismatching
    element whose coordinates on the other tied axes are not ties themselves, so one wrong column does not
    make every row look wrong."""
    from ..semantics.ir import axis_name

    wrong = np.argwhere(outside(got, want, bound))
    tied = {ax: set(ties.get(axis_name(ax, rank), ())) for ax in range(rank)}
    out: dict = {}
    for pos in wrong:
        for ax in range(rank):
            if pos[ax] in tied[ax] and all(pos[o] not in tied[o] for o in range(rank) if o != ax):
                out.setdefault(axis_name(ax, rank), set()).add(int(pos[ax]))
    return {k: sorted(v) for k, v in out.items()}


def _const(model, name):
    from onnx import numpy_helper

    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    return None


def _ours(path) -> dict:
    """Which rung resample-bridge takes for the one-node model at ``path``, or why it refuses."""
    try:
        _, (rec,) = convert(path)
    except BridgeError as e:
        return {"rung": None, "reason": e.message}
    return _ours_row(rec)


def _ours_row(rec) -> dict:
    return {"rung": rec.rung, "rung_name": rec.rung_name, "reason": rec.reason, "condition": rec.condition}
