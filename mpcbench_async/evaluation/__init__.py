"""Seed-compatible entry points of the original MPCBench evaluation (``python -m …``)."""
