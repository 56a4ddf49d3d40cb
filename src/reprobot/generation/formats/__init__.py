"""Test-patch formats: the fault-tolerant function-level edit format, the unified-diff fallback,
and turning drafted files into patches."""
