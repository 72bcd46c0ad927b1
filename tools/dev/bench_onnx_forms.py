"""Issue 45 on the ONNX target: onnxruntime (CPU) running a Resize as it is against the same node written by
rung 2's in-graph forms (``lowering/onnx/conv_form.py``: edge Pad and depthwise ConvTranspose / strided Conv;
the matrix form, one MatMul per axis: exact for finite inputs only, timed alone and behind an If on every element
finite whose else branch is the ladder's rung, ``guarded``), f32, at 1 and 2 threads, CPU named.
Medians of interleaved runs (``bench._time_interleaved``), ms; ratio = the ladder alone (Resize, or the
decomposition where onnxruntime has no kernel) / the form; "-": the form does not apply. The last columns are what
``convert --target onnx`` writes by default (``cost_in_graph``: the convolution form, the guarded matrix form of
``lowering/onnx/matmul_form.py`` or the decomposition instead of a slow cubic Resize, or the ladder's rung), and
its time.

    python tools/dev/bench_onnx_forms.py [--repeats 9] [--only SUBSTRING] [--threads 1,2] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench import _time_interleaved, ms, ratio  # noqa: E402
from cost_reference import cpu_name  # noqa: E402

HALF = {"coordinate_transformation_mode": "half_pixel"}
MODES = (("nearest", {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}),
         ("linear", HALF), ("cubic", {**HALF, "cubic_coeff_a": -0.75}))
RATIOS = ((2, {}), (4, {}), (0.5, {}), (0.5, {"antialias": 1}))
CHANNELS = (3, 16, 64)
PLANES = ((20, 20), (40, 40), (80, 80), (160, 200))
QUICK = ((3, (160, 200)), (16, (40, 40)), (64, (20, 20)), (64, (80, 80)))  # --quick: one row per scale
# Rank 3, where onnxruntime runs no cubic Resize: the ladder decomposes it (rung 3), the form replaces that.
DECOMPOSED = (("cubic", 2, (1, 16, 400)), ("cubic", 4, (1, 64, 100)), ("cubic", 0.5, (1, 64, 400)))
# Cubic the form does not take (not periodic, or a non-integer ratio): the default writes the decomposition
# instead of onnxruntime's cubic Resize (``cost_in_graph.CUBIC_RESIZE``).
NOT_PERIODIC = (("ac", 2, {"coordinate_transformation_mode": "align_corners"}), ("", 1.5, HALF),
                ("eo", 2, {**HALF, "exclude_outside": 1}),
                ("ac", 0.5, {"coordinate_transformation_mode": "align_corners"}))


def cases(only: str = "", quick: bool = False):
    grid = QUICK if quick else [(c, p) for c in CHANNELS for p in PLANES]
    for kind, attrs in MODES:
        for r, extra in RATIOS:
            if kind == "nearest" and extra:
                continue  # onnxruntime refuses antialias nearest
            for c, (h, w) in grid:
                tag = f"{'x' if r >= 1 else '/'}{int(r if r >= 1 else 1 / r)}{' aa' if extra else ''}"
                name = f"{kind} {tag} 1x{c}x{h}x{w}"
                if only in name:
                    yield name, (1, c, h, w), kind, r, {**attrs, **extra}
    for tag, r, attrs in NOT_PERIODIC:
        for c, (h, w) in QUICK:
            name = f"cubic {'x' if r >= 1 else '/'}{r if r >= 1 else int(1 / r)} {tag} 1x{c}x{h}x{w}".replace("  ", " ")
            if only in name:
                yield name, (1, c, h, w), "cubic", r, {**attrs, "cubic_coeff_a": -0.75}
    for kind, r, shape in DECOMPOSED:
        name = f"{kind} {'x' if r >= 1 else '/'}{int(r if r >= 1 else 1 / r)} {'x'.join(map(str, shape))}"
        if only in name:
            yield name, shape, kind, r, dict(MODES)[kind]


def resize_model(shape, kind, r, attrs):
    from onnx import TensorProto, helper, numpy_helper

    sc = numpy_helper.from_array(np.array([1, 1] + [r] * (len(shape) - 2), np.float32), "sc")
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], name="r", mode=kind, **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [sc])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])


def written(model, conv: bool | None):
    """``model`` as ``convert --target onnx`` writes it with the convolution form held back (the rung the ladder
    chose: Resize, or the decomposition where onnxruntime's Resize computes other numbers) or taken (None where the
    form does not apply), and the record."""
    from resample_bridge.lowering.onnx import cost_in_graph
    from resample_bridge.lowering.onnx.target import DEFAULT_POLICY, OnnxTarget

    with cost_in_graph.forcing(conv):
        got = OnnxTarget().lower_model(model, DEFAULT_POLICY)
    rec = got.records[0]
    return (got.model if conv is None or (rec.proof.get("form") == "conv") == conv else None), rec


def matmul_model(model):
    """The matrix form alone (one MatMul per axis: exact for finite inputs only), or None."""
    import onnx_graphsurgeon as gs

    from resample_bridge.lowering.gs import import_graph
    from resample_bridge.lowering.resize_forms import dense_plan
    from resample_bridge.translate.onnx import parse_model

    (_, ir), = parse_model(model)
    plan = dense_plan(ir, ir.input_shape)
    if isinstance(plan, str):
        return None
    graph = import_graph(model)
    node = graph.nodes[0]
    cur, y, shape = node.inputs[0], node.outputs[0], ir.input_shape
    node.outputs.clear()
    graph.nodes.remove(node)
    for i, d in enumerate(plan):
        last = d.axis == len(shape) - 1
        m = gs.Constant(f"m{i}", np.ascontiguousarray(d.matrix.T if last else d.matrix))
        out = y if i == len(plan) - 1 else gs.Variable(f"mm{i}")
        graph.nodes.append(gs.Node("MatMul", f"mm{i}", {}, [cur, m] if last else [m, cur], [out]))
        cur = out
    graph.cleanup().toposort()
    return gs.export_onnx(graph)


def guarded(model, matmul):
    """The matrix form behind the finite-input guard the ONNX target would need (it takes no condition): If
    (ReduceSum(X * 0) == 0: every element finite) the matrices, else ``model`` (the rung the ladder chose); None
    without the form. Timed only, to size the guard's cost on onnxruntime: no rung writes it."""
    from onnx import TensorProto, helper, numpy_helper

    if matmul is None:
        return None
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    then = helper.make_graph(list(matmul.graph.node), "then", [], [y], list(matmul.graph.initializer))
    other = helper.make_graph(list(model.graph.node), "else", [], [y])
    zero = numpy_helper.from_array(np.float32(0), "zero")
    nodes = [helper.make_node("Mul", ["X", "zero"], ["x0"]), helper.make_node("ReduceSum", ["x0"], ["s"], keepdims=0),
             helper.make_node("Equal", ["s", "zero"], ["finite"]),
             helper.make_node("If", ["finite"], ["Y"], then_branch=then, else_branch=other)]
    g = helper.make_graph(nodes, "g", list(model.graph.input), list(model.graph.output),
                          list(model.graph.initializer) + [zero])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])


def session(model, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def measure(name, shape, kind, r, attrs, threads: int, repeats: int):
    model = resize_model(shape, kind, r, attrs)
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    (base, rec), (conv, _), (default, chosen) = (written(model, k) for k in (False, True, None))
    mm = matmul_model(model)
    fns = []
    for m in (base, conv, mm, None if base is None else guarded(base, mm), default):
        s = None if m is None else session(m, threads)
        fns.append(None if s is None else (lambda s=s: s.run(None, {"X": x})))
    t = _time_interleaved(fns, repeats)
    taken = chosen.proof.get("form") or f"rung {chosen.rung}"
    ladder = "Resize" if rec.rung in (1, 2) else "decomposition"
    return [name, threads, ladder, ms(t[0]), *(v for i in (1, 2, 3) for v in (ms(t[i]), ratio(t[0], t[i]))),
            taken, ms(t[4]), ratio(t[0], t[4])]


def main(argv=None) -> int:
    import onnxruntime as ort

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true", help="one row per channel count and plane size, not the grid")
    args = ap.parse_args(argv)
    print(f"# onnxruntime {ort.__version__} CPU ({cpu_name()}), f32; ms, medians of {args.repeats} interleaved runs")
    head = ["case", "threads", "the ladder alone", "ms", "conv", "ratio", "matmul", "ratio", "matmul+guard", "ratio",
            "default", "ms", "ratio"]
    print(" | ".join(head))
    ratios: dict = {}
    for case in cases(args.only, args.quick):
        for threads in map(int, args.threads.split(",")):
            row = measure(*case, threads, args.repeats)
            print(" | ".join(map(str, row)), flush=True)
            if row[2] == "Resize" and row[5] != "-":
                ratios.setdefault(klass(case[0]), []).append(float(row[5]))
    print("# Resize / conv by class (cost_in_graph.MEASURED, the rule's table): slowest, median, rows")
    for k, v in ratios.items():
        print(f"{k} | {min(v):.2f} | {statistics.median(v):.2f} | {len(v)}")
    return 0


def klass(name: str) -> str:
    """``cost_in_graph``'s key of a case: sampler, up / down / antialias down."""
    kind, tag = name.split()[:2]
    return f"{kind} {'up' if tag.startswith('x') else 'antialias down' if ' aa ' in name else 'down'}"


if __name__ == "__main__":
    sys.exit(main())
