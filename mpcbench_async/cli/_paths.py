"""Argument types for output paths, checked when the command line is parsed.

A command that writes its results at the end (``profile endpoint`` measures for
minutes first) must not find out then that ``--out`` is a regular file or an
unwritable place: the measurement would be lost. These types refuse such a path
before any work starts, as an ordinary argparse error (one line, exit 2).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

__all__ = ["output_dir", "output_file"]


def _first_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (the place a ``mkdir -p`` would start from)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def _check_creatable(path: Path, what: str) -> None:
    base = _first_existing(path.absolute())
    if base != path.absolute() and not base.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: cannot create the {what} there, {base} is a file")
    if not os.access(base, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{path}: {base} is not writable")


def output_dir(text: str) -> Path:
    """A directory to write into: absent (created later), or an existing writable directory; never a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a file, not a directory")
    _check_creatable(path, "directory")
    return path


def output_file(text: str) -> Path:
    """A file to write: absent or a regular file, in a directory that exists or can be created."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a directory, not a file")
    if not path.exists():
        _check_creatable(path.parent, "file")
    elif not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{path} is not writable")
    return path
