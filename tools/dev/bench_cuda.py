"""The CUDA launchers against PyTorch's CUDA ops on the bench's cases (``bench.cases``), where a GPU is:

    python tools/dev/bench_cuda.py [--repeats 20] [--only SUBSTRING]

Per case: our launcher bound once to the case's shapes (``compiled.CudaLaunch``: what the TensorRT plugin holds
after onShapeChange, so a call queues kernels only), the same in one call (``cuda_launch``: Resize's binding,
tap tables and uploads included), and the closest PyTorch op (``interpolate``, ``grid_sample``, torchvision's ``deform_conv2d``; its semantics may
differ in details, it is a speed reference only), data already in device memory; medians of CUDA-event samples
of k calls (about 1 ms each), ms. Our output is held to the policy (``against_oracle``) before it is timed.
Needs torch with CUDA; prints one line and exits 2 without it."""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys

import numpy as np


def _arrays(model, feeds):
    """(IR, X, the node's other inputs in order, None where omitted) of the case's one node."""
    from onnx import numpy_helper

    from resample_bridge.translate.onnx import parse_model

    (_, ir), = parse_model(model)
    values = {**feeds, **{t.name: numpy_helper.to_array(t) for t in model.graph.initializer}}
    node = model.graph.node[0]
    return ir, values[node.input[0]], [values[n] if n else None for n in node.input[1:]]


def _torch_peer(torch, ir, x, inputs, out_shape):
    """The PyTorch op closest to the case (speed reference)."""
    import torch.nn.functional as F

    from resample_bridge.semantics.ir import DeformConvIR, GridSampleIR

    dev = lambda a: torch.from_numpy(np.array(a)).cuda()  # noqa: E731  (a writable copy)
    tx = dev(x)
    if isinstance(ir, GridSampleIR):
        mode = {"linear": "bilinear", "cubic": "bicubic"}.get(ir.sampler.kind, "nearest")
        g = dev(inputs[0])
        return lambda: F.grid_sample(tx, g, mode=mode, padding_mode=ir.padding, align_corners=ir.align_corners)
    if isinstance(ir, DeformConvIR):
        from torchvision.ops import deform_conv2d

        w, off, b, m = (None if a is None else dev(a) for a in (inputs + [None] * 4)[:4])
        return lambda: deform_conv2d(tx, off, w, b, stride=ir.strides, padding=ir.pads[:2], dilation=ir.dilations,
                                     mask=m)
    kind = ir.sampler.kind
    mode = {"linear": "bilinear", "cubic": "bicubic"}.get(kind, "nearest") if x.ndim == 4 else "nearest"
    aa = bool(getattr(ir.sampler, "antialias", False)) and kind != "nearest"
    return lambda: F.interpolate(tx, size=tuple(out_shape[2:]), mode=mode, antialias=aa)


def _time(torch, fn, repeats: int) -> float:
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    k = max(1, round(1.0 / max(a.elapsed_time(b), 1e-3)))
    samples = []
    for _ in range(repeats):
        a.record()
        for _ in range(k):
            fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) / k)
    return statistics.median(samples)


def _graph_time(torch, fn, repeats: int, k: int = 20) -> float | None:
    """Device time of one call: k calls captured in a CUDA graph (``fn(stream)`` queues on that stream), the
    graph replayed; no host overhead, as an engine that replays graphs sees it. None where capture fails."""
    stream = torch.cuda.Stream()
    try:
        with torch.cuda.stream(stream):
            fn(stream.cuda_stream)  # warm-up outside the capture (allocator, lazy loading)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(k):
                fn(stream.cuda_stream)
    except Exception as e:  # noqa: BLE001 (a speed figure only: report and go on)
        print(f"  (CUDA graph capture failed: {str(e).splitlines()[0][:100]})")
        return None
    return _time(torch, graph.replay, repeats) / k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench_cuda: needs torch (with CUDA)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_cuda: no CUDA device", file=sys.stderr)
        return 2
    from resample_bridge.lowering import compiled
    from resample_bridge.semantics import reference
    from resample_bridge.semantics.compare import against_oracle

    from bench import cases, geomean

    print(f"device: {torch.cuda.get_device_name()}; ours = the CUDA launchers bound once per shape, one call = "
          f"bound in the call; peer = PyTorch {torch.__version__}; ms, median of {args.repeats} samples")
    print("device time = the calls replayed from a CUDA graph (no host overhead)")
    print(f"{'case':40s} {'ours':>8s} {'one call':>8s} {'torch':>8s} {'ratio':>6s}  "
          f"{'ours dev':>8s} {'torch dev':>8s} {'ratio':>6s}  policy")
    ratios, dev_ratios = [], []
    for name, model, feeds in cases():
        if args.only not in name:
            continue
        ir, x, inputs = _arrays(model, feeds)
        # The inputs in device memory once (keyed by their host memory); any other array (the output) fresh.
        on_device = {a.__array_interface__["data"][0]: torch.from_numpy(np.array(a)).cuda()
                     for a in [x, *inputs] if a is not None}
        outputs = []

        def put(a, on_device=on_device, outputs=outputs):
            t = on_device.get(a.__array_interface__["data"][0])
            if t is None:
                t = torch.empty(a.shape, dtype=getattr(torch, a.dtype.name), device="cuda")
                outputs[:] = [t]
            return ctypes.c_void_p(t.data_ptr())

        with compiled.CudaLaunch(ir, x, inputs) as launch:
            y, dy = launch(x, inputs, put)
            torch.cuda.synchronize()
            got = outputs[0].cpu().numpy() if dy is not None else y
            verdict = against_oracle(ir, got, reference.run(ir, x, *inputs), [x, *inputs])
            ours = _time(torch, lambda: launch(x, inputs, put), args.repeats)
            ours_dev = _graph_time(torch, lambda st: launch(x, inputs, put, ctypes.c_void_p(st)), args.repeats)
        one = _time(torch, lambda: compiled.cuda_launch(ir, x, inputs, put), args.repeats)
        peer_fn = _torch_peer(torch, ir, x, inputs, y.shape)
        peer = _time(torch, peer_fn, args.repeats)
        peer_dev = _graph_time(torch, lambda st: peer_fn(), args.repeats)
        ratios.append(ours / peer)
        if ours_dev and peer_dev:
            dev_ratios.append(ours_dev / peer_dev)
        dev = f"{ours_dev:8.3f} {peer_dev:8.3f} {ours_dev / peer_dev:6.2f}" if ours_dev and peer_dev else "n/a"
        print(f"{name:40s} {ours:8.3f} {one:8.3f} {peer:8.3f} {ours / peer:6.2f}  {dev}  "
              f"{'exact' if verdict.ok else 'NOT EXACT'}", flush=True)
    if ratios:
        print(f"ours/torch: geomean {geomean(ratios):.2f}, max {max(ratios):.2f}")
    if dev_ratios:
        print(f"device time ours/torch: geomean {geomean(dev_ratios):.2f}, max {max(dev_ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
