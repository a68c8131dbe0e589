"""``extractbench server build|which``: the llama-server ``--serve`` starts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from extractbench.plugins.verdict.exit_codes import USAGE_ERROR

__all__ = ["server_command"]


def server_command(args: argparse.Namespace) -> int:
    """``extractbench server build|which``: 0 done, 1 ``which`` found no llama-server,
    4 the build could not start or failed (one line on stderr)."""
    from extractbench.fixtures.models.llama_cpp.server_build import (
        ServerBuildError,
        build_server,
        find_llama_server,
    )

    if args.server_command == "which":
        found = find_llama_server()
        if found is None:
            print("no llama-server: --serve starts llama-cpp-python's one-slot server "
                  "(run extractbench server build)")  # fmt: skip
            return 1
        print(f"{found.binary} ({found.source})")
        print(_repack_line())
        return 0
    if args.jobs is not None and args.jobs < 1:
        print(f"extractbench server build: --jobs {args.jobs}: must be at least 1", file=sys.stderr)
        return USAGE_ERROR
    try:
        build_server(
            args.version,
            sdist=Path(args.sdist) if args.sdist else None,
            jobs=args.jobs,
            if_missing=args.if_missing,
        )
    except ServerBuildError as exc:
        print(f"extractbench server build: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(_repack_line())
    return 0


def _repack_line() -> str:
    """What ``--serve`` will ask of llama-server's weight repacking on this machine."""
    from extractbench.fixtures.models.llama_cpp.repack import decide_here

    decision = decide_here("auto")
    flag = "with --no-repack" if not decision.repack else "with repacking (llama.cpp's default)"
    return f"--serve starts it {flag}: weight repacking {decision.reason}"


def doctor_command(args: argparse.Namespace) -> int:
    """``extractbench doctor``: each registered backend's section (llama.cpp's build and
    offload, torch and CUDA, the visible GPUs with their memory, weight repacking, what the
    ``auto`` options pick here: :mod:`fixtures.models.doctor`); always 0 (it decides
    nothing)."""
    from extractbench.fixtures.models.doctor import doctor_lines

    for line in doctor_lines():
        print(line)
    return 0
