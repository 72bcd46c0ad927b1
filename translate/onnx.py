"""ONNX models -> IR: loading (untrusted files included), the graph walk (subgraphs of If / Loop / Scan and
local functions included), and the per-node view the op parsers read (``translate/onnx_ops.py``).

The IR follows the ONNX specification; where the spec text and onnx.reference disagree, ``convention``
chooses ("spec", the default as the runtimes compute it, or "reference"); see ``translate/onnx_ops.py``.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any

import numpy as np
import onnx
from onnx import inliner, numpy_helper, shape_inference

from ..semantics.errors import BridgeError
from ..semantics.ir import RuntimeValue
from .onnx_files import check_inline_tensors, read_model
from ..semantics.vocab import ONNX_CONVENTION_OPS, ONNX_DOMAINS, ONNX_NEAREST_MODES, ONNX_RESAMPLING_OPS, ONNX_RESIZE_OPS
from .onnx_fold import fold_parameters
from .onnx_shape_eval import runtime_values
from .onnx_ops import CONVENTIONS, DEFAULT_CONVENTION, PARSERS
from .onnx_validate import check_header, check_nodes, check_structure, check_types, validate_node
from .onnx_walk import is_resampling, node_name, subgraphs, walk

RESAMPLING_OPS = ONNX_RESAMPLING_OPS  # PARSERS' keys
NEAREST_MODES = ONNX_NEAREST_MODES  # the ONNX nearest_mode strings (the IR's rules: semantics.ir)
_VERSIONS = {
    "Resize": (10, 11, 13, 18, 19),
    "Upsample": (7, 9, 10),
    "GridSample": (16, 20, 22),
    "DeformConv": (19, 22),
}


def since_version(op: str, opset: int) -> int:
    """The version of ``op`` in effect for a model importing ``opset`` of the default domain."""
    found = [v for v in _VERSIONS[op] if v <= opset]
    if not found:
        raise BridgeError(f"{op} does not exist in opset {opset} (first version {_VERSIONS[op][0]})",
                          field="opset")
    return found[-1]


def load(model_or_path, validate: bool = True):
    """A ModelProto from a path, bytes or a ModelProto; a clear one-line error for anything that is not ONNX
    (directories, FIFOs, devices, truncated or hostile files, external data outside the model's folder).
    ``validate``: also refuse what onnx.checker / onnxruntime refuse and every resampling node the parser
    refuses (``check_model``), so every verb and target refuses the same models."""
    model = _read(model_or_path)
    if validate:
        check_model(model)
    return model


def _read(model_or_path):
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    if isinstance(model_or_path, (bytes, bytearray)):
        try:
            model = onnx.load_from_string(bytes(model_or_path))
        except Exception as e:  # protobuf raises DecodeError and friends
            raise BridgeError(f"not an ONNX model ({type(e).__name__})", field="model") from None
    else:
        model = read_model(str(model_or_path))
    if not model.graph.node and not model.graph.input:
        raise BridgeError("not an ONNX model (no graph)", field="model")
    return model


def default_opset(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ONNX_DOMAINS), 1)


def _constant_value(node):
    """The value of a Constant node, or None for spellings that carry no tensor (sparse, strings)."""
    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name in ("value_float", "value_int"):
            return np.array(onnx.helper.get_attribute_value(a))
        if a.name == "value_floats":
            return np.array(list(a.floats), dtype=np.float32)
        if a.name == "value_ints":
            return np.array(list(a.ints), dtype=np.int64)
    return None


class Graph:
    """Constants, shapes and element types of every tensor of a model, subgraphs included (ONNX forbids a
    subgraph to shadow an outer name, so one table serves every scope)."""

    def __init__(self, model, inferred=None):
        if inferred is None:
            try:
                inferred = shape_inference.infer_shapes(model, strict_mode=False)
            except Exception:
                inferred = model  # shape inference is a convenience; parsing works without it
        self.opset = default_opset(model)
        self.consts: dict[str, np.ndarray] = {}
        self.shapes: dict[str, tuple | None] = {}
        self.dtypes: dict[str, str] = {}
        self.dim_params: dict[str, tuple] = {}  # symbolic dim names, where shape inference has them
        for g in _all_graphs(inferred.graph):
            for init in g.initializer:
                self.consts[init.name] = numpy_helper.to_array(init)
            for node in g.node:
                if node.op_type == "Constant" and node.domain in ONNX_DOMAINS and node.output:
                    value = _constant_value(node)
                    if value is not None:
                        self.consts[node.output[0]] = value
            for vi in list(g.input) + list(g.value_info) + list(g.output):
                t = vi.type.tensor_type
                if t.HasField("shape"):
                    self.shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                                 for d in t.shape.dim)
                    self.dim_params[vi.name] = tuple(d.dim_param or None for d in t.shape.dim)
                if t.elem_type:
                    try:
                        self.dtypes[vi.name] = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name
                    except Exception:
                        pass  # types numpy has no name for (float8...) are not resampling inputs
        graphs = list(_all_graphs(inferred.graph))
        producers = {o: n for g in graphs for n in g.node for o in n.output if o}
        resampling = [n for g in graphs for n in g.node if is_resampling(n)]
        inputs = runtime_values(self.consts, self.shapes, self.dtypes)
        folded, self.partials = fold_parameters(resampling, producers, self.consts, self.shapes, self.opset,
                                                self.dim_params, inputs)
        self.consts.update(folded)
        for name, arr in self.consts.items():
            self.shapes[name] = tuple(arr.shape)
            self.dtypes[name] = arr.dtype.name
        self.graph = model.graph


def _all_graphs(graph):
    yield graph
    for node in graph.node:
        for _, g in subgraphs(node):
            yield from _all_graphs(g)


class NodeView:
    """What a parser needs of one node, independent of where the node lives: an ONNX NodeProto in a
    model (``from_proto``) or OpenVINO's ONNX-frontend NodeContext (``lowering/openvino``)."""

    def __init__(self, op_type: str, name: str, attrs: dict[str, Any], inputs: list[str], consts: dict,
                 shapes: dict, dtypes: dict, partials: dict | None = None):
        self.op_type, self.name, self.attrs, self.inputs = op_type, name, attrs, inputs
        self.consts, self.shapes, self.dtypes = consts, shapes, dtypes
        self.partials = partials or {}  # run-time values known in part (translate/onnx_fold.py)

    @classmethod
    def from_proto(cls, node, g: Graph, name: str) -> "NodeView":
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        return cls(node.op_type, name, attrs, list(node.input), g.consts, g.shapes, g.dtypes, g.partials)

    def with_constants(self, consts: dict, key=lambda name: name.split(":", 1)[-1]) -> "NodeView":
        """A copy whose run-time inputs take their value from ``consts`` (``model_constants``) where the
        model fixes it; ``key`` maps an input name of this view to the model's tensor name."""
        extra = {n: consts[key(n)] for n in self.inputs if n and n not in self.consts and key(n) in consts}
        return self.replace(consts={**self.consts, **extra}) if extra else self

    def replace(self, **kw) -> "NodeView":
        """A copy with some of op_type, name, attrs, inputs, consts, shapes, dtypes replaced."""
        fields = dict(op_type=self.op_type, name=self.name, attrs=dict(self.attrs), inputs=list(self.inputs),
                      consts=self.consts, shapes=self.shapes, dtypes=self.dtypes, partials=self.partials)
        fields.update(kw)
        return NodeView(**fields)

    def input(self, i: int) -> str:
        return self.inputs[i] if len(self.inputs) > i else ""

    def const(self, i: int):
        """Input i's constant value, RuntimeValue if computed at run time, None if omitted."""
        name = self.input(i)
        if not name:
            return None
        if name in self.consts:
            return self.consts[name]
        return RuntimeValue(name)

    def shape(self, i: int):
        return self.shapes.get(self.input(i))

    def partial(self, i: int):
        """Input i's value known in part: per entry an int, ("dim", tensor, axis), ("multiple", k, tensor, axis)
        or None (unknown)."""
        return self.partials.get(self.input(i))

    def dtype(self, i: int):
        return self.dtypes.get(self.input(i))


def model_constants(model) -> dict:
    """{tensor name: value} of every tensor whose value the model fixes: initializers, Constant nodes in
    any spelling, and roi / scales / sizes chains folded over static shapes (``onnx_fold``). For a view built
    where these are not visible (OpenVINO's frontend sees a Shape->Concat chain or a Constant value_ints
    as a run-time input): ``NodeView.with_constants``."""
    return dict(Graph(inline_functions(model)).consts)


def inline_functions(model):
    """Local functions inlined (as OpenVINO's importer does), so their nodes have shapes and names."""
    if not len(model.functions):
        return model
    return inliner.inline_local_functions(model)


def resampling_nodes(model):
    """(name, NodeProto) of every resampling node in the default domain, bodies included."""
    for name, node in walk(model.graph):
        if is_resampling(node):
            yield name, node


# The convention in force where no caller names one: set once per verb (``--onnx-convention``), so every
# parse inside it (the source model, OpenVINO's frontend hook, the re-read of a written ONNX model) agrees.
_CONVENTION = contextvars.ContextVar("resample_bridge_onnx_convention", default=DEFAULT_CONVENTION)


def _checked(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise BridgeError(f"unknown ONNX convention {convention!r}; expected one of {', '.join(CONVENTIONS)}",
                          field="onnx-convention")
    return convention


def current_convention() -> str:
    return _CONVENTION.get()


@contextlib.contextmanager
def onnx_convention(convention: str):
    """Parse ONNX under ``convention`` ("spec" or "reference") inside the ``with`` block."""
    token = _CONVENTION.set(_checked(convention))
    try:
        yield convention
    finally:
        _CONVENTION.reset(token)


def parse_model(model_or_path, convention: str | None = None, lenient: bool = False) -> list[tuple[str, Any]]:
    """``[(node_name, ir), ...]`` in graph order for every resampling node: the main graph, If / Loop / Scan
    bodies and (inlined) local functions. ``convention``: None is the one in force (``onnx_convention``).
    The model is validated as ``load`` does (``check_model``). ``lenient``: a node whose input rank is unknown
    here is left out instead of refused (``_parse_checked``)."""
    return _parse_checked(_read(model_or_path), convention, lenient=lenient)


def check_model(model, convention: str | None = None) -> None:
    """Refuse, in one line naming node and field, what onnx.checker (full_check) and onnxruntime refuse
    (graph order and cycles, unknown ops and attributes, attribute types, input counts, element types) and
    every resampling node whose parameters the spec does not allow."""
    _parse_checked(model, convention, lenient=True)


def _parse_checked(model, convention, lenient: bool = False):
    """Validate ``model`` and parse its resampling nodes. ``lenient``: a node whose input rank is unknown here
    (no shape information) is left to the caller, which may know it (OpenVINO's frontend does)."""
    check_header(model)
    check_inline_tensors(model.graph)
    model = inline_functions(model)
    check_structure(model.graph)
    opset = default_opset(model)
    for name, node in resampling_nodes(model):  # their own messages first: they name the field precisely
        validate_node(node, opset, name, {})
    check_nodes(model)
    inferred, type_error = check_types(model)
    g = Graph(model, inferred)
    out = []
    for name, node in resampling_nodes(model):  # before the type error: the parser names the field precisely
        view = NodeView.from_proto(node, g, name)
        validate_node(node, g.opset, name, g.dtypes)
        _check_parameter_ranks(view, g.opset)
        try:
            out.append((name, parse_view(view, g.opset, convention)))
        except BridgeError as e:
            if not (lenient and e.field == "X" and view.shape(0) is None):
                raise
    if type_error is not None and not _owned_by_parser(type_error, out):
        raise type_error
    return out


def _check_parameter_ranks(view: NodeView, opset: int) -> None:
    """roi / scales / sizes are 1-D. Refused here, in the model itself, a scalar never reaches the parser,
    which then reads a 0-d constant as the empty tensor it was (OpenVINO's frontend turns an empty constant
    into a 0-d one)."""
    if view.op_type not in ONNX_RESIZE_OPS:
        return
    one = view.op_type == "Upsample" or since_version(view.op_type, opset) == 10  # (X, scales) only
    fields = ("scales",) if one else ("roi", "scales", "sizes")
    for i, field in enumerate(fields, start=1):
        v, shape = view.const(i), view.shape(i)
        shape = v.shape if isinstance(v, np.ndarray) else shape
        if shape is not None and len(shape) != 1:
            raise BridgeError(f"must be a 1-D tensor, got shape {list(shape)}", view.name, field)


def _owned_by_parser(e: BridgeError, parsed) -> bool:
    """ONNX's inference refusing a resampling node's roi / scales / sizes that the parser read and accepted:
    inference does not see through Identity / Cast, so an empty scales spelled that way beside sizes looks
    like both (issue 9 requires the form; OpenVINO's importer takes it)."""
    return any(e.node == name for name, _ in parsed) and any(k in e.message for k in ("`sizes`", "`scales`"))


# Element types the spec's type lists allow (Resize's T1 is every tensor type) but no runtime resamples:
# onnxruntime, OpenVINO and TensorRT have no kernel for them, and no sample of them has a value between two.
_NOT_SAMPLED = {"object": "string", "str": "string", "bytes": "string", "complex64": "complex64",
                "complex128": "complex128"}


def _check_element_type(view: NodeView) -> None:
    dt = view.dtype(0)
    if dt is not None and str(dt) in _NOT_SAMPLED:
        raise BridgeError(f"X has element type {_NOT_SAMPLED[str(dt)]}; no runtime resamples it (onnxruntime, "
                          f"OpenVINO and TensorRT have no {view.op_type} kernel for it)", view.name, "X")


def parse_view(view: NodeView, opset: int, convention: str | None = None):
    """The IR of one node, whatever it was read from; every refusal names the node."""
    convention = _checked(convention or current_convention())
    try:
        version = since_version(view.op_type, opset)
        _check_element_type(view)
        if view.op_type in ONNX_CONVENTION_OPS:
            return PARSERS[view.op_type](view, version, convention)
        return PARSERS[view.op_type](view, version)
    except BridgeError as e:
        raise e.at(view.name) from None


__all__ = ["parse_model", "check_model", "model_constants", "parse_view", "NodeView", "Graph", "load", "walk",
           "node_name", "resampling_nodes", "is_resampling", "RESAMPLING_OPS", "CONVENTIONS", "DEFAULT_CONVENTION",
           "current_convention", "onnx_convention"]
