"""Issue 44's "Must show" table on the PyTorch module corpus (``tests/helpers/torch_corpus.py``): per model, the
``check --source`` verdicts of its dynamo (opset 18) and TorchScript (opset 17, else 20) exports with onnxruntime's
witness (does the export compute eager's numbers?), OpenVINO's own PyTorch frontend verdicts with their measured
error, and ``convert model.pt2`` max |error| against eager on OpenVINO CPU at f32 and at the default precision.

Run from a checkout with the test extra: ``.venv/bin/python tools/dev/torch_corpus_table.py [model ...]``.
The assertions on the same verdicts are ``tests/tools/test_torch_corpus.py``; this prints the numbers."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _max_error(xml, module, inputs, config) -> float:
    import openvino as ov
    import torch

    from tests.tools.test_torch_corpus import _leaves

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", config)
    got = compiled([t.numpy() for t in inputs])
    with torch.no_grad():
        want = _leaves(module(*inputs))
    return max(float(np.abs(got[compiled.output(i)] - w).max()) for i, w in enumerate(want))


def _verdicts(rows) -> str:
    return " ".join(r.verdict for r in rows) or "-"


def row(name: str, d: Path) -> list[str]:
    import torch

    from resample_bridge import api
    from tests.helpers.torch_corpus import MODELS
    from tests.tools.test_torch_corpus import export_onnx, onnxruntime_agrees

    module, inputs = MODELS[name]()
    program = torch.export.export(module, inputs)
    torch.export.save(program, d / "m.pt2")
    cells = [name]
    for dynamo in (True, False):
        path = d / f"m_{int(dynamo)}.onnx"
        refusal = export_onnx(module, inputs, path, dynamo)
        if refusal:
            cells.append(f"refused: {refusal[:60]}")
            continue
        rows = api.check(path, source=d / "m.pt2").rows
        flagged = [f"{r.onnx_name}:{','.join(f for f, *_ in r.fields)}" for r in rows if r.verdict == "differs"]
        cells.append(f"{_verdicts(rows)}; onnxruntime {'= eager' if onnxruntime_agrees(path, module, inputs) else '!= eager'}"
                     + (f"; flagged {' '.join(flagged)}" if flagged else ""))
    rows = api.check(None, source=d / "m.pt2").rows
    worst = max((r.measured for r in rows if r.measured is not None), default=None)
    cells.append(_verdicts(rows) + (f" (max {worst:.2g})" if worst is not None else ""))
    conv = api.convert(program, d / "ov" / "m.xml")
    cells.append(" / ".join(f"{_max_error(conv.output, module, inputs, c):.2g}"
                            for c in ({"INFERENCE_PRECISION_HINT": "f32"}, {})))
    return cells


def main(argv: list[str]) -> None:
    import logging
    import warnings

    from tests.helpers.torch_corpus import MODELS

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    print("| model | dynamo opset 18: check --source; onnxruntime | TorchScript: check --source; onnxruntime | "
          "OpenVINO PyTorch frontend (measured vs eager) | convert vs eager: f32 / default precision |")
    print("|---|---|---|---|---|")
    for name in argv or list(MODELS):
        with tempfile.TemporaryDirectory() as tmp:
            print("| " + " | ".join(row(name, Path(tmp))) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
