"""``bundle install --measure``: the main job's rows on the machine just set up
(``benchmarks/gpu_main_job.sh``, each row under its own budget), and its results in one
archive small enough to carry back (at most :data:`ARCHIVE_LIMIT` bytes).

Standard library only: copied into the bundle beside ``install.py``.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

__all__ = ["ARCHIVE_LIMIT", "archive_results", "measure"]

ARCHIVE_LIMIT = 16 << 20  # 16 MiB: one file to copy back from a short rental


def measure(source: Path, python: Path, out: Path, log: Path, env: dict[str, str]) -> int:
    """Run ``benchmarks/gpu_main_job.sh`` of ``source`` with ``python``, its rows' records
    and logs into ``out`` (the rows' budgets are the script's own, or ``MAIN_S`` ... in
    ``env``); its exit status (its output in ``log``)."""
    out.mkdir(parents=True, exist_ok=True)
    run_env = {**os.environ, **env, "OUT": str(out), "PYTHON": str(python)}
    with log.open("wb") as fh:
        return subprocess.call(["bash", str(source / "benchmarks" / "gpu_main_job.sh")],
                               cwd=source, env=run_env, stdout=fh, stderr=subprocess.STDOUT)  # fmt: skip


def archive_results(out: Path, archive: Path, limit: int = ARCHIVE_LIMIT) -> list[str]:
    """Write ``out``'s files into ``archive`` (``.tar.xz``) within ``limit`` bytes: every
    file when they fit, else without the largest ones, one at a time, until the rest fit
    (``left-out.txt`` in the archive names them); the names left out."""
    files = sorted((p for p in out.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    left: list[str] = []
    while True:
        with tarfile.open(archive, "w:xz") as tar:
            for path in files:
                tar.add(path, arcname=str(path.relative_to(out.parent)))
            if left:
                note = out / "left-out.txt"
                note.write_text("".join(f"{name}\n" for name in left), encoding="utf-8")
                tar.add(note, arcname=str(note.relative_to(out.parent)))
        if archive.stat().st_size <= limit or not files:
            return left
        biggest = files.pop()
        left.append(str(biggest.relative_to(out)))
