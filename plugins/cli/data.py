"""``extractbench data fetch|verify|info``: the pinned benchmark data."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from extractbench.plugins.verdict.exit_codes import USAGE_ERROR
from extractbench.suites.datasets.fetch import MIRROR_ENV
from extractbench.suites.datasets.manifest import MANIFEST_PATH

__all__ = ["data_command"]

EXTRAS_SHOWN = 5  # extra files listed without -v


def data_command(args: argparse.Namespace) -> int:
    """``extractbench data fetch|verify|info``."""
    from extractbench.suites.datasets.fetch import FetchError, data_cache_dir, fetch
    from extractbench.suites.datasets.manifest import load_manifest

    manifest = load_manifest()
    unknown = [s for s in getattr(args, "suites", []) if s not in manifest.suites]
    if unknown:
        print(f"extractbench: unknown suite(s) {', '.join(unknown)}; the manifest lists: "
              f"{', '.join(manifest.suites)}", file=sys.stderr)  # fmt: skip
        return USAGE_ERROR
    cache = data_cache_dir(manifest)
    if args.data_command == "fetch":
        dest = Path(args.dest) if args.dest else cache
        suites = args.suites or list(manifest.suites)
        mirror = args.mirror or os.environ.get(MIRROR_ENV)
        if mirror and not mirror.startswith(("http://", "https://")):
            print(f"extractbench: --mirror {mirror}: must be an http:// or https:// URL",
                  file=sys.stderr)  # fmt: skip
            return USAGE_ERROR
        try:
            done = fetch(manifest, suites, dest, mirror=args.mirror or os.environ.get(MIRROR_ENV),
                         progress=sys.stderr.isatty())  # fmt: skip
        except FetchError as exc:
            print(f"extractbench: {exc}", file=sys.stderr)
            return 1
        problems = [p for p in manifest.verify(dest, suites) if not p.startswith("extra")]
        for line in problems:
            print(line, file=sys.stderr)
        print(f"{dest}: {', '.join(suites)} verified ({len(done)} files fetched or built)")
        return 1 if problems else 0
    if args.data_command == "verify":
        folder = Path(args.dir) if args.dir else cache
        if not folder.is_dir():
            print(f"extractbench: {folder}: no such folder", file=sys.stderr)
            return USAGE_ERROR
        suites = args.suites or list(manifest.suites)
        problems = manifest.verify(folder, suites)
        failing = [p for p in problems if not p.startswith("extra")]
        extras = [p for p in problems if p.startswith("extra")]
        for line in failing:
            print(line)
        shown = extras if args.verbose else extras[:EXTRAS_SHOWN]
        for line in shown:
            print(line)
        if len(extras) > len(shown):
            print(f"... and {len(extras) - len(shown)} more extra files (-v lists them all)")
        missing = sum(p.startswith("missing") for p in failing)
        print(f"{folder}: {len(manifest.files(suites))} files of {', '.join(suites)}: "
              f"{len(manifest.files(suites)) - len(failing)} verified, {missing} missing, "
              f"{len(failing) - missing} changed, {len(extras)} extra (not in the manifest, "
              f"not read): " + ("FAILED" if failing else "all verified"))  # fmt: skip
        return 1 if failing else 0
    print(f"data manifest {manifest.version} ({MANIFEST_PATH})")
    print(f"user cache: {cache}")
    for name, source in manifest.sources.items():
        print(f"source {name}: {source.repository}@{source.commit[:12]}: {source.license}")
    places = {"user cache": cache}
    if os.environ.get("EXTRACTBENCH_DATA"):
        places = {"$EXTRACTBENCH_DATA": Path(os.environ["EXTRACTBENCH_DATA"]), **places}
    total = sum(e.size for e in manifest.files().values()) / 1e6
    print(f"{len(manifest.files())} files, {total:.1f} MB in all")
    for suite, files in manifest.suites.items():
        size = sum(e.size for e in files.values()) / 1e6
        where = [
            f"{name}: {'present' if folder.is_dir() and not manifest.missing(folder, [suite]) else 'absent'}"
            for name, folder in places.items()
        ]
        print(f"{suite}: {len(files)} files, {size:.1f} MB; " + "; ".join(where))
    return 0
