"""The PyTorch-frontend hook (issue 44): a torch.export program through OpenVINO's own PyTorch frontend, every
resampling call through resample-bridge's ladder instead of OpenVINO's translator, the rest of the model through
OpenVINO's.

The program is first decomposed as OpenVINO's frontend decomposes it (its table of ops it keeps whole), except
that every resampling op is kept as the user's call made it: OpenVINO's table would rewrite
``_upsample_nearest_exact2d`` into arange / index arithmetic, beyond any hook. The frontend's NodeContext gives a
call's inputs but not its FX node, and it turns float64 scale arguments into float32 constants, so each call's IR
is the one ``translate.torch`` reads from the FX node itself, matched in graph order per op (the frontend visits
the graph in order, one conversion per node); the context only supplies the OpenVINO tensors, and its input shape
must agree with the call's.
"""

from __future__ import annotations

import numpy as np

from ...semantics.errors import BridgeError, first_line
from ...semantics.ir import RuntimeValue
from ...semantics.opspec import spec
from ...translate import torch as torch_frontend
from ...translate.torch_ops import ORACLE_INPUTS, is_resampling
from .boundary import NOT_AT_BOUNDARY
from .frontend import Planner, emitted
from .graph import dims, ops


def _openvino_decompositions():
    """OpenVINO's own decomposition table for exported programs (what ``convert_model(program)`` applies)."""
    from torch.export.decomp_utils import CustomDecompTable

    table = CustomDecompTable()
    try:
        from openvino.frontend.pytorch.torchdynamo.export_decompositions import ops_to_not_decompose
    except ImportError:  # another OpenVINO release: the default table, resampling ops kept below all the same
        return table
    for op in ops_to_not_decompose():
        table.pop(op, None)
    return table


def kept_program(program):
    """``program`` decomposed as OpenVINO's frontend decomposes it, every resampling op kept as called."""
    table = _openvino_decompositions()
    for op in list(table.keys()):
        name = str(op)
        if name.count(".") == 2 and is_resampling(name.split(".")[1]):
            table.pop(op)
    try:
        return program.run_decompositions(table)
    except Exception as e:  # noqa: BLE001 -- PyTorch's own failure (torch 2.14: a program with derived dimensions
        # read back by torch.export.load), in its words; OpenVINO's convert_model decomposes it the same way
        raise BridgeError(f"PyTorch cannot decompose the program for OpenVINO's PyTorch frontend: "
                          f"{type(e).__name__}: {first_line(e)}", field="source") from None


def decoder(program):
    """OpenVINO's FX decoder of ``program`` (from ``kept_program``): static lengths stay static (OpenVINO's
    own entry point makes every length dynamic, which leaves no static shape to a tap table), a length the
    program declares dynamic is dynamic."""
    from openvino.frontend.pytorch.fx_decoder import TorchFXPythonDecoder

    return TorchFXPythonDecoder(program.module(), dynamic_shapes=False)


def sides_of(program) -> dict:
    """{call name: (input side at a model input, output side at a model output)}: the call reads a placeholder,
    its value is returned as it is (the cost model's reorders, ``boundary``)."""
    out = {}
    for node in torch_frontend.graph_of(program).nodes:
        if torch_frontend.op_name(node) and node.args:
            first = node.args[0]
            out[node.name] = (getattr(first, "op", "") == "placeholder",
                              any(u.op == "output" for u in node.users))
    return out


def _onnx_order(call, ctx) -> list:
    """The call's OpenVINO tensors in the order the ladder takes a node's inputs (``torch_ops.ORACLE_INPUTS``:
    ONNX's), found by schema position (the frontend hands the FX node's arguments over in that order); a Resize
    takes (X, roi, scales, sizes), its sizes only where they come at run time."""
    position = {("input" if n == "self" else n): i for i, n in enumerate(call.args)}
    inputs = [None if n == "mask" and not call.ir.has_mask else ctx.get_input(position[n])
              for n in ORACLE_INPUTS[call.ir.kind]]
    inputs += [None] * (len(spec(call.ir).inputs) - len(inputs))  # a Resize's roi, scales, sizes
    if isinstance(getattr(call.ir, "sizes", None), RuntimeValue):
        inputs[-1] = _runtime_sizes(call, ctx.get_input(1))
    return inputs


def _runtime_sizes(call, out):
    """The output lengths computed at run time as one i64 vector: the frontend hands a list of symbolic lengths
    over as a SequenceMark of scalars."""
    o = ops()
    node = out.get_node()
    if node.get_type_name() == "SequenceMark":
        parts = [o.convert(o.reshape(v, o.constant(np.array([1], np.int64)), False), "i64").output(0)
                 for v in node.input_values()]
        return o.concat(parts, 0).output(0)
    shape = dims(out)
    if shape is not None and len(shape) == 1 and out.get_element_type().is_integral():
        return o.convert(out, "i64").output(0)
    raise BridgeError("the output size is computed at run time in a form the hook does not read", call.name,
                      "output_size")


def _check_input(call, x) -> None:
    """The tensor the frontend hands over has the call's input shape (the order matched the right call)."""
    want = call.ir.input_shape
    got = dims(x)
    if got is None or len(got) != len(want) or any(a is not None and b is not None and a != b
                                                     for a, b in zip(got, want)):
        raise BridgeError(f"OpenVINO's frontend handed the hook an input of shape {got} where the call's is "
                          f"{list(want)}: the calls cannot be matched", call.name, "input")


def _unnamed(outs: list, inputs: list) -> list:
    """``outs`` with the tensor names of every op the lowering built cleared: the PyTorch frontend reads a
    tensor name as the index of an FX value ("Tensor name is not a number: y"), and a form read from ONNX
    (``grid_decompose``) carries its ONNX names."""
    stop = {v.get_node() for v in inputs if v is not None}  # a Node hashes as the op (its wrapper is new)
    seen: set = set()
    todo = [o.get_node() for o in outs]
    while todo:
        node = todo.pop()
        if node in seen or node in stop:
            continue
        seen.add(node)
        for o in node.outputs():
            o.get_tensor().set_names(set())
        todo += [v.get_node() for v in node.input_values()]
    return outs


def conversion_extensions(calls: list, *, planner: Planner, sides: dict | None = None):
    """PyTorch-frontend ConversionExtensions, one per resampling op of ``calls`` (``translate.torch.calls`` of
    the program the frontend converts, every one parsed), each call chosen by the driver's ``planner``.
    ``planner.pending``: the calls not yet converted, per op (the caller checks that none is left)."""
    from openvino.frontend.pytorch import ConversionExtension

    pending = planner.pending
    for c in calls:
        pending.setdefault(c.op, []).append(c)

    def make(op):
        def convert(ctx):
            if not pending[op]:
                raise BridgeError(f"OpenVINO's frontend converts more {op} calls than the program has")
            call = pending[op].pop(0)
            inputs = _onnx_order(call, ctx)
            _check_input(call, inputs[0])
            outs = emitted(planner.choose(call.name, call.ir, inputs, (sides or {}).get(call.name, NOT_AT_BOUNDARY)))
            return _unnamed(outs, inputs)

        return ConversionExtension(op, convert)

    return [make(op) for op in pending]


def parsed_calls(program) -> list:
    """Every resampling call of ``program``; the first refused call raises, naming it."""
    found = torch_frontend.calls(program)
    for c in found:
        if c.error is not None:
            raise c.error
    return found
