"""Before/after of the run-time antialias window form (``lowering/openvino/antialias_taps.py``, issue 42): each
model converted with the form as it is and with its tap sum held to the Multiply + ReduceSum on every axis (the
form before the next-to-last axis' MatMul), next to onnxruntime; OpenVINO CPU, f32 hint, one thread each, medians
of interleaved runs (ms), and the runtime model's op counts.

    python tools/dev/bench_aa_window.py [--only SUBSTRING] [--repeats 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import tempfile

from bench import _time_interleaved  # noqa: E402  (same directory)
from bench_models import corpus, models  # noqa: E402

ONE_THREAD = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


def _multiply_sum(g, weight, rank: int, axis: int):
    """The tap sum before issue 42 item 4: a Multiply and a ReduceSum over K on every axis (weights [K, out])."""
    import numpy as np

    from resample_bridge.lowering.openvino.graph import ops

    o = ops()
    tail = list(range(2, 2 + rank - axis - 1))
    w = o.unsqueeze(weight, o.constant(np.array(tail, np.int64))) if tail else weight
    return o.reduce_sum(o.multiply(g, w), o.constant(np.int64(axis)), keep_dims=False).output(0)


@contextlib.contextmanager
def multiply_everywhere():
    """The form's tap sum held to Multiply + ReduceSum on every axis (its proof, of the form as it is, held back:
    a timing only)."""
    from resample_bridge.lowering.openvino import antialias_proof as ap
    from resample_bridge.lowering.openvino import antialias_taps as at

    kept = at.tap_layout, at.tap_sum, ap.prove
    at.tap_layout, at.tap_sum, ap.prove = (lambda rank, axis: 0), _multiply_sum, (lambda *a: [])
    try:
        yield
    finally:
        at.tap_layout, at.tap_sum, ap.prove = kept


def op_counts(compiled) -> str:
    kinds = collections.Counter(op.get_rt_info()["layerType"].astype(str)
                                for op in compiled.get_runtime_model().get_ordered_ops())
    busy = sum(n for k, n in kinds.items() if k not in ("Const", "Input", "Output"))
    return f"{busy} ({', '.join(f'{k} {n}' for k, n in kinds.most_common(4) if k != 'Const')})"


def measure(model, feeds, repeats: int, rounds: int):
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering.openvino import convert

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(model, path)
        after, recs = convert(path, prefer="builtin")
        with multiply_everywhere():
            before, _ = convert(path, prefer="builtin")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 4
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    core = ov.Core()
    new, old = (core.compile_model(m, "CPU", ONE_THREAD) for m in (after, before))
    runs = [_time_interleaved([lambda: old(feeds), lambda: new(feeds), lambda: sess.run(None, feeds)], repeats)
            for _ in range(rounds)]
    best = [min(r[i] for r in runs) for i in range(3)]
    return [r.rung for r in recs], best, op_counts(old), op_counts(new)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="run-time")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    a = parser.parse_args(argv)
    cases = [m for m in models() if a.only in m[0]] + list(corpus(a.only))
    print("model | rungs | before ms | after ms | onnxruntime ms | after/ORT | runtime ops before | after")
    for name, model, feeds in cases:
        rungs, (old, new, ref), ops_old, ops_new = measure(model, feeds, a.repeats, a.rounds)
        print(f"{name} | {rungs} | {old:.3f} | {new:.3f} | {ref:.3f} | {new / ref:.2f} | {ops_old} | {ops_new}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
