"""``extractbench server build|which``: the server program ``--serve`` starts for the default
backend's model files (:attr:`fixtures.models.registry.ServeSupport.build` and ``which``)."""

from __future__ import annotations

import argparse
import sys

from extractbench.plugins.verdict.exit_codes import USAGE_ERROR

__all__ = ["server_command"]


def server_command(args: argparse.Namespace) -> int:
    """``extractbench server build|which``: 0 done, 1 ``which`` found no server program,
    4 the build could not start or failed, or the backend serves nothing (one line on
    stderr)."""
    from extractbench.fixtures.models.registry import DEFAULT_BACKEND, backend_kind
    from extractbench.fixtures.models.serving import ServeError

    support = backend_kind(DEFAULT_BACKEND).serve
    if args.server_command == "which":
        if support is None or support.which is None:
            return _no_server("which")
        found, lines = support.which()
        print("\n".join(lines))
        return 0 if found else 1
    if support is None or support.build is None:
        return _no_server("build")
    if args.jobs is not None and args.jobs < 1:
        print(f"extractbench server build: --jobs {args.jobs}: must be at least 1", file=sys.stderr)
        return USAGE_ERROR
    try:
        lines = support.build(args)
    except ServeError as exc:
        print(f"extractbench server build: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print("\n".join(lines))
    return 0


def _no_server(command: str) -> int:
    """One line for a default backend with nothing to ``command`` (another package's)."""
    from extractbench.fixtures.models.registry import DEFAULT_BACKEND

    print(f"extractbench server {command}: --backend {DEFAULT_BACKEND} has no --serve server "
          f"to {command}", file=sys.stderr)  # fmt: skip
    return USAGE_ERROR


def doctor_command(args: argparse.Namespace) -> int:
    """``extractbench doctor``: each registered backend's section (llama.cpp's build and
    offload, torch and CUDA, the visible GPUs with their memory, weight repacking, what the
    ``auto`` options pick here: :mod:`fixtures.models.doctor`); always 0 (it decides
    nothing)."""
    from extractbench.fixtures.models.doctor import doctor_lines

    for line in doctor_lines():
        print(line)
    return 0
