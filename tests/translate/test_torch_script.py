"""A traced TorchScript module as the source of ``check --source`` (issue 44): its calls read from the trace's graph
give the verdicts the same module's torch.export program gives, through OpenVINO's PyTorch frontend and against
an ONNX export (each verdict there witnessed by onnxruntime in test_check_source.py); a module that records no
shapes (saved and loaded back) has every call refused by name, and ``convert`` refuses it on one line."""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.translate.torch import calls  # noqa: E402
from tests.tools.test_check_source import FAITHFUL_INPUTS, Faithful, Scale07, _export  # noqa: E402
from tests.tools.test_check_torch_openvino import G, X, Calls  # noqa: E402

pytestmark = pytest.mark.torch


def trace(module, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(module, inputs)


def _rows(result):
    return [(r.torch_name, r.verdict, r.fields) for r in result.rows]


def test_calls_as_the_export_reads_them():
    traced, program = trace(Calls(), (X, G)), torch.export.export(Calls(), (X, G))
    assert [(c.name, c.op, c.ir) for c in calls(traced)] == [(c.name, c.op, c.ir) for c in calls(program)]
    assert [(c.where, c.code) for c in calls(traced)] == [(c.where, c.code) for c in calls(program)]


def test_openvino_frontend_verdicts_as_the_export():
    traced = api.check(None, source=trace(Calls(), (X, G)))
    exported = api.check(None, source=Calls(), example_inputs=(X, G))
    assert _rows(traced) == _rows(exported)
    assert [r.verdict for r in traced.rows][:3] == ["differs", "differs", "refused"]


@pytest.mark.parametrize("module, inputs", [(Faithful(), FAITHFUL_INPUTS), (Scale07(), (torch.randn(1, 2, 90, 20),))])
def test_onnx_export_verdicts_as_the_export(module, inputs, tmp_path):
    path, pt2 = _export(module, inputs, tmp_path, False, 17)
    assert _rows(api.check(str(path), source=trace(module, inputs))) == _rows(api.check(str(path), source=str(pt2)))


def test_a_module_without_shapes_is_refused_by_call(tmp_path):
    saved = tmp_path / "m.pt"
    trace(Calls(), (X, G)).save(str(saved))
    rows = api.check(None, source=str(saved)).rows
    assert len(rows) == 15 and all(r.verdict == "refused" and "records no shape" in r.reason for r in rows)
    with pytest.raises(BridgeError) as e:
        api.convert(str(saved), tmp_path / "m.xml")
    assert e.value.field == "source" and "torch.export program" in e.value.message
