"""Drawing the report page (``tools/report.py`` runs the nodes): the PNG panels of one node, its section of
the page, the page itself. Needs matplotlib (the ``report`` extra), imported when a page is written."""

from __future__ import annotations

import html
import math
import os
import sys

import numpy as np

from ..semantics.errors import BridgeError, clip
from ..semantics.tolerance import report_floor
from ..lowering.artifacts import publish, staged
from .node_probe import probe_text

MATPLOTLIB_MISSING = "the HTML report needs matplotlib: pip install 'resample-bridge[report]'"
HEAT_CMAP, IMAGE_CMAP = "inferno", "gray"
# The frame of every heatmap on the page: a colour neither colour map produces, so a screenshot can find them.
HEAT_FRAME = "#0066cc"
DISPLAY_PX = 192  # a panel's longer side on the page; small outputs are scaled up with square pixels


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
        bar = self.colour_bar(stem, vmin, vmax, w * s) if heat else ""
        return (f'<figure class="{cls}"><img src="{name}" width="{w * s}" height="{h * s}" alt="{stem}">'
                f"{bar}<figcaption>{caption}</figcaption></figure>")

    def colour_bar(self, stem: str, vmin: float, vmax: float, width: int) -> str:
        """The heatmap's scale under it: the colour map from vmin to vmax, the ends labelled."""
        name = self.png(f"{stem}_bar", np.tile(np.linspace(vmin, vmax, 256), (4, 1)), HEAT_CMAP, vmin, vmax)
        return (f'<div class="cbar" style="width:{max(width, 120) + 6}px"><img src="{name}" alt="colour bar">'
                f"<span>{vmin:.3g}</span><span>{vmax:.3g}</span></div>")

    def histogram(self, stem: str, series: list[tuple[str, np.ndarray]], floor: float) -> str:
        """One node's error histogram: per side, how many elements have each |error| (log count)."""
        from matplotlib.figure import Figure

        series = [(who, e.ravel()) for who, e in series if e is not None and e.size]
        if not series:
            return ""
        top = max(floor, max(float(e.max()) for _, e in series))
        fig = Figure(figsize=(3.6, 2.2), dpi=100)
        ax = fig.subplots()
        ax.hist([e for _, e in series], bins=24, range=(0.0, top), log=True, label=[w for w, _ in series],
                color=["#d9480f", "#1c7ed6"][:len(series)])
        ax.axvline(floor, color="#666", linestyle=":", linewidth=1)
        ax.set_xlabel("|output - exact|", fontsize=8)
        ax.set_ylabel("elements", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"{stem}.png"
        fig.savefig(os.path.join(self.dir, name))
        self.files.append(name)
        return (f'<figure class="hist"><img src="{name}" width="360" height="220" alt="error histogram">'
                f"<figcaption>error histogram ({series[0][1].size} elements per side; dotted: the heatmaps' "
                f"black floor)</figcaption></figure>")


def esc(text, limit: int | None = 400) -> str:
    """Relayed text (node names and messages come from the user's model) escaped for HTML; cut at ``limit``
    (names), or whole (None: messages, which wrap)."""
    return html.escape(clip(text, limit) if limit else str(text))


def fmt(v: float | None) -> str:
    if v is None:
        return "—"
    if math.isinf(v):
        return "shape differs"
    return f"{v:.3g}"


def node_section(view, k: int, panels: _Panels, verdict: str = "") -> str:
    """One node (a ``report.NodeView``): its IR difference table and its pictures."""

    parts = [f'<section class="node" id="node{k}"><h2>{esc(view.name)} <span class="op">{esc(view.op)}</span>'
             + (f' <span class="verdict {tone(verdict)}">{esc(verdict)}</span>' if verdict else "") + "</h2>",
             f'<p class="note">probe input: {esc(probe_text(view.probe), None)}</p>']
    if view.fields:
        parts.append("<table class=\"fields\"><tr><th>field</th><th>OpenVINO importer's value</th>"
                     "<th>the model's value</th></tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(v, None)}</td>" for v in (f.field, f.importer, f.model)) + "</tr>"
                  for f in view.fields]
        parts.append("</table>")
    elif view.importer_note.startswith("refused"):
        parts.append(f'<p class="note">OpenVINO\'s importer {esc(view.importer_note, None)}</p>')
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
            figs.append(f'<figure class="missing"><div>{esc(note or "no output", None)}</div>'
                        f"<figcaption>{who}</figcaption></figure>")
            continue
        got2d, _ = _slice2d(got, pick)
        e2d, _ = _slice2d(err, pick)
        label = f"{who}" + (f": {esc(note, None)}" if note and stem == "ours" else "")
        figs.append(panels.figure(f"node{k:02d}_{stem}", got2d, label, vmin=lo, vmax=hi))
        figs.append(panels.figure(f"node{k:02d}_{stem}_error", e2d,
                                  f"|{who} − exact|: max {fmt(float(err.max(initial=0)))}", heat=True,
                                  vmin=0.0, vmax=vmax))
    figs.append(panels.histogram(f"node{k:02d}_histogram", [("OpenVINO importer", err_imp),
                                                             ("resample-bridge", err_ours)], floor))
    shown = f"slice {k_shown} of the leading axes" if view.exact.ndim > 2 else "the output"
    parts.append(f'<div class="panels">{"".join(figs)}</div>'
                 f'<p class="scale">Shown: {shown}. Heatmaps: black 0 to yellow {vmax:.3g} '
                 f"(errors below {floor:.2g} stay black).</p></section>")
    return "".join(parts)


def tone(verdict: str) -> str:
    """The CSS class of a verdict: good, warn or bad."""
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
.verdict {{ font-size: 12px; padding: 1px 6px; border-radius: 3px; white-space: nowrap; }}
.good {{ background: #e3f4e3; }} .bad {{ background: #fbe3e3; }} .warn {{ background: #fdf3d6; }}
.panels {{ display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }}
figure {{ margin: 0; }} figcaption {{ font-size: 12px; color: #444; max-width: 220px; overflow-wrap: break-word; }}
.cbar {{ display: grid; grid-template-columns: 1fr 1fr; font-size: 11px; color: #444; margin-top: 2px; }}
.cbar img {{ grid-column: 1 / 3; width: 100%; height: 10px; image-rendering: auto; border: 0; }}
.cbar span:last-child {{ text-align: right; }}
pre.gate {{ padding: 6px 8px; white-space: pre-wrap; overflow-wrap: break-word; }}
td {{ overflow-wrap: break-word; }}
figure img {{ image-rendering: pixelated; display: block; }}
figure.heat > img {{ border: 3px solid {HEAT_FRAME}; }}
figure.img > img {{ border: 3px solid #ddd; }}
figure.missing div {{ width: 220px; min-height: 120px; border: 3px dashed #ccc; color: #666; font-size: 12px;
  padding: 6px; box-sizing: border-box; overflow-wrap: break-word; }}
.note, .scale {{ color: #555; font-size: 12px; }}
"""


def write_page(out_dir: str, title: str, meta: str, summary_html: str, sections_of) -> str:
    """Write ``out_dir``/index.html and its PNGs: staged beside ``out_dir`` and renamed in, the page last, so
    a failure leaves no half-written page. ``sections_of(panels)`` returns the per-node HTML. Returns the
    page's path."""

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
        page = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
                f"<style>{_CSS}</style></head><body><h1>{esc(title)}</h1><p class=\"meta\">{meta}</p>"
                f"{summary_html}{body}</body></html>")
        with open(os.path.join(tmp, "index.html"), "w", encoding="utf-8") as f:
            f.write(page)
        moves = {os.path.join(tmp, n): os.path.join(out_dir, n) for n in panels.files}
        moves[os.path.join(tmp, "index.html")] = index  # last: the page appears only with its pictures
        publish(moves, force=True)
    return index


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["<table class=\"summary\"><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows]
    return "".join(out) + "</table>"
