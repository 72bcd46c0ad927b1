"""The OpenVINO target: an ONNX file through OpenVINO's ONNX frontend with the resampling nodes on resample-bridge's
ladder (``ladder``), every lowered node proven (``prove``) — (openvino.Model, records), or BridgeError."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import replace

from ...semantics.errors import BridgeError, clip
from ..passes import CUSTOM, ConvertOptions, PassResult, Policy, Target, Written
from ..plan import Plan
from ..record_format import records_json
from . import grid_pin, own_lengths
from .boundary import planar_sides
from .frontend import Planner, conversion_extensions, conversion_message, openvino_error_reason, source_irs, stamped
from .graph import F32, compile_checked, observing, tagged
from .ladder import LADDERS, TARGET, policy_for
from .older_releases import respell_for_older_releases
from .importer_shapes import with_importer_shapes
from .index_arithmetic import constant_divisors, exact_index_arithmetic, index_note
from .pinned_tail import keep_in_tail
from .probe import plugin_sentence
from .torch_source import TorchSource, agrees as torch_agrees, is_torch_source, load_source, plan_program
from .prove import located, prove
from .write import save
from ...translate.onnx import default_opset, inline_functions, load, resampling_nodes
from ...translate.onnx_files import PROTOBUF_LIMIT
from ...translate.onnx_shapes import bounds
from .. import compiled

CONDITION_KEY = "resample_bridge_condition"  # model rt_info: the run-time conditions a deployed model rests on


class OpenVINOTarget(Target):
    name = TARGET
    suffix = default_tail = ".xml"
    companions = (".bin",)
    requires = ("openvino",)
    takes = frozenset({"compress_to_fp16", "extensions", "fallback", "allow_conditional", "prefer"})
    steps = ("lowering and proving every resampling node (OpenVINO's ONNX or PyTorch frontend)",
             "writing and proving the written model again from disk")

    def __init__(self, extensions=()):
        self.extensions = list(extensions)  # the user's own OpenVINO extension libraries (other custom ops)

    def rungs(self, kind: str = "resize", policy: Policy | None = None):
        """The ladder of one IR kind (``policy.floor`` is applied by ``passes.climb``)."""
        return LADDERS[kind]

    def policy(self, options: ConvertOptions) -> Policy:
        prefer = options.prefer or "builtin"  # portable by default (issue 42)
        if prefer not in ("builtin", "fastest"):
            raise BridgeError(f"unknown preference {prefer!r}; expected fastest or builtin", field="prefer")
        return policy_for(options.fallback, options.strict, allow_conditional=bool(options.allow_conditional),
                          prefer=prefer, timing=convert)

    def lower_file(self, path, options: ConvertOptions, whole_model: bool = True) -> PassResult:
        """The user's extension libraries checked (each loads in OpenVINO), then every node lowered and proven.
        ``path``: an ONNX file, or a PyTorch program (``torch_source``: a .pt2 file, an ExportedProgram),
        loaded once here (the proof against eager PyTorch runs the same program)."""
        extensions = user_extensions(options.extensions)
        source = load_source(path) if is_torch_source(path) else path
        return (OpenVINOTarget(extensions) if extensions else self)(source, self.policy(options), whole_model)

    def write(self, result: PassResult, out: str, options: ConvertOptions) -> Written:
        """OUT.xml/.bin (and the extension library when a node needs it), proven again from disk."""
        files, kept = save(result.model, result.records, out, force=options.force,
                           extensions=[os.path.abspath(p) for p in options.extensions],  # checked by lower_file
                           compress_to_fp16=options.compress_to_fp16,
                           check=lambda written: self.agrees(result, written))
        report = {"target": self.name, "files": files, "kept_f32": kept, "compress_to_fp16": options.compress_to_fp16,
                  "output": out, "nodes": records_json(result.records),
                  "grid_f32": {r.node: r.extra[GRID_F32] for r in result.records if GRID_F32 in r.extra},
                  "index_arithmetic": index_note(result.model)}
        return Written(self.name, out, dict(files), tuple(result.records), report)

    def plan(self, model_path, policy: Policy) -> Plan:
        """Every node's choice, climbed while OpenVINO's frontend converts the model: the driver's ``Planner``
        chooses each node the hook hands it, found by the key stamped on it (``_keyed_copy``), and builds the
        chosen form on the frontend's inputs; a node no rung takes stops the conversion with the reason. The
        plan's model is the converted one; its source, the inlined ONNX model (the order of the records)."""
        if isinstance(model_path, TorchSource):
            return plan_program(model_path, policy, self.extensions)
        import openvino as ov

        model = load(model_path)
        inlined = inline_functions(model)  # once: the boundary walk and OpenVINO's copy both read it
        planner = Planner(policy)
        # The IR of every node as inspect / check read it from the ONNX model (bodies and functions included):
        # the frontend's view of a node (0-d empty constants, unfolded Shape chains) only locates it.
        irs = source_irs(model)
        shaped = with_importer_shapes(model, irs)  # sizes computed from shapes only OpenVINO knows are static
        irs = irs if shaped is model else source_irs(shaped)
        exts = conversion_extensions(opset=default_opset(model), planner=planner, irs=irs,
                                     sides=planar_sides(inlined))
        try:
            with _keyed_copy(inlined, model_path) as path, _torch_left_alone():
                ov_model = ov.convert_model(path, extension=list(exts) + self.extensions)
        except BridgeError:
            raise
        except Exception as e:
            raise planner.refusal or BridgeError(conversion_message(e)) from None
        return planner.freeze(ov_model, inlined)

    def emit(self, plan: Plan) -> PassResult:
        """The converted model (every choice's form already in it) with each record locating its ops there
        (what ``prove`` re-reads), ops respelled in the versions older releases read (``older_releases``), its f32
        pins tied to the graph's tail, where older releases keep them (``pinned_tail``), and the conditions of
        conditional choices written into its rt_info; the records in the source's order (a PyTorch program's: in
        conversion order)."""
        records = plan.records if plan.source is None else in_model_order(plan.records, plan.source)
        respell_for_older_releases(plan.model)  # the user's own ops too: what is written reads in older releases
        # the user's: OpenVINO's Divide is a * (1 / b), its bf16 would move indices
        exact_index_arithmetic(plan.model, constant_divisors(plan.source) if plan.source is not None else None)
        if plan.source is not None:
            keep_bounds(plan.model, plan.source)
        own_lengths.repin(plan.model)  # the lengths fed to an Interpolate read from its own input, as proven
        records = pinned_grids(plan.model, located(plan.model, records))
        record_conditions(plan.model, records)
        keep_in_tail(plan.model)  # the f32 marks' effect in releases that do not read them
        return PassResult(plan.model, records)

    def agrees(self, result: PassResult, produced=None) -> None:
        """The whole-model postcondition: against the source on onnxruntime, or a PyTorch program's module in
        eager PyTorch (``torch_source.agrees``)."""
        if not isinstance(result.source, TorchSource):
            return super().agrees(result, produced)
        return torch_agrees(result.source, lambda m: self._compile(result, m),
                            result.model if produced is None else produced)

    def prove(self, result: PassResult) -> list[str]:
        return prove(result.model, result.records)

    def built(self, result: PassResult) -> None:
        """The whole produced model compiles on CPU (the extension loaded where a node uses it), or one line."""
        self._compile(result, result.model)

    def _compile(self, result: PassResult, ov_model):
        import openvino as ov

        core = ov.Core()
        try:
            if any(r.rung == CUSTOM for r in result.records):

                core.add_extension(compiled.openvino_extension())
            for ext in self.extensions:
                core.add_extension(ext)
            return core.compile_model(ov_model, "CPU", F32)
        except BridgeError:
            raise
        except Exception as e:  # noqa: BLE001 -- the plugin's refusal, in its own words
            raise BridgeError("OpenVINO CPU cannot compile the converted model: " + plugin_sentence(e),
                              field="rung") from None

    def run_written(self, result: PassResult, produced=None):
        """The produced model on OpenVINO CPU (f32), compiled once per set of observed tensors."""
        model = result.model if produced is None else produced
        return _runner(lambda observe: self._compile(result, observing(model, observe)), "the converted model")

    def run_importer(self, result: PassResult):
        """OpenVINO's own import of the source ONNX file (``openvino.convert_model`` alone, as ``check`` calls the
        importer; the user's extensions loaded), compiled on first use; None for a source that is not a file."""
        if not isinstance(result.source, (str, os.PathLike)):
            return None
        path = os.fspath(result.source)

        def compile_observing(observe):
            import openvino as ov

            core = ov.Core()
            try:
                for ext in self.extensions:
                    core.add_extension(ext)
                imported = ov.convert_model(path, extension=list(self.extensions)) if self.extensions else \
                    ov.convert_model(path)
                return compile_checked(core, observing(imported, observe), F32)
            except Exception as e:  # noqa: BLE001 -- the importer's refusal: nothing of it to compare
                raise BridgeError("OpenVINO's importer cannot run the source: " + plugin_sentence(e),
                                  field="model") from None
        return _runner(compile_observing, "the importer's model")


def _runner(compile_observing, what: str):
    """``(feeds, names to observe) -> outputs by tensor name`` of the model ``compile_observing(observe)``
    compiles, once per set of observed tensors. A fresh compile's first inference is run twice: OpenVINO's CPU
    plugin, the first time, can read memory it never wrote (measured, 2026.4.1: torchvision's paste_masks Loop,
    its own import of the ONNX file too, gives values up to 1e38 where every later inference on the same inputs
    gives onnxruntime's), and the check judges what the model computes, not that."""
    compiled_by: dict = {}

    def run(feeds: dict, observe: list) -> dict:
        key = tuple(observe)
        fresh = key not in compiled_by
        if fresh:
            compiled_by[key] = compile_observing(list(observe))
        c = compiled_by[key]
        params = {n for p in c.inputs for n in p.get_names()}
        try:
            given = {k: v for k, v in feeds.items() if k in params}
            if fresh:
                c(given)  # the first inference, not judged (above)
            res = c(given)
        except Exception as e:  # noqa: BLE001 -- the plugin's refusal, in its own words
            raise BridgeError(f"OpenVINO CPU cannot run {what}: " + plugin_sentence(e), field="model") from None
        return {name: val for port, val in res.items() for name in port.get_names()}

    return run


@contextlib.contextmanager
def _keyed_copy(inlined, model_path):
    """The path OpenVINO reads: a copy of ``inlined`` (local functions, which OpenVINO's importer does not expand
    -- "No conversion rule found for operations: local.Up" --, inlined exactly as ``translate.onnx`` inlines them,
    so node and tensor names agree with inspect and check) with every resampling node stamped with its key
    (``frontend.stamped``). A file of the source's name, not a stream: the IR OpenVINO writes names its input
    model by the file's name (a stream would rename the net and its conversion parameters)."""
    import onnx

    with tempfile.TemporaryDirectory(prefix="resample_bridge_") as d:
        named = isinstance(model_path, (str, os.PathLike))  # a model given in memory has no file name of its own
        path = os.path.join(d, os.path.basename(os.fspath(model_path)) if named else "model.onnx")
        with stamped(inlined) as copy:
            # Over protobuf's 2 GiB limit the weights go beside the copy, as ONNX keeps them (external data).
            onnx.save(copy, path, save_as_external_data=copy.ByteSize() > PROTOBUF_LIMIT)
        yield path

@contextlib.contextmanager
def _torch_left_alone():
    """``convert_model(path, extension=...)`` imports PyTorch wherever it is installed (ovc's ``filtered_extensions``
    looks for PyTorch module extensions among ours): about 2 s and several GB of address space (its CUDA build) for
    an ONNX model that needs none of it -- a process under a 4 GB address-space limit ran out of memory. Where
    nothing has imported torch yet, the import is refused for the call (a None entry in sys.modules); the filter
    then keeps every extension, which is what it returns for ours."""
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None
    try:
        yield
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


def in_model_order(records, model) -> list:
    """The records in the model's order (``translate.onnx.walk``'s, as inspect and check list nodes), not the order
    OpenVINO converted them in (it takes an If's then branch before its else branch, say)."""
    order = {name: i for i, (name, _) in enumerate(resampling_nodes(model))}
    return sorted(records, key=lambda r: order.get(r.node, len(order)))


GRID_F32 = "grid_f32"  # record.extra: how many ops generating the node's grid / offsets were pinned to f32


def pinned_grids(ov_model, records) -> list:
    """The coordinate arithmetic generating each node's grid (offsets) pinned to f32 (``grid_pin``), the count in
    each record's ``extra``."""
    counts = grid_pin.pin(ov_model)
    return [replace(r, extra={**r.extra, GRID_F32: {**counts[r.node], "input": grid_pin.positions_name(r.ir)}})
            if r.node in counts else r for r in records]


def keep_bounds(ov_model, source) -> int:
    """The source's bounded dimensions (``--input "x[1,3,64..256,64..256]"``, ovc's spelling, which names an ONNX
    dimension "64..256") as interval dimensions of the model's inputs, as ovc writes them (a dynamic dimension
    otherwise, and a runtime told nothing of them); returns how many inputs were bounded. A model OpenVINO cannot
    reshape so keeps its dynamic dimensions."""
    import openvino as ov

    new = {}
    for vi in source.graph.input:
        dims = vi.type.tensor_type.shape.dim
        spans = [bounds(d.dim_param) if d.HasField("dim_param") else None for d in dims]
        port = next((p for p in ov_model.inputs if vi.name in p.get_names()), None)
        if port is None or not any(spans) or port.get_partial_shape().rank.get_length() != len(dims):
            continue
        shape = port.get_partial_shape()
        new[port] = ov.PartialShape([ov.Dimension(lo, -1 if hi is None else hi) if span and not shape[i].is_static
                                     else shape[i] for i, span in enumerate(spans)
                                     for lo, hi in [span or (0, 0)]])
    if new:
        try:
            ov_model.reshape(new)
        except Exception:  # noqa: BLE001 -- the model's own shape inference refuses the intervals: left dynamic
            return 0
    return len(new)


def record_conditions(ov_model, records) -> None:
    """Write the conditions of conditional conversions into the model's rt_info (model-wide, one clause per
    node, and on each node's ops), so a deployed model carries what its exactness rests on."""
    clauses = [f"{r.node}: exact only if {r.condition}" for r in records if r.condition]
    if not clauses:
        return
    ov_model.set_rt_info("; ".join(clauses), CONDITION_KEY)
    by_tag = tagged(ov_model)
    for r in records:
        if r.condition:
            for t, op in by_tag.items():
                if t.startswith(r.node + "/"):
                    op.get_rt_info()[CONDITION_KEY] = r.condition


def user_extensions(paths) -> list[str]:
    """The user's ``--extension`` libraries as absolute paths, each an existing file that OpenVINO loads."""
    out = []
    for p in paths or ():
        a = os.path.abspath(p)
        if not os.path.isfile(a):
            raise BridgeError(f"{clip(p)} is not a file", field="extension")
        try:
            import openvino as ov

            ov.Core().add_extension(a)
        except ImportError:
            raise
        except Exception as e:
            raise BridgeError(f"OpenVINO cannot load {clip(p)}: {clip(openvino_error_reason(str(e)), 160)}",
                              field="extension") from None
        out.append(a)
    return out


OPENVINO = OpenVINOTarget()


def convert(model_path: str, *, fallback: str = "decompose", strict: bool = False, extensions=(),
            allow_conditional: bool | None = None, prefer: str = "builtin"):
    """ONNX file -> (openvino.Model, [NodeRecord]): resampling nodes through resample-bridge, the rest through
    OpenVINO's importer (with the user's ``extensions`` for other custom ops); every lowered node proven, or
    BridgeError with the reasons. ``allow_conditional``: take candidates exact only under stated run-time
    conditions (default: no); ``strict`` declines them whatever it says. ``prefer``: "builtin" (the default:
    never the extension where a rung that needs nothing beside the model is exact, so the model runs on any CPU,
    device and OpenVINO release that has the standard opsets) or "fastest" (the extension where the cost model
    estimates it at least 1.25x faster, ``cost``: a library beside the model, CPU only, this release)."""
    options = ConvertOptions(fallback=fallback, strict=strict, allow_conditional=allow_conditional, prefer=prefer)
    result = (OpenVINOTarget(extensions) if extensions else OPENVINO)(model_path, OPENVINO.policy(options))
    return result.model, result.records

