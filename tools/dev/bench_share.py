"""How far can any rewrite of the resampling nodes move a whole model's latency? Per real model of tests/models
where OpenVINO's importer is exact (``check``): the importer's latency (median of interleaved-free runs, ms), the
time its resampling nodes take (OpenVINO's per-node performance counters: Interpolate, GridSample,
DeformableConvolution), and the bound: the model's latency with those nodes free, over its latency now. The
geomean of the bounds is the best whole-model ratio any resize rewrite can reach on the corpus; the last lines
give the geomean if every resampling node ran f times faster.

    python tools/dev/bench_share.py [--only SUBSTRING] [--repeats 30] [--hint f32|bf16]

The counters' sum runs above the latency on models of milliseconds (counting costs) and below it on models of
microseconds (the call's own overhead): the resampling time is its share of the counted time times the smaller
of the two.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from bench import geomean  # noqa: E402  (same directory)
from bench_models import corpus  # noqa: E402

RESAMPLING = ("Interpolate", "GridSample", "DeformableConvolution")


def resampling_time(core, ov_model, feeds, repeats: int, hint: str) -> tuple:
    """(latency ms, resampling ms) of ``ov_model`` on CPU at ``hint``."""
    counted = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": hint, "PERF_COUNT": "YES"})
    plain = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
    request = counted.create_infer_request()
    for _ in range(3):
        request.infer(feeds)
        plain(feeds)
    total = resampling = 0.0
    for _ in range(repeats):
        request.infer(feeds)
        for p in request.profiling_info:
            t = p.real_time.total_seconds()
            total += t
            resampling += t if p.node_type in RESAMPLING else 0.0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        plain(feeds)
        runs.append(time.perf_counter() - t0)
    latency = float(np.median(runs))
    share = resampling / total if total else 0.0
    return latency * 1e3, share * min(total / repeats, latency) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--hint", default="f32", choices=("f32", "bf16", "f16"))
    args = ap.parse_args(argv)
    import onnx
    import openvino as ov

    from resample_bridge.tools.check_openvino import check_openvino

    core = ov.Core()
    rows = []
    print(f"{'model':45s} {'importer ms':>11s} {'resampling us':>13s} {'bound':>6s}")
    for name, model, feeds in corpus(args.only):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            try:
                imported = ov.convert_model(path)
                exact = {r["openvino"]["verdict"] for r in check_openvino(path)} == {"exact"}
            except Exception:  # noqa: BLE001 -- the importer refuses the model: no peer
                continue
        if not exact:
            continue
        latency, resampling = resampling_time(core, imported, feeds, args.repeats, args.hint)
        rows.append((latency, resampling))
        print(f"{name[len('corpus: '):]:45s} {latency:11.3f} {resampling * 1e3:13.1f} "
              f"{1 - resampling / latency:6.3f}", flush=True)
    if not rows:
        return 0
    lat, res = np.array(rows).T
    res = np.minimum(res, 0.999 * lat)  # counted time beside a noisy median latency
    print(f"\n{len(rows)} models where the importer is exact; resampling time quartiles (us): "
          f"{np.percentile(res * 1e3, [25, 50, 75]).round(1).tolist()}")
    print(f"bound (resampling free): geomean {geomean(1 - res / lat):.3f}, min {np.min(1 - res / lat):.3f}")
    for f in (1.5, 2, 3, 5):
        print(f"every resampling node {f}x faster: geomean {geomean(1 - res / lat * (1 - 1 / f)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
