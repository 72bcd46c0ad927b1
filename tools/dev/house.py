"""How the house is kept: counts of the side doors issue 41 closes, read from the source by its syntax tree.

Each measure is one function over the package's own modules (semantics, translate, lowering, tools, api; not
tools/dev, not tests), returning the places it found as ``path:line: text``; ``main`` prints the counts, and
tests/test_house.py fails on a place outside its home.

* ``kind_switches``: branches on which resampling op a node is (``.kind == "resize"``, ``kind in (...)``,
  ``isinstance(x, ResizeIR)``, ``op_type == "Resize"``) outside the homes of the ops (``OP_HOMES``);
* ``function_imports``: imports of the project's own modules inside a function (an import edge hidden from the
  module's top);
* ``number_compares``: ``allclose`` / ``isclose`` / ``assert_allclose`` outside the tolerance policy's home;
* ``rung_literals``: a rung compared with a digit instead of its named constant;
* ``first_lines``: ``.splitlines()[0]`` outside the message home (``semantics/errors.py``);
* ``op_tuples``: an inline tuple of resampling op types instead of ``semantics.vocab``'s;
* ``converters``: a target's conversion called past the registry (tools/targets.py);
* ``op_files``: the files that name an op (what a new op would have to touch, measured on DeformConv).
"""

from __future__ import annotations

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("semantics", "translate", "lowering", "tools", "api")
OP_KINDS = ("resize", "gridsample", "deformconv")
IR_CLASSES = ("ResizeIR", "GridSampleIR", "DeformConvIR")
ONNX_OPS = ("Resize", "Upsample", "GridSample", "DeformConv", "Interpolate", "DeformableConvolution")
# Where a measure's construct belongs: the module that is its one home.
TOLERANCE_HOMES = ("semantics/compare.py", "semantics/tolerance.py")
MESSAGE_HOMES = ("semantics/errors.py",)
OP_TUPLE_HOMES = ("semantics/vocab.py",)
CONVERT_HOMES = ("tools/targets.py", "lowering/")
OP_HOMES = ("semantics/opspec.py",)  # the registry of ops (each layer's table of per-op pieces: ``opspec.PerOp``)
# Kind switches still outside the registry (a ratchet: only ever lowered). Those left are about a field of one op
# (Resize's run-time roi / sizes, nearest's ties, antialias taps, DeformConv's bias, Upsample's legacy spelling,
# the op types a rewrite writes), not dispatch on the op, or a form only Resize has (the index form, CUDA's
# prepared plan).
KIND_SWITCHES_LEFT = 29
# Imports of the project's own modules still inside functions (a ratchet: only ever lowered). Those left close a
# cycle (the TensorRT parser's package) or are the console entry's first lines (tools/command.py: the CLI and
# its imports of onnx, numpy, openvino come after the signal handlers and the telemetry opt-out, inside the try
# that makes a Ctrl-C while importing status 130).
FUNCTION_IMPORTS_LEFT = 3
# Frameworks and heavy optional modules are imported where they are used (lazily): not project edges.
PROJECT_PREFIXES = ("resample_bridge", "semantics", "translate", "lowering", "tools", "api")


def modules(root: str = ROOT):
    """(relative path, parsed tree, source lines) of every package module, tools/dev left out."""
    for pkg in PACKAGES:
        for base, dirs, files in os.walk(os.path.join(root, pkg)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "dev"))
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(base, f)
                    rel = os.path.relpath(path, root)
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                    yield rel, ast.parse(text, rel), text.splitlines()


def _place(rel, node, lines) -> str:
    return f"{rel}:{node.lineno}: {lines[node.lineno - 1].strip()[:120]}"


def _strings(node) -> list[str]:
    """The string constants of a constant or a tuple / list / set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _names_kind(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ("kind", "op_type", "op")) or \
        (isinstance(node, ast.Name) and node.id in ("kind", "op_type"))


def kind_switches(root: str = ROOT, homes: tuple = OP_HOMES) -> list[str]:
    found = []
    for rel, tree, lines in modules(root):
        if rel.startswith(homes) if homes else False:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and _names_kind(node.left) and \
                    any(s in OP_KINDS + ONNX_OPS for c in node.comparators for s in _strings(c)):
                found.append(_place(rel, node, lines))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                    and len(node.args) == 2 and any(isinstance(n, ast.Name) and n.id in IR_CLASSES
                                                    for n in ast.walk(node.args[1])):
                found.append(_place(rel, node, lines))
    return found


def _project_import(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PROJECT_PREFIXES
    return any(a.name.split(".")[0] in PROJECT_PREFIXES for a in node.names)


def function_imports(root: str = ROOT) -> list[str]:
    found = []
    for rel, tree, lines in modules(root):
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and _project_import(node):
                        found.append(_place(rel, node, lines))
    return sorted(set(found))


def _calls(root, names: tuple, homes: tuple, attribute: bool = False) -> list[str]:
    found = []
    for rel, tree, lines in modules(root):
        if rel.startswith(homes):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                if attribute and not isinstance(f, ast.Attribute):
                    continue
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in names:
                    found.append(_place(rel, node, lines))
    return found


def number_compares(root: str = ROOT) -> list[str]:
    return _calls(root, ("allclose", "isclose", "assert_allclose"), TOLERANCE_HOMES)


def converters(root: str = ROOT) -> list[str]:
    """A target's own conversion called past the registry (``target.convert_file``, ``.lower_file``,
    ``.lower_model``); ``targets.convert_file`` / ``targets.lower`` are the front door, and
    ``openvino.convert_model`` in check is OpenVINO's importer run as the peer under test."""
    return _calls(root, ("convert_file", "lower_file", "lower_model"), CONVERT_HOMES, attribute=True)


def rung_literals(root: str = ROOT) -> list[str]:
    found = []
    for rel, tree, lines in modules(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "rung" \
                    and any(isinstance(c, ast.Constant) and isinstance(c.value, int) and not isinstance(c.value, bool)
                            for c in node.comparators):
                found.append(_place(rel, node, lines))
    return found


def first_lines(root: str = ROOT) -> list[str]:
    found = []
    for rel, tree, lines in modules(root):
        if rel in MESSAGE_HOMES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "splitlines" and \
                    isinstance(node.slice, ast.Constant) and node.slice.value == 0:
                found.append(_place(rel, node, lines))
    return found


def op_tuples(root: str = ROOT) -> list[str]:
    """Inline tuples naming two or more resampling op types (a predicate re-written instead of vocab's)."""
    found = []
    for rel, tree, lines in modules(root):
        if rel in OP_TUPLE_HOMES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                named = [s for s in _strings(node) if s in ONNX_OPS]
                if len(named) >= 2 and len(named) == len(node.elts):
                    found.append(_place(rel, node, lines))
    return found


def op_files(root: str = ROOT, op: str = "deformconv") -> list[str]:
    """Package files (Python and C++) whose text names ``op`` (case-insensitive, any spelling of it)."""
    pattern = re.compile(op.replace("conv", r"[_ ]?conv(olution)?"), re.IGNORECASE)
    found = []
    for pkg in PACKAGES:
        for base, dirs, files in os.walk(os.path.join(root, pkg)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "dev")]
            for f in files:
                if f.endswith((".py", ".cpp", ".hpp", ".h", ".cu")):
                    with open(os.path.join(base, f), encoding="utf-8") as fh:
                        if pattern.search(fh.read()):
                            found.append(os.path.relpath(os.path.join(base, f), root))
    return sorted(found)


MEASURES = {"kind switches": kind_switches, "function-level project imports": function_imports,
            "number comparisons outside the tolerance policy": number_compares,
            "places that convert outside the registry and targets": converters,
            "rung compared with a digit": rung_literals, ".splitlines()[0] outside semantics/errors.py": first_lines,
            "inline op-type tuples": op_tuples, "files naming DeformConv": op_files}


def main(argv=None) -> int:
    verbose = "-v" in (argv if argv is not None else sys.argv[1:])
    for title, measure in MEASURES.items():
        found = measure()
        print(f"{len(found):5d}  {title}")
        if verbose:
            for place in found:
                print(f"         {place}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
