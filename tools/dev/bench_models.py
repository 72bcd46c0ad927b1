"""`make bench`, whole models: latency of models converted by resample-bridge (the default, portable:
``--prefer builtin``; and ``--prefer fastest``) next to OpenVINO's own importer and onnxruntime, on OpenVINO CPU (f32 hint); medians of
interleaved runs, ms. Where the importer is not exact ("OV exact?" from ``check``), its time is shown but it is
no peer. "+ops": how many more ops the default's compiled model runs than the importer's, constants aside (0: the
same op types as often, so the two columns time one graph and their ratio is the table's noise; "~": as many, of
other types); the summary gives the ratio's geomean apart for those and for the rest.

    python tools/dev/bench_models.py [--repeats 20] [--rounds 2] [--only SUBSTRING] [--corpus] [--allow-conditional]
                                     [--hint f32|bf16|f16]

``--hint``: the inference precision every column's OpenVINO models run at (default f32; bf16 is this CPU's own
default, as a model is deployed unless told otherwise; onnxruntime runs float32 whatever it is).
``--allow-conditional``: both conversions take forms exact under stated run-time conditions (the matrix form:
finite inputs). ``--before TABLE``: the second column is the default converted with the cost model's rates of
TABLE (a before/after of a new reference table, timed interleaved) instead of ``--prefer fastest``;
``--changed-only``: only the models whose rungs or forms differ between the two. ``--hold-forms``: both convert
with rung 2's in-graph forms held back (``conv_rewrite.forcing``: Interpolate, or the rung the ladder chose): the
same models before the forms, for a before/after.

Models (built here, shapes of our own): a YOLO-style neck (Conv -> nearest x2 -> Concat -> Conv), a
segmentation head (Conv -> bilinear x4 -> Conv), an antialiased preprocessing step (600x800 -> 300x400 ->
Conv), a DCN block (Conv offsets -> DeformConv with mask -> Relu), a 5-D warp (GridSample over a volume ->
Conv3d). ``--corpus`` adds the real exported models of tests/models at their saved input shapes.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench import _time_interleaved, child_json, geomean, ms, ratio  # noqa: E402  (same directory: one timing loop, one table)

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "models"


def _conv(helper, numpy_helper, rng, name, x, y, cin, cout, k=3, dims=2):
    w = numpy_helper.from_array((rng.standard_normal((cout, cin) + (k,) * dims) * 0.1).astype(np.float32),
                                f"{name}_w")
    node = helper.make_node("Conv", [x, f"{name}_w"], [y], name=name, pads=[k // 2] * (2 * dims))
    return node, w


def models():
    """(name, ONNX model, feeds)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    F = TensorProto.FLOAT

    def make(nodes, inits, inputs, dynamic=False):
        """``dynamic``: H and W declared as symbols (the run-time forms), fed at the shapes given."""
        declared = [(n, s[:2] + [f"{n}{k}" for k in range(2, len(s))] if dynamic else s) for n, s in inputs]
        g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(n, F, s) for n, s in declared],
                              [helper.make_tensor_value_info("y", F, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
        feeds = {n: (rng.uniform(-1, 1, s) if n == "grid" else rng.standard_normal(s)).astype(np.float32)
                 for n, s in inputs}
        return m, feeds

    def const(name, values, dtype):
        return numpy_helper.from_array(np.asarray(values, dtype), name)

    c1, w1 = _conv(helper, numpy_helper, rng, "c1", "x", "a", 64, 64)
    c2, w2 = _conv(helper, numpy_helper, rng, "c2", "cat", "y", 128, 64, k=1)
    yolo = [c1, helper.make_node("Resize", ["a", "", "s2"], ["up"], name="up", mode="nearest"),
            helper.make_node("Concat", ["up", "skip"], ["cat"], axis=1), c2]
    yield ("YOLO-style neck: nearest x2 1x64x40x40", *make(
        yolo, [w1, w2, const("s2", [1, 1, 2, 2], np.float32)], [("x", [1, 64, 40, 40]), ("skip", [1, 64, 80, 80])]))

    c1, w1 = _conv(helper, numpy_helper, rng, "c1", "x", "a", 32, 19, k=1)
    c2, w2 = _conv(helper, numpy_helper, rng, "c2", "up", "y", 19, 19)
    seg = [c1, helper.make_node("Resize", ["a", "", "s4"], ["up"], name="up", mode="linear",
                                coordinate_transformation_mode="half_pixel"), c2]
    yield ("segmentation head: bilinear x4 1x19x64x64", *make(
        seg, [w1, w2, const("s4", [1, 1, 4, 4], np.float32)], [("x", [1, 32, 64, 64])]))

    c1, w1 = _conv(helper, numpy_helper, rng, "c1", "small", "y", 3, 16)
    pre = [helper.make_node("Resize", ["x", "", "", "sz"], ["small"], name="aa", mode="linear", antialias=1), c1]
    yield ("antialias preprocessing 600x800 -> 300x400", *make(
        pre, [w1, const("sz", [1, 3, 300, 400], np.int64)], [("x", [1, 3, 600, 800])]))

    c1, w1 = _conv(helper, numpy_helper, rng, "off", "x", "o", 32, 18)
    c2, w2 = _conv(helper, numpy_helper, rng, "msk", "x", "mr", 32, 9)
    wd = const("wd", rng.standard_normal((32, 32, 3, 3)) * 0.05, np.float32)
    dcn = [c1, c2, helper.make_node("Sigmoid", ["mr"], ["m"]),
           helper.make_node("DeformConv", ["x", "wd", "o", "", "m"], ["d"], name="dcn", pads=[1, 1, 1, 1]),
           helper.make_node("Relu", ["d"], ["y"])]
    yield ("DCN block 1x32x48x40 3x3 + mask", *make(dcn, [w1, w2, wd], [("x", [1, 32, 48, 40])]))

    c1, w1 = _conv(helper, numpy_helper, rng, "c3", "w", "y", 4, 8, dims=3)
    warp = [helper.make_node("GridSample", ["x", "grid"], ["w"], name="warp", padding_mode="border"), c1]
    yield ("5-D warp 1x4x24x28x20 -> Conv3d", *make(
        warp, [w1], [("x", [1, 4, 24, 28, 20]), ("grid", [1, 24, 28, 20, 3])]))


    # The run-time forms alone (rung 3 on shapes known only at run time): sizes from the input's own shape.
    def from_shape(op, factor, resize):
        return [helper.make_node("Shape", ["x"], ["sx"]), helper.make_node(op, ["sx", "f"], ["sz"]),
                helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="r", **resize)], [const("f", factor, np.int64)]

    nodes, inits = from_shape("Mul", [1, 1, 2, 2], dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                                                        nearest_mode="floor"))
    yield ("run-time nearest sizes x2 1x32x240x320", *make(nodes, inits, [("x", [1, 32, 240, 320])], True))
    scale = [helper.make_node("Resize", ["x", "", "s"], ["y"], name="r", mode="nearest")]
    yield ("run-time nearest scale 0.6 1x32x240x320", *make(
        scale, [const("s", [1, 1, 0.6, 0.6], np.float32)], [("x", [1, 32, 240, 320])], True))
    for mode in ("linear", "cubic"):
        nodes, inits = from_shape("Div", [1, 1, 2, 2], dict(mode=mode, antialias=1))
        yield (f"run-time {mode} AA 1x3x480x640 -> 240x320", *make(nodes, inits, [("x", [1, 3, 480, 640])], True))


def corpus(only: str = ""):
    """The real exported models of tests/models with their saved inputs (names containing ``only``)."""
    import onnx

    for d in sorted(p for p in CORPUS.iterdir() if (p / "model.onnx").is_file()):
        if only not in f"corpus: {d.name}" or not (d / "inputs.npz").is_file():
            continue
        yield f"corpus: {d.name}", onnx.load(str(d / "model.onnx")), dict(np.load(d / "inputs.npz"))


def converted_twice(path: str, allow_conditional: bool = False, before: str | None = None) -> dict:
    """{"ours": the default's (model, records), "fastest": --prefer fastest's, or the default's with the rates of
    the table ``before``}."""
    from resample_bridge.lowering.openvino import convert, cost

    with cost.using(cost.table_file(before)) if before else contextlib.nullcontext():
        second = convert(path, prefer="builtin" if before else "fastest", allow_conditional=allow_conditional)
    return {"ours": convert(path, prefer="builtin", allow_conditional=allow_conditional), "fastest": second}


def measure(name: str, model, feeds, repeats: int, order, allow_conditional: bool = False, hold: bool = False,
            before: str | None = None, hint: str = "f32") -> tuple:
    """(name, the default's (builtin) rungs, --prefer fastest's rungs (``before``: the default's with that
    table), OV exact?, ms default, fastest, importer, onnxruntime)."""
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering import compiled
    from resample_bridge.lowering.openvino import conv_rewrite
    from resample_bridge.tools.check_openvino import check_openvino

    core = ov.Core()
    so = ort.SessionOptions()
    # Interleaved runs: onnxruntime's workers would spin on after each run and take the cores the next one needs.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 4
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(model, path)
        with conv_rewrite.forcing("builtin") if hold else contextlib.nullcontext():
            converted = converted_twice(path, allow_conditional, before)
        if any(r.rung == 4 for _, recs in converted.values() for r in recs):
            core.add_extension(compiled.openvino_extension())
        try:
            imported = ov.convert_model(path)
            verdicts = {r["openvino"]["verdict"] for r in check_openvino(path)}
            exact = verdicts == {"exact"}
        except Exception:  # noqa: BLE001 -- the importer refuses the model
            imported, exact = None, False
        try:
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001
            sess = None
        # Compiled last, back to back, after every conversion and check has run and freed its memory, in a
        # seeded random order: on models of tens of microseconds the compile order alone shows (+-5%).
        todo = {key: ovm for key, (ovm, _) in converted.items()}
        if imported is not None:
            todo["imp"] = imported
        keys = sorted(todo)
        cfg = {"INFERENCE_PRECISION_HINT": hint}
        built = {keys[i]: core.compile_model(todo[keys[i]], "CPU", cfg) for i in order.permutation(len(keys))}
        rungs = {key: _choices(recs) for key, (_, recs) in converted.items()}
        imp = built.get("imp")
        ours, fastest = built["ours"], built["fastest"]
        times = _time_interleaved([lambda: ours(feeds), lambda: fastest(feeds),
                                   (lambda: imp(feeds)) if imp else None,
                                   (lambda: sess.run(None, feeds)) if sess else None], repeats,
                                  seed=int(order.integers(1 << 31)))
    return (name, rungs["ours"], rungs["fastest"], "yes" if exact else ("refused" if imp is None else "no"),
            _ops_beyond(ours, imp), *times)


def _ops_beyond(ours, imp):
    """How many more ops the default's compiled model runs than the importer's (constants aside), or None where
    the importer refused; 0 where both run the same op types the same number of times, whose ratio is then the
    table's noise."""
    if imp is None:
        return None

    def kinds(compiled):
        return collections.Counter(str(op.get_rt_info()["layerType"].astype(str))
                                   for op in compiled.get_runtime_model().get_ops())
    a, b = kinds(ours), kinds(imp)
    a.pop("Const", None), b.pop("Const", None)
    return 0 if a == b else sum(a.values()) - sum(b.values()) or "~"


def _choices(records) -> list:
    """Each node's rung, with rung 2's in-graph form where it took one ("2conv", "2matmul")."""
    return [f"{r.rung}{r.proof.get('form', '')}" if r.rung == 2 else r.rung for r in records]


def changed(model, allow_conditional: bool, before: str) -> bool:
    """Whether the default takes other rungs or forms with the table ``before`` than with its own."""
    import onnx

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(model, path)
        got = converted_twice(path, allow_conditional, before)
    return _choices(got["ours"][1]) != _choices(got["fastest"][1])


def measure_apart(name: str, repeats: int, seed: int, rounds: int, options: tuple = ()) -> tuple:
    """``measure`` in ``rounds`` processes of its own, each column the fastest round's median. One long process
    timed the same model 0.6-3x apart depending on the models measured before it (a 1.3 ms model took 7.2 ms 80
    models in); a fresh process still varies 1.1-3.4 ms from one to the next on this shared 2-core machine, all
    of its models alike or not (measured), so the best of a few processes is what each conversion can do."""
    best = None
    for r in range(rounds):
        row = child_json(__file__, ["--one", name, "--repeats", str(repeats), "--seed", str(seed * rounds + r),
                                    "--corpus", *options], f"bench_models: {name}")
        best = row if best is None else best[:5] + [min((t for t in (a, b) if t is not None), default=None)
                                                    for a, b in zip(best[5:], row[5:])]
    return tuple(best)


def main(argv=None) -> int:
    import onnxruntime as ort
    import openvino as ov

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--only", default="")
    ap.add_argument("--corpus", action="store_true", help="also the real exported models of tests/models")
    ap.add_argument("--rounds", type=int, default=2, help="processes per model; each column takes the fastest")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a child: this model's row as JSON
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--allow-conditional", action="store_true", help="forms exact under stated conditions too")
    ap.add_argument("--hold-forms", action="store_true", help="rung 2's in-graph forms held back (before/after)")
    ap.add_argument("--before", help="the second column: the default with this cost table's rates")
    ap.add_argument("--changed-only", action="store_true", help="with --before: the models whose choices differ")
    ap.add_argument("--hint", default="f32", choices=("f32", "bf16", "f16"), help="OpenVINO's inference precision")
    args = ap.parse_args(argv)
    def cases(only):
        return [c for c in models() if only in c[0]] + (list(corpus(only)) if args.corpus else [])

    if args.one:
        (case,) = [c for c in cases(args.one) if c[0] == args.one]
        print(json.dumps(measure(*case, args.repeats, np.random.default_rng(args.seed), args.allow_conditional,
                                 args.hold_forms, args.before, args.hint)))
        return 0
    names = [name for name, model, _ in cases(args.only)
             if not (args.before and args.changed_only) or changed(model, args.allow_conditional, args.before)]
    options = ("--allow-conditional",) * args.allow_conditional + ("--hold-forms",) * args.hold_forms + \
        (("--before", args.before) if args.before else ()) + ("--hint", args.hint)
    rows = [measure_apart(name, args.repeats, seed, args.rounds, options) for seed, name in enumerate(names)]
    print(f"whole models: OpenVINO {ov.__version__} CPU {args.hint} hint ({os.cpu_count()} cores), onnxruntime "
          f"{ort.__version__}; median of {args.repeats} interleaved runs, the fastest of {args.rounds} processes per "
          f"model, ms")
    head = (f"{'model':<44} {'rungs':>8} {'default':>7} {'fastest':>7} {'OV imp.':>7} {'OV exact?':>9} {'ORT':>7} "
            f"{'dflt/OV':>7} {'fast/OV':>7} {'dflt/ORT':>8} {'+ops':>5}")
    print(head)
    print("-" * len(head))
    vs_ov, dflt_ov, same_graph = [], [], []
    for name, rungs, frungs, exact, beyond, t_ours, t_fast, t_ov, t_ort in rows:
        tag = ",".join(sorted(set(map(str, rungs)))) + ("" if frungs == rungs else "/" + ",".join(
            sorted(set(map(str, frungs)))))
        if exact == "yes" and t_ov:
            vs_ov.append(t_ours / t_ov)
            dflt_ov.append(t_fast / t_ov)
            same_graph.append(beyond == 0)
        print(f"{name[:44]:<44} {tag:>8} {ms(t_ours):>7} {ms(t_fast):>7} {ms(t_ov):>7} {exact:>9} {ms(t_ort):>7} "
              f"{ratio(t_ours, t_ov):>7} {ratio(t_fast, t_ov):>7} {ratio(t_ours, t_ort):>8} "
              f"{'-' if beyond is None else beyond:>5}")
    if vs_ov:
        print(f"default (portable) / OpenVINO importer where it is exact: geomean {geomean(vs_ov):.3f}, "
              f"max {max(vs_ov):.3f}; --prefer fastest: geomean {geomean(dflt_ov):.3f}, max {max(dflt_ov):.3f} "
              f"({len(vs_ov)} models)")
        for same, label in ((True, "runs the importer's ops (+ops 0: the ratio is noise)"), (False, "runs others")):
            part = [r for r, s in zip(vs_ov, same_graph) if s == same]
            if part:
                print(f"  where the default {label}: geomean {geomean(part):.3f}, max {max(part):.3f} "
                      f"({len(part)} models)")
    # Where both ladders took the same rungs they wrote the same model: their ratio is the table's own noise.
    twins = [t_ours / t_fast for _, rungs, frungs, _, _, t_ours, t_fast, _, _ in rows if rungs == frungs and t_fast]
    if twins:
        print(f"resolution: default / fastest where both wrote the same model: geomean {geomean(twins):.3f}, "
              f"range {min(twins):.2f}-{max(twins):.2f} ({len(twins)} models)")
    print(f"rungs: the default's / {'the default with ' + args.before if args.before else '--prefer fastest'}'s "
          f"where they differ; 'fastest' columns: the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
