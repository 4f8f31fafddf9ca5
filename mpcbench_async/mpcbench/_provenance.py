"""What a stored score was computed with: the check code's version and the digest of a judge's input.

Why: ``verify`` re-scores a finished sweep from its records without calling a model. When a stored
score no longer reproduces it must say why — the check code changed since the run (its
``checks_version`` differs), or the judge's prompt or input did (``judge_input_digest`` differs) —
not only that it differs. The same version keys the validity certificate's cached baselines
(``sweep._baselines``), so a change to the checks or the sim baselines recomputes them.

Finding a version's files means parsing them (about 120 for the baselines: 0.4 s, paid by every
sweep, a resume with nothing to do included), so the digests are cached in
``$XDG_CACHE_HOME/mpcbench-async/provenance-<tree>.json`` under a stamp of every package file's
path, size and modification time: an edit, a new or a removed module changes the stamp and the
digests are computed afresh. The cache is an optimisation only: unreadable, it is recomputed;
unwritable, skipped.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson

from .._prompts import PromptConfig
from ..records import Message
from ..runtime import atomic_write_bytes
from ._judge import judge_messages

__all__ = ["SIM_JUDGE", "baselines_version", "checks_version", "judge_input_digest", "sim_judge_scores",
           "sim_judge_version"]

log = logging.getLogger(__name__)

_PACKAGE = Path(__file__).resolve().parent.parent
# Where each versioned computation starts (modules, relative to the package). Its version digests these files
# and every package module they import, directly or not (read from the source, so a new helper module the
# checks come to import is covered without anyone listing it).
CHECK_ENTRY = ("mpcbench/_checks.py",)
# And the sim baselines the certificate runs (sim/oracle-agent, sim/lazy-agent) with the agent loop.
BASELINE_ENTRY = (*CHECK_ENTRY, "mpcbench/_agent.py", "mpcbench/_sim/_oracle", "mpcbench/_sim/_judge_policy.py")
# The deterministic rubric judge: its rules and how it reads answers.
SIM_JUDGE = "sim/judge"
SIM_JUDGE_ENTRY = ("mpcbench/_sim/_judge_policy.py",)
# Plumbing a score passes through but never computes (calls, records, files, the sim's HTTP server, the error
# tree, secret masking): not followed, so a transport change or a new error class does not read as "the check code
# changed" in ``verify``.
PLUMBING = frozenset({"llm", "runtime", "records", "sim", "_exceptions", "_redact"})


# Source files parsed to find a version's files, in this process: a resume with a warm cache parses none (a test
# counts them, so a fixed cost that comes back fails without a timing).
parsed_files = 0


def _module_file(module: str, package: Path) -> Path | None:
    """The package file of ``module`` (dotted, relative to the package), or None outside it."""
    base = package.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(file: Path, root: Path) -> Iterator[Path]:
    """The package files ``file`` imports (relative imports and ``mpcbench_async.…``), lazily imported ones too."""
    global parsed_files
    parsed_files += 1
    package = file.parent.relative_to(root).parts
    for node in ast.walk(ast.parse(file.read_bytes())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = list(package[:len(package) - node.level + 1])
            elif node.module and node.module.split(".")[0] == _PACKAGE.name:
                anchor = []
            else:
                continue
            module = [*anchor, *(node.module.split(".") if node.module else [])]
            if not node.level:
                module = module[1:]
            names = [".".join(module)] + [".".join([*module, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".", 1)[1] for a in node.names if a.name.startswith(_PACKAGE.name + ".")]
        else:
            continue
        for name in names:
            if name and name.split(".")[0] not in PLUMBING and (found := _module_file(name, root)) is not None:
                yield found


def _closure(entries: tuple[str, ...], package: Path = _PACKAGE) -> list[Path]:
    """``entries`` (files or directories) and every package file they import, transitively, sorted."""
    todo = [f for part in entries for f in (sorted((package / part).rglob("*.py")) if (package / part).is_dir()
                                               else [package / part])]
    seen: set[Path] = set()
    while todo:
        file = todo.pop()
        if file not in seen:
            seen.add(file)
            todo.extend(_imports(file, package))
    return sorted(seen)


def _stamp(package: Path) -> str:
    """A hash of every package file's path, size and modification time: any edit, new or removed module changes it.
    (``__pycache__`` holds no ``.py`` file: not listed.)"""
    stamp = hashlib.sha256()
    todo = [package]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        todo.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    info = entry.stat()
                    stamp.update(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return stamp.hexdigest()


class _Cached(msgspec.Struct):
    stamp: str
    digests: dict[str, str]


def cache_file(package: Path = _PACKAGE) -> Path:
    """Where ``package``'s digests are cached: one file per source tree, so two checkouts never evict each other."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return home / "mpcbench-async" / f"provenance-{hashlib.sha256(str(package).encode()).hexdigest()[:16]}.json"


def _source_digest(entries: tuple[str, ...], package: Path = _PACKAGE, stamp: str | None = None) -> str:
    """The digest of ``entries``' closure, from the cache when no package file changed since it was computed
    (``stamp``: ``package``'s, when the caller has it already)."""
    path, stamp, name = cache_file(package), stamp or _stamp(package), "\0".join(entries)
    try:
        cached = msgspec.json.decode(path.read_bytes(), type=_Cached)
    except (OSError, msgspec.DecodeError):
        cached = _Cached(stamp=stamp, digests={})
    if cached.stamp != stamp:
        cached = _Cached(stamp=stamp, digests={})
    if (found := cached.digests.get(name)) is not None:
        return found
    digest = hashlib.sha256()
    for file in _closure(entries, package):
        digest.update(file.relative_to(package).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    cached.digests[name] = found = digest.hexdigest()[:16]
    try:
        atomic_write_bytes(path, msgspec.json.encode(cached), fsync=False)
    except OSError as exc:  # a cache is an optimisation: a read-only home only costs the parse next time
        log.warning("%s: cannot cache the source versions (%s)", path, exc.strerror)
    return found


@functools.cache
def _package_stamp() -> str:
    """The package's ``_stamp``, taken once per process for the three versions below (each of them is computed once
    per process too): a sweep asks for all three, and each walk of the tree cost ~2 ms."""
    return _stamp(_PACKAGE)


@functools.cache
def checks_version() -> str:
    """A short hash of the check code's source: it changes whenever a check could give another result."""
    return _source_digest(CHECK_ENTRY, stamp=_package_stamp())


@functools.cache
def baselines_version() -> str:
    """A short hash of the checks' and the sim baselines' source (the certificate's cache key part)."""
    return _source_digest(BASELINE_ENTRY, stamp=_package_stamp())


@functools.cache
def sim_judge_version() -> str:
    """A short hash of ``sim/judge``'s rubric source: stored with its judgements, so ``verify`` can tell an edited
    score from a rubric changed since."""
    return _source_digest(SIM_JUDGE_ENTRY, stamp=_package_stamp())


def sim_judge_scores(judge_input: dict[str, Any]) -> tuple[int, int]:
    """(ARS, SGR) that ``sim/judge`` gives ``judge_input``: its rubric is a pure function of the input, so a stored
    judgement of it can be re-scored in-process, without a model call."""
    from ._sim._judge_policy import judge_scores

    scores = judge_scores(judge_input)
    return (scores["answer_requirements_satisfaction"]["score"], scores["source_grounded_reasoning"]["score"])


def judge_input_digest(judge_input: dict[str, Any], prompts: PromptConfig) -> str:
    """A short hash of exactly what a judge's first attempt sends: its rendered system and user messages."""
    return messages_digest(judge_messages(judge_input, prompts))


def messages_digest(messages: list[Message]) -> str:
    """``judge_input_digest`` of the messages ``judge_messages`` rendered (a judge stage renders them once, for
    the digest and the judge both)."""
    return hashlib.sha256(orjson.dumps([(m.role, m.content) for m in messages])).hexdigest()[:16]
