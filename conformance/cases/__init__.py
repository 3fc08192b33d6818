"""Conformance cases, one module per family: ``ops`` (one per operation) and ``programs`` (composites)."""
