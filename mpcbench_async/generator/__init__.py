"""Seed-compatible entry points of the original MPCBench generator (``python -m …``)."""
