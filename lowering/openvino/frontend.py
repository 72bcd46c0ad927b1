"""The ONNX-frontend hook: ConversionExtensions that replace OpenVINO's translators for Resize, Upsample,
GridSample and DeformConv with resample-bridge's ladder, so the rest of a model still goes through OpenVINO's own
importer; and OpenVINO's own words when its importer refuses. Each node is lowered from the IR that
``translate.onnx`` reads from the ONNX model itself (what inspect and check see), found by the key stamped on it; the
frontend's view of a node only locates it and supplies the shapes OpenVINO inferred."""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.errors import BridgeError
from ...semantics.messages import openvino_error_reason
from ...semantics.reference import run
from ..passes import CUSTOM, folded_record
from ..plan import Choice, Plan
from ..probes import probe_sets
from . import grid_pin
from .boundary import NOT_AT_BOUNDARY
from .graph import compile_f32, dims, np_dtype, ops, same_output, shape_entries, tag
from .index_arithmetic import stamp_form
from .ladder import TARGET, lower
from ...semantics.ir import RuntimeValue, is_static
from ...translate.onnx import NodeView, _parse_checked, parse_view, resampling_nodes

_ATTRS = {
    "Resize": ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
               "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"),
    "Upsample": ("mode", "scales"),
    "GridSample": ("mode", "padding_mode", "align_corners"),
    "DeformConv": ("dilations", "group", "kernel_shape", "offset_group", "pads", "strides"),
}
OPS = tuple(_ATTRS)
KEY = "resample_bridge_key"  # the attribute stamped on each resampling node of OpenVINO's copy: its node key


def view_from_context(ctx, op_type: str, index: int):
    """A translate.onnx.NodeView of the node OpenVINO's ONNX frontend is converting."""

    attrs = {a: ctx.get_attribute(a) for a in _ATTRS[op_type] if ctx.has_attribute(a)}
    inputs, consts, shapes, dtypes = [], {}, {}, {}
    for i in range(ctx.get_input_size()):
        out = ctx.get_input(i)
        node = out.get_node()
        if node.get_type_name() == "NullNode":
            inputs.append("")
            continue
        key = f"input{i}:" + (sorted(out.get_names())[0] if out.get_names() else node.get_friendly_name())
        inputs.append(key)
        if node.get_type_name() == "Constant":
            consts[key] = node.get_data()
        shape = dims(out)
        if shape is not None:
            shapes[key] = shape
        if out.get_element_type().is_static():
            dtypes[key] = np_dtype(out.get_element_type()).name
    # A node name is not exposed by the frontend; name it by its first input's tensor.
    return NodeView(op_type, f"{op_type}({_first_tensor(inputs) or '?'})#{index}", attrs, inputs, consts, shapes,
                    dtypes)


def _first_tensor(inputs: list) -> str | None:
    """The ONNX tensor name of a view's first input (its key is ``input0:NAME``)."""
    return inputs[0].split(":", 1)[1] if inputs and inputs[0] else None


def _infer_opset(op_type: str, attrs: dict, n_inputs: int) -> int:
    """Best guess of the node's version when the caller did not say: what its attributes allow."""
    return _OPSET_GUESS.get(op_type, lambda attrs, n_inputs: 22)(attrs, n_inputs)


_OPSET_GUESS = {  # ONNX op type -> its likeliest version from its attributes and input count
    "Resize": lambda attrs, n_inputs: 10 if n_inputs == 2 else 19,
    "GridSample": lambda attrs, n_inputs: 16 if attrs.get("mode") in ("bilinear", "bicubic") else 22,
    "Upsample": lambda attrs, n_inputs: 7 if "scales" in attrs else 9,
}


class Planner:
    """The plan the driver builds while OpenVINO's frontend converts the model: the hook hands each resampling node
    to ``choose``, which climbs it under the driver's policy into a Choice keyed by the node's stamped key;
    ``freeze`` gives the driver the Plan once ``convert_model`` returns. The climb runs inside the frontend, not
    before it, because its candidates are OpenVINO subgraphs built and proven on the frontend's own inputs (the
    shapes OpenVINO inferred, its constants, what it will fold): a plan made before would have to build and
    prove every chosen form a second time on the real inputs. ``refusal``: the BridgeError a node was refused
    with (OpenVINO relays it as text, which loses its node and field); ``pending``: the PyTorch frontend's calls
    not yet converted, per op (``torch_frontend``)."""

    def __init__(self, policy=None, fallback: str = "decompose", strict: bool = False):
        self.policy, self.fallback, self.strict = policy, fallback, strict
        self.choices: list[Choice] = []
        self.refusal: BridgeError | None = None
        self.pending: dict = {}

    def choose(self, name: str, ir, inputs: list, sides: tuple = NOT_AT_BOUNDARY) -> Choice:
        """One node's Choice, recorded: folded by the oracle where every input is a constant (rung 0), else
        climbed on the ladder and proven by value where OpenVINO will fold it. ``payload``: the chosen form,
        built on ``inputs`` (OpenVINO outputs in ONNX order)."""
        policy = self.policy
        grid_pin.mark(name, ir, inputs)
        folded = None if policy is not None and policy.floor >= CUSTOM else fold(name, ir, inputs)
        if folded is not None:
            outs, rec = folded
        else:
            try:
                outs, rec = lower(name, ir, inputs, fallback=self.fallback, strict=self.strict, policy=policy,
                                  sides=sides)
            except BridgeError as e:
                self.refusal = e
                raise
            by_value = prove_by_value(name, ir, inputs, outs)
            if by_value is not None:
                rec = dataclasses.replace(rec, proof={**rec.proof, "by_value": by_value})
        stamp_form(outs, inputs)  # left as proven by the pass over the user's index arithmetic
        choice = Choice(rec, [own_tensor(out, inputs) for out in outs], name)
        self.choices.append(choice)
        return choice

    def freeze(self, model, source=None) -> Plan:
        """The Plan of every node chosen so far, in conversion order; ``model``: what ``convert_model`` returned,
        every choice's form in it; ``source``: the ONNX model whose order records are reported in."""
        return Plan(model, tuple(self.choices), source)


def own_tensor(out, inputs: list):
    """``out``, or a copy of it (a Convert to its own type) where it is one of the node's inputs, as a form that
    resizes no axis gives (an input whose run-time lengths every axis keeps): the frontend names the node's output
    tensor, and the input's tensor would take the output's name and lose its own (fuzz 16903 case 108: the written
    model's input X read as Y, so X fed by name was refused)."""
    if not any(i is not None and same_output(out, i) for i in inputs):
        return out
    return ops().convert(out, out.get_element_type()).output(0)


def emitted(choice: Choice) -> list:
    """What a frontend's conversion extension returns for a node: the form of its chosen rung."""
    return choice.payload


def conversion_extensions(opset: int | None = None, fallback: str = "decompose", strict: bool = False,
                          planner: Planner | None = None, policy=None,
                          irs: dict | None = None, sides: dict | None = None):
    """ConversionExtensions for ``openvino.convert_model(path, extension=...)`` replacing OpenVINO's
    translators for Resize, Upsample, GridSample and DeformConv with resample-bridge's lowering. Each node is
    chosen by ``planner`` (the driver's; a private one where none is given, with ``policy``, ``fallback`` and
    ``strict``) under its key where it carries one (:func:`stamped`), else as ``op(first input)#call``;
    ``irs``: from :func:`source_irs`, the IR each keyed node has in the ONNX model (what inspect and check read),
    used instead of the frontend's view of the node, whose constants OpenVINO has already rewritten (empty ones
    as 0-d values, Shape chains unfolded); ``sides``: from :func:`boundary.planar_sides`, which sides of each
    keyed node meet the model's inputs or outputs (the cost model charges no reorder there)."""
    from openvino.frontend.onnx import ConversionExtension

    planner = planner if planner is not None else Planner(policy, fallback, strict)
    counter = [0]

    def make(op_type):
        def convert(ctx):
            counter[0] += 1
            view = view_from_context(ctx, op_type, counter[0])
            if ctx.has_attribute(KEY):
                view.name = ctx.get_attribute(KEY)
            inputs = [None if not n else ctx.get_input(i) for i, n in enumerate(view.inputs)]
            if irs is not None and view.name in irs:
                ir = with_frontend_shapes(irs[view.name], inputs)
            else:
                ir = with_frontend_pins(parse_view(view, opset or _infer_opset(op_type, view.attrs,
                                                                                  len(view.inputs))), inputs)
            return emitted(planner.choose(view.name, ir, inputs, (sides or {}).get(view.name, NOT_AT_BOUNDARY)))

        return ConversionExtension(op_type, convert)

    return [make(op) for op in OPS]


def _constant_source(out, seen=None) -> bool:
    """No Parameter upstream of ``out``: OpenVINO will fold it, and whatever consumes it, into a Constant."""
    seen = set() if seen is None else seen
    node = out.get_node()
    if node in seen:  # a Node hashes as the op: the id of its Python wrapper is reused once it is freed
        return True
    seen.add(node)
    if node.get_type_name() in ("Parameter", "ReadValue"):
        return False
    return all(_constant_source(v, seen) for v in node.input_values())


def _evaluate(outputs) -> list:
    """The values of OpenVINO outputs that depend on no Parameter (a model with no inputs, run once)."""
    import openvino as ov

    return [np.asarray(v) for v in compile_f32(ov.Model(list(outputs), [], "constant"))({}).values()]


def _evaluate_each(outputs: list) -> list:
    """``_evaluate`` of every output that is not None, compiled once: the values, None where the output is."""
    got = iter(_evaluate([v for v in outputs if v is not None]) if any(v is not None for v in outputs) else [])
    return [None if v is None else next(got) for v in outputs]


def fold(name: str, ir, inputs: list):
    """Rung 0: where every input is computable before run time (a ViT position embedding resized to a fixed
    grid), the oracle's output on their values, written as a Constant: (outputs, record), or None. OpenVINO would
    fold the node with its own op, which need not be exact (bicubic antialias: 8e-3 off)."""
    present = [v for v in inputs if v is not None]
    if not present or not all(_constant_source(v) for v in present):
        return None
    try:
        values = _evaluate_each(inputs)
    except Exception:  # noqa: BLE001 -- cannot be evaluated here: the ladder takes the node as usual
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        want = run(ir, *values)
    const = ops().constant(want)
    tag(const, f"{name}/folded")
    rec = folded_record(name, ir, TARGET, proof={"by_value": {"constant_output": True, "shape": list(want.shape)}})
    return [const.output(0)], rec


def prove_by_value(name: str, ir, inputs: list, outs: list) -> dict | None:
    """A node whose output depends on no run-time value (a ViT position embedding resized to a fixed grid;
    a crop whose every sample is extrapolated) is folded into a Constant by OpenVINO, so no op is left to
    re-read: its value is computed here and compared with the oracle's on the same inputs. None when the
    output depends on a fed input; BridgeError when the values differ."""
    present = [v for v in inputs if v is not None]
    if not present or not _constant_source(outs[0]):
        return None

    fed = [v is not None and not _constant_source(v) for v in inputs]
    shapes = [None if v is None else dims(v) for v in inputs]
    if any(f and not is_static(s) for f, s in zip(fed, shapes)):
        return None
    try:
        *consts, got = _evaluate_each([None if f else v for v, f in zip(inputs, fed)] + outs[:1])
    except Exception:  # noqa: BLE001 -- cannot be evaluated here: the structural proof applies as usual
        return None
    # An output that depends on no fed input (every sample extrapolated, say) is the same for any data: the
    # first probe set stands for all.
    dtypes = [None if v is None else np_dtype(v.get_element_type()).name for v in inputs]
    probe = probe_sets(ir, shapes, dtypes, fed)[0].arrays if any(fed) else [None] * len(inputs)
    args = [c if p is None else p for c, p in zip(consts, probe)]
    want = run(ir, *args)
    c = against_oracle(ir, got, want, args).to_dict()  # the message's numbers as JSON writes them
    if not c["ok"]:
        raise BridgeError(f"the constant-folded result differs from the oracle: worst element {c['worst']}: "
                          f"{c['got']} where the oracle gives {c['want']}", name, "X")
    return {"max_abs": c["max_abs"], "shape": list(want.shape)}


@contextlib.contextmanager
def stamped(model):
    """``model`` with each resampling node carrying its key (its name as ``translate.onnx.walk`` names it, If /
    Loop bodies included) in attribute ``KEY`` while the block runs, for the copy OpenVINO reads: the extension
    call, which sees no node name, reads the key back instead of guessing the node from its inputs. Only our
    translators read the attribute, and the ops they build do not carry it."""
    import onnx

    stamps = []
    for name, node in resampling_nodes(model):
        node.attribute.append(onnx.helper.make_attribute(KEY, name))
        stamps.append(node)
    try:
        yield model
    finally:
        for node in stamps:
            del node.attribute[-1]


def source_irs(model) -> dict:
    """{node name: IR} of every resampling node as ``translate.onnx`` reads the ONNX model (validated as
    inspect / check validate it). A node whose input rank only OpenVINO knows, or whose name another node
    shares, is left out: the hook parses the frontend's view of it."""
    from collections import Counter

    parsed = _parse_checked(model, None, lenient=True)
    twice = {n for n, k in Counter(n for n, _ in parsed).items() if k > 1}  # a name is no key for these
    return {n: ir for n, ir in parsed if n not in twice}


_SHAPE_FIELDS = {"input_shape": 0, "grid_shape": 1, "weight_shape": 1}


def with_frontend_shapes(ir, inputs: list):
    """``ir`` with the shapes OpenVINO knows where the ONNX model's shape inference left them unknown."""
    import dataclasses

    changes = {}
    for f, i in _SHAPE_FIELDS.items():
        if not hasattr(ir, f) or i >= len(inputs) or inputs[i] is None:
            continue
        have, got = getattr(ir, f), dims(inputs[i])
        if got is not None and (have is None or (len(have) == len(got) and None in have)):
            changes[f] = tuple(h if h is not None else g for h, g in zip(have, got)) if have else got
    if getattr(ir, "dtype", None) is None and inputs and inputs[0] is not None and \
            inputs[0].get_element_type().is_static():
        changes["dtype"] = np_dtype(inputs[0].get_element_type()).name
    return dataclasses.replace(ir, **changes) if changes else ir


def with_frontend_pins(ir, inputs: list):
    """``ir`` with the run-time sizes' entries that OpenVINO's graph computes as X's own length
    (``RuntimeValue.same_as_input``), for a node the hook parsed from the frontend's view, where the ONNX model's
    shapes could not show them (an input of unknown rank there): TorchScript's F.interpolate(x,
    size=skip.shape[2:]) writes Concat(Shape(x)[:2], Shape(skip)[2:]), which keeps N and C."""
    sizes = getattr(ir, "sizes", None)
    if not isinstance(sizes, RuntimeValue) or sizes.same_as_input or len(inputs) < 4 or inputs[3] is None:
        return ir
    entries = shape_entries(inputs[3])
    if entries is None or len(entries) != len(ir.axes):
        return ir
    x, shape = inputs[0], dims(inputs[0]) or ()
    pins = tuple(i for i, (e, a) in enumerate(zip(entries, ir.axes))
                 if (isinstance(e, tuple) and e[2] == a and same_output(e[1], x)) or
                 (isinstance(e, int) and a < len(shape) and e == shape[a]))
    return dataclasses.replace(ir, sizes=RuntimeValue(sizes.source, same_as_input=pins)) if pins else ir


def conversion_message(e: Exception) -> str:
    """OpenVINO wraps errors raised inside a conversion extension in a long report; keep the reason."""
    text = str(e)
    for line in text.splitlines():
        if "BridgeError" in line or "node '" in line and "field" in line:
            return line.split("BridgeError:", 1)[-1].strip()
    return "OpenVINO could not convert the model: " + openvino_error_reason(text)


