"""The default policy's cost model (``--prefer fastest``): where a Resize or DeformConv node has an exact rung that
needs nothing beside the model (or a GridSample node the decomposition), the extension is taken instead only where
this model estimates it at least ``MARGIN`` times faster. The model is a rate (ns per output element; a
DeformConv's per multiply-accumulate) and a fixed cost per call per rung class and sampler, timed on single-node
models on OpenVINO CPU (``cost_timing``), plus the reorders a custom op costs in a real model against a built-in
op (measured between Conv layers, at least a copy) on each side that does not meet the model's own inputs or
outputs (``boundary``); a decomposition pays the same reorders. Sizes known only at run time compare the rates
per unit. Under every policy it also takes rung 2's convolution form (``conv_rewrite``) instead of Interpolate, and
the matrix form (``matmul_rewrite``) instead of the chosen rung, where estimated ``cost_in_graph.CONV_MARGIN``
times faster (``cost_in_graph.faster_conv``; ``--prefer builtin`` with the shipped rates, ``shipped``).

Where the rates come from (``calibration()``), first that applies:
* ``using(Calibration(...))``: a table given in code (the tests' fixed tables);
* ``RESAMPLE_BRIDGE_COST_TABLE``: a JSON file of rates (the cache file of the machine that will run the model:
  convert anywhere for it; the tests name the shipped reference table, so their choices do not depend on the
  machine);
* this machine, once the extension library is built here (``cost_machine``): each rate timed the first time a
  conversion needs it (measured on 2 busy cores: 0.6-1.7 s a rate, 2.5-6 s the reorders) and cached per machine
  (CPU, OpenVINO version, kernel sources); the rates an estimate for the extension read are first timed again,
  each then the median of ``cost_machine.CONFIRM_RUNS`` timings (``Calibration.confirm``);
* otherwise the reference table shipped with the package (``cost_reference.json``, measured on the machine it
  names): a first conversion neither builds the extension nor times anything just to decide.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import cost_machine, cost_timing
from .cost_matmul import calibrate  # noqa: F401 -- with the matrix form's rates (``__all__``)
from ..passes import CUSTOM
from .boundary import NOT_AT_BOUNDARY
from .cost_ops import COST_OPS
from .cost_timing import DYNAMIC, FEW, RUNG_CLASS, few_key, fixed_key, int_key, rung_class
from .. import compiled

__all__ = ["MARGIN", "Calibration", "using", "table_file", "calibration", "calibrate", "estimate",
           "faster_extension", "chosen_name"]

log = logging.getLogger("resample_bridge")

MARGIN = 1.25  # the extension must be estimated this many times faster than the rung the ladder chose
IN_GRAPH_OPS = ("builtin", "conv")  # OpenVINO's own ops, keeping its blocked layouts (the extension's reorders)
# Sizes known only at run time: each rung's fixed cost is weighed spread over this many outputs, the calibration's
# upscale output (cost_timing.SHAPE, each resized axis doubled).
REFERENCE_OUTPUTS = int(np.prod(cost_timing.SHAPE[:2])) * int(np.prod([2 * d for d in cost_timing.SHAPE[2:]]))
REFERENCE = Path(__file__).with_name("cost_reference.json")
ENV = "RESAMPLE_BRIDGE_COST_TABLE"


@dataclass
class Calibration:
    """Rates {"class/kind/antialias/direction": ns per output element, "copy" / "layout": ns per element in
    and out, "call": ns per inference of nothing; None: a class this machine cannot produce for that sampler}
    and where they were measured
    (``where``: the words the records print). ``timer``: times a missing rate on this machine and returns it
    (None: a fixed table, where a missing rate stays missing)."""

    rates: dict
    where: str
    timer: object = None
    confirmer: object = None  # re-times rates on this machine (``confirm``); None: a fixed table
    read: list | None = None  # while ``reading``: the keys asked for

    def rate(self, key: str) -> float | None:
        if self.read is not None:
            self.read.append(key)
        if key not in self.rates and self.timer is not None:
            self.rates[key] = self.timer(key)
        return self.rates.get(key)

    @contextlib.contextmanager
    def reading(self):
        """The keys asked for inside the block (a list, filled as they are)."""
        self.read = []
        try:
            yield self.read
        finally:
            self.read = None

    def confirm(self, keys) -> bool:
        """Each of ``keys`` the median of ``cost_machine.CONFIRM_RUNS`` timings where this table times on this
        machine; True where any rate was timed again (an estimate made with them is then made again)."""
        return self.confirmer is not None and self.confirmer(keys)


_given: list = []  # ``using`` stack
_machine: Calibration | None = None


@contextlib.contextmanager
def using(table: Calibration):
    """Estimate with ``table`` inside the block (tests: fixed numbers, the same on every machine)."""
    _given.append(table)
    try:
        yield table
    finally:
        _given.pop()


def table_file(path) -> Calibration:
    """A rate table saved as JSON: {"where": ..., "rates": {...}}, or a machine's cache file (the rates alone)."""
    data = json.loads(Path(path).read_text())
    if "rates" in data:
        return Calibration(dict(data["rates"]), data.get("where", str(path)))
    return Calibration(dict(data), f"the rates of {path}")


def shipped() -> Calibration:
    """``--prefer builtin``'s rates (``cost_in_graph``): a table given in code or by ``ENV``, else the reference."""
    if _given:
        return _given[-1]
    return table_file(os.environ.get(ENV) or REFERENCE)


def calibration(timing=None) -> Calibration:
    """The rates in force (module docstring). ``timing``: how this machine's missing rates are timed, the target's
    convert (``passes.Policy.timing``: the target sits above the ladder that asks for rates); None: they stay
    missing."""
    global _machine
    if _given or os.environ.get(ENV):
        return shipped()

    if compiled.openvino_extension_built() is None:
        return table_file(REFERENCE)
    if _machine is None:
        rates = cost_machine.cached()
        _machine = Calibration(rates, "this machine")
    rates = _machine.rates  # one table per process, timed by whichever conversion first needs a rate
    if timing is None:
        return _machine
    return Calibration(rates, _machine.where, timer=lambda key: cost_machine.timed(key, rates, timing),
                       confirmer=lambda keys: cost_machine.confirmed(keys, rates, timing))


def _static_elements(ir, input_shape) -> tuple[int, int, bool] | None:
    """(elements in, elements out, least) of the node at its static sizes; a length known only at run time on an
    axis it does not resample (a batch) taken as 1 (``least``: then True, the smallest run); None where a
    resampled length is known only at run time."""

    if input_shape is None:
        return None
    op = COST_OPS.of(ir)
    if any(input_shape[a] is None for a in op.resampled(ir, len(input_shape))):
        return None
    least = any(d is None for d in input_shape)
    got = op.elements(ir, tuple(1 if d is None else d for d in input_shape))
    return None if got is None else (got[0], got[1], least or got[2])


def estimate(ir, rung: int, input_shape, table: Calibration | None = None, sides: tuple = NOT_AT_BOUNDARY) -> \
        dict | None:
    """The two sides of the choice, or None where the model has no rate for either (a class not calibrated) or
    cannot compare them:
    * static sizes: {"chosen_ms", "extension_ms"} at the node's sizes, reorders included (a batch known only at
      run time taken as 1: the smallest run; "assumed" says so);
    * sizes known only at run time: {"chosen_ns", "extension_ns"} per unit of the rates (an output element; a
      DeformConv's multiply-accumulate), and "assumed" where the input's size per output is not fixed by the node
      (taken as 1, the most an upscale reads), each rung's fixed cost per call spread over ``REFERENCE_OUTPUTS``
      (the calibration's upscale output: a mid-size feature map). Against the index form's chain of about 120
      scalar ops (0.05-0.09 ms a call) that is what the choice turns on (measured: run-time nearest x2 and x0.5
      between Conv layers, 8x8 to 400x400 maps, the extension 1.04-2.2x faster, never slower).
    Static sizes add each rung's fixed cost per call where the table has it ("fixed_ms"), the extension's larger
    where a length is known only at run time (``cost_timing.DYNAMIC``).
    ``sides``: (input, output) at the model's own inputs / outputs (``boundary``), where no reorder is charged
    against a built-in op; the record names them ("boundary"). "call_ms" (against a built-in op, static sizes): an
    inference of nothing, where the table has it: a saving below it is not taken."""
    table = table or calibration()
    cls = rung if isinstance(rung, str) else RUNG_CLASS.get(rung)
    op = COST_OPS.of(ir)
    if cls is None or not op.weighs(ir, cls):
        return None
    sizes = _static_elements(ir, input_shape)
    if sizes is not None and (sizes[1] == 0 or not op.static_rate(ir, cls)):  # an empty output: nothing to weigh
        return None
    in_per_out = sizes[0] / sizes[1] if sizes else op.per_unit(ir)[0]
    up = in_per_out is None or in_per_out <= 1
    keys = _keys(ir, cls, up, input_shape, table)
    cur = table.rate(keys[0])
    ext = table.rate(keys[1]) if cur is not None else None
    if ext is None:
        return None
    # The reorders measured around the extension are its extra over a built-in op, which keeps the plugin's
    # blocked layouts (at least a copy); none on a side at the model's boundary (not even timed where both sides
    # are). A decomposition's Gather chain runs planar as the extension does: between Conv layers the two paid the
    # same reorders (measured: the index form 25.5 ms more than alone, the extension 25.2; the antialias tap
    # tables 1.71 and 1.69), so against it none is charged.
    charged_in, charged_out = (cls in IN_GRAPH_OPS and not sides[0]), (cls in IN_GRAPH_OPS and not sides[1])
    layout = 0.0
    if charged_in or charged_out:
        layout = max(table.rate("copy") or 0.0, table.rate("layout") or 0.0)
    # Each rung's fixed cost per call where the table has it (cost_timing); the extension's grows where a length
    # is known only at run time (the plugin's shape inference of a custom op).
    run_time = sizes is None or sizes[2]
    fixed = (table.rate(fixed_key(keys[0])) or 0.0,
             (table.rate(fixed_key(keys[1])) or 0.0) + ((table.rate(DYNAMIC) or 0.0) if run_time else 0.0))
    if sizes is not None:
        n_in, n_out, least = sizes
        units = op.units(ir, n_out)
        got = {"chosen_ms": (fixed[0] + cur * units) / 1e6,
               "extension_ms": (fixed[1] + ext * units + layout * (n_in * charged_in + n_out * charged_out)) / 1e6}
        if any(fixed):
            got["fixed_ms"] = [f / 1e6 for f in fixed]
        if least:
            got["assumed"] = "1 for each length known only at run time"
        # One op against one: a saving below a call's own cost is not taken (tiny models keep the op that needs
        # nothing beside them; their times are within a busy machine's noise of one call).
        if cls in IN_GRAPH_OPS and table.rate("call"):
            got["call_ms"] = table.rate("call") / 1e6
    else:
        per_out = op.per_unit(ir)[1]
        got = {"chosen_ns": cur + fixed[0] * per_out / REFERENCE_OUTPUTS,
               "extension_ns": ext + fixed[1] * per_out / REFERENCE_OUTPUTS +
               layout * ((in_per_out or per_out) * charged_in + per_out * charged_out)}
        if in_per_out is None and charged_in:
            got["assumed"] = "the input as large as the output"
        if op.per is not None:
            got["per"] = op.per
    if any(sides) and cls in IN_GRAPH_OPS:
        got["boundary"] = " and ".join(s for s, at in zip(("input", "output"), sides) if at)
    if keys[0].endswith(few_key("")):
        got["few_channels"] = input_shape[1]
    return got


def _keys(ir, cls: str, up: bool, input_shape, table: Calibration) -> tuple[str, str]:
    """The rates' keys of the chosen rung and of the extension: integer linear / cubic read the rates timed on
    integers (``cost_timing.INTEGER``); against a built-in op, at most ``FEW`` channels read the rates timed at few
    channels where the table has both (``cost_timing.FEW``)."""
    op = COST_OPS.of(ir)
    keys = (op.key(ir, cls, up), op.key(ir, "extension", up))
    if op.integer_rates(ir):
        return tuple(int_key(k) for k in keys)
    channels = input_shape[1] if input_shape is not None and len(input_shape) >= 3 else None
    if cls not in IN_GRAPH_OPS or not op.few_channel_rates(ir) or channels is None or channels > FEW:
        return keys
    few = tuple(few_key(k) for k in keys)
    return few if all(table.rate(k) is not None for k in few) else keys


def faster_extension(node, record) -> str | None:
    """The reason to take the extension instead of the chosen rung (the estimate, in words), or None; the
    estimate goes on the record."""
    why, weighed = weigh(node, rung_class(record), chosen_name(record))
    if weighed is not None:
        record.extra["cost"] = weighed
    return why


def weigh(node, rung: int, name: str) -> tuple[str | None, dict | None]:
    """(the reason to take the extension instead of ``rung``, called ``name`` in it, or None; the estimate with
    its margin and table, or None where there is none)."""
    table = calibration(node.timing)
    shape = getattr(node.ir, "input_shape", None)
    with table.reading() as read:
        est = estimate(node.ir, rung, shape, table, node.sides)
    if est is None:
        return None, None
    why = _faster(est, rung, name, table)
    if why is not None and table.confirm(read):  # timed again before the extension is taken (cost_machine.CONFIRM_RUNS)
        est = estimate(node.ir, rung, shape, table, node.sides)
        why = _faster(est, rung, name, table)
    return why, {**est, "margin": MARGIN, "rates": table.where}


def _faster(est: dict, rung: int, name: str, table: Calibration) -> str | None:
    per_element = "chosen_ns" in est
    cur, ext = (est["chosen_ns"], est["extension_ns"]) if per_element else (est["chosen_ms"], est["extension_ms"])
    if cur < MARGIN * ext * (1 - 1e-12):  # at least MARGIN times faster (up to the ms conversion's rounding)
        return None
    if cur - ext < est.get("call_ms", 0.0):  # a saving below a call's own cost (estimate's note)
        return None
    reorders = "reorders included" + (f", none at the model's {est['boundary']}" if "boundary" in est else "") \
        if (rung if isinstance(rung, str) else RUNG_CLASS.get(rung)) in IN_GRAPH_OPS else \
        "reorders alike: the decomposition runs planar too"
    if per_element:
        assumed = f", {est['assumed']}" if "assumed" in est else ""
        return (f"cost model: {cur / ext:.2g}x faster per {est.get('per', 'output element')} than {name} on "
                f"{table.where} (sizes known at run time{assumed}; {reorders})")
    assumed = f" with {est['assumed']}" if "assumed" in est else ""
    return (f"cost model: {cur / ext:.2g}x faster than {name} on {table.where} (estimated "
            f"{ext:.3g} ms against {cur:.3g} ms{assumed}, {reorders})")


def chosen_name(record) -> str:
    """The rung the ladder chose, as the reason names it: "Interpolate-11 (rung 1)", "the decomposition (rung
    3)"."""
    op = record.reason.split(" ", 1)[0].rstrip(",;:")
    if record.rung in (1, 2) and "-" in op and op.rsplit("-", 1)[1].isdigit():
        return f"{op} (rung {record.rung})"
    return f"the {record.rung_name} (rung {record.rung})"
