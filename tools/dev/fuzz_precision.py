"""The fuzz campaign's valid cases run as deployed: at OpenVINO's default inference precision (bf16 on CPUs that
have it), with a Conv after the resampling node as in a real network. The CPU plugin keeps a graph's tail in f32,
which hid that the GridSample decomposition's coordinates ran in bf16 and moved nearest picks (issue 42); here the
node is never the tail. "Reduced precision may round values, never move an index":

    python -m resample_bridge.tools.dev.fuzz_precision --seed 1 --cases 200 [--families resize,forms,gridsample]

Each case with a float32 output of rank 3-5 and a static channel count gets an identity 1x1 Conv after its output,
is converted with the default (``api.convert``, read back from disk, where the f32 marks take effect) and run at
the default precision and at f32 on the case's own feeds, X replaced by integers in [0, 200) (exact in bf16, so the
identity Conv is exact too): a nearest node must give the f32 run's values bit for bit, any other within 2^-6 of
the output's range (``RANGE_SHARE``). A case that moves an index is named;
the exit status is 1 if any did. Skipped where this CPU's default is f32. ``--unread-marks`` runs the reduced
model with the f32 marks removed from its IR, as OpenVINO 2023.3 to 2025.4 read it (``pinned_tail``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from ...lowering.openvino.pinned_tail import unread
from .fuzz import FAMILIES, make_case

VALID = ("resize", "gridsample", "deformconv", "forms")
# A non-nearest output may differ by this share of its range: four bf16 roundoffs, what ``verify --precision bf16``
# allows a model output (``tolerance.precision_tolerance``): sampled values, weights and a DeformConv's MatMul
# inputs rounded to bf16. A float coordinate rounded to bf16 moves a sample by less at these sizes, so the nearest
# cases (bit for bit) are the ones that tell a moved index from a rounded value.
RANGE_SHARE = 2.0 ** -6


def then_identity_conv(model):
    """A copy of ``model`` whose first output is fed through an identity 1x1 Conv, or None where it cannot be
    (not float32, rank outside 3-5, channels not static)."""
    import onnx
    from onnx import helper, numpy_helper, shape_inference

    m = onnx.ModelProto()
    m.CopyFrom(model)
    try:
        out = shape_inference.infer_shapes(m).graph.output[0].type.tensor_type
    except Exception:  # noqa: BLE001 -- a model shape inference cannot read is not this campaign's case
        return None
    dims = out.shape.dim
    if out.elem_type != onnx.TensorProto.FLOAT or len(dims) not in (3, 4, 5) or not dims[1].dim_value:
        return None
    channels, rank, name = dims[1].dim_value, len(dims), m.graph.output[0].name
    for node in m.graph.node:
        node.output[:] = [o + "_sampled" if o == name else o for o in node.output]
    weight = np.eye(channels, dtype=np.float32).reshape((channels, channels) + (1,) * (rank - 2))
    m.graph.initializer.append(numpy_helper.from_array(weight, "identity_after"))
    m.graph.node.append(helper.make_node("Conv", [name + "_sampled", "identity_after"], [name], name="after"))
    return m


def judge(case, folder: Path, unread_marks: bool = False) -> tuple[str, str]:
    """(outcome, detail): "ok", "moved" (an index moved or a value past bf16's rounding), "library" (the default
    wrote one: not this campaign's question), "refused", "skipped"."""
    import onnx
    import openvino as ov

    from .. import api

    model = then_identity_conv(case.model) if case.model is not None and case.feeds else None
    if model is None or model.graph.input[0].type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        return "skipped", ""
    src = folder / "m.onnx"
    onnx.save(model, src)
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            done = api.convert(str(src), str(folder / "out" / "m.xml"))
    except BaseException as e:  # noqa: BLE001 -- a refusal (BridgeError, SystemExit) is an outcome here
        return "refused", str(e)[:120]
    if done.extension is not None:
        return "library", ""
    core = ov.Core()
    written = core.read_model(str(folder / "out" / "m.xml"))
    if unread_marks:
        unread(folder / "out" / "m.xml", folder / "bare.xml")
    reduced = core.compile_model(core.read_model(str(folder / "bare.xml")) if unread_marks else written, "CPU")
    f32 = core.compile_model(written, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    nearest = " nearest " in f" {case.label} "
    x_name = model.graph.input[0].name
    for k, feed in enumerate(case.feeds[:2]):
        feed = dict(feed)
        feed[x_name] = np.random.default_rng(k).integers(0, 200, feed[x_name].shape).astype(np.float32)
        ins = [feed[p.get_any_name()] for p in written.inputs]
        want = np.asarray(f32(ins)[0], np.float64)
        got = np.asarray(reduced(ins)[0], np.float64)
        finite = np.isfinite(want)
        if not np.array_equal(np.isfinite(got), finite):
            return "moved", "non-finite values differ"
        err = float(np.abs(got - want)[finite].max(initial=0.0))
        scale = max(float(np.abs(want[finite]).max(initial=0.0)), 1.0)
        if err > (0.0 if nearest else RANGE_SHARE * scale):
            return "moved", f"{'nearest' if nearest else 'float'}: {err:.4g} off (range {scale:.4g})"
    return "ok", ""


def default_is_reduced() -> bool:
    """Whether this CPU's default inference precision is below f32 (bf16 here): the one place tests ask."""
    import openvino as ov

    return str(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")) not in ("f32", "<Type: 'float32'>")


def campaign(seed: int, cases: int, families=VALID, unread_marks: bool = False) -> Counter:
    """Outcome counts over the seed's first ``cases`` cases of ``families``; each moved case printed."""
    counts: Counter = Counter()
    for i in range(cases):
        case = make_case(seed, i, families)
        if case.kind != "valid":
            counts["skipped"] += 1
            continue
        with tempfile.TemporaryDirectory() as d:
            outcome, detail = judge(case, Path(d), unread_marks)
        counts[outcome] += 1
        if outcome == "moved":
            print(f"MOVED {seed}-{i:04d}: {detail}: {case.label}", flush=True)
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--families", default=",".join(VALID), help=f"of {', '.join(f for f in FAMILIES if f in VALID)}")
    ap.add_argument("--unread-marks", action="store_true",
                    help="the f32 marks removed, as releases before 2026 read them")
    args = ap.parse_args(argv)
    if not default_is_reduced():
        print("this CPU's default inference precision is f32: nothing is reduced here")
        return 0
    counts = campaign(args.seed, args.cases, tuple(args.families.split(",")), args.unread_marks)
    print("  ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts["moved"] else 0


if __name__ == "__main__":
    sys.exit(main())
