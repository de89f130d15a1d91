"""The saturation monitor of the benchmark harness: scoring, storage, the harness config and its ratchet."""
