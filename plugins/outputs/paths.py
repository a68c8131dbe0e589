"""The files a command reads and writes are distinct, checked before it does anything.

A run whose ``--report-json`` names its ``--baseline`` replaces the baseline; ``--junitxml``
naming the record is overwritten by it; ``extractbench merge s1 s2 -o s2`` replaces a
shard. :func:`path_problems` finds every such pair (by the resolved real path, symlinks
followed, and by the file itself where both exist, hard links included) and every output
that cannot be a file (an existing folder), so a command refuses them in one usage line
each (exit 4) before any model call, instead of losing a file or writing it after the run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Named", "path_problems"]

# (option as the user wrote it, e.g. "--baseline"; the path it names, or None: not given)
Named = tuple[str, "Path | str | None"]


def _real(path: Path) -> str:
    return os.path.realpath(Path(path).expanduser())


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file (one real path, or one inode where both exist)."""
    if _real(a) == _real(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _given(named: Sequence[Named]) -> list[tuple[str, Path]]:
    return [(option, Path(path)) for option, path in named if path is not None]


def path_problems(
    inputs: Sequence[Named], outputs: Sequence[Named], folders: Sequence[Named] = ()
) -> list[str]:
    """One line per clash among a command's files.

    Args:
        inputs: the files it reads (``--baseline``, ``--rescore``, the records of
            ``report`` and ``merge``); two inputs may name one file.
        outputs: the files it writes (run record, JUnit, HTML, markdown, CTRF): none may
            name an input, another output, or an existing folder.
        folders: the folders it writes into (``--export every-eval-ever=DIR``): none may
            name an input, an output or an existing file.

    Returns:
        Lines such as ``--baseline a.json --report-json a.json: the same file; ...``;
        empty when every path is distinct.
    """
    reads, writes, dirs = _given(inputs), _given(outputs), _given(folders)
    problems = []
    for option, path in writes:
        if path.is_dir():
            problems.append(f"{option} {path}: is a folder; give the path of a file to write")
    for option, path in dirs:
        if path.exists() and not path.is_dir():
            problems.append(f"{option} {path}: is a file; give a folder to write into")
    targets = writes + dirs
    for i, (option, path) in enumerate(targets):
        for other, there in reads:
            if _same(path, there):
                problems.append(
                    f"{other} {there} {option} {path}: the same file; write to another path "
                    "(the command would replace a file it reads)"
                )
        for other, there in targets[:i]:
            if _same(path, there):
                problems.append(
                    f"{other} {there} {option} {path}: the same file; give each its own path "
                    "(one would replace the other)"
                )
    return problems
