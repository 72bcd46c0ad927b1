"""Output-path faults for ``convert``: a missing or read-only directory, the output (or its .bin, or the
extension library beside it) already there without --force, the output being a directory, a parent that is
a file, a wrong suffix. Good: the expected exit status, the user's files untouched, nothing partial left,
written files with the umask's mode."""

from __future__ import annotations

import os
import random

from .fuzz_cases import Case, make_model, out_vi, vi
from .fuzz_bad import _valid_resize

LIB = "libresample_bridge_openvino.so"


def extension_model():
    """tf_crop_and_resize nearest Resize with scales fed at run time and a crop box reaching outside the input:
    no in-graph form decides which element a tie picks there, so even the portable default (issue 42) takes the
    resample-bridge extension and writes the library beside the .xml."""
    import numpy as np
    from onnx import helper, numpy_helper
    node = helper.make_node("Resize", ["X", "roi", "scales"], ["Y"], name="r_scales", mode="nearest",
                            coordinate_transformation_mode="tf_crop_and_resize")
    roi = numpy_helper.from_array(np.array([0, 0, -0.1, 0.2, 1, 1, 0.8, 1.25], np.float32), "roi")
    return make_model([node], [vi("X", 1, [1, 1, 5, 5]), vi("scales", 1, [4])], [out_vi("Y", 1, 4)], opset=19,
                      inits=[roi])


def _write(d, rel, data=b"user data, keep me\n"):
    p = os.path.join(d, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


def _mk(*rels, files=(), dirs=()):
    def setup(d):
        for r in dirs:
            os.makedirs(os.path.join(d, r), exist_ok=True)
        for r in files:
            _write(d, r)
        return "model.onnx"
    return setup


def _read_only(d):
    if os.geteuid() == 0:   # root writes through mode bits: use a directory the kernel itself refuses
        return "model.onnx"
    os.makedirs(os.path.join(d, "ro"), exist_ok=True)
    os.chmod(os.path.join(d, "ro"), 0o555)
    return "model.onnx"


def _case(label, expect_rc, *, model=None, setup=None, out_xml="out/model.xml", out_onnx="out/model_trt.onnx",
          flags=(), protect=(), verbs=("convert-ov",)):
    return Case("outpath", label, kind="outpath", model=model if model is not None else _valid_resize(),
                setup=setup, verbs=list(verbs), out_xml=out_xml, out_onnx=out_onnx, convert_flags=list(flags),
                expect_rc=expect_rc, protect=list(protect), need_node=False)


def gen_outpath(rng: random.Random) -> Case:
    ro = "/proc/rb-fuzz.xml" if os.geteuid() == 0 else "ro/model.xml"
    ext = extension_model()
    choices = [
        # ovc creates missing folders of -o; so does convert (issue 11).
        lambda: _case("-o into a missing directory", 0, out_xml="missing/model.xml"),
        lambda: _case("-o under a regular file", 2, setup=_mk(files=["out/file"]), out_xml="out/file/model.xml",
                      protect=["out/file"]),
        lambda: _case("-o onto a directory", 2, setup=_mk(dirs=["out/model.xml"]), protect=["out/model.xml"]),
        lambda: _case("-o onto a directory with --force", 2, setup=_mk(dirs=["out/model.xml"]), flags=["--force"],
                      protect=["out/model.xml"]),
        lambda: _case("-o onto an existing file without --force", 2, setup=_mk(files=["out/model.xml"]),
                      protect=["out/model.xml"]),
        lambda: _case("existing .bin beside the output without --force", 2, setup=_mk(files=["out/model.bin"]),
                      protect=["out/model.bin"]),
        lambda: _case(f"existing {LIB} beside the output without --force", 2, model=ext,
                      setup=_mk(files=[f"out/{LIB}"]), protect=[f"out/{LIB}"]),
        lambda: _case("existing .xml and .bin with --force", 0, setup=_mk(files=["out/model.xml", "out/model.bin"]),
                      flags=["--force"]),
        lambda: _case("extension model into a fresh directory", 0, model=ext),
        lambda: _case("-o into a read-only directory", 2, setup=_read_only, out_xml=ro),
        lambda: _case("-o with the wrong suffix", 2, out_xml="out/model.onnx"),
        lambda: _case("tensorrt: -o onto an existing file without --force", 2, setup=_mk(files=["out/model_trt.onnx"]),
                      protect=["out/model_trt.onnx"], verbs=("convert-trt",)),
        lambda: _case("tensorrt: -o onto a directory with --force", 2, setup=_mk(dirs=["out/model_trt.onnx"]),
                      flags=["--force"], protect=["out/model_trt.onnx"], verbs=("convert-trt",)),
        lambda: _case("tensorrt: -o into a missing directory", 0, out_onnx="missing/m.onnx", verbs=("convert-trt",)),
        lambda: _case("tensorrt: fresh output (mode follows the umask)", 0, verbs=("convert-trt",)),
    ]
    return rng.choice(choices)()


GENERATORS = {"outpath": gen_outpath}
