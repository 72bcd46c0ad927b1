"""The proof of a GridSample or DeformConv decomposition (``gridsample_decompose``, ``deformconv_decompose``) by
numbers: the nodes that compute the source node's output from its fed inputs, cut out of the written model, run
on onnxruntime against the oracle (``semantics.compare.against_oracle``: the project's one tolerance; nearest
bit-exact).

Inputs: the shared probe sets (``lowering.probes``: random, distinct and large data; random grids, grid points
on the .5 ties of the unnormalised coordinate and one float32 step either side, grid points far outside [-1, 1])
at every concrete shape the node's unknown dimensions take, plus what this form must survive beyond them:
offsets far outside the input, non-finite data (NaN / +-inf read through zero weights; not for cubic, whose outer
weights round to 0 in float32 where the oracle's are tiny, and 0 * inf is NaN) and, except under reflection,
non-finite grid points (NaN reads as an outside tap, as the oracle's index). A NaN or infinite coordinate under
reflection is left out: the oracle folds it in float64 at its +-2^62 stand-in, which no float32 graph follows.
"""

from __future__ import annotations

import numpy as np

from ...semantics.errors import first_line
from ...semantics.compare import against_oracle
from ...semantics.reference import run as oracle
from ...semantics.ir import DeformConvIR, GridSampleIR
from ...semantics.opspec import PerOp, spec
from ..probes import concrete_shapes, probe_sets, roles
from .cut import cut_session

FAR = 40.0  # offsets up to +-40 pixels: every tap outside small inputs


def _shapes(ir, shapes: list):
    """Concrete shapes of every input, per round: GridSample's unknown dimensions at the shared representative
    lengths, the grid's batch X's and its last axis the spatial rank; DeformConv's (static but for the batch)
    with batch 2."""
    yield from CONCRETE.of(ir)(ir, shapes)


def _deformconv_shapes(ir: DeformConvIR, shapes: list):
    yield [None if s is None else tuple(2 if d is None else d for d in s) for s in shapes]


def _gridsample_shapes(ir: GridSampleIR, shapes: list):
    rank = ir.spatial_rank + 2
    xs = concrete_shapes(ir.input_shape or (None,) * rank)
    gs = concrete_shapes(ir.grid_shape or (None,) * rank)
    for k in range(max(len(xs), len(gs))):
        x, g = xs[k % len(xs)], list(gs[k % len(gs)])
        g[0], g[-1] = x[0], ir.spatial_rank
        yield [x, tuple(g)]


CONCRETE = PerOp("concrete probe shapes", resize=None, gridsample=_gridsample_shapes, deformconv=_deformconv_shapes)


def _far_offsets(arrays: list, pos: int, rng) -> list:
    far = list(arrays)
    far[pos] = rng.uniform(-FAR, FAR, arrays[pos].shape).astype(arrays[pos].dtype)
    return [(far, "offsets far outside the input")]


# An op's own probes beyond the shared ones: (arrays, what) from (arrays, its positions' input, rng). GridSample
# has none: grids far outside [-1, 1] are among the shared probes.
OWN_PROBES = PerOp("the decomposition's own probes", resize=None, gridsample=None, deformconv=_far_offsets)


def _extra(ir, arrays: list, rng):
    """(arrays, what) beyond the shared probes."""
    pos = spec(ir).positions  # the grid / the offsets
    out = OWN_PROBES.get_for(ir, lambda arrays, pos, rng: [])(arrays, pos, rng)
    if ir.sampler.kind != "cubic":
        bad = list(arrays)
        bad[0] = arrays[0].copy()
        flat = bad[0].reshape(-1)
        flat[::7], flat[3::11], flat[5::13] = np.inf, np.nan, -np.inf
        out.append((bad, "non-finite data"))
    if getattr(ir, "padding", "zeros") != "reflection":
        odd = list(arrays)
        odd[pos] = arrays[pos].copy()
        g = odd[pos].reshape(-1)
        g[::5], g[1::7], g[2::9] = np.nan, np.inf, -np.inf
        out.append((odd, "non-finite coordinates"))
    return out


def prove_grid(rec, model, graph) -> list[str]:
    """Failures of the decomposition of ``rec`` (GridSample or DeformConv) in ``model`` (empty = proven);
    ``rec.extra["probe"]`` says what ran. ``graph``: the written model's shapes and types
    (``translate.onnx.Graph``)."""
    from onnx import numpy_helper

    ir, args = rec.ir, list(rec.proof["inputs"])
    args += [""] * (len(roles(ir)) - len(args))
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    fed = [bool(a) and a not in consts for a in args]
    dtypes = [None if not a else np.dtype(graph.dtypes.get(a, ir.dtype)).name for a in args]
    shapes = [None if not a else (consts[a].shape if a in consts else graph.shapes.get(a)) for a in args]
    shapes[0] = shapes[0] or ir.input_shape
    if isinstance(ir, GridSampleIR):
        shapes[1] = shapes[1] or ir.grid_shape
    elif any(s is None for s, a in zip(shapes, args) if a):
        return [f"{rec.node}: the shapes of its inputs are not known; the decomposition cannot be probed"]
    sess, failed = cut_session(rec, model, {a: np.dtype(d) for a, d, f in zip(args, dtypes, fed) if f},
                               "decomposition", "its inputs")
    if failed:
        return failed
    rng = np.random.default_rng(0)
    runs = 0
    with np.errstate(invalid="ignore", over="ignore"):
        for concrete in _shapes(ir, shapes):
            sets = [([consts.get(a) if v is None and a else v for v, a in zip(p.arrays, args)], p.what)
                    for p in probe_sets(ir, concrete, dtypes, fed)]
            for arrays, what in sets + _extra(ir, sets[0][0], rng):
                want = oracle(ir, *arrays)
                feeds = {a: v for a, v, f in zip(args, arrays, fed) if f}
                try:
                    got = sess.run(None, feeds)[0]
                except Exception as e:  # noqa: BLE001
                    return [f"{rec.node}: shapes {concrete}, {what}: onnxruntime fails: {first_line(e)}"]
                runs += 1
                if got.shape != want.shape or got.dtype != want.dtype:
                    return [f"{rec.node}: shapes {concrete}, {what}: onnxruntime gives {got.dtype}{got.shape}, "
                            f"the oracle {want.dtype}{want.shape}"]
                c = against_oracle(ir, got, want, arrays)
                if not c.ok:
                    i = c.first_mismatch
                    return [f"{rec.node}: shapes {concrete}, {what}: onnxruntime gives {got[i]} at {i}, the "
                            f"oracle {want[i]}"]
    rec.extra["probe"] = f"probed on onnxruntime: {runs} runs against the oracle"
    return []


__all__ = ["FAR", "prove_grid"]
