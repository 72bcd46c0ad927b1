"""`make bench`: one table. Per case, single-node models on OpenVINO CPU (f32 hint): our extension op (rung 4,
the shared C++ kernels), the default conversion (the cost model's choice) with its rung, OpenVINO's own importer (``ov.convert_model``), onnxruntime, and a memory bound (a numpy copy of
the output's bytes); medians of interleaved runs, ms, and ratios.

    python tools/dev/bench.py [--repeats 30] [--only SUBSTRING] [--isa v3,v4]

"OV exact?" is ``check``'s verdict on OpenVINO's importer; "peer" is the fastest exact peer (the importer where
exact, onnxruntime). One column group per x86 level of our kernels (``--isa v3,v4``, the default where the CPU
runs both: RB_ISA per child process); below this CPU's best level OpenVINO's own kernels are held to that level
too where oneDNN's switch reaches them (``PEER_ISA``), as on a CPU of that level. Goals (issue 21): ours/peer
<= 1.0 on every case at both levels; nearest upsampling within 2x of the copy (>= 50% of copy bandwidth).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def _time_interleaved(fns: list, repeats: int, min_sample_ms: float = 2.0, seed: int = 0) -> list:
    """Median ms per call of each callable (None stays None), interleaved so that other load falls on all alike;
    each round in a fresh (seeded) random order, since the call after another framework's pays for waking its own
    threads (15-50% on models of tens of microseconds, measured). Rotating one fixed order is not enough: it keeps
    every callable's predecessor (whole models measured 1.2-2.4x against their identical twin that way). A sample
    is k calls back to back, k chosen so that it lasts about ``min_sample_ms``: one call of a 30 us model is at
    the mercy of one scheduler tick (two compiles of the same model came out 0.6-3.9x apart on 10 single calls).
    ``seed``: the orders' (one per table row: a single sequence of orders for every row favoured one position in
    every row alike, so the rows' geomean kept that bias instead of averaging it out)."""
    live = [f for f in fns if f is not None]
    rng = np.random.default_rng(seed)
    for f in live:
        f()  # warm-up (first-run allocations, lazy compilation)
    # k from the median of 3 calls each, in random orders, once every callable has run: calibrated right after its
    # own warm-up, the first callable of the list (the process coldest) took fewer calls per sample, so paid its
    # wake-up more often per call (two compiles of one model timed 1.07-1.08x apart, first / second, measured)
    single = {id(f): [] for f in live}
    for _ in range(3):
        for i in rng.permutation(len(live)):
            t0 = time.perf_counter()
            live[i]()
            single[id(live[i])].append(time.perf_counter() - t0)
    calls = {key: max(1, round(min_sample_ms / 1e3 / max(statistics.median(v), 1e-6))) for key, v in single.items()}
    ts = {id(f): [] for f in live}
    for _ in range(repeats):
        for i in rng.permutation(len(live)):
            f = live[i]
            k = calls[id(f)]
            t0 = time.perf_counter()
            for _ in range(k):
                f()
            ts[id(f)].append((time.perf_counter() - t0) / k)
    return [statistics.median(ts[id(f)]) * 1e3 if f is not None else None for f in fns]


def ms(v) -> str:
    return f"{v:.2f}" if v is not None else "-"


def ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else "-"


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def cases():
    """(name, ONNX model, feeds): the issue's rows, then shapes of our own (not tuned to)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    f = TensorProto.FLOAT

    def model(node, inputs, inits=()):
        g = helper.make_graph([node], "b", [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", f, None)],
                              [numpy_helper.from_array(np.asarray(v, dtype=dt), k) for k, v, dt in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
        feeds = {}
        for n, s in inputs:
            if n == "grid":
                feeds[n] = rng.uniform(-1.1, 1.1, s)
            elif n == "off":
                feeds[n] = rng.standard_normal(s) * 2
            elif n == "mask":
                feeds[n] = rng.uniform(0, 1, s)
            else:
                feeds[n] = rng.standard_normal(s)
        return m, {k: v.astype(np.float32) for k, v in feeds.items()}

    def resize(name, shape, mode="linear", scales=None, sizes=None, **attrs):
        inits = [("s", scales, np.float32)] if scales else [("sz", sizes, np.int64)]
        ins = ["x", "", "s"] if scales else ["x", "", "", "sz"]
        return (name, *model(helper.make_node("Resize", ins, ["y"], mode=mode, **attrs), [("x", shape)], inits))

    def run_time_scales(name, shape, mode, scales, **attrs):
        """A Resize whose scales are a graph input (fed ``scales``): the run-time scale forms' rows."""
        m, feeds = model(helper.make_node("Resize", ["x", "", "s"], ["y"], mode=mode, **attrs),
                         [("x", shape), ("s", [len(shape)])])
        return name, m, {**feeds, "s": np.array(scales, np.float32)}

    def gridsample(name, shape, out, **attrs):
        grid = [shape[0], *out, len(out)]
        return (name, *model(helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs),
                             [("x", shape), ("grid", grid)]))

    def deformconv(name, shape, oc, k=3, group=1):
        n, c, h, w = shape
        return (name, *model(helper.make_node("DeformConv", ["x", "w", "off", "", "mask"], ["y"],
                                              pads=[k // 2] * 4, group=group),
                             [("x", shape), ("off", [n, 2 * k * k, h, w]), ("mask", [n, k * k, h, w])],
                             [("w", rng.standard_normal((oc, c // group, k, k)) / np.sqrt(c * k * k), np.float32)]))

    yield resize("linear x2 1x16x160x200", [1, 16, 160, 200], scales=[1, 1, 2, 2])
    yield resize("nearest x2 1x32x200x152", [1, 32, 200, 152], "nearest", scales=[1, 1, 2, 2])
    yield resize("cubic 1x8x120x96->180x144", [1, 8, 120, 96], "cubic", sizes=[1, 8, 180, 144])
    yield resize("linear AA 1x3x600x800->300x400", [1, 3, 600, 800], sizes=[1, 3, 300, 400], antialias=1)
    yield gridsample("GridSample 4-D 1x16x96x128 border", [1, 16, 96, 128], [96, 128], padding_mode="border")
    yield gridsample("GridSample 5-D 1x4x24x28x20", [1, 4, 24, 28, 20], [24, 28, 20])
    yield deformconv("DeformConv 1x32x48x40 3x3 + mask", [1, 32, 48, 40], 32)
    # Our own shapes.
    yield resize("linear x2 align_corners 2x24x72x88", [2, 24, 72, 88], scales=[1, 1, 2, 2],
                 coordinate_transformation_mode="align_corners")
    yield resize("nearest x4 1x8x64x96 (floor)", [1, 8, 64, 96], "nearest", scales=[1, 1, 4, 4],
                 nearest_mode="floor", coordinate_transformation_mode="asymmetric")
    yield resize("linear x0.5 1x24x160x160", [1, 24, 160, 160], scales=[1, 1, 0.5, 0.5])
    yield gridsample("GridSample 4-D bicubic 1x8x64x80", [1, 8, 64, 80], [48, 56], mode="cubic")
    yield deformconv("DeformConv 1x48x28x36 3x3 + mask", [1, 48, 28, 36], 64)
    yield resize("linear 5-D x2 1x8x16x32x32", [1, 8, 16, 32, 32], scales=[1, 1, 2, 2, 2])
    yield deformconv("DeformConv 1x64x20x20 group 4", [1, 64, 20, 20], 64, group=4)
    # Detection backbones' DCN layers: 256 and 512 channels, where the GEMM is most of the time; 12x12 has three
    # tiles of points for two threads.
    yield deformconv("DeformConv 1x256x32x32 3x3 + mask", [1, 256, 32, 32], 256)
    yield deformconv("DeformConv 1x512x12x12 3x3 + mask", [1, 512, 12, 12], 512)
    # Scales fed at run time (F.interpolate's scale_factor, traced): no built-in op is exact for every value; the
    # default computes the lengths and indices / taps in the graph (rung 3), --prefer fastest takes the extension.
    yield run_time_scales("nearest x2 run-time scales 1x16x120x160", [1, 16, 120, 160], "nearest", [1, 1, 2, 2])
    yield run_time_scales("linear x0.5 run-time scales 1x16x120x160", [1, 16, 120, 160], "linear",
                          [1, 1, 0.5, 0.5])
    yield run_time_scales("linear AA x0.5 run-time scales 1x3x480x640", [1, 3, 480, 640], "linear",
                          [1, 1, 0.5, 0.5], antialias=1)
    # A static non-integer scale on H / W known only at run time (F.interpolate(scale_factor=1.5) exported with
    # dynamic axes): no tap table, Interpolate's scales mode adds 1e-6: the same window with the scale a constant.
    name, m, feeds = resize("linear x1.5 static scale, dynamic H/W 1x16x120x160", [1, 16, 120, 160],
                            scales=[1, 1, 1.5, 1.5])
    for d, symbol in zip(m.graph.input[0].type.tensor_type.shape.dim[2:], "hw"):
        d.dim_param = symbol
    yield name, m, feeds
    # uint8 images, as preprocessing graphs resize them: no built-in op rounds them exactly (check says so), and
    # onnxruntime truncates, so no peer is exact; the default against the importer's time.
    m, feeds = resize("", [1, 3, 480, 640], sizes=[1, 3, 224, 224])[1:]
    m.graph.input[0].type.tensor_type.elem_type = m.graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    yield "uint8 linear 1x3x480x640->224x224", m, {"x": rng.integers(0, 256, (1, 3, 480, 640)).astype(np.uint8)}
    # torchvision's Resize(antialias=True) of a uint8 image: onnxruntime's own fixed point (the spec convention's
    # reading), exact in the default's integer form; the importer is not exact.
    m, feeds = resize("", [1, 3, 480, 640], sizes=[1, 3, 224, 224], antialias=1, exclude_outside=1)[1:]
    m.graph.input[0].type.tensor_type.elem_type = m.graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    yield "uint8 linear AA 1x3x480x640->224x224", m, {"x": rng.integers(0, 256, (1, 3, 480, 640)).astype(np.uint8)}
    # A letterbox resize of an image of any size into a 320 x 320 box (keep_aspect_ratio_policy not_larger on
    # dynamic H / W): no built-in op; the default's keep-aspect window (rung 3), float and uint8.
    for dtype, label in ((TensorProto.FLOAT, "linear"), (TensorProto.UINT8, "uint8 linear")):
        m, feeds = resize("", [1, 3, 480, 640], sizes=[320, 320], axes=[2, 3],
                          keep_aspect_ratio_policy="not_larger")[1:]
        for d, symbol in zip(m.graph.input[0].type.tensor_type.shape.dim[2:], "hw"):
            d.dim_param = symbol
        m.graph.input[0].type.tensor_type.elem_type = m.graph.output[0].type.tensor_type.elem_type = dtype
        if dtype == TensorProto.UINT8:
            feeds = {"x": rng.integers(0, 256, (1, 3, 480, 640)).astype(np.uint8)}
        yield f"letterbox {label} 1x3x480x640 into 320x320, dynamic H/W", m, feeds


def run_shared(compiled, feeds):
    """One inference on a kept request, outputs left in OpenVINO's memory: ``compiled(feeds)`` also copies every
    output into a fresh numpy array, the Python binding's cost rather than the runtime's (onnxruntime hands its
    output over without a copy), which weighs most on the cases near copy speed."""
    req = compiled.create_infer_request()
    return lambda: req.infer(feeds, share_inputs=True, share_outputs=True)


def measure(repeats: int, only: str) -> list:
    """Per case (name, verdict, ours, OV importer, onnxruntime, copy, default conversion, its rungs): this process's
    kernels, at the level it
    was started with (RB_ISA)."""
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering import openvino as low
    from resample_bridge.lowering.openvino import F32
    from resample_bridge.tools.check_openvino import check_openvino

    core = ov.Core()
    rows = []
    so = ort.SessionOptions()
    # Interleaved runs: onnxruntime's workers would spin on after each run and take the cores the next one needs.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.intra_op_num_threads = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as d:
        for name, model, feeds in cases():
            if only not in name:
                continue
            path = os.path.join(d, "m.onnx")
            onnx.save(model, path)
            ours_model, _ = low.convert(path, fallback="extension")
            ours = core.compile_model(ours_model, "CPU", F32)
            m, recs = low.convert(path)  # the default conversion: what a user gets
            default = core.compile_model(m, "CPU", F32)
            rung = "".join(str(r.rung) for r in recs)
            try:
                imported = ov.convert_model(path)
                # Compiled twice: the twin's time against the first's is the table's own resolution.
                imp, twin = (core.compile_model(imported, "CPU", F32) for _ in range(2))
            except Exception:
                imp = twin = None  # OpenVINO's importer refuses the node
            try:
                verdict = check_openvino(path)[0]["openvino"]["verdict"] if imp else "refused"
            except Exception:
                verdict = "?"
            try:
                sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            except Exception:
                sess = None
            try:
                ort_exact = sess is not None and _exact(model, feeds, sess.run(None, feeds)[0])
            except Exception:
                sess, ort_exact = None, False  # builds, but fails at run time (uint8 cubic in 1.32)
            y = ours(feeds)[0]
            src = np.ones(y.size, dtype=np.float32)
            dst = np.empty_like(src)
            fns = [run_shared(ours, feeds), run_shared(imp, feeds) if imp else None,
                   (lambda: sess.run(None, feeds)) if sess else None, lambda: np.copyto(dst, src),
                   run_shared(default, feeds), run_shared(twin, feeds) if twin else None]
            *times, t_twin = _time_interleaved(fns, repeats)
            rows.append((name, verdict, *times, rung, t_twin, ort_exact))
    return rows


# OpenVINO's CPU plugin at a level below this CPU's (oneDNN's switch, which its JIT kernels ask): the peer an
# AVX2-only machine runs. Measured 2026-11 (OpenVINO 2026.4): GridSample then runs jit_avx2_f32; Interpolate
# keeps its AVX-512 kernel, so our v3 Resize is still compared with AVX-512 there. onnxruntime has no such switch.
PEER_ISA = {"v3": "AVX2", "base": "SSE41"}


def measure_level(level: str, repeats: int, only: str) -> list:
    """``measure`` in a fresh process whose kernels are built for ``level``: the extension registers its op
    names once per process, so each level needs its own. Below this CPU's best level, OpenVINO's own kernels are
    held to the same level (``PEER_ISA``) unless ONEDNN_MAX_CPU_ISA is set already."""
    args = ["--one-level", "--repeats", str(repeats), "--only", only]
    held = held_isa(level)
    env = dict(RB_ISA=level, **({"ONEDNN_MAX_CPU_ISA": held} if held else {}))
    return [tuple(r) for r in child_json(__file__, args, f"bench: the {level} run", **env)]


def held_isa(level: str) -> str | None:
    """The level OpenVINO's own kernels run at beside our ``level`` build: the user's ONEDNN_MAX_CPU_ISA, else
    ``PEER_ISA`` below this CPU's best level; None: its own dispatch."""
    from resample_bridge.lowering.compiled.isa import best_level, cpu_flags

    if os.environ.get("ONEDNN_MAX_CPU_ISA"):
        return os.environ["ONEDNN_MAX_CPU_ISA"]
    return PEER_ISA.get(level) if level != best_level(cpu_flags()) else None


def peer_isa(level: str) -> str:
    """How OpenVINO ran beside our ``level`` build, for the table's header."""
    held = held_isa(level)
    if not held:
        return "OpenVINO and onnxruntime at their own dispatch for this CPU"
    return (f"OpenVINO with ONEDNN_MAX_CPU_ISA={held} (its GridSample then runs that level, its Interpolate keeps "
            f"its own), onnxruntime at its own dispatch")


def child_json(script: str, args: list, what: str, **env):
    """Run ``script`` with ``args`` in a fresh Python process (``env`` added to this one's) and return the JSON
    value of its last line of output; one line naming ``what`` if the child fails (its error is above)."""
    done = subprocess.run([sys.executable, os.path.abspath(script), *args], env=dict(os.environ, **env),
                          stdout=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"{what} failed (exit status {done.returncode}; its error is above)")
    return json.loads(done.stdout.splitlines()[-1])


def _exact(model, feeds, got) -> bool:
    """Whether ``got`` (onnxruntime's output of the one-node ``model`` on ``feeds``) is the oracle's under the one
    policy: onnxruntime truncates integer linear / cubic results, for one."""
    from resample_bridge.semantics.compare import against_oracle
    from resample_bridge.tools.dev.fuzz_exec import oracle

    (want, ir, args), = oracle(model, feeds).values()
    return bool(against_oracle(ir, got, want, args).ok)


def peer_of(verdict, t_ov, t_ort, ort_exact=True):
    """The fastest exact peer: the importer where ``check`` finds it exact, onnxruntime where it computes the
    oracle's numbers; None where neither does."""
    exact = [t for t in (t_ov if verdict == "exact" else None, t_ort if ort_exact else None) if t is not None]
    return min(exact) if exact else None


def table(levels: list, by_level: dict, repeats: int) -> None:
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering.compiled.isa import DESCRIPTION, cpu_model

    print(f"{cpu_model()}, {os.cpu_count()} cores; OpenVINO {ov.__version__} CPU f32 hint, onnxruntime "
          f"{ort.__version__}; median of {repeats} interleaved runs, ms")
    for lv in levels:
        print(f"  [{lv}] our kernels built for {DESCRIPTION[lv]} (RB_ISA={lv}); {peer_isa(lv)}, timed in the "
              f"same process")
    cols = "".join(f" {'ours':>6} {'OV imp.':>7} {'ORT':>6} {'/peer':>5} {'/copy':>5} {'default':>9} {'/peer':>5} |"
                   for _ in levels)
    print(f"{'':<36} {'':>10}" + "".join(f" {f'[{lv}]':^50}|" for lv in levels))
    head = f"{'case':<36} {'OV exact?':>10}" + cols + f" {'copy':>5}"
    print(head)
    print("-" * len(head))
    ratios = {lv: [] for lv in levels}
    defaults = {lv: [] for lv in levels}
    twins = {lv: [] for lv in levels}
    for i, first in enumerate(by_level[levels[0]]):
        line = f"{first[0]:<36} {first[1][:10]:>10}"
        for lv in levels:
            _, verdict, t_ours, t_ov, t_ort, t_copy, t_default, rung, t_twin, ort_exact = by_level[lv][i]
            if t_twin:
                twins[lv].append(t_twin / t_ov)
            peer = peer_of(verdict, t_ov, t_ort, ort_exact)
            if peer:
                ratios[lv].append(t_ours / peer)
                defaults[lv].append(t_default / peer)
            line += (f" {ms(t_ours):>6} {ms(t_ov):>7} {ms(t_ort):>6} {ratio(t_ours, peer):>5} "
                     f"{ratio(t_ours, t_copy):>5} {ms(t_default) + ' r' + rung:>9} {ratio(t_default, peer):>5} |")
        print(line + f" {ms(first[5]):>5}")
    for lv in levels:
        if ratios[lv]:
            r = ratios[lv]
            print(f"[{lv}] ours / fastest exact peer: geomean {geomean(r):.2f}, median {statistics.median(r):.2f}, "
                  f"max {max(r):.2f}; the default conversion / peer: geomean {geomean(defaults[lv]):.2f}, "
                  f"max {max(defaults[lv]):.2f}")
    for lv in levels:
        if twins[lv]:
            print(f"[{lv}] resolution: the importer's model compiled twice, second / first: range "
                  f"{min(twins[lv]):.2f}-{max(twins[lv]):.2f}, geomean {geomean(twins[lv]):.2f}")
    print("ours = the extension (rung 4); default = the default conversion (the cost model's choice), r = its rung")
    print("peer = fastest exact peer (the importer where check finds it exact, onnxruntime where it computes the "
          "oracle's numbers; '-': neither); copy = numpy copy of the output's bytes (one thread); ours/copy <= 2 is "
          ">= 50% of copy bandwidth")


def main(argv=None) -> int:
    from resample_bridge.lowering.compiled.isa import LEVELS, best_level, cpu_flags

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    best = best_level(cpu_flags())
    default = [lv for lv in ("v3", "v4") if LEVELS.index(lv) <= LEVELS.index(best)] or [best]
    ap.add_argument("--isa", default=",".join(default),
                    help=f"x86 levels of our kernels, one column each (default here: {','.join(default)})")
    ap.add_argument("--one-level", action="store_true", help=argparse.SUPPRESS)  # a child: rows as JSON
    args = ap.parse_args(argv)
    if args.one_level:
        print(json.dumps(measure(args.repeats, args.only)))
        return 0
    levels = [lv.strip() for lv in args.isa.split(",") if lv.strip()]
    by_level = {lv: measure_level(lv, args.repeats, args.only) for lv in levels}
    table(levels, by_level, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
