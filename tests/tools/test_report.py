"""``check --report`` / ``verify --report``: the HTML page, judged from what a real browser shows."""

import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.tools.cli import main
from resample_bridge.tools.report import HEAT_FRAME

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
INFERNO_0 = (0, 0, 4)  # the colour of error 0 on the heatmaps


def two_nodes(name_a="nn", name_b="up") -> onnx.ModelProto:
    """``nn``: 20 -> 6 nearest with ties OpenVINO's importer resolves differently (silently different);
    ``up``: linear x2, which it computes exactly."""
    sizes = numpy_helper.from_array(np.array([1, 1, 6, 6], np.int64), "sizes")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [helper.make_node("Resize", ["X", "", "", "sizes"], ["A"], name=name_a, mode="nearest",
                              coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
             helper.make_node("Resize", ["X", "", "scales"], ["B"], name=name_b, mode="linear")]
    graph = helper.make_graph(nodes, "two", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 20, 20])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "AB"],
                              [sizes, scales])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _screenshot(page: str, out: str, tmp_path) -> np.ndarray:
    import matplotlib.image as mimage

    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--force-device-scale-factor=1", "--window-size=1280,1800", f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={out}", "file://" + page]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    img = mimage.imread(out)
    return np.round(img[..., :3] * 255).astype(int)


def _frames(rgb: np.ndarray, colour: str) -> list[tuple[int, int, int, int]]:
    """Bounding boxes (top, left, bottom, right) of the connected regions drawn in ``colour``, top to bottom
    and left to right."""
    want = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    mask = (np.abs(rgb - want) <= 2).all(axis=-1)
    seen = np.zeros_like(mask)
    boxes = []
    for y, x in zip(*np.nonzero(mask)):
        if seen[y, x]:
            continue
        stack, box = [(y, x)], [y, x, y, x]
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            box = [min(box[0], cy), min(box[1], cx), max(box[2], cy), max(box[3], cx)]
            for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                if 0 <= ny < mask.shape[0] and 0 <= nx < mask.shape[1] and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        if box[2] - box[0] > 20 and box[3] - box[1] > 20:  # a frame, not a stray pixel
            boxes.append(tuple(box))
    return sorted(boxes)


def _inside(rgb, box, border=3):
    t, l, b, r = box
    return rgb[t + border:b - border + 1, l + border:r - border + 1].reshape(-1, 3)


def _black_fraction(pixels) -> float:
    return float((np.abs(pixels - np.array(INFERNO_0)) <= 3).all(axis=-1).mean())


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_check_report_heatmaps_show_in_chromium(tmp_path, capsys):
    model = tmp_path / "two.onnx"
    onnx.save(two_nodes(), model)
    rep = tmp_path / "rep"
    assert main(["check", str(model), "--target", "openvino", "--report", str(rep)]) == 1  # nn fails the gate
    assert f"report: {rep / 'index.html'}" in capsys.readouterr().err
    page = (rep / "index.html").read_text()
    assert page.index("<table") < page.index('id="node0"')  # the summary comes first
    assert "arith (output indices on a rounding boundary: H [1, 4]; W [1, 4])" in page  # the IR difference table
    rgb = _screenshot(str(rep / "index.html"), str(tmp_path / "shot.png"), tmp_path)
    frames = _frames(rgb, HEAT_FRAME)
    # Per node: the importer's error heatmap, then ours; nn above up.
    assert len(frames) == 4, frames
    nn_importer, nn_ours, up_importer, up_ours = (_inside(rgb, f) for f in frames)
    assert frames[0][0] == frames[1][0] < frames[2][0] == frames[3][0]
    # The importer's error on nn shows: the tie rows/columns light up, the rest stays at 0.
    assert 0.3 < _black_fraction(nn_importer) < 0.95
    assert len(np.unique(nn_importer, axis=0)) >= 3
    lit = nn_importer[(np.abs(nn_importer - np.array(INFERNO_0)) > 3).any(axis=-1)]
    assert lit[:, 0].mean() > 150  # bright (inferno's top end: orange to yellow), not a grey broken-image icon
    # Where the numbers agree the heatmap is uniformly 0.
    for exact in (nn_ours, up_importer, up_ours):
        assert _black_fraction(exact) > 0.99


def test_report_page_escapes_what_comes_from_the_model(tmp_path):
    pytest.importorskip("matplotlib")
    model = tmp_path / "evil.onnx"
    onnx.save(two_nodes(name_a="<script>alert(1)</script>", name_b="b&<i>"), model)
    assert main(["check", str(model), "--report", str(tmp_path / "rep"), "--fail-on", "none"]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "<script>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "b&amp;&lt;i&gt;" in page


def test_verify_report(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    model = tmp_path / "two.onnx"
    onnx.save(two_nodes(), model)
    assert main(["verify", str(model), "--report", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "PASSED" in page and 'href="#node0">nn<' in page and 'href="#node1">up<' in page
    names = sorted(os.listdir(tmp_path / "rep"))
    assert "node00_importer_error.png" in names and "node01_ours_error.png" in names
    assert not [n for n in names if n.startswith(".")]  # nothing staged is left behind


def test_without_matplotlib_exit_2_naming_the_extra(tmp_path, capsys, monkeypatch):
    model = tmp_path / "two.onnx"
    onnx.save(two_nodes(), model)
    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main(["check", str(model), "--report", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'resample-bridge[report]'" in err
    assert not (tmp_path / "rep").exists()  # said before any work


def test_report_needs_the_openvino_target(tmp_path, capsys):
    model = tmp_path / "two.onnx"
    onnx.save(two_nodes(), model)
    assert main(["check", str(model), "--target", "tensorrt", "--report", str(tmp_path / "rep")]) == 2
    assert "--report" in capsys.readouterr().err


def _dynamic_two_nodes() -> onnx.ModelProto:
    """X[N, 3, H, W]: ``up`` linear x2 (the importer is exact) and ``aa`` a cubic antialias downscale (the
    importer drops antialias) -- a model whose pictures were 2x2 black squares (a 1x1 probe)."""
    up = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up_scales")
    down = numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "aa_scales")
    nodes = [helper.make_node("Resize", ["X", "", "up_scales"], ["A"], name="up", mode="linear"),
             helper.make_node("Resize", ["X", "", "aa_scales"], ["B"], name="aa", mode="cubic", antialias=1,
                              exclude_outside=1)]
    graph = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "AB"], [up, down])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _summary_cells(page: str, name: str) -> list[str]:
    """The summary table's cells of node ``name`` (text only)."""
    import re

    row = re.search(r'<tr><td><a href="#node\d+">' + re.escape(name) + r"</a></td>(.*?)</tr>", page).group(1)
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", row)]


def test_one_probe_per_node_in_check_verify_and_the_report(tmp_path, capsys):
    """The importer's error for a node is one number: check --json, verify --json --report and both reports
    print the same, and it is the importer's output against the oracle on the probe input they name."""
    pytest.importorskip("matplotlib")
    import json

    import openvino as ov

    from resample_bridge.semantics.reference import run
    from resample_bridge.tools.node_probe import probe_image
    from resample_bridge.translate.onnx import parse_model

    model = tmp_path / "two.onnx"
    onnx.save(two_nodes(), model)
    main(["check", str(model), "--json", "--report", str(tmp_path / "c"), "--fail-on", "none"])
    check = {r["name"]: r for r in json.loads(capsys.readouterr().out)["nodes"]}
    assert main(["verify", str(model), "--json", "--report", str(tmp_path / "v")]) == 0
    verify = {r["name"]: r for r in json.loads(capsys.readouterr().out)["nodes"]}
    check_page = (tmp_path / "c" / "index.html").read_text()
    verify_page = (tmp_path / "v" / "index.html").read_text()
    irs = dict(parse_model(str(model)))
    x = probe_image((1, 1, 20, 20), np.float32)
    importer = ov.Core().compile_model(ov.convert_model(str(model)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for k, name in enumerate(("nn", "up")):
        e = check[name]["openvino"]["max_error"]
        assert check[name]["probe"]["shape"] == [1, 1, 20, 20] and check[name]["probe"]["defaults"] == {}
        # The number itself: OpenVINO's importer on the probe against the oracle, measured here.
        got = importer([x])[k].astype(np.float64)
        want = run(irs[name], x, *[None] * 2, np.array([1, 1, 6, 6], np.int64)) if name == "nn" else \
            run(irs[name], x, None, np.array([1, 1, 2, 2], np.float32))
        assert e == float(np.abs(got - want.astype(np.float64)).max())
        assert verify[name]["probe"]["importer_max_error"] == e
        assert _summary_cells(check_page, name)[2] == f"{e:.3g}"
        assert _summary_cells(verify_page, name)[0] == f"{e:.3g}"
    assert check["nn"]["openvino"]["max_error"] > 0.1  # the tie rows read another element


def test_dynamic_model_report_uses_stated_defaults_and_carries_the_gate(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib.image as mimage

    model = tmp_path / "dyn.onnx"
    onnx.save(_dynamic_two_nodes(), model)
    rep = tmp_path / "rep"
    assert main(["check", str(model), "--report", str(rep)]) == 1
    out = capsys.readouterr().out
    page = (rep / "index.html").read_text()
    gate = [ln for ln in out.splitlines() if ln.startswith("gate (")]
    assert gate and gate[0] in page  # the gate verdict as check printed it
    assert "axis 2 = 16, axis 3 = 16" in page  # the defaults given to the dynamic dimensions, said
    assert "    probe input: X [1, 3, 16, 16] (seed 0; dynamic dims given defaults: axis 0 = 1, axis 2 = 16, " \
           "axis 3 = 16)" in out.splitlines()  # and in check's own text
    for dist in ("resample-bridge", "openvino", "onnxruntime", "onnx"):
        assert f"{dist} " in page.split("versions:")[1].split("<br>")[0]
    assert "forward error bound of a float32 evaluation" in page
    exact = mimage.imread(rep / "node00_exact.png")
    assert exact.shape[:2] == (32, 32)  # 16 x 2, not a 1x1 probe's 2x2
    heat = [n for n in os.listdir(rep) if n.endswith("_error.png")]
    bars = [n for n in os.listdir(rep) if n.endswith("_error_bar.png")]
    hists = [n for n in os.listdir(rep) if n.endswith("_histogram.png")]
    assert len(heat) == 4 and sorted(bars) == sorted(h.replace(".png", "_bar.png") for h in heat) and len(hists) == 2
    for h in heat:
        assert f'src="{h.replace(".png", "_bar.png")}"' in page
    # The probe shows what check found on this node: the importer's antialias difference, with its error.
    assert "sampler.antialias" in page.split('id="node1"')[1]


_OVERFLOW_JS = """<script>
window.addEventListener('load', () => {
  const bad = [];
  for (const el of document.querySelectorAll('figure.missing div, figcaption, td, th, p, pre, h2')) {
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) bad.push(el.textContent);
    const r = el.getBoundingClientRect();
    if (r.right > document.documentElement.scrollWidth + 1) bad.push('off the page: ' + el.textContent);
  }
  document.body.setAttribute('data-clipped', JSON.stringify(bad));
});
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_no_text_box_is_clipped_in_chromium(tmp_path):
    """A refusal is shown whole and wrapped: Chromium lays the page out and no text box overflows its box."""
    import json
    import re

    from resample_bridge.tools.examples import tricky_model

    model = tmp_path / "tricky.onnx"
    onnx.save(tricky_model(), model)
    rep = tmp_path / "rep"
    assert main(["check", str(model), "--report", str(rep), "--fail-on", "none"]) == 0
    page = (rep / "index.html").read_text()
    refused = re.findall(r'<figure class="missing"><div>(.*?)</div>', page)
    assert refused and all("more characters" not in r for r in refused)
    probe = rep / "probe.html"
    probe.write_text(page.replace("</body>", _OVERFLOW_JS + "</body>"))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1800",
                          f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom",
                          "file://" + str(probe)], capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-clipped="([^"]*)"', dom)
    assert found, dom[-500:]
    import html

    assert json.loads(html.unescape(found.group(1))) == []


def test_verify_report_probes_at_the_shapes_verify_ran(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib.image as mimage

    model = tmp_path / "dyn.onnx"
    onnx.save(_dynamic_two_nodes(), model)
    rep = tmp_path / "rep"
    assert main(["verify", str(model), "--input-shapes", "X:[1,3,24,20]", "--report", str(rep)]) == 0
    page = (rep / "index.html").read_text()
    assert "probe input: X [1, 3, 24, 20] (seed 0)<" in page and "dynamic dims given defaults" not in page
    assert mimage.imread(rep / "node00_exact.png").shape[:2] == (48, 40)


def test_dynamic_gridsample_pictures_are_not_one_pixel(tmp_path):
    """A GridSample whose X and grid are both dynamic: the grid's output dims take the default too."""
    pytest.importorskip("matplotlib")
    import matplotlib.image as mimage

    g = helper.make_graph([helper.make_node("GridSample", ["X", "G"], ["Y"], name="gs", mode="linear")], "gs",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", "C", "H", "W"]),
                           helper.make_tensor_value_info("G", TensorProto.FLOAT, ["N", "Ho", "Wo", 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = tmp_path / "gs.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], ir_version=10), model)
    assert main(["check", str(model), "--report", str(tmp_path / "rep"), "--fail-on", "none"]) == 0
    assert mimage.imread(tmp_path / "rep" / "node00_exact.png").shape[:2] == (16, 16)
