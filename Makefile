# Two commands take a fresh clone to (1) the main job on a built-in example and (2) the tests passing:
#   make demo     make test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-fast bench fuzz cross emulated clean bytecode

FUZZ_SEED ?= 1
FUZZ_CASES ?= 300

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

# The package's bytecode, as pip writes it for a regular install: an editable one leaves it to the first import,
# which writes nothing where PYTHONDONTWRITEBYTECODE is set (then every command compiled ~100 modules: 0.1 s of
# a 0.4 s conversion). Python reads it whatever that variable says, and recompiles any module edited since.
bytecode:
	$(BIN)/python -m compileall -q resample_bridge semantics translate lowering tools > /dev/null

demo: $(STAMP)
	$(BIN)/resample-bridge demo

# The README's test command: every tier but `slow` (markers in pyproject.toml), one test file per worker
# (pytest-xdist's loadfile: a file's module fixtures are built once), a worker per core up to 4.
TEST_WORKERS := -n auto --maxprocesses 4 --dist loadfile

test: $(STAMP)
	$(BIN)/python -m pytest $(TEST_WORKERS) -m "not slow"

# Everything, the slow tier too: the PyTorch corpus, older CPUs under qemu-user and other OpenVINO releases where
# they are installed, signals at several moments, the long sweeps and fuzz seeds.
test-all: $(STAMP)
	$(BIN)/python -m pytest $(TEST_WORKERS)

# The fast tier: no C++ build, no slow campaigns, one process.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not compiled"

# Single nodes: our extension kernels, built for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512) where the CPU runs them,
# vs OpenVINO's importer vs onnxruntime vs a copy, one table (tools/dev/bench.py);
# whole models: the portable default and --prefer fastest vs the importer and onnxruntime (tools/dev/bench_models.py),
# and convert time vs ovc, a fresh process each (tools/dev/bench_convert.py);
# check on 50-node models and the convert curve up to 500 nodes (tools/dev/bench_check.py); the GridSample
# decomposition vs the extension and the built-in ops on a DETR-sized deformable attention, speed and intermediate
# memory (tools/dev/bench_decompose.py); on the ONNX target, onnxruntime's Resize vs rung 2's convolution and matrix
# forms (tools/dev/bench_onnx_forms.py --quick; the rule's whole grid without --quick). The others by hand:
# tools/dev/bench_inspect.py (inspect at model scale), tools/dev/bench_openvino.py (the ladder's choice),
# tools/dev/bench_share.py (the whole-model ratio any resize rewrite could reach: the importer's resampling time).
# tools/dev/ stays in the repository and out of the wheel (pyproject's packages list leaves it out).
bench: $(STAMP) bytecode
	$(BIN)/python tools/dev/bench.py
	$(BIN)/python tools/dev/bench_models.py --corpus
	$(BIN)/python tools/dev/bench_convert.py
	$(BIN)/python -m resample_bridge.tools.dev.bench_check
	$(BIN)/python tools/dev/bench_decompose.py
	$(BIN)/python tools/dev/bench_onnx_forms.py --quick

fuzz: $(STAMP)
	$(BIN)/python -m resample_bridge.tools.dev.fuzz --seed $(FUZZ_SEED) --cases $(FUZZ_CASES) --jobs 2 --keep-failures fuzz-failures

# The kernels and the OpenVINO extension compiled for 64-bit ARM (Linux, macOS) with Zig's clang, from the package
# index: compile only, nothing runs ARM code (tools/dev/cross_compile.py; tests/lowering/test_cross_compile.py
# runs the ARM Linux kernels wherever ziglang is installed).
cross: $(STAMP)
	$(BIN)/python -m pip install -q ziglang
	$(BIN)/python tools/dev/cross_compile.py

# Every corpus model converted by default and by OpenVINO's importer, run under emulated Haswell (AVX2) and Nehalem
# (SSE4.2) CPUs against the source's outputs (tools/dev/emulated_corpus.py; Debian's qemu-user; tens of minutes).
emulated: $(STAMP)
	$(BIN)/python tools/dev/emulated_corpus.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache fuzz-failures
