"""Write the cost model's reference table (``lowering/openvino/cost_reference.json``): every rate timed on this
machine, and the machine's name. The default policy decides by it where the extension is not built yet, and the
tests (``tests/conftest.py``) decide by it on every machine.

    python tools/dev/cost_reference.py [--out PATH] [--only SUBSTRING] [--runs N]

``--only``: time the rates whose key contains SUBSTRING (a class added since) and keep the table's others; the
in-graph forms' rates by plane (``cost_plane``, issue 45) are ``--only plane`` (about 4 minutes at ``--runs 3``)
and the matrix form's reorders ``--only layout/matmul``.
``--runs``: calibrate N times and keep each rate's median (default 3): on a shared 2-core machine two whole
calibrations a minute apart differed by 0.6-1.3x on the middle 80% of rates and by up to 5x on single ones.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
            fh.seek(0)
            flags = next((ln.split(":", 1)[1].split() for ln in fh if ln.startswith("flags")), [])
    except OSError:
        model, flags = platform.processor(), []
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else platform.machine()
    return f"{model or platform.machine()}, {isa}, {os.cpu_count()} cores"


def main(argv=None) -> int:
    import openvino as ov

    from resample_bridge.lowering.openvino import cost
    from resample_bridge.lowering.openvino.target import convert  # the timing models convert as a user's does

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(cost.REFERENCE))
    ap.add_argument("--only", default="", help="time the rates whose key contains this; keep the table's others")
    ap.add_argument("--runs", type=int, default=3, help="calibrations whose median per rate is kept")
    args = ap.parse_args(argv)
    where = f"the reference machine ({cpu_name()}; OpenVINO {ov.__version__.split('-')[0]})"
    rates = {}
    if args.only:
        kept = cost.table_file(args.out)
        if kept.where != where:
            raise SystemExit(f"--only: {args.out} was timed on {kept.where}, not on {where}: time it whole")
        rates = kept.rates
    runs = [cost.calibrate(convert, only=args.only) for _ in range(max(1, args.runs))]
    rates.update({k: statistics.median(r[k] for r in runs) for k in runs[0]})
    with open(args.out, "w") as fh:
        json.dump({"where": where, "rates": {k: round(v, 4) for k, v in sorted(rates.items())}}, fh, indent=1)
        fh.write("\n")
    print(f"{args.out}: {len(rates)} rates on {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
