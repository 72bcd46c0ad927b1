"""`make bench`: the GridSample decomposition (rung 3, standard ONNX ops) against our extension op (rung 4) and the
built-in ops, on a DETR-sized deformable attention: 8 heads of 32 channels, 300 queries, 4 levels (100x134,
50x67, 25x34, 13x17: an 800x1066 image at strides 8-64), 4 points; batch 1 and 8. Per level one GridSample
(bilinear, zeros, align_corners=0) of value [N*8, 32, H, W] at grid [N*8, 300, 4, 2], as
``multi_scale_deformable_attn_pytorch`` calls it; the four levels' times are summed.

    python tools/dev/bench_decompose.py [--repeats 15] [--batch 1,8]

Columns (median of interleaved runs, ms): the decomposition on OpenVINO CPU (f32 hint; its ``gather="elements"``
form, the OpenVINO rung's) and on onnxruntime (``rows``, the ONNX and TensorRT targets' form), our
extension op on OpenVINO, OpenVINO's GridSample-9 (built in, 4-D), onnxruntime's GridSample. Peak intermediate
memory: the largest intermediate tensor of the OpenVINO form and the peak of the intermediates live at once (sizes
measured on onnxruntime, liveness in the graph's order; reshapes are views), against the value and output bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

from bench import _time_interleaved, ms, ratio  # noqa: E402  (same directory: one timing loop, one table)

HEADS, CH, QUERIES, POINTS = 8, 32, 300, 4
LEVELS = ((100, 134), (50, 67), (25, 34), (13, 17))


def _source(shape, grid_shape):
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="zeros", align_corners=0)
    g = helper.make_graph([node], "level", [helper.make_tensor_value_info("x", f, shape),
                                            helper.make_tensor_value_info("grid", f, grid_shape)],
                          [helper.make_tensor_value_info("y", f, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


def intermediate_bytes(model, feeds: dict) -> tuple[int, int]:
    """(largest, peak live) bytes of the intermediate tensors of ``model`` on ``feeds``, measured: every node's
    output made a graph output and run on onnxruntime; a tensor is live from the node that makes it to its last
    reader, in the graph's order (reshapes are views of their input, not counted)."""
    import onnx
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    finals = {y.name for y in m.graph.output}
    names = [o for n in m.graph.node for o in n.output if o not in finals]
    m.graph.output.extend(onnx.ValueInfoProto(name=o) for o in names)
    size = dict(zip(names, (np.asarray(o).nbytes for o in
                            ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                            .run(names, feeds))))
    views = {n.output[0] for n in model.graph.node if n.op_type in ("Reshape", "Unsqueeze", "Squeeze")}
    last = {t: i for i, n in enumerate(model.graph.node) for t in n.input}
    live, peak = {}, 0
    for i, n in enumerate(model.graph.node):
        live.update({o: size[o] for o in n.output if o in size and o not in views})
        peak = max(peak, sum(live.values()))
        live = {t: b for t, b in live.items() if last.get(t, -1) > i}
    return max(b for t, b in size.items() if t not in views), peak


def main(argv=None) -> int:
    import onnx
    import onnxruntime as ort
    import openvino as ov

    from resample_bridge.lowering import openvino as low
    from resample_bridge.lowering.onnx.gridsample_decompose import decomposition_model
    from resample_bridge.lowering.openvino import F32
    from resample_bridge.translate.onnx import parse_model

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--batch", default="1,8")
    args = ap.parse_args(argv)
    core = ov.Core()
    so = ort.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.intra_op_num_threads = os.cpu_count() or 1
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for batch in (int(b) for b in args.batch.split(",")):
            totals, mem = np.zeros(5), [0, 0, 0, 0]
            for H, W in LEVELS:
                shape, gshape = [batch * HEADS, CH, H, W], [batch * HEADS, QUERIES, POINTS, 2]
                src = _source(shape, gshape)
                path = os.path.join(d, "m.onnx")
                onnx.save(src, path)
                ((_, ir),) = parse_model(src)
                dec, dec_el = decomposition_model(ir), decomposition_model(ir, gather="elements")
                feeds = {"x": rng.standard_normal(shape).astype(np.float32),
                         "grid": rng.uniform(-1.1, 1.1, gshape).astype(np.float32)}
                dec_ov = core.compile_model(core.read_model(dec_el.SerializeToString(), b""), "CPU", F32)
                dec_ort = ort.InferenceSession(dec.SerializeToString(), so, providers=["CPUExecutionProvider"])
                ext = core.compile_model(low.convert(path, fallback="extension")[0], "CPU", F32)
                builtin_ov = core.compile_model(ov.convert_model(path), "CPU", F32)
                builtin_ort = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                want = builtin_ort.run(None, feeds)[0]
                assert np.allclose(dec_ort.run(None, feeds)[0], want, atol=1e-5)
                assert np.allclose(dec_ov(feeds)[0], want, atol=1e-5)
                fns = [lambda: dec_ov(feeds), lambda: dec_ort.run(None, feeds), lambda: ext(feeds),
                       lambda: builtin_ov(feeds), lambda: builtin_ort.run(None, feeds)]
                totals += _time_interleaved(fns, args.repeats)
                big, total = intermediate_bytes(dec_el, feeds)
                mem = [max(mem[0], big), max(mem[1], total), mem[2] + feeds["x"].nbytes, mem[3] + want.nbytes]
            rows.append((batch, totals, mem))
    print(f"OpenVINO {ov.__version__} CPU f32 hint, onnxruntime {ort.__version__} ({os.cpu_count()} cores); "
          f"DETR deformable attention, {HEADS} heads x {CH} ch, {QUERIES} queries, {len(LEVELS)} levels, {POINTS} "
          f"points; sum over levels of the median of {args.repeats} interleaved runs, ms")
    head = (f"{'batch':>5} {'dec OV':>8} {'dec ORT':>8} {'ext OV':>8} {'GS-9 OV':>8} {'GS ORT':>8} "
            f"{'dec/ext OV':>10} {'dec/GS ORT':>10} {'largest MB':>10} {'peak MB':>8} {'value MB':>8} {'out MB':>7}")
    print(head)
    print("-" * len(head))
    for batch, t, mem in rows:
        print(f"{batch:>5} {ms(t[0]):>8} {ms(t[1]):>8} {ms(t[2]):>8} {ms(t[3]):>8} {ms(t[4]):>8} "
              f"{ratio(t[0], t[2]):>10} {ratio(t[1], t[4]):>10} {mem[0] / 2**20:>10.1f} {mem[1] / 2**20:>8.1f} "
              f"{mem[2] / 2**20:>8.1f} {mem[3] / 2**20:>7.1f}")
    print("largest / peak MB: the decomposition's largest intermediate and its peak of live intermediates (the "
          "largest level's; levels run one after another); value / out MB: the four levels' inputs and outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
