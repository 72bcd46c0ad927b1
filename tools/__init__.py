"""The resample-bridge CLI and scripts; composes semantics, translate and lowering."""
