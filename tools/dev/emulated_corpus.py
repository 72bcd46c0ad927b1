"""`make emulated`: what convert writes, run the way a user deploys it on older x86 CPUs: under Debian's
``qemu-x86_64 -cpu Haswell`` (AVX2) and ``-cpu Nehalem`` (SSE4.2), one Python process per CPU.

- the corpus (default): every model of tests/models converted by default, and by OpenVINO's own importer, against
  the source framework's saved outputs (tests/test_real_models.py's tolerance);
- ``--fuzz DIR``: the models a fuzz campaign kept (``fuzz --out DIR``: each case's out/model.xml and its
  feeds_*.npz), against the same model run natively (the fuzz campaign judged those against the oracle).

One table: per model, the worst error on each CPU. Slow (minutes per CPU): a campaign, never part of ``make test``.

    python tools/dev/emulated_corpus.py [--cpu Haswell --cpu Nehalem] [--only SUBSTRING] [--keep DIR] [--fuzz DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # tests/test_real_models.py: the one whole-model tolerance

from tests.test_real_models import MODELS, _compare, _reference  # noqa: E402

# Runs in the (emulated) process: each (xml, inputs, out) job compiled at f32, its outputs saved by tensor name.
# The library convert writes beside a model (``write.EXTENSION_NAME``, argv[2]) is loaded first, into a Core of that
# model's own.
_RUN = textwrap.dedent("""
    import json, pathlib, sys, numpy as np, openvino as ov
    for xml, feed, out in json.load(open(sys.argv[1])):
        try:
            core = ov.Core()
            lib = pathlib.Path(xml).parent / sys.argv[2]
            if lib.is_file():
                core.add_extension(str(lib))
            with np.load(feed) as f:
                ins = {k: f[k] for k in f.files}
            c = core.compile_model(core.read_model(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            res = c({k: v for k, v in ins.items() if any(k in p.get_names() for p in c.inputs)})
            np.savez(out, **{n: np.asarray(v) for p, v in res.items() for n in p.get_names()})
        except Exception as e:
            open(out + ".err", "w").write(str(e).splitlines()[0] if str(e) else type(e).__name__)
""")


def _write(case: str, folder: Path) -> dict:
    """{"ours": xml or a refusal line, "importer": idem} for one corpus model."""
    import openvino as ov

    from resample_bridge.lowering.openvino import convert, save
    from resample_bridge.semantics.errors import BridgeError

    src = str(MODELS / case / "model.onnx")
    made = {}
    try:
        model, records = convert(src)
        made["ours"] = save(model, records, str(folder / f"{case}.ours.xml"), force=True)[0]["xml"]
    except BridgeError as e:
        made["ours"] = "refused: " + e.message
    try:
        ov.save_model(ov.convert_model(src), str(folder / f"{case}.importer.xml"))
        made["importer"] = str(folder / f"{case}.importer.xml")
    except Exception as e:  # noqa: BLE001 -- the importer's refusal is a row, not a crash
        made["importer"] = "refused: " + str(e).splitlines()[0]
    return made


def _run(cpu: str | None, jobs: list, folder: Path) -> None:
    """Every job's outputs computed under ``qemu-x86_64 -cpu cpu`` (None: natively) in one process."""
    spec = folder / f"jobs.{cpu or 'native'}.json"
    spec.write_text(json.dumps(jobs))
    env = dict(os.environ, OPENBLAS_CORETYPE="Prescott")  # numpy's OpenBLAS misreads qemu's CPU
    prefix = [shutil.which("qemu-x86_64"), "-cpu", cpu] if cpu else []
    from resample_bridge.lowering.openvino.write import EXTENSION_NAME

    subprocess.run([*prefix, sys.executable, "-c", _RUN, str(spec), EXTENSION_NAME], env=env,
                   stderr=subprocess.DEVNULL, check=False)


def _outputs(out: str) -> dict | str:
    if Path(out + ".err").is_file():
        return "error: " + Path(out + ".err").read_text()[:60]
    if not Path(out).is_file():
        return "no output (the process died)"
    with np.load(out) as f:
        return {k: f[k] for k in f.files}


def _verdict(out: str, reference: dict | str) -> str:
    got = _outputs(out)
    if isinstance(got, str) or isinstance(reference, str):
        return got if isinstance(got, str) else "reference: " + reference
    ok, worst = _compare(got, reference)
    return ("ok" if ok else "WRONG") + (f" {worst:.1e}" if isinstance(worst, float) else f" {worst}")


def _corpus(only: str, folder: Path) -> tuple:
    """({label: (xml or refusal, feeds)}, the reference of a label) for the corpus, both converters."""
    cases = sorted(p.name for p in MODELS.iterdir() if (p / "model.onnx").is_file() and only in p.name)
    written = {}
    for case in cases:
        for who, xml in _write(case, folder).items():
            written[f"{case} {who}"] = (xml, str(MODELS / case / "inputs.npz"))
    return written, lambda label: _reference(label.rsplit(" ", 1)[0])[0]


def _fuzz(root: Path, only: str, folder: Path) -> tuple:
    """The same for the models a fuzz campaign kept: each feed a row, judged against the native run."""
    written = {f"{case.name} {feed.stem}": (str(case / "out" / "model.xml"), str(feed))
               for case in sorted(root.iterdir()) if (case / "out" / "model.xml").is_file() and only in case.name
               for feed in sorted(case.glob("feeds_*.npz"))}
    jobs = [(xml, feed, str(folder / f"{_stem(label)}.native.npz")) for label, (xml, feed) in written.items()]
    _run(None, jobs, folder)
    return written, lambda label: _outputs(str(folder / f"{_stem(label)}.native.npz"))


def _stem(label: str) -> str:
    return label.replace(" ", ".")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="append", help="qemu CPU models (default: Haswell and Nehalem)")
    ap.add_argument("--only", default="", help="only the models whose name holds this")
    ap.add_argument("--keep", help="write the models and outputs here (default: a temporary folder)")
    ap.add_argument("--fuzz", help="a fuzz campaign's --out folder instead of the corpus")
    args = ap.parse_args(argv)
    if shutil.which("qemu-x86_64") is None:
        print("qemu-user is not installed (apt-get install qemu-user)")
        return 2
    cpus = args.cpu or ["Haswell", "Nehalem"]
    folder = Path(args.keep or tempfile.mkdtemp(prefix="rb-emulated-"))
    folder.mkdir(parents=True, exist_ok=True)
    written, reference = _fuzz(Path(args.fuzz), args.only, folder) if args.fuzz else \
        _corpus(args.only, folder)
    rows = {label: {} for label in written}
    for cpu in cpus:
        jobs = [(xml, feed, str(folder / f"{_stem(label)}.{cpu}.npz")) for label, (xml, feed) in written.items()
                if not xml.startswith("refused")]
        _run(cpu, jobs, folder)
        for label, (xml, _) in written.items():
            out = str(folder / f"{_stem(label)}.{cpu}.npz")
            rows[label][cpu] = xml[:40] if xml.startswith("refused") else _verdict(out, reference(label))
    print("| model | " + " | ".join(cpus) + " |")
    print("|" + "---|" * (len(cpus) + 1))
    for label, row in rows.items():
        print(f"| {label} | " + " | ".join(row[c][:40] for c in cpus) + " |")
    for cpu in cpus:
        for who in (("ours", "importer") if not args.fuzz else ("",)):
            mine = [row[cpu] for label, row in rows.items() if label.endswith(who)]
            print(f"{who or 'written'} {cpu}: {sum(v.startswith('ok') for v in mine)} of {len(mine)} ok, "
                  f"{sum(v.startswith('WRONG') for v in mine)} wrong")
    return 1 if any(row[c].startswith(("WRONG", "error", "no output")) for label, row in rows.items()
                    if not label.endswith("importer") for c in cpus) else 0


if __name__ == "__main__":
    sys.exit(main())
