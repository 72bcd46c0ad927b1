"""The proof of a GridSample decomposition (``gridsample_decompose``) by numbers: the nodes that compute the
source node's output from X and the grid, cut out of the written model, run on onnxruntime against the oracle
(``semantics.compare.against_oracle``: the project's one tolerance; nearest bit-exact).

Inputs: the shared probe sets (``lowering.probes``: random, distinct and large data; random grids, grid points
on the .5 ties of the unnormalised coordinate and one float32 step either side) at every concrete shape the
node's unknown dimensions take, plus what this form must survive beyond them: grids far outside [-1, 1] (many
reflection bounces), non-finite data (NaN / +-inf read through zero weights; not for cubic, whose outer
weights round to 0 in float32 where the oracle's are tiny, and 0 * inf is NaN) and, except under reflection,
non-finite grid points (NaN reads as an outside tap, as the oracle's index). A NaN or infinite coordinate under
reflection is left out: the oracle folds it in float64 at its +-2^62 stand-in, which no float32 graph follows.
"""

from __future__ import annotations

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.reference import run as oracle
from ..probes import concrete_shapes, probe_sets

FAR = 40.0  # grid values up to +-40: the coordinate passes the borders tens of times on small lengths


def _shapes(ir, grid_dtype):
    """(X shape, grid shape) pairs: the unknown dimensions at the shared representative lengths, the grid's
    batch X's and its last axis the spatial rank."""
    rank = ir.spatial_rank + 2
    xs = concrete_shapes(ir.input_shape or (None,) * rank)
    gs = concrete_shapes(ir.grid_shape or (None,) * rank)
    for k in range(max(len(xs), len(gs))):
        x, g = xs[k % len(xs)], list(gs[k % len(gs)])
        g[0], g[-1] = x[0], ir.spatial_rank
        yield x, tuple(g)


def _extra(ir, x, grid, rng):
    """(X, grid, what) beyond the shared probes."""
    far = rng.uniform(-FAR, FAR, grid.shape).astype(grid.dtype)
    bad = x.copy()
    flat = bad.reshape(-1)
    flat[::7], flat[3::11], flat[5::13] = np.inf, np.nan, -np.inf
    out = [(x, far, "grid points far outside [-1, 1]")]
    if ir.sampler.kind != "cubic":
        out.append((bad, grid, "non-finite data"))
    if ir.padding != "reflection":
        odd = grid.copy()
        g = odd.reshape(-1)
        g[::5], g[1::7], g[2::9] = np.nan, np.inf, -np.inf
        out.append((x, odd, "non-finite grid points"))
    return out


def prove_grid(rec, model, grid_dtype) -> list[str]:
    """Failures of the decomposition of ``rec`` in ``model`` (empty = proven); ``rec.extra["probe"]`` says what
    ran. ``grid_dtype``: the grid input's numpy dtype."""
    from .prove import cut_session

    ir, (xname, gname) = rec.ir, rec.proof["inputs"][:2]
    dtype = np.dtype(ir.dtype)
    sess, failed = cut_session(rec, model, {xname: dtype, gname: grid_dtype}, "decomposition", "X and the grid")
    if failed:
        return failed
    rng = np.random.default_rng(0)
    runs = 0
    with np.errstate(invalid="ignore", over="ignore"):
        for xs, gsh in _shapes(ir, grid_dtype):
            sets = [(p.arrays[0], p.arrays[1], p.what) for p in
                    probe_sets(ir, [xs, gsh], [dtype.name, grid_dtype.name], [True, True])]
            for x, grid, what in sets + _extra(ir, sets[0][0], sets[0][1], rng):
                want = oracle(ir, x, grid)
                try:
                    got = sess.run(None, {xname: x, gname: grid})[0]
                except Exception as e:  # noqa: BLE001
                    return [f"{rec.node}: X {xs}, grid {gsh}, {what}: onnxruntime fails: {str(e).splitlines()[0]}"]
                runs += 1
                if got.shape != want.shape or got.dtype != want.dtype:
                    return [f"{rec.node}: X {xs}, grid {gsh}, {what}: onnxruntime gives {got.dtype}{got.shape}, "
                            f"the oracle {want.dtype}{want.shape}"]
                c = against_oracle(ir, got, want, [x, grid])
                if not c.ok:
                    i = c.first_mismatch
                    return [f"{rec.node}: X {xs}, grid {gsh}, {what}: onnxruntime gives {got[i]} at {i}, the "
                            f"oracle {want[i]}"]
    rec.extra["probe"] = f"probed on onnxruntime: {runs} runs against the oracle"
    return []


__all__ = ["FAR", "prove_grid"]
