"""``resample-bridge``: inspect | check | convert | verify | demo.

Every refusal is one line naming the node and field, exit status 2; no tracebacks for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from ..semantics.errors import BridgeError
from ..translate.onnx import CONVENTIONS, DEFAULT_CONVENTION, onnx_convention


def inspect_model(model_or_path) -> list[dict]:
    """One row per resampling node: name, op, the IR (text and JSON), and tie indices."""
    from ..semantics import text
    from ..semantics.ir import to_dict
    from ..translate.onnx import parse_model

    rows = []
    for name, ir in parse_model(model_or_path):
        rows.append({"name": name, "op": ir.origin, "text": text.describe(ir), "ties": text.ties(ir),
                     "ir": to_dict(ir)})
    return rows


def format_rows(rows: list[dict]) -> str:
    if not rows:
        return "no resampling nodes (Resize, Upsample, GridSample, DeformConv) in this model"
    wn = max(max(len(r["name"]) for r in rows), 4)
    wo = max(max(len(r["op"]) for r in rows), 2)
    out = [f"{'node':<{wn}}  {'op':<{wo}}  semantics", f"{'-' * wn}  {'-' * wo}  {'-' * 9}"]
    for r in rows:
        lines = list(r["text"])
        for ax, idx in r["ties"].items():
            lines.append(f"ties: {ax} output indices {idx} sit exactly on a rounding boundary")
        for i, line in enumerate(lines):
            head = (r["name"], r["op"]) if i == 0 else ("", "")
            out.append(f"{head[0]:<{wn}}  {head[1]:<{wo}}  {line}")
    return "\n".join(out)


def cmd_inspect(args) -> int:
    rows = inspect_model(args.model)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(format_rows(rows))
    return 0


def cmd_demo(args) -> int:
    import onnx

    from .examples import tricky_model

    model = tricky_model()
    if args.save:
        write_atomic(args.save, model.SerializeToString())
        print(f"wrote {args.save}")
    print("resample-bridge inspect on the built-in example (tools/examples.py):\n")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tricky.onnx")
        onnx.save(model, path)
        print(format_rows(inspect_model(path)))
    return 0


def _target(args, verb: str) -> None:
    if args.target == "tensorrt" and verb == "verify":
        raise BridgeError("verify --target tensorrt needs the TensorRT runtime, which is not installed here; "
                          "convert --target tensorrt prints the trtexec / polygraphy command that finishes the job",
                          field="target")


def cmd_convert(args) -> int:
    from ..lowering.openvino import EXTENSION, extension_path
    from .convert import convert_to_openvino

    _target(args, "convert")
    if args.target == "tensorrt":
        from .tensorrt import convert_to_tensorrt, format_convert_tensorrt

        report = convert_to_tensorrt(args.model, args.output, force=args.force, strict=args.strict)
        print(format_convert_tensorrt(report))
        return 0
    records = convert_to_openvino(args.model, args.output, fallback=args.fallback, strict=args.strict,
                                  force=args.force)
    for r in records:
        print(r.summary())
    print(f"wrote {args.output} and {args.output[:-4]}.bin ({len(records)} resampling nodes lowered and proven)")
    if any(r.rung == EXTENSION for r in records):
        lib = extension_path(args.output)
        print(f"uses the resample-bridge extension {lib}; load it first: "
              f"core = openvino.Core(); core.add_extension({lib!r}); core.read_model({args.output!r})")
    return 0


def cmd_check(args) -> int:
    from ..lowering.openvino import check_openvino, format_check

    _target(args, "check")
    if args.target == "tensorrt":
        from .tensorrt import check_tensorrt, format_check_tensorrt

        rows = check_tensorrt(args.model)
        print(json.dumps(rows, indent=1, default=str) if args.json else format_check_tensorrt(rows))
        return 0
    rows = check_openvino(args.model)
    print(json.dumps(rows, indent=1, default=str) if args.json else format_check(rows))
    return 0


def cmd_verify(args) -> int:
    import numpy as np

    from ..lowering.openvino import format_verify, verify_openvino

    _target(args, "verify")
    inputs = None
    if args.inputs:
        try:
            with np.load(args.inputs) as z:
                inputs = {k: z[k] for k in z.files}
        except Exception as e:
            raise BridgeError(f"cannot read {args.inputs} as .npz: {e}", field="inputs") from None
    report = verify_openvino(args.model, inputs=inputs, fallback=args.fallback)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
    else:
        print(format_verify(report))
    return 0 if report["ok"] else 1


def write_atomic(path: str, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename, so a failure leaves nothing half-written."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise BridgeError(f"output directory {d} does not exist", field="output")
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".rb-", suffix=".tmp")
    except OSError as e:
        raise BridgeError(f"cannot write in {d}: {e.strerror}", field="output") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="resample-bridge",
                                description="Resampling ops with one meaning across ONNX, OpenVINO and TensorRT.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("inspect", help="show the canonical semantics of every resampling node")
    pi.add_argument("model", help="an ONNX model file")
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    pi.set_defaults(func=cmd_inspect)
    pk = sub.add_parser("check", help="what the target's own importer does with each resampling node")
    pk.add_argument("model")
    pk.add_argument("--target", required=True, choices=["openvino", "tensorrt"])
    pk.add_argument("--json", action="store_true")
    pk.set_defaults(func=cmd_check)
    pc = sub.add_parser("convert", help="convert to a target, proving every resampling node")
    pc.add_argument("model")
    pc.add_argument("--target", required=True, choices=["openvino", "tensorrt"])
    pc.add_argument("-o", "--output", required=True,
                    help="OUT.xml for openvino (the .bin is written beside it); OUT.onnx (TensorRT-ready) for tensorrt")
    pc.add_argument("--fallback", choices=["decompose", "extension"], default="decompose",
                    help="decompose: where no native op is exact, the tap-table decomposition (static shapes), "
                         "else the resample-bridge extension op; extension: the extension op for every node")
    pc.add_argument("--strict", action="store_true",
                    help="refuse exactness that holds only under a run-time condition; take the next rung")
    pc.add_argument("--force", action="store_true", help="overwrite an existing output")
    pc.set_defaults(func=cmd_convert)
    pv = sub.add_parser("verify", help="run source (onnxruntime + oracle) and converted model, report errors")
    pv.add_argument("model")
    pv.add_argument("--target", required=True, choices=["openvino", "tensorrt"])
    pv.add_argument("--inputs", metavar="NPZ", help="input arrays by graph input name (default: seeded random)")
    pv.add_argument("--fallback", choices=["decompose", "extension"], default="decompose")
    pv.add_argument("--json", action="store_true")
    pv.set_defaults(func=cmd_verify)
    for verb in (pi, pk, pc, pv):
        verb.add_argument("--onnx-convention", choices=CONVENTIONS, default=DEFAULT_CONVENTION,
                          help="where onnx.reference departs from the ONNX spec text: 'spec' (default) as "
                               "onnxruntime, OpenVINO and PyTorch compute it; 'reference' as onnx.reference and "
                               "the conformance data")
    pd = sub.add_parser("demo", help="inspect the built-in example model of tricky cases")
    pd.add_argument("--save", metavar="PATH", help="also write the example model to PATH")
    pd.set_defaults(func=cmd_demo)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with onnx_convention(getattr(args, "onnx_convention", DEFAULT_CONVENTION)):
            return args.func(args)
    except BridgeError as e:
        print(f"resample-bridge: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug, not bad input: still one line, with a way to get the traceback
        if os.environ.get("RESAMPLE_BRIDGE_DEBUG"):
            raise
        print(f"resample-bridge: internal error: {type(e).__name__}: {e} "
              f"(set RESAMPLE_BRIDGE_DEBUG=1 for a traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
