"""A seeded, re-runnable fuzz campaign against the ``resample-bridge`` CLI (issue 10, item 7).

    python -m resample_bridge.tools.dev.fuzz --seed 1 --cases 300 [--families resize,invalid] [--out DIR]
        [--keep-failures DIR] [--timeout 60] [--jobs 1] [--only 17,42] [--verbs convert-ov,...]

Families: resize, gridsample, deformconv (valid random models), invalid (models the ONNX checker or
onnxruntime refuse, or that break the spec), hostile (FIFOs, devices, truncated protobufs, control
characters and 1 MB strings, external data outside the folder), outpath (output-path faults), forms (valid
Resize inputs in exporters' spellings: empty roi/scales as initializer, Constant, value_floats=[], Identity,
Cast; sizes from Shape/Slice/Gather/Concat chains; unnamed nodes). Case i of seed s is the same on every
run (``--only i`` reruns it; ``--families`` without a newer family keeps older seeds' cases). Every verb is a
real CLI subprocess with a timeout; each call is classified (``fuzz_classify.py``), a case takes its worst
call, and tables are printed: outcome x family over cases, outcome x verb over calls, and onnxruntime's
verdict per family (agree, explained by named IR fields, a named onnxruntime limitation, or UNEXPLAINED,
itself a failure). ``--keep-failures DIR`` writes each failure's model, inputs, commands and outputs there.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .fuzz_cases import Case
from .fuzz_classify import (BAD, GOOD, ORDER, CallResult, classify_call, classify_numbers, snapshot, worst)

# New families go last: a seed's cases in the older families stay the same under --families.
WEIGHTS = {"resize": 34, "gridsample": 14, "deformconv": 10, "invalid": 20, "hostile": 13, "outpath": 9,
           "forms": 8}
FAMILIES = tuple(WEIGHTS)


def generators() -> dict:
    from .fuzz_bad import GENERATORS as bad
    from .fuzz_paths import GENERATORS as paths
    from .fuzz_valid import GENERATORS as valid
    return {**valid, **bad, **paths}


def make_case(seed: int, index: int, families=FAMILIES) -> Case:
    """Case ``index`` of ``seed``: deterministic, independent of the other cases and of --cases."""
    rng = random.Random(f"resample-bridge-fuzz:{seed}:{index}")
    fams = [f for f in FAMILIES if f in families]
    fam = rng.choices(fams, weights=[WEIGHTS[f] for f in fams])[0]
    case = generators()[fam](rng)
    case.index, case.name = index, f"{seed}-{index:04d}-{fam}"
    return case


def cli_command() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "resample-bridge")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "resample_bridge.tools.cli"]


def argv_for(case: Case, verb: str, model: str) -> list[str]:
    if verb == "inspect":
        return ["inspect", model]
    target = "openvino" if verb.endswith("-ov") else "tensorrt"
    cmd = verb.split("-")[0]
    argv = [cmd, model, "--target", target]
    if cmd == "convert":
        argv += ["-o", case.out_xml if target == "openvino" else case.out_onnx] + list(case.convert_flags)
    if cmd == "verify" and case.feeds:
        argv += ["--inputs", "feeds_0.npz"]
    return argv


@dataclass
class CaseResult:
    case: Case
    outcome: str = "ok"
    detail: str = ""
    calls: list = field(default_factory=list)
    ort: str = ""
    seconds: float = 0.0


def _limit(mem_gb: float):
    def pre():
        import resource
        n = int(mem_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (n, n))
    return pre


def run_process(argv, cwd, env, timeout, mem_gb):
    """(rc, stdout, stderr, timed_out): the whole process group is killed on timeout."""
    import signal
    import subprocess
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_limit(mem_gb))
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), True


def materialize(case: Case, d: str) -> str:
    """Write the case's files into ``d``; returns the model argument (relative to ``d`` or absolute)."""
    import numpy as np
    os.makedirs(os.path.join(d, "tmp"), exist_ok=True)
    model = "model.onnx"
    if case.raw is not None or case.model is not None:
        with open(os.path.join(d, model), "wb") as f:
            f.write(case.raw if case.raw is not None else case.model.SerializeToString())
    if case.setup is not None:
        model = case.setup(d)
    if not any(case.out_xml.startswith(p) for p in ("/", "missing/", "ro/")) and case.out_xml.startswith("out/"):
        os.makedirs(os.path.join(d, "out"), exist_ok=True)
    for i, feeds in enumerate(case.feeds):
        np.savez(os.path.join(d, f"feeds_{i}.npz"), **feeds)
    return model


def run_case(case: Case, root: str, timeout: float = 60.0, mem_gb: float = 4.0, verbs=None) -> CaseResult:
    t0 = time.time()
    d = os.path.join(root, case.name)
    os.makedirs(d, exist_ok=True)
    res = CaseResult(case)
    model = materialize(case, d)
    env = dict(os.environ, TMPDIR=os.path.join(d, "tmp"), PYTHONDONTWRITEBYTECODE="1")
    env.pop("RESAMPLE_BRIDGE_DEBUG", None)
    tmo = min(timeout, case.timeout or timeout)
    convert_rc = None
    for verb in case.verbs:
        if verbs and verb not in verbs and case.kind != "outpath":
            continue
        argv = argv_for(case, verb, model)
        before = snapshot(d)
        t = time.time()
        rc, out, err, hung = run_process(cli_command() + argv, d, env, tmo, mem_gb)
        call = CallResult(verb, argv, rc, out, err, hung, time.time() - t)
        classify_call(case, call, before, snapshot(d), d, convert_rc)
        res.calls.append(call)
        _clear(os.path.join(d, "tmp"))
        if verb == "convert-ov":
            convert_rc = rc
            if rc == 0 and case.feeds and case.kind in ("valid", "any"):
                _numbers(case, res, d, env, mem_gb, model)
    res.outcome, res.detail = worst(res)
    res.seconds = time.time() - t0
    return res


def _clear(tmp):
    for name in os.listdir(tmp):
        p = os.path.join(tmp, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.unlink(p)


def _numbers(case, res, d, env, mem_gb, model):
    argv = [sys.executable, "-m", "resample_bridge.tools.dev.fuzz_exec", model, case.out_xml]
    argv += [f"feeds_{i}.npz" for i in range(len(case.feeds))]
    t = time.time()
    rc, out, err, hung = run_process(argv, d, env, 180, mem_gb)
    o, detail, ort = classify_numbers(out, err, rc, hung)
    res.ort = ort
    res.calls.append(CallResult("numbers", argv[3:], rc, out, err, hung, time.time() - t, o, detail))


# ----------------------------------------------------------------------------------------------------------


def keep_failure(r: CaseResult, src: str, dest_root: str, seed: int) -> None:
    from .fuzz_report import write_reproducer
    write_reproducer(r, src, dest_root, seed, cli_command())


def _grid(rows: list[str], cols: list[str], count, corner: str) -> str:
    """Outcomes down, families (or verbs) across: narrow enough for a terminal whatever the outcomes."""
    w = max([len(corner)] + [len(r) for r in rows]) + 2
    cw = [max(len(c), 5) + 2 for c in cols]
    lines = [f"{corner:<{w}}" + "".join(f"{c:>{n}}" for c, n in zip(cols, cw))]
    for r in rows:
        mark = "! " if r in BAD else "  "
        lines.append(f"{mark + r:<{w}}" + "".join(f"{count(r, c) or '.':>{n}}" for c, n in zip(cols, cw)))
    return "\n".join(lines)


def table(results: list[CaseResult], families=FAMILIES) -> str:
    """outcome x family over cases (a case counts once, at its worst call); '!' marks a bad outcome."""
    rows = [o for o in ORDER if any(r.outcome == o for r in results)] or list(GOOD)
    fams = [f for f in families if any(r.case.family == f for r in results)]
    rows_total = rows + ["total"]

    def count(o, f):
        rs = [r for r in results if f == "ALL" or r.case.family == f]
        return len(rs) if o == "total" else sum(r.outcome == o for r in rs)
    return _grid(rows_total, fams + ["ALL"], count, "outcome")


def verb_table(results: list[CaseResult]) -> str:
    """outcome x verb over every call: what the per-case table's worst-outcome rule hides."""
    calls = [c for r in results for c in r.calls]
    rows = [o for o in ORDER if any(c.outcome == o for c in calls)]
    verbs = [v for v in ("inspect", "check-ov", "convert-ov", "numbers", "verify-ov", "check-trt", "convert-trt")
             if any(c.verb == v for c in calls)]

    def count(o, v):
        cs = [c for c in calls if c.verb == v]
        return len(cs) if o == "total" else sum(c.outcome == o for c in cs)
    return _grid(rows + ["total"], verbs, count, "outcome")


def ort_table(results: list[CaseResult]) -> str:
    """family x onnxruntime's verdict: agree, explained by <IR fields>, a known deviation or limitation, or
    UNEXPLAINED (each such case is an ORT-UNEXPLAINED failure above)."""
    from collections import Counter
    c = Counter((r.case.family, r.ort.split(" (")[0].split(" max abs")[0][:70]) for r in results if r.ort)
    return "\n".join(f"  {fam:<11} {n:>4}  {what}" for (fam, what), n in sorted(c.items()))


def run_campaign(seed: int, cases: int, families=FAMILIES, out: str | None = None, keep: str | None = None,
                 timeout: float = 60.0, jobs: int = 1, only=None, verbs=None, mem_gb: float = 4.0,
                 log=lambda s: print(s, flush=True)) -> list[CaseResult]:
    indices = list(only) if only else list(range(cases))
    todo = [make_case(seed, i, families) for i in indices]
    return run_cases(todo, seed, out, keep, timeout, jobs, verbs, mem_gb, log)


def run_cases(todo: list[Case], seed: int = 0, out: str | None = None, keep: str | None = None,
              timeout: float = 60.0, jobs: int = 1, verbs=None, mem_gb: float = 4.0, log=None) -> list[CaseResult]:
    root = out or tempfile.mkdtemp(prefix="rb-fuzz-")
    os.makedirs(root, exist_ok=True)
    results: list[CaseResult] = []

    def one(c):
        r = run_case(c, root, timeout, mem_gb, verbs)
        if log:
            mark = "  " if r.outcome in GOOD else "!!"
            log(f"{mark} {c.name:<24} {r.outcome:<15} {r.seconds:5.1f}s  {c.label[:90]}"
                + (f"\n      {r.detail[:300]}" if r.outcome in BAD else ""))
        if keep and r.outcome in BAD:
            keep_failure(r, os.path.join(root, c.name), keep, seed)
        return r

    try:
        with ThreadPoolExecutor(max(1, jobs)) as ex:
            results = list(ex.map(one, todo))
    finally:
        if out is None:
            _rmtree(root)
    return results


def _rmtree(root):
    for dirpath, dirnames, _ in os.walk(root):
        for dn in dirnames:
            try:
                os.chmod(os.path.join(dirpath, dn), 0o755)
            except OSError:
                pass
    shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m resample_bridge.tools.dev.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--families", default=",".join(FAMILIES), help="comma-separated: " + ", ".join(FAMILIES))
    p.add_argument("--out", help="keep every case's work folder here (default: a temporary folder, removed)")
    p.add_argument("--keep-failures", metavar="DIR", help="write each failure's reproducer here")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per CLI call (default 60)")
    p.add_argument("--jobs", type=int, default=1, help="cases run in parallel (default 1)")
    p.add_argument("--only", help="comma-separated case indices to rerun")
    p.add_argument("--verbs", help="run only these verbs: " + ",".join(("inspect", "check-ov", "convert-ov",
                                                                         "verify-ov", "check-trt", "convert-trt")))
    p.add_argument("--mem-gb", type=float, default=4.0, help="address-space limit per CLI call (default 4)")
    a = p.parse_args(argv)
    fams = tuple(f.strip() for f in a.families.split(",") if f.strip())
    unknown = [f for f in fams if f not in FAMILIES]
    if unknown:
        p.error(f"unknown families {unknown}; choose from {', '.join(FAMILIES)}")
    only = [int(x) for x in a.only.split(",")] if a.only else None
    verbs = set(a.verbs.split(",")) if a.verbs else None
    t = time.time()
    results = run_campaign(a.seed, a.cases, fams, a.out, a.keep_failures, a.timeout, a.jobs, only, verbs, a.mem_gb)
    n_calls = sum(len(r.calls) for r in results)
    print(f"\nseed {a.seed}: {len(results)} cases, {n_calls} CLI/exec calls, {time.time() - t:.0f} s")
    print("per case (outcome of its worst call):")
    print(table(results, fams))
    print("\nper call (numbers = the converted model run on OpenVINO vs the oracle):")
    print(verb_table(results))
    ort = ort_table(results)
    if ort:
        print("\nonnxruntime vs the oracle (converted valid models):\n" + ort)
    bad = [r for r in results if r.outcome in BAD]
    if bad:
        from .fuzz_report import summary
        print("\nfailure classes (count, signature, smallest example):\n" + summary(bad))
    if a.keep_failures and bad:
        print(f"\nreproducers of {len(bad)} failures in {a.keep_failures}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
