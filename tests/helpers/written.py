"""The default conversion of a model, written to disk and checked as the portable default promises (issue 42):
the record's rung-3 form, no library beside it, standard opsets only."""

from __future__ import annotations

import re

import onnx


def written_default(model, tmp_path, form: str, convention: str | None = None):
    """(xml path, source path) of ``model`` converted with the default into ``tmp_path``/out (read under the ONNX
    ``convention``), after asserting that its one node took rung 3's ``form``, that no library was written and that
    the IR holds standard opsets only."""
    from resample_bridge import api

    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"), convention=convention)
    (rec,) = done.records
    assert rec.rung == 3 and rec.proof.get("form") == form, rec.summary()
    assert done.extension is None and not [p for p in (tmp_path / "out").iterdir() if p.suffix == ".so"]
    versions = set(re.findall(r'<layer [^>]*version="([^"]+)"', (tmp_path / "out" / "m.xml").read_text()))
    assert versions and all(re.fullmatch(r"opset\d+", v) for v in versions), versions
    return str(tmp_path / "out" / "m.xml"), str(src)
