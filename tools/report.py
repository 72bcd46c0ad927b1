"""``check --report DIR`` / ``verify --report DIR``: one HTML page with PNGs, for people who would rather look
than read.

At the top a summary table (one row per resampling node: the importer's verdict, resample-bridge's rung, the
errors). Then per node: the IR difference table (field, the importer's value, the model's value), and on a probe
image the exact output (the oracle) next to what OpenVINO's own importer computes and what resample-bridge's
conversion computes, each with a heatmap of its error against the exact one.

The pictures come from :func:`compare_nodes`, which cuts every resampling node out into a one-node model (as
``check`` does), feeds a probe image, and runs the oracle, the importer's conversion and ours on it. That part
needs numpy, onnx and openvino only (``demo`` uses it too); drawing needs matplotlib (the ``report`` extra),
imported when a page is written.
"""

from __future__ import annotations

import html
import logging
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from ..semantics.errors import BridgeError, clip
from ..semantics.tolerance import report_floor

log = logging.getLogger("resample_bridge.report")

MATPLOTLIB_MISSING = "the HTML report needs matplotlib: pip install 'resample-bridge[report]'"
HEAT_CMAP, IMAGE_CMAP = "inferno", "gray"
# The frame of every heatmap on the page: a colour neither colour map produces, so a screenshot can find them.
HEAT_FRAME = "#0066cc"
DISPLAY_PX = 192  # a panel's longer side on the page; small outputs are scaled up with square pixels


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


# ----------------------------------------------------------------------------------------------------------
# Drawing


def require_matplotlib():
    """matplotlib's image module, or BridgeError naming the extra to install."""
    try:
        import matplotlib

        if "matplotlib.pyplot" not in sys.modules:  # files only, never a window; a user's own pyplot is left be
            matplotlib.use("Agg")
        import matplotlib.image as mimage
    except ImportError:
        raise BridgeError(MATPLOTLIB_MISSING, field="report") from None
    return mimage


def _slice2d(a: np.ndarray, pick: int | None = None) -> tuple[np.ndarray, int]:
    """The last two axes of one leading index (``pick``), as float64."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim < 2:
        a = a.reshape(1, -1)
    flat = a.reshape(-1, a.shape[-2], a.shape[-1])
    k = 0 if pick is None else min(pick, flat.shape[0] - 1)
    return flat[k], k


def _worst_slice(err: np.ndarray | None) -> int:
    if err is None or err.ndim < 2 or err.size == 0:
        return 0
    flat = err.reshape(-1, err.shape[-2], err.shape[-1])
    return int(np.argmax(flat.max(axis=(1, 2))))


def _error(got, want) -> np.ndarray | None:
    if got is None or got.shape != want.shape:
        return None
    return np.abs(got.astype(np.float64) - want.astype(np.float64))


class _Panels:
    """Writes the PNGs of one page and returns their <figure> HTML."""

    def __init__(self, out_dir: str, mimage):
        self.dir, self.mimage, self.files = out_dir, mimage, []

    def png(self, stem: str, img: np.ndarray, cmap: str, vmin: float, vmax: float) -> str:
        name = f"{stem}.png"
        if not np.isfinite(img).all():
            img = np.nan_to_num(img, nan=vmin, posinf=vmax, neginf=vmin)
        self.mimage.imsave(os.path.join(self.dir, name), img, cmap=cmap, vmin=vmin, vmax=vmax)
        self.files.append(name)
        return name

    def figure(self, stem, img, caption, *, heat=False, vmin=0.0, vmax=1.0) -> str:
        name = self.png(stem, img, HEAT_CMAP if heat else IMAGE_CMAP, vmin, vmax)
        h, w = img.shape
        s = max(1, DISPLAY_PX // max(h, w))
        cls = "heat" if heat else "img"
        return (f'<figure class="{cls}"><img src="{name}" width="{w * s}" height="{h * s}" alt="{stem}">'
                f"<figcaption>{caption}</figcaption></figure>")


def _e(text) -> str:
    """Relayed text (node names and messages come from the user's model) escaped for HTML."""
    return html.escape(clip(text, 400))


def _fmt(v: float | None) -> str:
    if v is None:
        return "—"
    if math.isinf(v):
        return "shape differs"
    return f"{v:.3g}"


def node_section(view: NodeView, k: int, panels: _Panels, verdict: str = "") -> str:
    """One node: its IR difference table and its pictures."""
    parts = [f'<section class="node" id="node{k}"><h2>{_e(view.name)} <span class="op">{_e(view.op)}</span>'
             + (f' <span class="verdict {_cls(verdict)}">{_e(verdict)}</span>' if verdict else "") + "</h2>"]
    if view.fields:
        parts.append("<table class=\"fields\"><tr><th>field</th><th>OpenVINO importer's value</th>"
                     "<th>the model's value</th></tr>")
        parts += [f"<tr><td>{_e(f.field)}</td><td>{_e(f.importer)}</td><td>{_e(f.model)}</td></tr>"
                  for f in view.fields]
        parts.append("</table>")
    elif view.importer_note.startswith("refused"):
        parts.append(f'<p class="note">OpenVINO\'s importer {_e(view.importer_note)}</p>')
    else:
        parts.append('<p class="note">No IR field differs between the importer\'s op and the model.</p>')
    err_imp, err_ours = _error(view.importer, view.exact), _error(view.ours, view.exact)
    pick = _worst_slice(err_imp if err_imp is not None else err_ours)
    exact2d, k_shown = _slice2d(view.exact, pick)
    lo, hi = float(exact2d.min(initial=0)), float(exact2d.max(initial=1))
    hi = hi if hi > lo else lo + 1
    # One scale for both heatmaps, floored at a float32 tolerance so rounding noise stays dark.
    floor = report_floor(view.exact)
    vmax = max([floor] + [float(e.max(initial=0)) for e in (err_imp, err_ours) if e is not None])
    figs = [panels.figure(f"node{k:02d}_exact", exact2d, "exact (oracle)", vmin=lo, vmax=hi)]
    for who, got, err, note, stem in (("OpenVINO importer", view.importer, err_imp, view.importer_note, "importer"),
                                      ("resample-bridge", view.ours, err_ours, view.ours_note, "ours")):
        if err is None:
            figs.append(f'<figure class="missing"><div>{_e(note or "no output")}</div>'
                        f"<figcaption>{who}</figcaption></figure>")
            continue
        got2d, _ = _slice2d(got, pick)
        e2d, _ = _slice2d(err, pick)
        label = f"{who}" + (f": {_e(note)}" if note and stem == "ours" else "")
        figs.append(panels.figure(f"node{k:02d}_{stem}", got2d, label, vmin=lo, vmax=hi))
        figs.append(panels.figure(f"node{k:02d}_{stem}_error", e2d,
                                  f"|{who} − exact|: max {_fmt(float(err.max(initial=0)))}", heat=True,
                                  vmin=0.0, vmax=vmax))
    shown = f"slice {k_shown} of the leading axes" if view.exact.ndim > 2 else "the output"
    parts.append(f'<div class="panels">{"".join(figs)}</div>'
                 f'<p class="scale">Shown: {shown}. Heatmaps: black 0 to yellow {vmax:.3g} '
                 f"(errors below {floor:.2g} stay black).</p></section>")
    return "".join(parts)


def _cls(verdict: str) -> str:
    v = verdict.lower()
    if v.startswith("exact only") or "conditional" in v or "not judged" in v:
        return "warn"
    if v.startswith(("exact", "ok", "passed")):
        return "good"
    return "bad"


_CSS = f"""
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }} h2 {{ font-size: 16px; margin: 24px 0 6px; }}
.op {{ color: #666; font-weight: normal; }} .meta {{ color: #555; margin: 0 0 16px; }}
table {{ border-collapse: collapse; margin: 6px 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; }}
.verdict {{ font-size: 12px; padding: 1px 6px; border-radius: 3px; }}
.good {{ background: #e3f4e3; }} .bad {{ background: #fbe3e3; }} .warn {{ background: #fdf3d6; }}
.panels {{ display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }}
figure {{ margin: 0; }} figcaption {{ font-size: 12px; color: #444; max-width: 220px; }}
figure img {{ image-rendering: pixelated; display: block; }}
figure.heat img {{ border: 3px solid {HEAT_FRAME}; }}
figure.img img {{ border: 3px solid #ddd; }}
figure.missing div {{ width: 180px; height: 120px; border: 3px dashed #ccc; color: #666; font-size: 12px;
  padding: 6px; box-sizing: border-box; overflow: hidden; }}
.note, .scale {{ color: #555; font-size: 12px; }}
"""


def write_page(out_dir: str, title: str, meta: str, summary_html: str, sections_of) -> str:
    """Write ``out_dir``/index.html and its PNGs: staged beside ``out_dir`` and renamed in, the page last, so
    a failure leaves no half-written page. ``sections_of(panels)`` returns the per-node HTML. Returns the
    page's path."""
    from ..lowering.artifacts import publish, staged

    mimage = require_matplotlib()
    out_dir = os.path.abspath(out_dir)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise BridgeError(f"cannot create {out_dir}: {e.strerror or e}", field="report") from None
    if not os.access(out_dir, os.W_OK):
        raise BridgeError(f"{out_dir} is not writable", field="report")
    index = os.path.join(out_dir, "index.html")
    with staged(index) as tmp:
        panels = _Panels(tmp, mimage)
        body = sections_of(panels)
        page = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
                f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1><p class=\"meta\">{meta}</p>"
                f"{summary_html}{body}</body></html>")
        with open(os.path.join(tmp, "index.html"), "w", encoding="utf-8") as f:
            f.write(page)
        moves = {os.path.join(tmp, n): os.path.join(out_dir, n) for n in panels.files}
        moves[os.path.join(tmp, "index.html")] = index  # last: the page appears only with its pictures
        publish(moves, force=True)
    return index


def _table(head: list[str], rows: list[list[str]]) -> str:
    out = ["<table class=\"summary\"><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows]
    return "".join(out) + "</table>"


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
        rung = f"rung {ours['rung']} ({_e(ours.get('rung_name', ''))})" if ours.get("rung") else \
            "refuses: " + _e(ours.get("reason", ""))
        summary.append([f'<a href="#node{k}">{_e(r.get("name", "?"))}</a>', _e(r.get("op", "")),
                        f'<span class="verdict {_cls(ov.get("verdict", ""))}">{_e(ov.get("verdict", "?"))}</span>',
                        _fmt(v.importer_error if v else None), rung, _fmt(v.ours_error if v else None)])
    summary_html = _table(["node", "op", "OpenVINO importer", "importer's max error (probe image)",
                           "resample-bridge", "resample-bridge max error (probe image)"], summary)

    def sections(panels):
        out = []
        for k, r in enumerate(rows):
            v = by_name.get(r.get("name"))
            if v is not None:
                out.append(node_section(v, k, panels, (r.get("openvino") or {}).get("verdict", "")))
        return "".join(out)

    return write_page(out_dir, f"check --target openvino: {os.path.basename(str(model_path))}",
                      _e(f"{model_path}: {len(rows)} resampling nodes; errors are max |output - exact| on a "
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
        name = _e(r.get("name", "?"))
        ok = verdict(r.get("ok"))
        return [f'<a href="#{link}">{name}</a>' if link else name, _fmt(r.get("max_abs")), _fmt(r.get("max_rel")),
                f'<span class="verdict {_cls(ok)}">{ok}</span>']

    node_rows, names = [], [v.name for v in views]
    for r in report.get("nodes", []):
        k = names.index(r["name"]) if r.get("name") in names else None
        row = err_row(r, f"node{k}" if k is not None else None)
        v = by_name.get(r.get("name"))
        row.insert(1, _fmt(v.importer_error) if v else "—")
        node_rows.append(row)
    ok = report.get("ok")
    summary_html = (f'<p>verdict: <span class="verdict {_cls("passed" if ok else "failed")}">'
                    f'{"PASSED" if ok else "FAILED"}</span></p>'
                    "<h2>resampling nodes (converted model on OpenVINO CPU f32 vs the oracle, verify inputs)</h2>"
                    + _table(["node", "OpenVINO importer's max error (probe image)", "max abs", "max rel", ""],
                             node_rows)
                    + "<h2>model outputs (converted model vs onnxruntime)</h2>"
                    + _table(["output", "max abs", "max rel", ""], [err_row(r) for r in report.get("outputs", [])]))

    def sections(panels):
        return "".join(node_section(v, k, panels) for k, v in enumerate(views))

    return write_page(out_dir, f"verify: {os.path.basename(str(model_path))}",
                      _e(f"{model_path}: the tables are the verified model against onnxruntime and the oracle; the "
                         f"pictures show each node cut out, converted anew and run on a probe image"),
                      summary_html, sections)
