"""``extractbench``: commands that work on run records, without pytest or a model.

    extractbench report RUN.json [--baseline OLD.json] [--max-regression D]
                                 [--html out.html] [--summary-md out.md]

renders the same aggregate section, plots and item table as a live run, from the run
record alone. Exit status: 0, 1 when a gate or the regression check fails, 2 on bad
input (one line on stderr).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from plugins.baseline import compare_records
from plugins.html_report import page_html
from plugins.markdown import summary_markdown
from plugins.plots import metric_plots
from plugins.runrecord import RecordError, read_record

__all__ = ["main"]


def _suite_lines(record: dict) -> list[str]:
    lines: list[str] = []
    for name, info in sorted(record.get("suites", {}).items()):
        if info.get("report"):
            try:
                lines += importlib.import_module(info["report"]).summary_lines(record, name)
            except Exception as exc:  # one suite's report must not stop the others
                lines.append(f"{name}: report failed: {type(exc).__name__}: {exc}")
    return lines


def report(args: argparse.Namespace) -> int:
    record = read_record(Path(args.record))
    if args.baseline:
        baseline = read_record(Path(args.baseline))
        comparisons = compare_records(record, baseline, args.max_regression)
        record["baseline"] = {
            "run_id": baseline.get("run_id", ""),
            "model": baseline.get("model", {}).get("name", ""),
            "max_regression": args.max_regression,
            "comparisons": [c.to_dict() for c in comparisons],
        }
    out_html = Path(args.html) if args.html else None
    folder = (out_html or Path(args.record)).resolve().parent
    images = [Path(p) for p in record.get("artifacts", []) if Path(p).is_file()]
    if not images:
        images = metric_plots(record, folder, Path(args.record).stem)
    if out_html:
        out_html.parent.mkdir(parents=True, exist_ok=True)
        out_html.write_text(page_html(record, images, _suite_lines(record)), encoding="utf-8")
        print(f"wrote {out_html}")
    if args.summary_md:
        md = Path(args.summary_md)
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(summary_markdown(record, images, md.parent.resolve()), encoding="utf-8")
        print(f"wrote {md}")
    failed = any(g.get("passed") is False for g in record.get("gates", []))
    failed |= any(c["failed"] for c in record.get("baseline", {}).get("comparisons", []))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``extractbench`` console script."""
    parser = argparse.ArgumentParser(
        prog="extractbench", description="Work with extractbench run records."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser(
        "report", help="render an HTML report and/or markdown summary from a run record"
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
    rep.add_argument("--html", metavar="PATH", help="write a self-contained HTML report here")
    rep.add_argument("--summary-md", metavar="PATH", help="write a markdown summary here")
    args = parser.parse_args(argv)
    if args.max_regression is not None and not args.baseline:
        parser.error("--max-regression needs --baseline")
    if not args.html and not args.summary_md:
        parser.error("nothing to write: give --html PATH and/or --summary-md PATH")
    try:
        return report(args)
    except RecordError as exc:
        print(f"extractbench: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"extractbench: cannot write output: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
