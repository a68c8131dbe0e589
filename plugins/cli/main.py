"""``extractbench``: commands around a run, outside pytest.

    extractbench report RUN.json [--baseline OLD.json] [--max-regression D] [--max-slowdown F]
                                 [--junitxml J.xml] [--html out.html] [--summary-md out.md]

renders the same summary, JUnit, HTML page and markdown (and the exports: ``--ctrf``,
``--export every-eval-ever=DIR``; ``$GITHUB_STEP_SUMMARY`` when set) as the live run, from
the run record alone, and exits with the run's own status (``plugins.verdict.decide``: 0 PASS, 1
FAIL or INCOMPLETE, 2 interrupted, 5 nothing measured, 6 outputs not written, 7 crashed);
4 on bad input (one line on stderr).

    extractbench compare OLD.json NEW.json [--html out.html] [--top N]

per-item changes between two run records: answers that changed, score deltas, and per
metric the paired bootstrap test the baseline gate uses (``plugins.cli.compare``); exits
0 (it decides nothing: ``report NEW.json --baseline OLD.json`` does), 4 on bad input.

    extractbench schema [--out PATH]

prints the JSON Schema of the run record, generated from its typed models.

    extractbench suites [SUITE...] [--data-dir DIR] [--json]

lists each registered suite: its items in the data folder, its default item cap, its
options (type, default, range, meaning) and its metrics (``plugins.cli.suites``).

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
the manifest (each missing or changed file, the first extra files, the counts; ``-v``
every extra file), list sources and licenses.

    extractbench server build [--version V] [--sdist PATH] [--jobs N]
    extractbench server which
    extractbench doctor
    extractbench bundle -o DIR [--python X.Y] [--platform TAG] [--extra NAME] [--model GGUF]
                        [--data-dir DIR] [--part-size SIZE]
    extractbench bundle install DIR [--venv PATH] [--cpu] [--cuda-arch ARCHS]

build llama.cpp's ``llama-server`` from the llama.cpp vendored in llama-cpp-python's
source into the user cache (``fixtures.models.llama_cpp.server_build``), which ``--serve`` then
starts with parallel slots; ``which`` prints the server ``--serve`` would start.
``doctor`` prints what this machine offers the backends (llama.cpp's GPU offload, torch and
CUDA, the GPUs) and what the ``auto`` options pick here (``fixtures.models.doctor``).
``bundle`` writes what an offline GPU machine needs (wheels, llama-cpp-python's source, the
model and data, the project) in parts with a manifest of digests, and ``bundle install``
installs it there with no index (``plugins.cli.bundle_make``, ``plugins.cli.bundle_install``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import NoReturn

from extractbench.plugins.cli.bundle import add_bundle_parser, bundle_command
from extractbench.plugins.cli.compare import add_compare_parser, compare_command
from extractbench.plugins.cli.data import data_command
from extractbench.plugins.cli.records import (
    add_export_arguments,
    merge_command,
    report_command,
    schema_command,
)
from extractbench.plugins.cli.server import doctor_command, server_command
from extractbench.plugins.cli.suites import add_suites_parser, suites_command
from extractbench.plugins.record import RecordError
from extractbench.plugins.verdict.exit_codes import OUTPUT_ERROR, USAGE_ERROR
from extractbench.suites.links import docs_url
from extractbench.suites.registry import Registry, RegistryError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors exit 4 (a usage error, as pytest's), not 2, which is
    INCOMPLETE's code in the exit-code table (plugins/verdict/exit_codes.py)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


# the status of a writer whose reader closed the pipe (the shell's 128 + SIGPIPE)
CLOSED_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``extractbench`` console script.

    Output cut short by its reader (``extractbench server which | head -1``) ends the
    command quietly with status :data:`CLOSED_PIPE`, as a command-line tool's does, not
    with a traceback."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # a closed pipe is found here, not at the interpreter's exit
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # another pipe or socket (a download, a server): a real failure
        # no further write may reach the closed pipe, the interpreter's own flush included
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE
    return status


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll reports an error)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file, or no poll here
        return False


def _main(argv: list[str] | None) -> int:
    try:
        suites = Registry.installed()
    except RegistryError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    parser = _Parser(
        prog="extractbench",
        description="Work with extractbench run records (report, merge, schema), the suites "
        "(suites: items, caps, options, metrics), the pinned benchmark data (data), the llama-server for --serve (server), this machine's GPUs "
        "and backends (doctor), and the suites' own commands (MINEA: needles).",
        epilog=f"Documentation: {docs_url('usage.md')} (every command and option), "
        f"{docs_url('ci.md')} (CI recipes), {docs_url('reports.md')} (reports, exports, "
        "compare); pytest's options: pytest --help, section extractbench.",
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
    rep.add_argument("--max-slowdown", type=float, default=None, metavar="FRACTION",
                     help="with --baseline: fail on a speed figure slower by more than FRACTION")  # fmt: skip
    rep.add_argument(
        "--allow-incomparable-baseline",
        action="store_true",
        help="a baseline sharing no item with the record does not fail it, and one of "
        "another suite version or protocol option is compared instead of refused",
    )
    rep.add_argument(
        "--allow-partial-baseline",
        action="store_true",
        help="with --max-regression: accept a baseline of part of a run (incomplete, "
        "stopped early, one shard), and a baseline sharing no item of one of the record's "
        "suites does not fail it",
    )
    add_export_arguments(rep)
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
    mrg.add_argument("--baseline", metavar="OLD.json", help="earlier run record to compare with")
    mrg.add_argument("--max-regression", type=float, default=None, metavar="DELTA",
                     help="with --baseline: fail on a significant drop larger than DELTA")  # fmt: skip
    mrg.add_argument("--max-slowdown", type=float, default=None, metavar="FRACTION",
                     help="with --baseline: fail on a speed figure slower by more than FRACTION")  # fmt: skip
    mrg.add_argument("--allow-incomparable-baseline", action="store_true",
                     help="a baseline sharing no item does not fail the merged run, and one "
                     "of another suite version or protocol option is compared instead of "
                     "refused")  # fmt: skip
    mrg.add_argument("--allow-partial-baseline", action="store_true",
                     help="with --max-regression: accept a baseline of part of a run "
                     "(incomplete, stopped early, one shard), and a baseline sharing no item "
                     "of one of the suites does not fail the merged run")  # fmt: skip
    add_export_arguments(mrg)
    add_compare_parser(sub)
    add_suites_parser(sub)
    sch = sub.add_parser(
        "schema",
        help="print the JSON Schema of the run record (generated from its typed models)",
        description="The run record's JSON Schema (draft 2020-12), generated from the "
        "pydantic models every reader and writer of a record uses (plugins/record/).",
    )
    sch.add_argument("--out", metavar="PATH", help="write it to this file instead of stdout")
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
    ver.add_argument("-v", "--verbose", action="store_true",
                     help="list every extra file (default: the first five and a count)")  # fmt: skip
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
    bld.add_argument("--if-missing", action="store_true",
                     help="keep a server already built for this version with the same CMake "
                     "flags (build.json) instead of compiling again")  # fmt: skip
    ssub.add_parser("which", help="print the llama-server --serve would start and exit 0, "
                    "or exit 1 when there is none")  # fmt: skip
    sub.add_parser(
        "doctor",
        help="what this machine offers the backends: llama.cpp build and GPU offload, torch "
        "and CUDA, visible GPUs with memory, and what the auto options pick",
        description="Prints, one fact per line: llama-cpp-python's version, whether its build "
        "offloads to a GPU, llama.cpp's system info and GPUs; torch, its CUDA, the GPUs torch "
        "sees, MPS; what --n-gpu-layers auto, --flash-attn auto, --device auto and --dtype "
        "auto pick here; how xdist workers map to GPUs; and the install command for a GPU "
        f"build where this one has none ({docs_url('backends.md')}). Exits 0.",
    )
    add_bundle_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "bundle":
        return bundle_command(args)
    if args.command == "data":
        return data_command(args)
    if args.command == "server":
        return server_command(args)
    if args.command == "doctor":
        return doctor_command(args)
    if args.command == "schema":
        return schema_command(args)
    if args.command == "compare":
        return compare_command(args)
    if args.command == "suites":
        return suites_command(args)
    if getattr(args, "func", None) is not None:
        from extractbench.plugins.cli.tools import CliTools

        return args.func(args, CliTools())
    if getattr(args, "max_regression", None) is not None and (
        not args.baseline or not math.isfinite(args.max_regression) or args.max_regression < 0
    ):
        print(
            "extractbench: --max-regression needs --baseline and a finite value >= 0",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        return merge_command(args) if args.command == "merge" else report_command(args)
    except RecordError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"extractbench: cannot write output: {exc}", file=sys.stderr)
        return OUTPUT_ERROR


if __name__ == "__main__":
    sys.exit(main())
