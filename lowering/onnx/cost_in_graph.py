"""Which in-graph form the ONNX target writes instead of the rung the ladder chose: rung 2's convolution form
(``conv_form``), the guarded matrix form (``matmul_form``) or the decomposition.

The ONNX target is portable ONNX for any runtime, so the rule is one the measurement holds on the runtime we can
time and that no runtime can lose much by: the form is taken by default only for a class of node (sampler, up or
down, antialias) where onnxruntime (1.32, CPU) ran it at least ``MARGIN`` times faster than its own Resize at
every measured channel count (3, 16, 64), plane (20x20 .. 160x200) and thread count (1, 2)
(``tools/dev/bench_onnx_forms.py``); ``MEASURED`` keeps the slowest and the median of those ratios, and the
record prints them. Against the decomposition (rung 3: a Gather, a Mul and K Gathers and Adds per axis), which
the ladder takes where onnxruntime's Resize computes other numbers or has no kernel, the form is taken for
every class that has taps to multiply (linear, cubic): one convolution per axis instead of 2K + 2 ops
(``VS_DECOMPOSITION``; cubic at rank 3, where onnxruntime runs no cubic Resize: 5.2-5.7x faster at 1 thread).
Nearest keeps Resize (or its Gather): onnxruntime's nearest copies elements, 2-30x faster than the form.
Linear and antialias keep Resize: 0.1-8x, a median near 1 (onnxruntime's linear is fast). The 2-thread rows on
2 cores shared with other jobs swing both ways: their slowest is a conservative floor. Where every rung refuses
the node (lengths known only at run time) the form is taken whatever its speed (``REFUSED``). ``--target
tensorrt`` keeps its choices: TensorRT's Resize is a native GPU layer, and no GPU is here to time the form on.

Where the convolution form does not apply (align_corners, a non-integer ratio, exclude_outside), onnxruntime's
cubic Resize (no antialias) still is slow: the guarded matrix form is taken instead (``matmul_form``: the matrices
where every element is finite, else the decomposition; 25-200x faster), or the decomposition alone where the
matrices do not apply (3.6-9.3x faster) (``_decomposed``, ``CUBIC_MATMUL``, ``CUBIC_RESIZE``). Elsewhere the
matrices are not weighed: behind the same guard they beat Resize on linear only at planes up to 40x40 (1.5-12x)
and lost at 160x200 (0.15-0.3x), a rule by plane this table does not make."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from ...semantics.opspec import PerOp
from ..passes import BUILTIN, DECOMPOSE, REWRITE, RUNG_NAMES, Candidate
from ..plan import Choice
from . import matmul_form, rungs
from .conv_form import FORM, form_plan

MARGIN = 1.25
# (sampler, "up" / "down" / "antialias down") -> (slowest, median) of onnxruntime's Resize time over the form's,
# measured on AMD EPYC Zen 4 (AVX-512, 2 busy cores), onnxruntime 1.32.0, 1 and 2 threads.
# 1x{3,16,64}x{20x20,40x40,80x80,160x200}, x2 / x4 up, /2 down; 16-48 rows a class.
MEASURED = {"nearest up": (0.02, 0.30), "nearest down": (0.04, 0.44), "linear up": (0.09, 0.96),
            "linear down": (0.06, 1.26), "linear antialias down": (0.06, 1.74), "cubic up": (2.15, 26.7),
            "cubic down": (3.67, 69.8), "cubic antialias down": (0.06, 1.94)}
VS_DECOMPOSITION = ("linear", "cubic")
# (slowest, median) of onnxruntime's cubic Resize (no antialias) over the decomposition (rung 3), where the
# convolution form does not apply: align_corners x2 and /2, half_pixel x1.5, exclude_outside x2, on
# 1x3x160x200, 1x16x40x40, 1x64x20x20, 1x64x80x80, 1 thread (same machine): 16 rows.
CUBIC_RESIZE = (3.6, 6.2)
# The same rows, onnxruntime's cubic Resize over the guarded matrix form (``matmul_form``), which is taken where it
# applies (static, the last two axes, each matrix within ``resize_forms.MAX_MATRIX``).
CUBIC_MATMUL = (24.7, 48.0)
# Where every rung refuses (lengths known only at run time: onnxruntime's float32 output length is a condition,
# the tap tables need every length) the form still is exact: its kernels, pads and crop are the same at every
# length (``resize_forms.plan`` checks two), its output length r * L integer arithmetic.
REFUSED = "every other rung refuses it, and the form is exact at every input length (integer output lengths)"


# True / False: the form taken wherever it exists / nowhere, whatever the table says (the benchmark and the tests
# time and check the form itself); None or empty: the rule.
_forced: list = []


@contextlib.contextmanager
def forcing(take: bool | None):
    _forced.append(take)
    try:
        yield
    finally:
        _forced.pop()


def node_class(ir, axes) -> str | None:
    """The table's key of a node with the form's plan ``axes``, or None (some axes up, some down)."""
    down = {ax.down for ax in axes}
    if len(down) != 1:
        return None
    way = ("antialias down" if ir.sampler.antialias else "down") if down.pop() else "up"
    return f"{ir.sampler.kind} {way}"


def faster(ir, axes, rung: int | None) -> str | None:
    """Why the form instead of ``rung``'s lowering (None: every rung refused), or None where the rule keeps it."""
    key = node_class(ir, axes)
    if _forced and _forced[-1] is not None:
        return "the convolution form is asked for" if _forced[-1] else None
    if rung is None:  # refused by every rung
        return REFUSED
    if rung == DECOMPOSE:
        return f"instead of the {RUNG_NAMES[DECOMPOSE]}: one convolution per axis, not {ir.sampler.kind}'s " \
               "Gather/Mul/Add chain (onnxruntime 5x faster, measured cubic at rank 3)" \
            if ir.sampler.kind in VS_DECOMPOSITION and key else None
    slowest, median = MEASURED.get(key, (None, None))
    if slowest is None or slowest < MARGIN:
        return None
    return f"onnxruntime {median:.2g}x faster than Resize (measured {key}, at least {slowest:.2g}x)"


def swap(choice: Choice) -> Choice:
    """``choice`` with the convolution form taken instead of its rung where ``faster`` says so, or where every rung
    refused the node (``REFUSED``); the rung given up stays in the record's ``tried``. Only exact (unconditional)
    choices of a top-level Resize are weighed."""
    rec, node = choice.record, choice.node
    if node is None or not node.top_level or rec.conditions or \
            rec.rung not in (None, BUILTIN, REWRITE, DECOMPOSE) or rec.proof.get("form") is not None:
        return choice
    axes = form_plan(rec.ir, node.opset)
    why = None if isinstance(axes, str) else faster(rec.ir, axes, rec.rung)
    if why is None:
        rec.extra["conv_form"] = axes if isinstance(axes, str) else "the rule keeps the rung the ladder chose"
        return _decomposed(choice)
    ratios = " x ".join(f"/{ax.step}" if ax.down else f"x{ax.r}" for ax in axes)
    ops = " and ".join(dict.fromkeys("a strided depthwise Conv" if ax.down else "a depthwise ConvTranspose"
                                     for ax in axes))
    reason = f"conv form: edge Pad and {ops} per axis ({ratios}), kernels from the oracle's periodic tap " \
             f"tables; {why}"
    tried = rec.tried if rec.refused else \
        [*rec.tried, (rec.rung, rec.rung_name, "exact, but the convolution form is faster")]
    taken = replace(rec, rung=REWRITE, rung_name=RUNG_NAMES[REWRITE], reason=reason, tried=tried,
                    proof={"form": FORM, "opset": node.opset}, field=None)
    return replace(choice, record=taken, payload=axes)


def _decomposed(choice: Choice) -> Choice:
    """``choice`` with the guarded matrix form (``matmul_form``: the matrices where every element is finite, else
    the decomposition), else the decomposition alone (rung 3), taken instead of onnxruntime's cubic Resize (rung 1
    or 2) where the convolution form does not apply (align_corners, a non-integer ratio, exclude_outside):
    ``CUBIC_RESIZE``, ``CUBIC_MATMUL``."""
    rec, node = choice.record, choice.node
    s = rec.ir.sampler
    if rec.rung not in (BUILTIN, REWRITE) or s.kind != "cubic" or s.antialias or (_forced and _forced[-1] is False):
        return choice
    got = rungs.decompose(node)
    if not isinstance(got, Candidate) or not got.unconditional:
        return choice
    guarded = matmul_form.plan(rec.ir, node.opset)
    if isinstance(guarded, str):
        rec.extra["matmul_form"] = guarded
        slowest, median = CUBIC_RESIZE
        what, rung, proof, payload = "decomposition", DECOMPOSE, dict(got.proof), got.produced
        reason = got.reason
    else:
        slowest, median = CUBIC_MATMUL
        what, rung, proof, payload = "matrix form", REWRITE, {"form": matmul_form.FORM, "opset": node.opset}, guarded
        lengths = ", ".join(f"{d.in_len} -> {d.out_len}" for d in guarded.axes)
        reason = f"matrix form: a MatMul per axis ({lengths}) by the oracle's tap tables where every input element " \
                 f"is finite (an If on ReduceSum(X * 0) == 0), else the {RUNG_NAMES[DECOMPOSE]}"
    tried = [*rec.tried, (rec.rung, rec.rung_name, f"exact, but the {what} is faster")]
    taken = replace(rec, rung=rung, rung_name=RUNG_NAMES[rung], tried=tried, proof=proof, field=None,
                    reason=f"{reason}; onnxruntime runs it {median:.2g}x faster than its own cubic Resize "
                           f"(measured, at least {slowest:.2g}x)")
    return replace(choice, record=taken, payload=payload)


# After the climb, per op: the in-graph forms weighed against the rung taken (Resize's convolution form).
AFTER_CLIMB = PerOp("ONNX in-graph forms", resize=swap, gridsample=None, deformconv=None)
