"""The files the package ships, and the rule that picks them over a missing workspace file.

Why: an installed wheel has no clone around it, yet the prompts, the JSON Schemas,
the tariff pack, the default model config and the example benchmark (tasks, data,
scenarios) are needed to run anything. They ship inside the package under
``_data/``, laid out as in the repository, found beside this module (or through
``importlib.resources`` for an install that has no such directory), once per
process: the CLI's defaults ask for them at every start-up, and
``importlib.resources`` alone (zipfile, tempfile, shutil…) would cost more than
``--help`` itself (issue 31). In the repository ``_data/`` holds only symlinks to
the top-level files, so there is one copy to edit; building the wheel copies
their contents in.

The working directory stays the default workspace: ``workspace_path`` returns a
relative path unchanged when it exists there, and the shipped copy only when it
does not. ``tasks/``, ``data/`` and ``scenarios/`` belong together: if any of them
is in the working directory, none is taken from the package, so a workspace's
own tasks are never mixed with the shipped data.
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["SHIPPED", "shipped_path", "workspace_path"]

# Workspace paths (relative, as the CLI's defaults spell them) that have a shipped copy.
SHIPPED = ("model_config.json", "prompt_config.json", "schemas", "storage/packs", "tasks", "data", "scenarios")
_BENCHMARK = ("tasks", "data", "scenarios")


def shipped_path(name: str) -> Path:
    """The shipped copy of the workspace path ``name`` (``"prompt_config.json"``, ``"storage/packs/tariff"``)."""
    return _data_root().joinpath(*Path(name).parts)


@functools.cache
def _data_root() -> Path:
    """The package's ``_data`` directory, looked up once per process."""
    beside = Path(__file__).parent / "_data"  # what importlib.resources finds for a package on the file system
    if beside.is_dir():
        return beside
    from importlib.resources import files  # imports zipfile, tempfile…: only for an unusual install

    resource = files(__package__).joinpath("_data")
    if not isinstance(resource, Path):  # a zipped install; pip always unpacks wheels
        raise RuntimeError("mpcbench_async must be installed unzipped to read its shipped files (_data/)")
    return resource


def workspace_path(path: str | Path) -> Path:
    """``path`` itself, unless it is a shipped workspace path missing from the working directory: then the copy."""
    path = Path(path)
    top = _shipped_root(path)
    if top is None or path.exists():
        return path
    together = _BENCHMARK if top in _BENCHMARK else (top,)
    if any(Path(name).exists() for name in together):
        return path
    return shipped_path(str(path))


def _shipped_root(path: Path) -> str | None:
    """The entry of ``SHIPPED`` that relative ``path`` is or lies under, else ``None``."""
    if path.is_absolute():
        return None
    text = path.as_posix()
    return next((name for name in SHIPPED if text == name or text.startswith(name + "/")), None)
