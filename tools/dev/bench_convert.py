"""`make bench`, convert time: ``resample-bridge convert`` against OpenVINO's own ``ovc`` on the real exported
models of tests/models, each a fresh process as a user runs it (imports, proofs and the written IR included), in
turns; the median of ``--repeats`` per model, seconds, and ours / ovc per model with its median and worst. Every
model is converted once before the timed runs: the extension's build and the cost model's rates, timed on first
need and cached, are paid once per machine, not by the model that happens to need them first.

    python tools/dev/bench_convert.py [--repeats 3] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import ratio  # noqa: E402  (same directory: one table style)

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "models"
BIN = Path(sys.executable).parent


def _wall(cmd: list) -> float | None:
    """Seconds ``cmd`` took, or None where it failed (the importer refuses a model with no custom op)."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0 if done.returncode == 0 else None


def _commands(model: Path, out: Path) -> dict:
    return {"ours": [str(BIN / "resample-bridge"), "convert", str(model), "-o", str(out / "ours.xml"), "--force"],
            "ovc": [str(BIN / "ovc"), str(model), "--output_model", str(out / "ovc.xml")]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    models = sorted(p / "model.onnx" for p in CORPUS.iterdir()
                    if (p / "model.onnx").is_file() and args.only in p.name)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        for m in models:  # warm-up (module docstring)
            _wall(_commands(m, out)["ours"])
        rows = []
        for m in models:
            cmds = _commands(m, out)
            times: dict = {k: [] for k in cmds}
            for _ in range(args.repeats):
                for k, cmd in cmds.items():
                    times[k].append(_wall(cmd))
            med = {k: statistics.median(v) if all(t is not None for t in v) else None for k, v in times.items()}
            rows.append((m.parent.name, med["ours"], med["ovc"]))
    print(f"convert time, a fresh process each: resample-bridge convert against ovc; median of {args.repeats}, s")
    head = f"{'model':<44} {'ours':>6} {'ovc':>6} {'ours/ovc':>8}"
    print(head)
    print("-" * len(head))
    for name, ours, ovc in rows:
        print(f"{name[:44]:<44} {ours or 0:>6.2f} {ovc or 0:>6.2f} {ratio(ours, ovc):>8}" if ours and ovc else
              f"{name[:44]:<44} {ours or 0:>6.2f} {'-':>6} {'-':>8}")
    both = [ours / ovc for _, ours, ovc in rows if ours and ovc]
    if both:
        print(f"ours / ovc where both convert: median {statistics.median(both):.2f}, max {max(both):.2f} "
              f"({len(both)} models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
