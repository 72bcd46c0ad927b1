"""float16 model contexts, as ``model.half()`` exports them: a Conv (its activations unit-scale or small, some
subnormal in float16), a resampling node whose parameters the graph computes (Resize sizes from Shape, a
GridSample grid from a Conv and a Tanh) or static scales, then a Conv. OpenVINO's CPU runs such a model in
float32 and onnxruntime runs a float16 node next to one without a float16 kernel in float32 too, from values the
model's tensors hold rounded; the campaign converts each with the default and runs ``verify`` at f32 and at bf16:

    python -m resample_bridge.tools.dev.fuzz_half --seed 0 --cases 30

A case is bad where the conversion is refused or crashes or writes the library (every node here has an in-graph
form), or verify fails a resampling node, or an output that
OpenVINO's own importer computes as onnxruntime does (an output the importer misses as far is the network's own
float16 / bf16 rounding, which verify notes). Exit status 1 if any case is bad. (Found, before the fix: 10 of 30
seeds refused or failed; a float16 nearest GridSample on a computed grid may be refused, saying why.)
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

F16 = 10  # onnx.TensorProto.FLOAT16


def _conv(name, x, cin, cout, rng, std=0.4):
    from onnx import helper

    w = helper.make_tensor(f"{name}_w", F16, [cout, cin, 3, 3],
                           rng.normal(0, std, (cout, cin, 3, 3)).astype(np.float16).tobytes(), raw=True)
    return [helper.make_node("Conv", [x, w.name], [name], pads=[1] * 4)], [w]


def _int64(name, values):
    from onnx import TensorProto, helper
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def _resize(r: random.Random, by_sizes: bool):
    """(nodes, initializers, label) of a Resize of "ar" into "y0": sizes = floor(f * Shape[2:]) at run time, or
    static scales."""
    from onnx import TensorProto, helper

    mode = r.choice(["nearest", "linear", "cubic"])
    attrs = dict(mode=mode, coordinate_transformation_mode=r.choice(
        ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"]))
    if mode == "nearest":
        attrs["nearest_mode"] = r.choice(["floor", "round_prefer_floor", "round_prefer_ceil", "ceil"])
    elif r.random() < 0.3:
        attrs["antialias"] = 1
    f = r.choice([0.5, 0.6, 0.7, 1.5, 2.0])
    if not by_sizes:
        scales = helper.make_tensor("sc", TensorProto.FLOAT, [4], [1, 1, f, f])
        return [helper.make_node("Resize", ["ar", "", "sc"], ["y0"], name="/R", **attrs)], [scales], \
            f"Resize scales {f} {attrs}"
    inits = [helper.make_tensor("k", TensorProto.FLOAT, [2], [f, f]), _int64("zero", [0]), _int64("two", [2]),
             _int64("four", [4])]
    nodes = [helper.make_node("Shape", ["ar"], ["sh"]), helper.make_node("Slice", ["sh", "zero", "two"], ["nc"]),
             helper.make_node("Slice", ["sh", "two", "four"], ["hw"]),
             helper.make_node("Cast", ["hw"], ["hwf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["hwf", "k"], ["hwk"]), helper.make_node("Floor", ["hwk"], ["hwfl"]),
             helper.make_node("Cast", ["hwfl"], ["hwi"], to=TensorProto.INT64),
             helper.make_node("Concat", ["nc", "hwi"], ["sizes"], axis=0),
             helper.make_node("Resize", ["ar", "", "", "sizes"], ["y0"], name="/R", **attrs)]
    return nodes, inits, f"Resize sizes floor({f} x) {attrs}"


def _grid_sample(r: random.Random, rng):
    """(nodes, initializers, label) of a GridSample of "ar" into "y0" on a grid Tanh(Conv(ar)) * k."""
    from onnx import helper

    mode, padding, ac = r.choice(["nearest", "linear", "cubic"]), r.choice(["zeros", "border", "reflection"]), \
        r.randint(0, 1)
    nodes, inits = _conv("o", "ar", 4, 2, rng)
    inits.append(helper.make_tensor("k", F16, [], np.array(r.choice([1.0, 1.2]), np.float16).tobytes(), raw=True))
    nodes += [helper.make_node("Tanh", ["o"], ["t"]), helper.make_node("Transpose", ["t"], ["tg"], perm=[0, 2, 3, 1]),
              helper.make_node("Mul", ["tg", "k"], ["grid"]),
              helper.make_node("GridSample", ["ar", "grid"], ["y0"], mode=mode, padding_mode=padding,
                               align_corners=ac, name="/G")]
    return nodes, inits, f"GridSample {mode} {padding} align_corners={ac}"


def make_case(seed: int):
    """(model, label, feed shape) of one seeded context."""
    from onnx import helper

    r, rng = random.Random(seed), np.random.default_rng(seed)
    nodes, inits = _conv("a", "x", 3, 4, rng, std=r.choice([0.4, 4e-3]))
    nodes.append(helper.make_node("Relu", ["a"], ["ar"]))
    kind = r.choice(["sizes", "scales", "grid"])
    more = _grid_sample(r, rng) if kind == "grid" else _resize(r, kind == "sizes")
    nodes, inits = nodes + more[0], inits + more[1]
    tail, w = _conv("y", "y0", 4, 3, rng)
    shape, dynamic = (1, 3) + r.choice([(16, 24), (20, 20), (31, 17)]), r.random() < 0.5
    graph = helper.make_graph(nodes + tail, "half", [helper.make_tensor_value_info(
        "x", F16, [1, 3, "h", "w"] if dynamic else list(shape))], [helper.make_tensor_value_info("y", F16, None)],
        inits + w)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    return model, more[2] + (", dynamic H/W" if dynamic else ""), shape


def run_case(seed: int, folder: Path) -> tuple[bool, str]:
    """(bad, one line) for one seed."""
    import onnx
    import openvino as ov

    from ...lowering.openvino.target import convert
    from ...semantics.errors import BridgeError
    from ..verify_openvino import verify_openvino

    model, label, shape = make_case(seed)
    src, xml = folder / f"{seed}.onnx", folder / f"{seed}.xml"
    onnx.save(model, str(src))
    try:
        written, records = convert(str(src), prefer="builtin")
    except BridgeError as e:
        why = e.brief or e.message
        return "float16 model run in float32" not in why, f"refused: {why}"
    except Exception as e:  # noqa: BLE001 -- a crash is what the campaign looks for
        return True, f"CRASH {type(e).__name__}: {str(e)[:200]}"
    library = [r for r in records if r.rung == 4]
    if library:  # the default writes one only where no in-graph form is exact: these nodes all have one
        return True, f"wrote the library: {library[0].summary()[:200]}"
    ov.save_model(written, str(xml))
    feeds = {"x": np.random.default_rng(seed).uniform(0, 1, shape).astype(np.float16)}
    said, bad = [], False
    for precision in ("f32", "bf16"):
        rep = verify_openvino(str(src), converted=str(xml), precision=precision, inputs=feeds)
        nodes = all(n.get("ok") is not False for n in rep["nodes"])
        outs = ["ok" if o["ok"] else "as the importer" if "importer" in o.get("note", "") else "FAIL"
                for o in rep["outputs"]]
        bad |= not nodes or "FAIL" in outs
        said.append(f"{precision}: nodes {'ok' if nodes else 'FAIL'}, output {', '.join(outs)}")
    return bad, "; ".join(said)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=30)
    args = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seed, args.seed + args.cases):
            wrong, line = run_case(seed, Path(tmp))
            bad += wrong
            print(f"{'!!' if wrong else '  '} {seed:6d} {make_case(seed)[1]}: {line}", flush=True)
    print(f"{args.cases} cases, {bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
