"""Export the corpus of real exported models in tests/models/<case>/ (issue 9, item 6).

Each case directory holds
  model.onnx   the model as the exporter wrote it (no simplification, no post-processing);
  inputs.npz   graph input name -> array fed to every runtime;
  outputs.npz  graph output name -> the SOURCE framework's output on those inputs (PyTorch eager, float32), or,
               for a model shipped as ONNX only, onnxruntime's output (meta.json "reference" says which);
  meta.json    exporter, dynamo, opset, what the case exercises, dynamic axes, the resampling nodes, pins.

Not part of the project's dependencies and not run by CI: CI only reads the files this writes
(tests/test_real_models.py). The cases live in export_interpolate.py, export_grid_deform.py,
export_networks.py and export_libraries*.py (whole models from torchvision, kornia, segmentation-models-pytorch,
transformers, timm, diffusers: meta.json "library" records the version; export_half.py their float16 exports),
the writer in export_common.py. Run it
from a separate virtual environment OUTSIDE the repository:

    python3 -m venv /work/exportenv
    /work/exportenv/bin/pip install torch==2.14.1 torchvision==0.29.1
    /work/exportenv/bin/pip install onnx==1.23.2 onnxscript==0.7.2 onnxruntime==1.32.0 ultralytics==8.4.190 \\
        torch==2.14.1 torchvision==0.29.1
    /work/exportenv/bin/pip install transformers==5.24.0 kornia==0.9.0 segmentation-models-pytorch==0.6.0 \\
        diffusers==0.42.1 timm==1.0.31 torch==2.14.1 torchvision==0.29.1
    YOLO_OFFLINE=1 /work/exportenv/bin/python tools/dev/export_models.py [--only CASE ...] [--out tests/models]

Pins (the versions the committed corpus was exported with; the script records the versions it ran with in
each meta.json and warns when they differ):
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a file (from a virtual environment outside the repository), so the siblings import by their plain
# names; importing a case module registers its cases, in the corpus's order (the default run order).
import export_interpolate  # noqa: F401  isort: skip
import export_grid_deform  # noqa: F401  isort: skip
import export_networks  # noqa: F401  isort: skip
import export_libraries  # noqa: F401  isort: skip
import export_libraries_kornia  # noqa: F401  isort: skip
import export_libraries_hf  # noqa: F401  isort: skip
import export_detection  # noqa: F401  isort: skip
import export_half  # noqa: F401  isort: skip
from export_common import CASES, PINS, versions

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "models"


# ---------------------------------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--keep-going", action="store_true", help="report a failing case and go on")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    have = versions()
    for k, v in PINS.items():
        if have.get(k) not in (v, None):
            print(f"warning: {k} {have.get(k)} installed, corpus pinned at {v}", file=sys.stderr)
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    names = args.only or list(CASES)
    failed = []
    for n in names:
        print(f"{n}:", flush=True)
        try:
            CASES[n](args.out)
        except Exception as e:
            if not args.keep_going:
                raise
            failed.append(n)
            print(f"  FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
    total = sum(p.stat().st_size for p in Path(args.out).rglob("*") if p.is_file())
    print(f"corpus: {total} bytes in {args.out}" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
