"""The side doors stay closed: numbers are compared by the tolerance policy, rungs by their names, messages cut
by their home, op types listed once (tools/dev/house.py reads the package's syntax trees). Each measure is
first shown to find a planted door, so a measure that can no longer see one fails here too."""

import textwrap

import pytest

from resample_bridge.tools.dev import house

CLOSED = {
    "number_compares": "import numpy as np\nok = np.allclose(a, b, atol=1e-5)\n",
    "rung_literals": "def custom(records):\n    return any(r.rung == 4 for r in records)\n",
    "first_lines": "def why(e):\n    return str(e).splitlines()[0]\n",
    "op_tuples": "def resizes(node):\n    return node.op_type in ('Resize', 'Upsample')\n",
    "converters": "def convert(target, path):\n    return target.lower_file(path, None)\n",
}


@pytest.mark.parametrize("measure", sorted(CLOSED))
def test_side_door_closed(measure, tmp_path):
    planted = tmp_path / "tools" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(textwrap.dedent(CLOSED[measure]))
    assert [p.split(":")[0] for p in getattr(house, measure)(str(tmp_path))] == ["tools/planted.py"]
    assert getattr(house, measure)() == [], f"{measure}: route these through their home"


def test_project_imports_at_module_top(tmp_path):
    """Imports of the project's own modules sit at the module's top, so its edges are visible where it starts;
    frameworks stay lazy (imported inside the functions that use them)."""
    planted = tmp_path / "tools" / "planted.py"
    planted.parent.mkdir()
    planted.write_text("def f():\n    import numpy\n    from ..semantics import ir\n    return ir, numpy\n")
    assert len(house.function_imports(str(tmp_path))) == 1
    assert len(house.function_imports()) <= house.FUNCTION_IMPORTS_LEFT


def test_kind_switches_only_go_down(tmp_path):
    """Code dispatches on an op through its table (``semantics.opspec.PerOp``), not by switching on its kind."""
    planted = tmp_path / "lowering" / "planted.py"
    planted.parent.mkdir()
    planted.write_text("def rung(ir):\n    return 1 if isinstance(ir, GridSampleIR) else ir.kind == 'resize'\n")
    assert len(house.kind_switches(str(tmp_path))) == 2
    assert len(house.kind_switches()) <= house.KIND_SWITCHES_LEFT
