"""Argument types for output paths, checked when the command line is parsed.

A command that writes its results at the end (``profile endpoint`` measures for
minutes first) must not find out then that ``--out`` is a regular file or an
unwritable place: the measurement would be lost. These types refuse such a path
before any work starts, as an ordinary argparse error (one line, exit 2). The
rules themselves live in ``_validate`` so the library applies the same ones.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .._validate import output_dir_problem

__all__ = ["output_dir", "output_file", "sweep_dir"]


def output_dir(text: str) -> Path:
    """A directory to write into: absent (created later), or an existing writable directory; never a file."""
    if (problem := output_dir_problem(text)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def output_file(text: str) -> Path:
    """A file to write: absent or a writable regular file, in a directory that exists or can be created."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a directory, not a file")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise argparse.ArgumentTypeError(f"{path} is not writable")
    elif (problem := output_dir_problem(path.parent)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return path


def sweep_dir(text: str) -> Path:
    """A sweep's output directory: one holding runs.jsonl or manifest.json (what export and labels read)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: no such directory")
    if not any((path / name).exists() for name in ("runs.jsonl", "manifest.json")):
        raise argparse.ArgumentTypeError(
            f"{path}: no runs.jsonl or manifest.json here; is it a sweep output directory?")
    return path
