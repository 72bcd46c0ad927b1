"""Helpers that more than one test module uses: small ONNX models, the conformance cases, the seeded kernel
cases. Test modules import from here, never from one another (a test module's import runs its skips)."""
