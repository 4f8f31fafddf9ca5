"""The names of a sweep directory's record files, in a module of their own so that readers of a finished sweep
(the viewer's first page) can name them without importing the sweep's reader."""

from __future__ import annotations

__all__ = ["CALLS", "JUDGEMENTS", "RUNS"]

RUNS, JUDGEMENTS, CALLS = "runs.jsonl", "judgements.jsonl", "calls.jsonl"
