"""The workshop: benchmarks (``make bench``), the fuzz campaign (``make fuzz``) and the corpus exporter.

Kept in the repository and importable from a checkout (the tests use the fuzzer), but not packaged: pyproject's
``packages`` list leaves ``resample_bridge.tools.dev`` out of the wheel.
"""
