"""llama.cpp on the bundle's target: one CMake build, started in the background, that gives the
llama-cpp-python wheel (installed) and ``llama-server`` together.

``pip install --no-index sdist --config-settings=build-dir=DIR`` with
``CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON"`` (and
``-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=...`` for a GPU) builds llama-cpp-python's
libraries and the server in one configure and one compile, the build tree kept in ``DIR``
(``LLAMA_BUILD_TOOLS`` without ``LLAVA_BUILD=OFF`` fails at configure: ``tools/mtmd`` is
added twice). The server is then registered where ``--serve`` looks for it
(``<user cache>/llama-server/<version>/llama-server``, a link into the kept build tree, with
its ``build.json``).

Standard library only: copied into the bundle beside ``install.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

__all__ = ["SERVER_FLAGS", "BackgroundBuild", "build_command", "find_server", "register_server"]

SERVER_FLAGS = ("-DLLAVA_BUILD=OFF", "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON")


def build_command(
    pip: list[str], sdist: Path, build_dir: Path, arch: str | None, server: bool, jobs: int
) -> tuple[list[str], dict[str, str]]:
    """The pip command and the environment of the one build (see the module docstring).

    Args:
        pip: ``[python, -m, pip, install, --no-index, --find-links, WHEELS]``.
        sdist: llama-cpp-python's source archive.
        build_dir: the build tree to keep.
        arch: ``CMAKE_CUDA_ARCHITECTURES`` (``"90"``), or None for the CPU.
        server: build ``llama-server`` too.
        jobs: parallel compile jobs.
    """
    flags = [*(["-DGGML_CUDA=on", f"-DCMAKE_CUDA_ARCHITECTURES={arch}"] if arch else [])]
    flags += list(SERVER_FLAGS) if server else []
    command = [*pip, f"--config-settings=build-dir={build_dir}", str(sdist)]
    return command, {"CMAKE_ARGS": " ".join(flags), "CMAKE_BUILD_PARALLEL_LEVEL": str(jobs)}


class BackgroundBuild:
    """The build running while the later parts are unpacked; its output in ``log``."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path) -> None:
        self.command, self.log, self.started = command, log, time.monotonic()
        self._out = log.open("wb")
        self._out.write(
            f"$ {' '.join(command)}\n$ CMAKE_ARGS={env.get('CMAKE_ARGS', '')}\n".encode()
        )
        self._out.flush()
        self.process = subprocess.Popen(command, stdout=self._out, stderr=subprocess.STDOUT,
                                        env={**os.environ, **env})  # fmt: skip

    def wait(self) -> tuple[int, float]:
        """Wait for it: ``(exit status, seconds since it started)``."""
        code = self.process.wait()
        self._out.close()
        return code, round(time.monotonic() - self.started, 1)


def find_server(build_dir: Path) -> Path | None:
    """The ``llama-server`` binary the build left in its tree, or None."""
    found = sorted(
        p for p in build_dir.rglob("llama-server") if p.is_file() and os.access(p, os.X_OK)
    )
    return found[0] if found else None


def register_server(binary: Path, folder: Path, facts: dict) -> Path:
    """Make ``folder/llama-server`` (``--serve``'s built server for this llama-cpp-python) a
    link to ``binary`` in the kept build tree (its libraries stay beside it) and write
    ``folder/build.json`` with ``facts``; the link's path."""
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "llama-server"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(binary.resolve())
    (folder / "build.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return link
