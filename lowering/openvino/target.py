"""The OpenVINO target: an ONNX file through OpenVINO's ONNX frontend with the resampling nodes on resample-bridge's
ladder (``ladder``), every lowered node proven (``prove``) — (openvino.Model, records), or BridgeError."""

from __future__ import annotations

from ...semantics.errors import BridgeError
from ..passes import PassResult, Policy, Target
from .frontend import ConversionLog, conversion_extensions, conversion_message, node_names
from .ladder import LADDERS, TARGET, policy_for
from .prove import prove


class OpenVINOTarget(Target):
    name = TARGET

    def rungs(self, policy: Policy, kind: str = "resize"):
        """The ladder of one IR kind (``policy.floor`` is applied by ``passes.climb``)."""
        return LADDERS[kind]

    def lower_model(self, model_path, policy: Policy) -> PassResult:
        """Every node lowered inside ``openvino.convert_model``; a node no rung takes stops it with the reason."""
        import openvino as ov

        from ...translate.onnx import default_opset, load

        model = load(model_path)
        log = ConversionLog()
        exts = conversion_extensions(opset=default_opset(model), log=log, names=node_names(model), policy=policy)
        try:
            ov_model = ov.convert_model(str(model_path), extension=exts)
        except BridgeError:
            raise
        except Exception as e:
            raise BridgeError(conversion_message(e)) from None
        return PassResult(ov_model, list(log))

    def prove(self, result: PassResult) -> list[str]:
        return prove(result.model, result.records)


OPENVINO = OpenVINOTarget()


def convert(model_path: str, *, fallback: str = "decompose", strict: bool = False):
    """ONNX file -> (openvino.Model, [NodeRecord]): resampling nodes through resample-bridge, the rest through
    OpenVINO's importer; every lowered node proven, or BridgeError with the reasons."""
    result = OPENVINO(model_path, policy_for(fallback, strict))
    return result.model, result.records
