"""The files a command reads and writes are distinct, checked before it does anything.

A run whose ``--report-json`` names its ``--baseline`` replaces the baseline; ``--junitxml``
naming the record is overwritten by it; ``extractbench merge s1 s2 -o s2`` replaces a
shard. :func:`path_problems` finds every such pair (by the resolved real path, symlinks
followed, and by the file itself where both exist, hard links included), every output that
cannot be a file (an existing folder, a FIFO, a socket, a block device) and every output
whose nearest existing folder no file can be created in (``/proc``, ``/sys``) or that lies
under a regular file (``afile/x.html``: not a directory), so a command refuses
them in one usage line each (exit 4) before any model call, instead of losing a file,
replacing a device or writing it after the run. A character device (``/dev/null``,
``/dev/stdout``) is a valid output: it is written in place (:func:`suites.files.write_output`),
and several outputs may name it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from extractbench.suites.files import path_kind

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
        problems += _output_problems(option, path)
    for option, path in dirs:
        kind = path_kind(path)
        if kind not in (None, "folder"):
            problems.append(f"{option} {path}: is a {kind}; give a folder to write into")
    targets = writes + dirs
    for i, (option, path) in enumerate(targets):
        for other, there in reads:
            if _same(path, there):
                problems.append(
                    f"{other} {there} {option} {path}: the same file; write to another path "
                    "(the command would replace a file it reads)"
                )
        if path_kind(path) == "character device":
            continue  # written in place: two outputs may both discard into /dev/null
        for other, there in targets[:i]:
            if _same(path, there):
                problems.append(
                    f"{other} {there} {option} {path}: the same file; give each its own path "
                    "(one would replace the other)"
                )
    return problems


def _output_problems(option: str, path: Path) -> list[str]:
    """Why ``path`` cannot take an output file: a folder or another non-regular file is
    there, the nearest existing path above it is not a folder (a regular file: the write
    would fail with "Not a directory" after the run), or that folder takes no new file (a
    pseudo file system such as ``/proc``: the write's temporary file could not be made
    there)."""
    kind = path_kind(path)
    if kind == "folder":
        return [f"{option} {path}: is a folder; give the path of a file to write"]
    if kind == "character device":
        return []
    if kind not in (None, "file"):
        return [
            f"{option} {path}: is a {kind}, not a regular file; give the path of a file to "
            "write (a character device such as /dev/null is written in place)"
        ]
    parent = Path(path).expanduser().absolute().parent
    while path_kind(parent) is None and parent != parent.parent:
        parent = parent.parent  # the folders still missing are made at the write
    kind = path_kind(parent)
    if kind != "folder":
        return [
            f"{option} {path}: {parent} is a {kind or 'path that cannot be looked at'}, not a "
            "folder; give a path in a folder"
        ]
    try:
        fd, probe = tempfile.mkstemp(prefix=".extractbench-probe-", dir=parent)
    except OSError as exc:
        return [
            f"{option} {path}: no file can be created in {parent} ({exc.strerror or exc}); "
            "give a path in a folder you can write"
        ]
    os.close(fd)
    os.unlink(probe)
    return []
