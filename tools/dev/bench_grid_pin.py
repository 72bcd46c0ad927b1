"""What keeping a generated grid in f32 costs (``lowering/openvino/grid_pin.py``, issue 42): a 1x3xHxW spatial
transformer (AffineGrid-20 -> GridSample -> Conv, ``tests/helpers/stn.py``; kornia's warp_perspective -> Conv where
kornia is installed) converted by default, at OpenVINO's default inference precision (bf16 where the CPU has it),
with the f32 marks and with them taken out of the same IR; and OpenVINO's importer. The fastest of interleaved single calls, ms (``--stat median``: ``bench._time_interleaved``'s
medians, which swing 2x either way on this 2-core machine under other load), and the max error against onnxruntime.

    python tools/dev/bench_grid_pin.py [--size 224] [--repeats 30] [--threads 1] [--stat min|median]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from bench import _time_interleaved, ms, ratio  # noqa: E402


def main(argv=None) -> None:
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge import api
    from tests.helpers.stn import affine_grid, decomposed, feeds

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--stat", choices=["min", "median"], default="min")
    p.add_argument("--threads", type=int, default=1, help="OpenVINO CPU threads (1: steadier on a shared machine)")
    args = p.parse_args(argv)
    core = ov.Core()
    print(f"OpenVINO {ov.get_version().split('-')[0]}, CPU default precision "
          f"{core.get_property('CPU', 'INFERENCE_PRECISION_HINT')}")
    print(f"{'model':<28}{'pinned ms':>10}{'unpinned ms':>12}{'importer ms':>12}{'ratio':>7}"
          f"{'err pinned':>12}{'err unpinned':>13}{'err importer':>13}")
    cases = (("AffineGrid-20", lambda n: (affine_grid(n), feeds(n))),
             ("Mul/ReduceSum (dynamo)", lambda n: (decomposed(n), feeds(n))), ("kornia warp_perspective", _kornia))
    for name, build in cases:
        built = build(args.size)
        if built is None:
            continue
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "m.onnx")
            onnx.save(built[0], src)
            xml = api.convert(src, os.path.join(d, "out", "m.xml")).output
            text = open(xml).read()
            weights = ov.Tensor(np.fromfile(xml[:-4] + ".bin", np.uint8))
            unpinned = core.read_model(re.sub(r'\s*<attribute name="DisablePrecisionConversion"[^>]*/>', "", text)
                                       .encode(), weights)
            f = built[1]
            ref = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, f)[0]
            config = {"INFERENCE_NUM_THREADS": args.threads}  # the default inference precision: no hint
            models = (core.read_model(xml), unpinned, core.read_model(src))
            runs = [core.compile_model(m, "CPU", config) for m in models]
            errs = [float(np.abs(r(f)[0] - ref).max()) for r in runs]
            calls = [lambda r=r: r(f) for r in runs]
            t = _fastest(calls, args.repeats * 10) if args.stat == "min" else _time_interleaved(calls, args.repeats)
            print(f"{name:<28}{ms(t[0]):>10}{ms(t[1]):>12}{ms(t[2]):>12}{ratio(t[0], t[1]):>7}"
                  + "".join(f"{e:>13.3g}" for e in errs))


def _kornia(size: int):
    """(model, feeds): kornia's warp_perspective -> Conv exported by TorchScript at opset 16 (the corpus's ts16
    case at size x size), whose perspective division stays a Divide (``grid_pin.respelled``); None without kornia."""
    try:
        import io

        import onnx
        import torch
        from kornia.geometry.transform import warp_perspective
    except ImportError:
        return None

    class Warp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x, m):
            return self.conv(warp_perspective(x, m, (size, size)))

    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
    m = torch.tensor([[[0.9, -0.2, 2.0], [0.25, 1.1, -1.0], [0.002, -0.001, 1.0]]])
    buf = io.BytesIO()
    torch.onnx.export(Warp().eval(), (x, m), buf, input_names=["x", "m"], output_names=["y"], opset_version=16,
                      dynamo=False)
    return onnx.load_from_string(buf.getvalue()), {"x": x.numpy(), "m": m.numpy()}


def _fastest(fns: list, rounds: int) -> list:
    """The fastest single call of each, ms, in a fresh random order each round (what other load adds is never
    negative, so the minimum is the steadiest statistic where the machine is shared)."""
    best = [float("inf")] * len(fns)
    for f in fns:
        f()
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        for i in rng.permutation(len(fns)):
            t0 = time.perf_counter()
            fns[i]()
            best[i] = min(best[i], (time.perf_counter() - t0) * 1e3)
    return best


if __name__ == "__main__":
    main()
