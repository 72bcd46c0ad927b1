"""PyTorch programs -> IR: every resampling call of a ``torch.export`` ExportedProgram (or an FX GraphModule),
named after its FX node, with the user's call and source line where the program records them. torch is
imported here only, and lazily: the rest of the package never needs it (the ``torch`` extra).

The op rules are in ``translate/torch_ops.py``; this module reads the graph into its plain ``Call`` values.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from ..semantics.errors import BridgeError
from .torch_ops import Call, Tensor, is_grid_generator, is_resampling, parse_call, user_call
from .torch_script import check_recorded, is_script_module, script_nodes


def _torch():
    try:
        import torch
    except ImportError:
        raise BridgeError("PyTorch is not installed: pip install 'resample-bridge[torch]'", field="source") \
            from None
    return torch


@dataclass(frozen=True)
class TorchCall:
    """One resampling call of a program: its FX node name, the op, the IR (or the refusal), and where the user
    wrote it."""

    name: str
    op: str
    ir: Any  # an IR value, or None where refused
    error: BridgeError | None
    code: str  # the user's source line ("F.interpolate(x, scale_factor=0.6)"), "" where not recorded
    where: str  # "file.py:12", "" where not recorded
    args: dict  # the call's arguments by name (tensors as translate.torch_ops.Tensor)
    # output_size where some length is an expression of the inputs' dynamic lengths (sympy, PyTorch's own
    # symbols; ``lengths_at`` evaluates them), else None
    sym_sizes: tuple | None = None

    def user_call(self) -> str:
        """The call as the user spells it: "F.interpolate(mode='bilinear', size=(7, 9), align_corners=False)"."""
        return user_call(self.op, self.args)

    def describe(self) -> str:
        """The call in the user's terms, with the line of their module that reaches it where recorded (a
        program records the frames of modules' forward methods, not of the functions they call)."""
        if not self.where:
            return self.user_call()
        return f"{self.user_call()} at {self.where} (`{self.code}`)"


def load(path) -> Any:
    """A saved ExportedProgram (``torch.export.save``, a .pt2 file), else a saved TorchScript module
    (``torch.jit.save``: it records no shapes, so its calls are refused by name, ``torch_script``); one line
    naming what is wrong otherwise."""
    torch = _torch()
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)  # torch logs each failed reader's traceback before it raises
    try:
        return torch.export.load(str(path))
    except FileNotFoundError:
        raise BridgeError(f"{path}: no such file", field="source") from None
    except Exception as e:  # a corrupt or foreign file: torch raises many types
        try:
            return torch.jit.load(str(path))
        except Exception:  # noqa: BLE001 -- neither: the program reader's words
            raise BridgeError(f"{path}: not a torch.export program ({type(e).__name__})", field="source") from None
    finally:
        logging.disable(before)


def load_program(source, example_inputs=None):
    """An ExportedProgram from a .pt2 path, an ExportedProgram, or an nn.Module with ``example_inputs``; a
    traced TorchScript module as it is (``torch_script``)."""
    if hasattr(source, "graph_module") or is_script_module(source):
        return source
    if hasattr(source, "forward"):
        if example_inputs is None:
            raise BridgeError("a module as the source needs example_inputs to export it", field="example_inputs")
        return _torch().export.export(source, tuple(example_inputs))
    return load(source)


def graph_of(program):
    if hasattr(program, "graph_module"):  # ExportedProgram
        return program.graph_module.graph
    if hasattr(program, "graph") and hasattr(program.graph, "nodes"):  # fx.GraphModule
        return program.graph
    raise BridgeError(f"a {type(program).__name__} is not a torch.export program or FX graph", field="source")


def _dim(d):
    return d if isinstance(d, int) else None  # a SymInt (dynamic) is known only at run time


def _value(v):
    """An FX argument as a plain value: tensors as Tensor, symbolic lengths as None, lists element-wise."""
    torch = _torch()
    if isinstance(v, torch.fx.Node):
        val = v.meta.get("val")
        if isinstance(val, torch.Tensor):
            return Tensor(tuple(_dim(d) for d in val.shape), str(val.dtype).removeprefix("torch."))
        return val if isinstance(val, (int, float, bool)) else None
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    return v


def _arguments(node) -> dict:
    schema = node.target._schema
    out = {}
    for i, a in enumerate(schema.arguments):
        if i < len(node.args):
            v = node.args[i]
        elif a.name in node.kwargs:
            v = node.kwargs[a.name]
        else:
            v = a.default_value if a.has_default_value() else None
        out[a.name] = _value(v)
    return out


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)')


def source_of(node) -> tuple[str, str]:
    """(the user's source line, "file:line") of the innermost frame the program recorded for ``node``."""
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    if not frames:
        return "", ""
    path, line, code = frames[-1]
    return code.strip(), f"{path}:{line}"


def op_name(node) -> str:
    """"aten.upsample_bilinear2d.vec", "torchvision.deform_conv2d.default"; "" for a node that calls no op."""
    if node.op != "call_function" or not hasattr(node.target, "_schema"):
        return ""
    return str(node.target)


def calls(program, wanted=is_resampling) -> list[TorchCall]:
    """Every resampling call of ``program`` (or of a traced TorchScript module, ``torch_script``), in graph
    order; a call the parser refuses carries its error. ``wanted`` picks other ops by name."""
    out = []
    for name, op, args, code, where, sym in _call_nodes(program, wanted):
        try:
            if is_script_module(program):
                check_recorded(name, args)
            ir, err = parse_call(Call(name, op, args)), None
        except BridgeError as e:
            ir, err = None, e.at(name)
        out.append(TorchCall(name, op, ir, err, code, where, args, sym))
    return out


def grid_generators(program) -> list[TorchCall]:
    """Every ``F.affine_grid`` call (``aten.affine_grid_generator``), in graph order: the grids a program feeds
    to grid_sampler, checked against their exported forms (``tools/check_source_grid``), never lowered."""
    return calls(program, is_grid_generator)


def _call_nodes(program, wanted) -> list[tuple]:
    """(name, op, args, code, where, symbolic sizes) of every call ``wanted`` names, in graph order."""
    if is_script_module(program):
        return [(*found, None) for found in script_nodes(program, wanted)]
    out = []
    for node in graph_of(program).nodes:
        op = op_name(node)
        if op and wanted(op.split(".")[1]):
            out.append((node.name, op, _arguments(node), *source_of(node), _symbolic_sizes(node)))
    return out


def _symbolic_sizes(node):
    """The sympy expressions of the call's output_size, where one of them is symbolic."""
    torch = _torch()
    sizes = node.args[1] if len(node.args) > 1 and isinstance(node.args[1], (list, tuple)) else None
    if not sizes:
        return None
    exprs = [v.meta.get("val") if isinstance(v, torch.fx.Node) else v for v in sizes]
    if all(isinstance(e, int) for e in exprs):
        return None
    return tuple(e.node.expr if isinstance(e, torch.SymInt) else e for e in exprs)


def user_inputs(program) -> list:
    """The placeholder nodes of ``program``'s tensor user inputs, in order (none for a TorchScript module: its
    lengths are the trace's)."""
    if is_script_module(program):
        return []
    torch = _torch()
    user = set(program.graph_signature.user_inputs)
    return [node for node in graph_of(program).nodes if node.op == "placeholder" and node.name in user
            and isinstance(node.meta.get("val"), torch.Tensor)]


def dynamic_inputs(program) -> list[tuple]:
    """Per user input of ``program``: per axis (symbol, example length, smallest, largest) where the length is
    dynamic, else the static length (an int)."""
    ranges = {str(k): v for k, v in getattr(program, "range_constraints", {}).items()}
    out = []
    for node in user_inputs(program):
        val = node.meta.get("val")
        dims = []
        for d in val.shape:
            if isinstance(d, int):
                dims.append(d)
                continue
            r = ranges.get(str(d.node.expr))
            hi = int(r.upper) if r is not None and r.upper.is_finite else 2**31
            dims.append((d.node.expr, d.node.hint, int(r.lower) if r is not None else 0, hi))
        out.append(tuple(dims))
    return out


def probe_lengths(dims: list[tuple]) -> list[dict]:
    """{symbol: length} for each dynamic length of ``dims`` (``dynamic_inputs``), in rounds: the example's;
    each 7 longer (else 3 shorter), where a length frozen at the example reads otherwise; twice the example,
    which a strided network (a U-Net, an FPN) also admits. Every length within the program's range; a round
    equal to an earlier one is left out. A derived length (``8*s``, where torch.export was given a multiple)
    steps its symbol instead, so every length is one the program admits, and the symbol itself is given (the
    sizes a call computes are in its terms)."""
    found = {}
    for ds in dims:
        for d in ds:
            if not isinstance(d, int):
                found.setdefault(*_stepped(*d))
    rounds = [{s: f(0) for s, f in found.values()}, {s: f(1) for s, f in found.values()},
              {s: f(2) for s, f in found.values()}]
    return [r for i, r in enumerate(rounds) if r not in rounds[:i]]


def _stepped(expr, hint: int, lo: int, hi: int):
    """(key, (symbol, round -> its value)): a length ``a*s + b`` of one symbol steps ``s``; any other
    expression is given its length whole (``xreplace`` replaces the expression)."""
    free = list(getattr(expr, "free_symbols", ()))
    s = free[0] if len(free) == 1 else None
    a = expr.diff(s) if s is not None else None
    if s is None or not (a.is_Integer and a > 0 and expr.diff(s, 2) == 0):
        return expr, (expr, lambda k: [hint, hint + 7 if hint + 7 <= hi else max(lo, hint - 3),
                                       2 * hint if 2 * hint <= hi else hint][k])
    a, b = int(a), int(expr.subs(s, 0))
    s0, up, down = (hint - b) // a, -(-7 // a), -(-3 // a)
    s_lo = -(-(lo - b) // a)

    def value(k: int) -> int:
        if k == 1:
            return s0 + up if a * (s0 + up) + b <= hi else max(s_lo, s0 - down)
        return 2 * s0 if k == 2 and a * 2 * s0 + b <= hi else s0

    return s, (s, value)


def lengths_at(exprs, values: dict) -> list[int]:
    """``exprs`` (TorchCall.sym_sizes) with each symbol given its length in ``values``."""
    out = []
    for e in exprs:
        v = e if isinstance(e, int) else e.xreplace(values)
        if not getattr(v, "is_Integer", isinstance(v, int)):
            raise BridgeError(f"the length {e} is not known from the input lengths {values}", field="sizes")
        out.append(int(v))
    return out


def parse_program(program) -> list[tuple[str, Any]]:
    """(FX node name, IR) for every resampling call; the first refused call raises its BridgeError."""
    found = calls(program)
    for c in found:
        if c.error is not None:
            raise c.error
    return [(c.name, c.ir) for c in found]
