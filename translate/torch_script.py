"""TorchScript modules -> IR (issue 44): every resampling call of a traced module (``torch.jit.trace``), read from
its inlined graph into the same ``Call`` values ``translate.torch`` reads from an FX graph, so the op rules of
``torch_ops`` apply unchanged. A trace records each value's shape and dtype and each call's constant arguments
(the scale factors as the trace computed them); a module loaded back from a file (``torch.jit.load``) or
scripted (``torch.jit.script``) records no shapes, and is refused naming the call: pass the traced module itself.
torch is imported inside the functions (the schema parser).
"""

from __future__ import annotations

import linecache
import re

from ..semantics.errors import BridgeError
from .torch_ops import Tensor, is_resampling

_FRAME = re.compile(r"^(.*)\((\d+)\): (\w+)$")


def is_script_module(source) -> bool:
    return hasattr(source, "inlined_graph") and hasattr(source, "_c")


def _value(v):
    """A graph value as ``Call`` takes it: a tensor as Tensor (None where the trace recorded no shape), a
    constant as itself, a list of constants as a list (None for an element computed at run time)."""
    node = v.node()
    kind = node.kind()
    if kind == "prim::Constant":
        return v.toIValue()
    if kind == "prim::ListConstruct":
        return [_value(x) if x.node().kind() == "prim::Constant" else None for x in node.inputs()]
    t = v.type()
    if t.kind() == "TensorType":
        sizes, dtype = t.sizes(), t.scalarType()
        if sizes is None or dtype is None:
            return None
        return Tensor(tuple(sizes), {"Float": "float32", "Double": "float64", "Half": "float16",
                                     "BFloat16": "bfloat16"}.get(dtype, dtype.lower()))
    return None


def _source(node) -> tuple[str, str]:
    """(the user's source line, "file:line") of the innermost recorded frame outside torch itself."""
    for line in node.sourceRange().splitlines():
        m = _FRAME.match(line.strip())
        if m and "/torch/" not in m.group(1):
            return linecache.getline(m.group(1), int(m.group(2))).strip(), f"{m.group(1)}:{m.group(2)}"
    return "", ""


def script_nodes(module, wanted=is_resampling) -> list[tuple]:
    """(name, op, args, code, where) of every resampling call (every call whose op ``wanted`` names) of ``module``'s inlined graph, in graph order,
    named as an FX graph names its nodes (upsample_bilinear2d, upsample_bilinear2d_1, ...); a call whose input
    shape the module does not record is refused where ``translate.torch.calls`` parses it."""
    import torch

    out, seen = [], {}
    for node in module.inlined_graph.nodes():
        kind = node.kind()
        if not kind.startswith(("aten::", "torchvision::")) or not wanted(kind.split("::")[1]):
            continue
        schema = torch._C.parse_schema(node.schema())
        op = schema.name.replace("::", ".") + "." + (schema.overload_name or "default")
        base = kind.split("::")[1]
        name = base if base not in seen else f"{base}_{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        args = {a.name: _value(v) for a, v in zip(schema.arguments, node.inputs())}
        sizes, produced = args.get("output_size"), node.output().type()
        if isinstance(sizes, list) and None in sizes and produced.kind() == "TensorType" and produced.sizes():
            # Lengths the graph computes (recompute_scale_factor, a size read from another tensor): the trace
            # recorded the output they gave at its example input.
            args["output_size"] = [v if v is not None else n for v, n in zip(sizes, produced.sizes()[-len(sizes):])]
        out.append((name, op, args, *_source(node)))
    return out


def check_recorded(name: str, args: dict) -> None:
    """A call of a module that records no shapes (loaded from a file, or scripted) is refused, naming it."""
    if not isinstance(args.get("input", args.get("self", args.get("theta"))), Tensor):
        raise BridgeError("the module records no shape for the input (loaded from a file, or scripted): pass the "
                          "traced module itself (torch.jit.trace), or a torch.export program", name, "input")
