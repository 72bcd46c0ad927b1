"""The whole-model postcondition of a PyTorch source (issue 44): the converted model against the program's own
module run in eager PyTorch, as ``model_check`` judges an ONNX source against onnxruntime.

Seeded inputs at the program's example shape and, where a length is dynamic, at the other lengths
``translate.torch.probe_lengths`` gives (a shape eager PyTorch refuses is skipped, as model_check skips one
onnxruntime refuses); every output compared with the whole-model tolerance. Where one differs, the graph is
walked in order with every FX node's value in eager and in the converted model (OpenVINO names a node's
tensor ``<node>:0``): a resampling call whose converted output is not its oracle's on the converted model's own
inputs, or that PyTorch computes otherwise than its IR says, is named; else the first node whose inputs agree
and whose integer output or shape differs; float drift of OpenVINO's other ops is not ours (``model_check``).
numpy at import; torch inside the functions.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..semantics.compare import against_oracle, compare
from ..semantics.errors import BridgeError, clip
from ..semantics.opspec import spec
from ..semantics.reference import run as oracle
from ..semantics.tolerance import model_tolerance
from ..translate import torch as torch_frontend
from ..translate.torch_ops import ORACLE_INPUTS
from .model_check import _integral
from .model_probes import MAX_ELEMENTS

# (feeds in the program's input order, tensor names to observe) -> (outputs in order, observed by name)
Runner = Callable[[list, list], tuple]



def probes(program, seed: int = 0) -> list[tuple[str, list]]:
    """(the shapes as text, seeded arrays) at the example shape and the other lengths of dynamic axes."""
    nodes = torch_frontend.user_inputs(program)
    dims = torch_frontend.dynamic_inputs(program)
    out = []
    for k, lengths in enumerate(torch_frontend.probe_lengths(dims)):
        shapes = [tuple(d if isinstance(d, int) else int(d[0].xreplace(lengths)) for d in ds) for ds in dims]
        if any(math.prod(s) > MAX_ELEMENTS for s in shapes) and k:
            continue
        rng = np.random.default_rng(seed + k)
        arrays = [_array(str(n.meta["val"].dtype).removeprefix("torch."), s, rng) for n, s in zip(nodes, shapes)]
        out.append((", ".join(f"{n.name}{list(s)}" for n, s in zip(nodes, shapes)), arrays))
    return out


def _array(dtype: str, shape, rng) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 8, shape).astype(dt)
    return rng.uniform(0.0, 1.0, shape).astype(dt)  # image-like values


def _leaves(value) -> list[np.ndarray]:
    """A module's outputs as arrays, in order (tensors and numbers; None and other leaves left out)."""
    import torch
    from torch.utils._pytree import tree_leaves

    out = []
    for v in tree_leaves(value):
        if isinstance(v, torch.Tensor):
            out.append(v.detach().cpu().numpy())
        elif isinstance(v, (bool, int, float)):
            out.append(np.asarray(v))
    return out


def eager(program, arrays: list) -> list[np.ndarray] | None:
    """``program.module()`` on ``arrays`` in eager PyTorch; None where PyTorch refuses them."""
    import torch

    try:
        with torch.no_grad():
            return _leaves(program.module()(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]))
    except Exception:  # noqa: BLE001 -- a shape the module does not admit: not a probe
        return None


def whole_model_failures(program, kept, calls, run_written: Runner) -> list[str]:
    """Failures (empty: the converted model computes the module's numbers at every probe shape eager runs).
    ``program``: the user's program (its module is the truth); ``kept``: the program OpenVINO converted
    (``torch_frontend.kept_program``); ``calls``: its resampling calls (``translate.torch.calls``)."""
    for k, (at, arrays) in enumerate(probes(program)):
        want = eager(program, arrays)
        if want is None:
            if k == 0:
                return [f"PyTorch cannot run the program at its example shape {at}"]
            continue
        try:
            got, _ = run_written(arrays, [])
        except BridgeError as e:
            if k == 0:
                return [f"the converted model cannot run at {at}: {e.message}"]
            continue  # a loud failure at a shape the probes chose, not a silent difference
        if len(got) != len(want):
            return [f"the converted model has {len(got)} outputs, the module {len(want)}"]
        for i, (g, w) in enumerate(zip(got, want)):
            r = compare(np.asarray(g), w, *model_tolerance(w.dtype))
            if r.ok:
                continue
            why = attributed(kept, calls, arrays, run_written, r.shape_mismatch is not None)
            if why is None:
                continue  # OpenVINO's own float rounding in ops not ours (model_check._attributed)
            what = (f"shape {r.shape_mismatch}" if r.shape_mismatch else
                    f"max error {r.max_abs:.3g} at {list(r.worst)} ({r.got:.7g} vs {r.want:.7g})")
            return [f"output {i} differs from the PyTorch module at {at}: {what}; {why}"]
    return []


def node_values(gm, arrays: list) -> dict:
    """Every FX node's value of ``gm`` run in eager PyTorch on ``arrays``, by node name (tensors as arrays)."""
    import torch

    values: dict = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if isinstance(v, torch.Tensor):
                values[n.name] = v.detach().cpu().numpy()
            elif isinstance(v, (bool, int, float)):
                values[n.name] = np.asarray(v)
            return v

    with torch.no_grad():
        Recorder(gm).run(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    return values


def _call_arrays(node, call, values: dict) -> list | None:
    """The oracle's inputs of a call from ``values`` (by node name), None where one is missing."""
    schema = node.target._schema
    given = {a.name: node.args[i] if i < len(node.args) else node.kwargs.get(a.name)
             for i, a in enumerate(schema.arguments)}
    given.setdefault("input", given.get("self"))
    out = []
    for name in ORACLE_INPUTS[call.ir.kind]:
        arg = given.get(name)
        if name == "mask" and not call.ir.has_mask:
            out.append(None)
        elif arg is None or getattr(arg, "name", None) not in values:
            return None
        else:
            out.append(values[arg.name])
    return out + [None] * (len(spec(call.ir).inputs) - len(out))  # a Resize's roi, scales, sizes


def _resize_sizes(call, args: list, got: np.ndarray) -> list:
    """A Resize whose sizes come at run time: its lengths are those of the output it gave."""
    if getattr(call.ir, "sizes", None) is not None and not isinstance(call.ir.sizes, tuple):
        args[3] = np.asarray([got.shape[a] for a in call.ir.axes], np.int64)
    return args


def oracle_agrees(node, call, values: dict, at: str) -> bool | None:
    """Whether the call's value ``values[at]`` is its oracle's on its own inputs in ``values`` (None: not there)."""
    args = _call_arrays(node, call, values)
    if args is None or at not in values:
        return None
    got = values[at]
    args = _resize_sizes(call, args, got)
    return against_oracle(call.ir, got, oracle(call.ir, *args), args).ok


def _call_verdict(node, call, values: dict) -> bool | None:
    """``oracle_agrees`` at the converted node (None also where the oracle refuses the inputs)."""
    try:
        return oracle_agrees(node, call, values, node.name)
    except Exception:  # noqa: BLE001 -- inputs the oracle refuses: the node proofs judged it
        return None


def attributed(kept, calls, arrays: list, run_written: Runner, shape: bool) -> str | None:
    """Why an output that differs is a different computation (naming the node), or None where it is drift."""
    gm = kept.module()
    want = node_values(gm, arrays)
    names = [f"{n.name}:0" for n in gm.graph.nodes if n.op == "call_function"]
    try:
        _, observed = run_written(arrays, names)
    except BridgeError:
        return "the converted model cannot run with its intermediate tensors observed" if shape else None
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    got = {**dict(zip(placeholders, arrays)), **{k.removesuffix(":0"): v for k, v in observed.items()}}
    got = {**{k: v for k, v in want.items() if k not in got}, **got}  # weights: the same constants
    by_name = {c.name: c for c in calls}
    differs: dict = {}
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        call = by_name.get(node.name)
        if call is not None:
            if _call_verdict(node, call, got) is False:
                return f"call {node.name} ({clip(call.describe(), 160)}) of the converted model is not its " \
                       f"oracle's output on its own inputs"
            if _call_verdict(node, call, want) is False:
                return f"PyTorch computes call {node.name} ({clip(call.describe(), 160)}) otherwise than its IR " \
                       f"says: the call was read wrong"
        if node.name in want and f"{node.name}:0" in observed:
            w, g = want[node.name], np.asarray(observed[f"{node.name}:0"])
            differs[node.name] = not compare(g, w, *model_tolerance(w.dtype)).ok
            inputs = [a.name for a in node.all_input_nodes]
            if differs[node.name] and not any(differs.get(n) for n in inputs) and \
                    (g.shape != w.shape or not np.issubdtype(w.dtype, np.floating) or _integral(w) and _integral(g)):
                shown = (f"{g.ravel()[:6].tolist()} vs {w.ravel()[:6].tolist()}" if w.size <= 16 else
                         f"shape {list(g.shape)} vs {list(w.shape)}")
                return f"first differing node: {node.name} ({node.target}) gives {shown}"
    return None
