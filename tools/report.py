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
from .report_draw import esc, fmt, node_section, require_matplotlib, table, tone, write_page

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


def probe_image(shape, dtype) -> np.ndarray:
    """A picture for the data input: a ramp over the last two axes (reads as an image) plus a fine
    checkerboard (a read of the neighbouring element shows as a full-contrast error), offset per channel."""
    shape = tuple(int(s) for s in shape)
    if not shape:
        return np.zeros((), dtype)
    idx = np.indices(shape, dtype=np.float64)
    h, w = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
    i = idx[-2] if len(shape) >= 2 else np.zeros(shape)
    j = idx[-1]
    v = 0.5 * (i / max(h, 1) + j / max(w, 1)) + 0.5 * ((i + j) % 2)
    for k in range(len(shape) - 2):  # channels, depth: a small offset each, so slices differ
        v = v + 0.05 * idx[k]
    if np.issubdtype(np.dtype(dtype), np.integer):
        v = np.round(v * 100)
    return v.astype(dtype)


# ----------------------------------------------------------------------------------------------------------
# Running each node three ways


def compare_nodes(model, *, fallback: str = "decompose", strict: bool = False) -> list[NodeView]:
    """Every resampling node of ``model`` (a path or ModelProto) on a probe image: the oracle, OpenVINO's own
    importer, and resample-bridge's conversion, on the same inputs."""
    import tempfile

    import onnx

    from .check_openvino_node import single_node_models
    from ..translate.onnx import load
    from .logs import Progress

    views = []
    nodes = list(single_node_models(load(model)))
    progress = Progress("running each node on a probe image (importer, resample-bridge, oracle)", len(nodes))
    with tempfile.TemporaryDirectory() as d:
        for k, (name, ir, one, feeds) in enumerate(nodes):
            progress(k, what=name)
            x = one.graph.node[0].input[0]
            if x in feeds:
                feeds[x] = probe_image(feeds[x].shape, feeds[x].dtype)
            path = os.path.join(d, f"node{k}.onnx")
            onnx.save(one, path)
            views.append(_view(name, ir, one, feeds, path, fallback, strict))
    progress(len(nodes))
    return views


def _view(name, ir, one, feeds, path, fallback, strict) -> NodeView:
    from onnx import numpy_helper

    from ..semantics.reference import run

    consts = {i.name: numpy_helper.to_array(i) for i in one.graph.initializer}
    args = [None if not n else feeds.get(n, consts.get(n)) for n in one.graph.node[0].input]
    view = NodeView(name=name, op=ir.origin, exact=np.asarray(run(ir, *args)))
    _run_importer(view, ir, path, feeds)
    _run_ours(view, path, feeds, fallback, strict)
    return view


def _run_importer(view: NodeView, ir, path: str, feeds: dict) -> None:
    """OpenVINO's own ONNX importer, alone: its output on the probe and the IR fields it changed."""
    import openvino as ov

    from ..lowering.openvino import openvino_error_reason
    from ..lowering.openvino.graph import compile_f32

    try:
        ov_model = ov.convert_model(path)
    except Exception as e:
        view.importer_note = "refused: " + openvino_error_reason(str(e))
        return
    view.fields = importer_fields(ir, ov_model)
    try:
        view.importer = np.asarray(compile_f32(ov_model)(feeds)[0])
    except Exception as e:
        view.importer_note = "converts but does not run: " + openvino_error_reason(str(e))
        return
    if view.importer.shape != view.exact.shape:
        view.importer_note = f"output shape {view.importer.shape} instead of {view.exact.shape}"


def importer_fields(ir, ov_model) -> list[FieldRow]:
    """The IR fields whose values the importer changed (empty when it built no single resampling op, or
    when the values cannot be compared; the numbers still speak)."""
    from ..semantics.equivalence import diff
    from ..translate import openvino as tov

    try:
        parsed = tov.parse_model(ov_model)
        if len(parsed) != 1:
            return []
        d = diff(ir, parsed[0][1], shapes=ir.input_shape, runtime=None)
    except (BridgeError, TypeError, ValueError):
        return []
    rows = [FieldRow(f.name, str(f.b), str(f.a)) for f in d.fields]
    if d.ties:  # only how coordinates are computed differs: it decides the outputs on a rounding boundary
        at = "; ".join(f"{ax} {idx}" for ax, idx in d.ties.items())
        rows.append(FieldRow(f"arith (output indices on a rounding boundary: {at})",
                             str(getattr(parsed[0][1], "arith", "?")), str(getattr(ir, "arith", "?"))))
    return rows


def _run_ours(view: NodeView, path: str, feeds: dict, fallback: str, strict: bool) -> None:
    from ..lowering.openvino import convert, openvino_error_reason
    from ..lowering.openvino.graph import compile_f32

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


def write_check_report(out_dir: str, model_path: str, rows: list[dict], *, fallback: str = "decompose",
                       strict: bool = False) -> str:
    """The page for ``check --target openvino``: ``rows`` as ``check_openvino`` returns them."""
    views = _views_or_none(model_path, fallback, strict)
    by_name = {v.name: v for v in views}
    summary = []
    for k, r in enumerate(rows):
        v = by_name.get(r.get("name"))
        ov = r.get("openvino", {}) or {}
        ours = r.get("resample_bridge", {}) or {}
        rung = f"rung {ours['rung']} ({esc(ours.get('rung_name', ''))})" if ours.get("rung") is not None else \
            "refuses: " + esc(ours.get("reason", ""))
        summary.append([f'<a href="#node{k}">{esc(r.get("name", "?"))}</a>', esc(r.get("op", "")),
                        f'<span class="verdict {tone(ov.get("verdict", ""))}">{esc(ov.get("verdict", "?"))}</span>',
                        fmt(v.importer_error if v else None), rung, fmt(v.ours_error if v else None)])
    summary_html = table(["node", "op", "OpenVINO importer", "importer's max error (probe image)",
                           "resample-bridge", "resample-bridge max error (probe image)"], summary)

    def sections(panels):
        out = []
        for k, r in enumerate(rows):
            v = by_name.get(r.get("name"))
            if v is not None:
                out.append(node_section(v, k, panels, (r.get("openvino") or {}).get("verdict", "")))
        return "".join(out)

    return write_page(out_dir, f"check --target openvino: {os.path.basename(str(model_path))}",
                      esc(f"{model_path}: {len(rows)} resampling nodes; errors are max |output - exact| on a "
                         f"probe image, on OpenVINO CPU in f32"), summary_html, sections)


def write_verify_report(out_dir: str, model_path: str, report: dict, *, fallback: str = "decompose",
                        strict: bool = False) -> str:
    """The page for ``verify``: ``report`` as ``verify_openvino`` returns it (per output and per node
    errors on the verify inputs) plus, per node, the probe-image pictures."""
    views = _views_or_none(model_path, fallback, strict)
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
        row.insert(1, fmt(v.importer_error) if v else "—")
        node_rows.append(row)
    ok = report.get("ok")
    summary_html = (f'<p>verdict: <span class="verdict {tone("passed" if ok else "failed")}">'
                    f'{"PASSED" if ok else "FAILED"}</span></p>'
                    "<h2>resampling nodes (converted model on OpenVINO CPU f32 vs the oracle, verify inputs)</h2>"
                    + table(["node", "OpenVINO importer's max error (probe image)", "max abs", "max rel", ""],
                             node_rows)
                    + "<h2>model outputs (converted model vs onnxruntime)</h2>"
                    + table(["output", "max abs", "max rel", ""], [err_row(r) for r in report.get("outputs", [])]))

    def sections(panels):
        return "".join(node_section(v, k, panels) for k, v in enumerate(views))

    return write_page(out_dir, f"verify: {os.path.basename(str(model_path))}",
                      esc(f"{model_path}: the tables are the verified model against onnxruntime and the oracle; the "
                         f"pictures show each node cut out, converted anew and run on a probe image"),
                      summary_html, sections)
