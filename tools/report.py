"""``check --report DIR`` / ``verify --report DIR``: one HTML page with PNGs, for people who would rather look
than read.

At the top a summary table (one row per resampling node: the importer's verdict, resample-bridge's rung, the
errors). Then per node: the IR difference table (field, the importer's value, the model's value), and on a probe
image the exact output (the oracle) next to what OpenVINO's own importer computes and what resample-bridge's
conversion computes, each with a heatmap of its error against the exact one.

The pictures come from :func:`compare_nodes`, which cuts every resampling node out into a one-node model (as
``check`` does), feeds a probe image, and runs the oracle, the importer's conversion and ours on it. That part
needs numpy, onnx and openvino only (``demo`` uses it too); drawing needs matplotlib (the ``report`` extra),
imported when a page is written (``tools/report_draw.py`` draws).
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..semantics.errors import BridgeError
from .report_draw import DISPLAY_PX, HEAT_CMAP, HEAT_FRAME, IMAGE_CMAP, MATPLOTLIB_MISSING  # noqa: F401
from .node_probe import probe_image, probe_note, probe_text  # noqa: F401 (probe_image: the demo's tests)
from .report_draw import esc, fmt, node_section, require_matplotlib, table, tone, write_page
from ..lowering.openvino import convert, openvino_error_reason
from ..lowering.openvino.graph import compile_f32
from ..semantics.equivalence import diff
from ..semantics.reference import run
from ..semantics.tolerance import POLICY
from ..translate import openvino as tov
from ..translate.onnx import load
from ..translate.onnx_shapes import with_input_shapes
from .check_openvino_node import single_node_models
from .gate import format_summary
from .logs import Progress

log = logging.getLogger("resample_bridge.report")


@dataclass(frozen=True)
class FieldRow:
    """One IR field that differs between the model and what the importer built."""

    field: str
    importer: str
    model: str


@dataclass
class NodeView:
    """One resampling node run on a probe image: the exact output, the importer's, ours (None where there is
    none, with the reason in the note)."""

    name: str
    op: str
    exact: np.ndarray
    importer: np.ndarray | None = None
    importer_note: str = ""
    fields: list[FieldRow] = field(default_factory=list)
    ours: np.ndarray | None = None
    ours_note: str = ""
    rung: int | None = None
    probe: dict = field(default_factory=dict)  # node_probe.probe_note: the input, its shape, the defaults

    @property
    def importer_error(self) -> float | None:
        return max_error(self.importer, self.exact)

    @property
    def ours_error(self) -> float | None:
        return max_error(self.ours, self.exact)


def max_error(got: np.ndarray | None, want: np.ndarray) -> float | None:
    """Max absolute difference; None without an output, inf when the shapes differ."""
    if got is None:
        return None
    if got.shape != want.shape:
        return math.inf
    if got.size == 0:
        return 0.0
    return float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())


# ----------------------------------------------------------------------------------------------------------
# Running each node three ways


def compare_nodes(model, *, fallback: str = "decompose", strict: bool = False) -> list[NodeView]:
    """Every resampling node of ``model`` (a path or ModelProto) on its probe input -- the one ``check`` judges
    it on (``node_probe``) -- through the oracle, OpenVINO's own importer and resample-bridge's conversion."""
    import tempfile

    import onnx

    views = []
    # A node no one-node model stands for (inside an If / Loop / Scan body, or of unknown input rank) has no
    # probe of its own: the page shows the nodes that have one, verify's text lists the others as not observable.
    nodes = [n for n in single_node_models(load(model), unproven=True) if n[2] is not None]
    progress = Progress("running each node on a probe image (importer, resample-bridge, oracle)", len(nodes))
    with tempfile.TemporaryDirectory() as d:
        for k, (name, ir, one, feeds) in enumerate(nodes):
            progress(k, what=name)
            path = os.path.join(d, f"node{k}.onnx")
            onnx.save(one, path)
            views.append(_view(name, ir, one, feeds, path, fallback, strict))
    progress(len(nodes))
    return views


def _view(name, ir, one, feeds, path, fallback, strict) -> NodeView:
    from onnx import numpy_helper

    consts = {i.name: numpy_helper.to_array(i) for i in one.graph.initializer}
    args = [None if not n else feeds.get(n, consts.get(n)) for n in one.graph.node[0].input]
    view = NodeView(name=name, op=ir.origin, exact=np.asarray(run(ir, *args)), probe=probe_note(one, feeds))
    _run_importer(view, ir, path, feeds)
    _run_ours(view, path, feeds, fallback, strict)
    return view


def _run_importer(view: NodeView, ir, path: str, feeds: dict) -> None:
    """OpenVINO's own ONNX importer, alone: its output on the probe and the IR fields it changed."""
    import openvino as ov

    try:
        ov_model = ov.convert_model(path)
    except Exception as e:
        view.importer_note = "refused: " + openvino_error_reason(str(e))
        return
    x = feeds.get(view.probe.get("input"))
    view.fields = importer_fields(ir, ov_model, None if x is None else x.shape)
    try:
        view.importer = np.asarray(compile_f32(ov_model)(feeds)[0])
    except Exception as e:
        view.importer_note = "converts but does not run: " + openvino_error_reason(str(e))
        return
    if view.importer.shape != view.exact.shape:
        view.importer_note = f"output shape {view.importer.shape} instead of {view.exact.shape}"


def importer_fields(ir, ov_model, shape=None) -> list[FieldRow]:
    """The IR fields whose values the importer changed at ``shape`` (the probe's; default: the model's), empty
    when it built no single resampling op or the values cannot be compared (the numbers still speak)."""

    try:
        parsed = tov.parse_model(ov_model)
        if len(parsed) != 1:
            return []
        d = diff(ir, parsed[0][1], shapes=tuple(shape) if shape is not None else ir.input_shape, runtime=None)
    except (BridgeError, TypeError, ValueError):
        return []
    rows = [FieldRow(f.name, str(f.b), str(f.a)) for f in d.fields]
    if d.ties:  # only how coordinates are computed differs: it decides the outputs on a rounding boundary
        at = "; ".join(f"{ax} {idx}" for ax, idx in d.ties.items())
        rows.append(FieldRow(f"arith (output indices on a rounding boundary: {at})",
                             str(getattr(parsed[0][1], "arith", "?")), str(getattr(ir, "arith", "?"))))
    return rows


def _run_ours(view: NodeView, path: str, feeds: dict, fallback: str, strict: bool) -> None:
    try:
        ov_model, (rec,) = convert(path, fallback=fallback, strict=strict)
    except BridgeError as e:
        view.ours_note = "refused: " + e.message
        return
    view.rung = rec.rung
    view.ours_note = f"rung {rec.rung} ({rec.rung_name})"
    try:
        view.ours = np.asarray(compile_f32(ov_model)(feeds)[0])
    except Exception as e:  # proven by parse-back, yet the CPU plugin would not run it: show that, not a crash
        view.ours_note += ", does not run here: " + openvino_error_reason(str(e))


def _views_or_none(model_path, fallback, strict) -> list[NodeView]:
    require_matplotlib()  # before the work: a missing extra is said at once
    return compare_nodes(model_path, fallback=fallback, strict=strict)


def versions() -> dict:
    """The versions a reader needs to reproduce the page (None: not installed)."""
    from importlib import metadata

    out = {}
    for dist in ("resample-bridge", "openvino", "onnxruntime", "onnx", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def page_meta(model_path, what: str) -> str:
    """The lines under the title: the model and what the page shows, the versions, the tolerance policy and
    where the probe inputs come from (HTML)."""

    vs = ", ".join(f"{k} {v or 'not installed'}" for k, v in versions().items())
    return (f"{esc(model_path, None)}: {esc(what, None)}<br>versions: {esc(vs, None)}<br>tolerance: "
            f"{esc(POLICY, None)}<br>probe inputs: each node is cut out and run on the input check judges it on "
            f"(the same shape rule and seed; a dimension the model leaves dynamic gets a stated default, "
            f"--input sets it), on OpenVINO CPU in f32")


def write_check_report(out_dir: str, model_path: str, rows: list[dict], *, fallback: str = "decompose",
                       strict: bool = False, summary: dict | None = None) -> str:
    """The page for ``check --target openvino``: ``rows`` as ``check_openvino`` returns them, ``summary`` as
    ``gate.summary`` (its gate verdict is printed as check prints it)."""

    views = _views_or_none(model_path, fallback, strict)
    by_name = {v.name: v for v in views}
    rows_html = []
    for k, r in enumerate(rows):
        v = by_name.get(r.get("name"))
        ov = r.get("openvino", {}) or {}
        ours = r.get("resample_bridge", {}) or {}
        rung = f"rung {ours['rung']} ({esc(ours.get('rung_name', ''))})" if ours.get("rung") is not None else \
            "refuses: " + esc(ours.get("reason", ""), None)
        rows_html.append([f'<a href="#node{k}">{esc(r.get("name", "?"))}</a>', esc(r.get("op", "")),
                          f'<span class="verdict {tone(ov.get("verdict", ""))}">{esc(ov.get("verdict", "?"))}</span>',
                          fmt(v.importer_error if v else None), rung, fmt(v.ours_error if v else None),
                          esc(probe_text(v.probe) if v else "")])
    gate = ""
    if summary is not None:
        g = summary["gate"]
        gate = (f'<pre class="gate {tone("passed" if g["passed"] else "failed")}">'
                f"{esc(format_summary(summary), None)}</pre>")
    summary_html = gate + table(["node", "op", "OpenVINO importer", "importer's max error (probe)",
                                 "resample-bridge", "resample-bridge max error (probe)", "probe input"], rows_html)

    def sections(panels):
        out = []
        for k, r in enumerate(rows):
            v = by_name.get(r.get("name"))
            if v is not None:
                out.append(node_section(v, k, panels, (r.get("openvino") or {}).get("verdict", "")))
        return "".join(out)

    return write_page(out_dir, f"check --target openvino: {os.path.basename(str(model_path))}",
                      page_meta(model_path, f"{len(rows)} resampling nodes; errors are max |output - exact| on "
                                            f"each node's probe input"), summary_html, sections)


def attach_probe_numbers(report: dict, views: list[NodeView]) -> None:
    """verify's per-node records gain ``probe``: the node cut out and run on check's probe input (the
    importer's error and resample-bridge's there), beside verify's own numbers on the model's inputs."""
    by_name = {v.name: v for v in views}
    for r in report.get("nodes", []):
        v = by_name.get(r.get("name"))
        if v is not None:
            r["probe"] = {"importer_max_error": _finite(v.importer_error), "importer_note": v.importer_note,
                          "resample_bridge_max_error": _finite(v.ours_error), "input": v.probe}


def _at_shapes_of(model_path, report: dict):
    """The model with its inputs at the shapes verify ran (``--input-shapes``, given arrays): the probes and
    pictures take them instead of the defaults for dynamic dimensions."""

    shapes = {s["name"]: s["shape"] for s in report.get("inputs", []) if s.get("shape") is not None}
    return with_input_shapes(load(model_path), shapes) if shapes else model_path


def _finite(x):
    return None if x is None or not math.isfinite(x) else x


def write_verify_report(out_dir: str, model_path: str, report: dict, *, fallback: str = "decompose",
                        strict: bool = False) -> str:
    """The page for ``verify``: ``report`` as ``verify_openvino`` returns it (per output and per node
    errors on the verify inputs) plus, per node, its probe (check's input) with pictures; ``report``'s nodes
    gain the probe numbers (``attach_probe_numbers``)."""
    views = _views_or_none(_at_shapes_of(model_path, report), fallback, strict)
    attach_probe_numbers(report, views)
    by_name = {v.name: v for v in views}

    def verdict(ok):
        return {True: "ok", False: "MISMATCH", None: "not judged"}.get(ok, str(ok))

    def err_row(r, link=None):
        name = esc(r.get("name", "?"))
        ok = verdict(r.get("ok"))
        return [f'<a href="#{link}">{name}</a>' if link else name, fmt(r.get("max_abs")), fmt(r.get("max_rel")),
                f'<span class="verdict {tone(ok)}">{ok}</span>']

    node_rows, names = [], [v.name for v in views]
    for r in report.get("nodes", []):
        k = names.index(r["name"]) if r.get("name") in names else None
        row = err_row(r, f"node{k}" if k is not None else None)
        v = by_name.get(r.get("name"))
        imp = fmt(v.importer_error) if v and v.importer is not None else \
            esc(v.importer_note.split(":")[0] or "—") if v else "—"  # "refused", "converts but does not run"
        row[1:1] = [imp, fmt(v.ours_error) if v else "—",
                    esc(probe_text(v.probe)) if v else "—"]
        node_rows.append(row)
    ok = report.get("ok")
    summary_html = (f'<p>verdict: <span class="verdict {tone("passed" if ok else "failed")}">'
                    f'{"PASSED" if ok else "FAILED"}</span></p>'
                    "<h2>resampling nodes</h2><p class=\"note\">On the probe: the node cut out and run on "
                    "check's probe input (the numbers check prints). On verify's inputs: the converted model's "
                    "node against the oracle fed what OpenVINO fed it (the two agree where the node reads a model "
                    "input of the probe's shape and verify's seed is the probe's).</p>"
                    + table(["node", "OpenVINO importer (probe)", "resample-bridge (probe)", "probe input",
                             "max abs (verify's inputs)", "max rel (verify's inputs)", ""], node_rows)
                    + "<h2>model outputs (converted model vs onnxruntime)</h2>"
                    + table(["output", "max abs", "max rel", ""], [err_row(r) for r in report.get("outputs", [])]))

    def sections(panels):
        return "".join(node_section(v, k, panels) for k, v in enumerate(views))

    return write_page(out_dir, f"verify: {os.path.basename(str(model_path))}",
                      page_meta(model_path, "the tables are the verified model against onnxruntime and the "
                                            "oracle; the pictures show each node on its probe input"),
                      summary_html, sections)
