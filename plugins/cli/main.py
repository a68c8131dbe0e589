"""``extractbench``: commands around a run, outside pytest.

    extractbench report RUN.json [--baseline OLD.json] [--max-regression D]
                                 [--html out.html] [--summary-md out.md]

renders the same aggregate section, plots and item table as a live run, from the run
record alone, and exits with the run's own status (``plugins.verdict.decide``: 0 PASS, 1 FAIL
or INCOMPLETE, 2 interrupted, 5 nothing measured, 6 outputs not written); 4 on bad input
(one line on stderr). Without --html/--summary-md it prints the verdict only.

    extractbench needles OUT.jsonl [--generator template|llm] [--per-type K] [--seed N]
                                   [--schema PATH] [--model GGUF] [--data-dir DIR]

writes a MINEA needle set (``--suite-option minea.needles=OUT.jsonl`` uses it); a suite's
own commands come from the suite (``Suite.commands``, here ``suites/minea/commands.py``).

    extractbench merge SHARD1.json SHARD2.json ... -o RUN.json [--junitxml J.xml]
                       [--html out.html] [--summary-md out.md] [--baseline OLD.json ...]

merges the run records of ``--shard 1/N`` ... ``N/N`` into the record, JUnit and summaries
one run of all items would give, and exits with that run's status (``plugins.cli.merge``).

    extractbench data fetch [SUITE...] [--mirror URL] [--dest DIR]
    extractbench data verify [DIR] [--suite SUITE]
    extractbench data info

download the pinned data (hash-checked) into the user cache, check a local copy against
the manifest (missing, changed, extra files, one line each), list sources and licenses.

    extractbench server build [--version V] [--sdist PATH] [--jobs N]
    extractbench server which

build llama.cpp's ``llama-server`` from the llama.cpp vendored in llama-cpp-python's
source into the user cache (``fixtures.models.server_build``), which ``--serve`` then
starts with parallel slots; ``which`` prints the server ``--serve`` would start.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import NoReturn

from plugins.cli.merge import MergeError, merge_records
from plugins.outputs.html_report import page_html
from plugins.outputs.junit import junit_xml
from plugins.outputs.markdown import summary_markdown
from plugins.outputs.plots import metric_plots
from plugins.outputs.record import RecordError, read_record, write_record
from plugins.outputs.terminal import score_table
from plugins.run.controller import suite_lines_and_artifacts
from plugins.verdict.baseline import baseline_section
from plugins.verdict.decide import USAGE_ERROR, verdict
from suites.datasets.fetch import MIRROR_ENV
from suites.datasets.manifest import MANIFEST_PATH
from suites.files import atomic_write
from suites.registry import Registry, RegistryError

__all__ = ["main"]


def _render(record: dict, record_path: Path, html: str | None, summary_md: str | None) -> None:
    """The HTML report and markdown summary of a run record (``report`` and ``merge``)."""
    out_html = Path(html) if html else None
    folder = (out_html or record_path).resolve().parent
    images = [Path(p) for p in record.get("artifacts", []) if Path(p).is_file()]
    if not images and (out_html or summary_md):
        images = metric_plots(record, folder, record_path.stem)
    suite_lines, _ = suite_lines_and_artifacts(record, Registry.installed(), None)
    if out_html:
        atomic_write(out_html, page_html(record, images, suite_lines))
        print(f"wrote {out_html}")
    if summary_md:
        md = Path(summary_md)
        atomic_write(md, summary_markdown(record, images, md.parent.resolve(), suite_lines))
        print(f"wrote {md}")


def report(args: argparse.Namespace) -> int:
    """Render the reports of a run record; return the run's own exit status (with
    ``--baseline``, re-decided against that baseline)."""
    record = read_record(Path(args.record))
    if args.baseline:
        baseline = read_record(Path(args.baseline))
        record["baseline"] = baseline_section(
            record, baseline, args.max_regression, args.allow_incomparable_baseline
        )
    _render(record, Path(args.record), args.html, args.summary_md)
    decision = verdict(record)
    print(f"extractbench verdict: {decision.headline()}")
    return decision.status


def merge(args: argparse.Namespace) -> int:
    """``extractbench merge``: the shards' run records as one run's record, JUnit and
    summaries; return that run's exit status (4 when the records cannot be merged)."""
    records = [read_record(Path(p)) for p in args.records]
    baseline = read_record(Path(args.baseline)) if args.baseline else None
    try:
        merged = merge_records(
            records, args.records, baseline, args.max_regression, args.allow_incomparable_baseline
        )
    except MergeError as exc:
        print(f"extractbench merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    decision = verdict(merged)
    merged["exit_status"] = decision.status
    merged["verdict"] = {"word": decision.word, "reasons": decision.reasons}
    out = write_record(merged, Path(args.out))
    print(f"merged {len(records)} shards: {merged['counts']['scored']} items scored, "
          f"{merged['counts']['failed']} failed, of {merged['counts']['expected']} selected")  # fmt: skip
    print("\n".join(score_table(merged["aggregates"], merged["gates"])))
    print(f"run record: {out}")
    if args.junitxml:
        atomic_write(Path(args.junitxml), junit_xml(merged))
        print(f"wrote {args.junitxml}")
    _render(merged, out, args.html, args.summary_md)
    print(f"extractbench verdict: {decision.headline()}")
    return decision.status


def data_command(args: argparse.Namespace) -> int:
    """``extractbench data fetch|verify|info``."""
    from suites.datasets.fetch import FetchError, data_cache_dir, fetch
    from suites.datasets.manifest import load_manifest

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
        for line in problems:
            print(line)
        failing = [p for p in problems if not p.startswith("extra")]
        print(f"{folder}: {len(manifest.files(suites))} files of {', '.join(suites)}: "
              + (f"{len(failing)} missing or changed" if failing else "all verified"))  # fmt: skip
        return 1 if failing else 0
    print(f"data manifest {manifest.version} ({MANIFEST_PATH})")
    print(f"user cache: {cache}")
    for name, source in manifest.sources.items():
        print(f"source {name}: {source.repository}@{source.commit[:12]}: {source.license}")
    places = {
        "user cache": cache,
        "../shared/data": Path(__file__).resolve().parents[3] / "shared" / "data",
    }
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


def server_command(args: argparse.Namespace) -> int:
    """``extractbench server build|which``: 0 done, 1 ``which`` found no llama-server,
    4 the build could not start or failed (one line on stderr)."""
    from fixtures.models.server_build import ServerBuildError, build_server, find_llama_server

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
        build_server(args.version, sdist=Path(args.sdist) if args.sdist else None, jobs=args.jobs)
    except ServerBuildError as exc:
        print(f"extractbench server build: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(_repack_line())
    return 0


def _repack_line() -> str:
    """What ``--serve`` will ask of llama-server's weight repacking on this machine."""
    from fixtures.models.repack import decide_here

    decision = decide_here("auto")
    flag = "with --no-repack" if not decision.repack else "with repacking (llama.cpp's default)"
    return f"--serve starts it {flag}: weight repacking {decision.reason}"


class _Parser(argparse.ArgumentParser):
    """argparse whose errors exit 4 (a usage error, as pytest's), not 2, which is
    INCOMPLETE's code in the exit-code table (plugins/verdict.py)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``extractbench`` console script."""
    try:
        suites = Registry.installed()
    except RegistryError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    parser = _Parser(
        prog="extractbench",
        description="Work with extractbench run records (report, merge), the pinned benchmark "
        "data (data), the llama-server for --serve (server), and the suites' own commands "
        "(MINEA: needles).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser(
        "report",
        help="render an HTML report and/or markdown summary from a run record and exit with "
        "the run's verdict",
    )
    rep.add_argument("record", metavar="RUN.json", help="run record written by a pytest run")
    rep.add_argument("--baseline", metavar="OLD.json", help="earlier run record to compare with")
    rep.add_argument(
        "--max-regression",
        type=float,
        default=None,
        metavar="DELTA",
        help="fail on a significant drop larger than DELTA",
    )
    rep.add_argument(
        "--allow-incomparable-baseline",
        action="store_true",
        help="a baseline sharing no item with the record does not fail it",
    )
    rep.add_argument("--html", metavar="PATH", help="write a self-contained HTML report here")
    rep.add_argument("--summary-md", metavar="PATH", help="write a markdown summary here")
    mrg = sub.add_parser(
        "merge",
        help="merge the run records of --shard 1/N ... N/N into one run's record, JUnit and "
        "summaries, and exit with that run's verdict",
        description="Merge shard run records (pytest ... --shard K/N --report-json SHARD.json "
        "on N machines) into the record one run of all items would give: the same "
        "aggregates, confidence intervals, gates and baseline comparison. Refuses records "
        "of another model, generation settings, data or code version, and an incomplete "
        "set of shards, with one line naming the difference (exit 4).",
    )
    mrg.add_argument("records", nargs="+", metavar="SHARD.json", help="every shard's run record")
    mrg.add_argument("-o", "--out", required=True, metavar="RUN.json", help="merged run record")
    mrg.add_argument("--junitxml", metavar="PATH", help="write the merged JUnit XML here")
    mrg.add_argument("--html", metavar="PATH", help="write a self-contained HTML report here")
    mrg.add_argument("--summary-md", metavar="PATH", help="write a markdown summary here")
    mrg.add_argument("--baseline", metavar="OLD.json", help="earlier run record to compare with")
    mrg.add_argument("--max-regression", type=float, default=None, metavar="DELTA",
                     help="with --baseline: fail on a significant drop larger than DELTA")  # fmt: skip
    mrg.add_argument("--allow-incomparable-baseline", action="store_true",
                     help="a baseline sharing no item does not fail the merged run")  # fmt: skip
    for suite in suites.suites.values():
        if suite.commands is not None:
            suite.commands(sub)  # a suite's own commands (MINEA: needles)
    dat = sub.add_parser(
        "data",
        help="fetch, verify or list the benchmark data of the manifest",
        description="The pinned benchmark data: every file a suite reads, with its upstream "
        "source, sha256 and license (suites/datasets/manifest.json).",
    )
    dsub = dat.add_subparsers(dest="data_command", required=True)
    fet = dsub.add_parser("fetch", help="download (hash-checked) into the user cache")
    fet.add_argument("suites", nargs="*", metavar="SUITE", help="suites to fetch (default: all)")
    fet.add_argument("--mirror", metavar="URL", help="base URL laid out like the data folder "
                     "(default $EXTRACTBENCH_DATA_MIRROR, else the upstream repositories)")  # fmt: skip
    fet.add_argument("--dest", metavar="DIR", help="folder to fill (default: the user cache)")
    ver = dsub.add_parser("verify", help="check a local copy against the manifest")
    ver.add_argument("dir", nargs="?", metavar="DIR", help="data folder (default: the user cache)")
    ver.add_argument("--suite", dest="suites", action="append", default=[], metavar="SUITE",
                     help="only this suite's files (repeatable)")  # fmt: skip
    dsub.add_parser("info", help="sources, licenses, sizes and what is present")
    srv = sub.add_parser(
        "server",
        help="build llama.cpp's llama-server (parallel slots) for --serve",
        description="--serve starts llama-server when one is found: the one built here for "
        "the installed llama-cpp-python, else one on PATH; else llama-cpp-python's own "
        "server, which answers one request at a time.",
    )
    ssub = srv.add_subparsers(dest="server_command", required=True)
    bld = ssub.add_parser(
        "build",
        help="compile llama-server from llama-cpp-python's source into the user cache",
        description="pip download llama-cpp-python's source distribution (the installed "
        "version), configure its vendored llama.cpp with CMake (static, no network) and "
        "build the llama-server target into <user cache>/extractbench/llama-server/VERSION/ "
        "with build.json and build.log. Needs cmake and a C++ compiler; about 6 minutes "
        "on 2 cores.",
    )
    bld.add_argument("--version", metavar="V",
                     help="llama-cpp-python version (default: the installed one)")  # fmt: skip
    bld.add_argument("--sdist", metavar="PATH",
                     help="a local llama-cpp-python source archive instead of pip download")  # fmt: skip
    bld.add_argument("--jobs", type=int, metavar="N", help="parallel compile jobs (default: CPUs)")
    ssub.add_parser("which", help="print the llama-server --serve would start and exit 0, "
                    "or exit 1 when there is none")  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "data":
        return data_command(args)
    if args.command == "server":
        return server_command(args)
    if getattr(args, "func", None) is not None:
        return args.func(args)
    if getattr(args, "max_regression", None) is not None and (
        not args.baseline or not math.isfinite(args.max_regression) or args.max_regression < 0
    ):
        print(
            "extractbench: --max-regression needs --baseline and a finite value >= 0",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        return merge(args) if args.command == "merge" else report(args)
    except RecordError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"extractbench: cannot write output: {exc}", file=sys.stderr)
        return 6


if __name__ == "__main__":
    sys.exit(main())
