"""Element types, one table per framework: which input dtypes each runtime accepts, computes exactly, or
computes in a wider type (and in which). Every row was measured or read from the framework's source; the
comment says where. The modules that decide (parsers' dtype reasons, lowerings' dtype policies, the rung
ladders) read these tables; none keeps its own list. Names are numpy's (``np.dtype(t).name``).

The C ABI's dtype codes are not a capability table: they stay with the ABI (``lowering/compiled/abi.py``).
"""

from __future__ import annotations

# OpenVINO CPU (2026.4, f32 inference precision), measured against the oracle; tests/translate/
# test_openvino_dtypes.py keeps the Interpolate / GridSample rows honest, tests/lowering/
# test_openvino_extension.py the extension's.
OPENVINO = {
    # Interpolate and GridSample compute these within the float tolerance (float16 in float32, rounded once).
    "floats": ("float32", "float16"),
    # Interpolate: uint8 / int8 nearest is a gather; their linear / cubic round with float32 weights and land
    # results that are exact halves (or within float32 reach of one) one off (u8 linear half_pixel scales 1.5:
    # 88 of 4320). int32 / int64 go through float32 in every mode (16777217 reads 16777216). Other integer
    # types are refused by the op itself ("input_et == element::f32 || ...").
    "interpolate_gather_exact": ("uint8", "int8"),
    # GridSample-9 on float64 computes in float32 (the CPU runs 64-bit types as 32-bit): linear and cubic land
    # within the policy's float32 error bound (zeros / border / reflection x align_corners, on random,
    # distinct and +-1e6 data), so the numeric proof decides; nearest returns each value rounded to float32,
    # which is what a float32 evaluation of nearest on float64 data gives (the policy's bound for float64
    # nearest: semantics/error_bound.py), so the numeric proof decides there too.
    "gridsample_float32_within_bound": ("float64",),
    # GridSample-9: nearest is a gather for uint8 / int8 / int16 / int32 (int32 exact up to 2^31); int16
    # linear truncates, int32 linear / cubic go through float32, int16 cubic wraps; uint8 / int8 linear /
    # cubic round half to even on the samples measured, but with float32 weights an exact half can fall
    # either side, so they are not taken as exact.
    "gridsample_gather_exact": ("uint8", "int8", "int16", "int32"),
    # The decomposition: input dtype -> the type its arithmetic runs in on the CPU (nearest: the input's own).
    # bfloat16 as float16: float32 arithmetic, rounded once to bfloat16 by the final Convert
    # (tests/lowering/test_bfloat16.py). Interpolate takes bfloat16 only between Converts, on static shapes
    # (lowering/openvino/interpolate.THROUGH_FLOAT32: dynamic ones come out a step off, measured).
    "decompose": {"float32": "float32", "float16": "float32", "bfloat16": "float32", "float64": "float32",
                  **{t: "int32" for t in ("uint8", "int8", "uint16", "int16")}},
    # Integer types the CPU plugin does not compute at their own width (it runs 64-bit types as 32-bit: an int64
    # multiply wraps at 2^31). float64 it runs as float32 in every op, the importer's and the extension's alike
    # (measured: the extension's float64 output is the float32 evaluation); the in-graph forms compute it in
    # float32 too, which the policy's float32 evaluation bound admits (a float64 value past float32's range is
    # inf there, as in every OpenVINO op). Not a nearest pick read from a float64 grid: onnxruntime computes
    # it in double, and in float32 it moves next to a tie or an edge (refused: no form can be exact).
    "wide": ("int64", "uint64"),
    # Integer types a nearest sampler's decomposition gathers in their own type (Gather, and a Multiply by 0 / 1
    # for zeros padding: exact in each; the probes prove it on every node).
    "picks": ("uint8", "int8", "uint16", "int16", "int32"),
    # X types the resample-bridge extension ops compute exactly (ops.cpp data_type takes u16 / i16 / i64 as
    # well, as the kernels do): the float ones, and u8 / i8 / i32 with ONNX's cast (round half to even,
    # saturate; Resize linear / cubic exact). GridSample's grid is a float type.
    "extension": ("float16", "float32", "float64", "uint8", "int8", "int32"),
    # The CPU plugin runs a custom op on these as i32 and converts the result back by wrapping (u16 / i16:
    # -5825 comes back as 59711) or loses i64 values beyond i32.
    "custom_op_as_int32": ("uint16", "int16", "int64"),
}

# ONNX: what the portable decomposition computes in, and onnxruntime's (1.32, CPU) kernels.
ONNX = {
    # The portable decomposition: input dtype -> arithmetic type. float16 in float32 (cast back); integers in
    # float64, exact there (64-bit ints are not, so they are absent).
    "decompose": {"float32": "float32", "float16": "float32", "float64": "float64",
                  **{t: "float64" for t in ("uint8", "int8", "uint16", "int16", "uint32", "int32")}},
    # onnxruntime's Resize has kernels for these element types only (measured).
    "onnxruntime_resize": ("float32", "float16", "uint8", "int8", "int32"),
}

# TensorRT (onnx-tensorrt 10.10-10.15's importer; TensorRT has no float64 tensors).
TENSORRT = {
    # The importer's checkNotInvalidType: resampling inputs of these types are refused.
    "refused": ("bool", "uint8"),
    # The DeformConv plugin (ModulatedDeformConv2d): X, W and offset all one of these.
    "deformconv": ("float32", "float16"),
    # The decomposition: float32 in float32, float16 computed in float32 and cast back (as the oracle).
    # Integer dtypes are absent: their exact rounding needs float64.
    "decompose": {"float32": "float32", "float16": "float32"},
    # What Gather takes (the index form moves elements with one): the importer refuses UINT8; INT8 is a
    # quantized type there.
    "gather": ("float32", "float16", "bfloat16", "int32", "int64", "bool"),
}

__all__ = ["OPENVINO", "ONNX", "TENSORRT"]
