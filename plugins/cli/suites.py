"""``extractbench suites``: every registered suite with its items, default item cap,
options (type, default, range, meaning) and metrics, as this project would run it.

    extractbench suites [SUITE...] [--data-dir DIR] [--json]

The items are counted by loading each suite from the data folder a run would read
(``--data-dir``, ``$EXTRACTBENCH_DATA``, else the user cache when it holds the suite's
verified files; nothing is downloaded), with the options of the nearest
``pyproject.toml``'s ``[tool.extractbench.options.SUITE]``; the default caps are that
file's ``[tool.extractbench.limits]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from extractbench.plugins.run.project_config import (
    SettingsError,
    project_defaults,
    project_suites,
)
from extractbench.suites.datasets.resolve import DataDirError, choose_data_dir, explicit_data_dir
from extractbench.suites.item import DataError, DataMissing
from extractbench.suites.links import run_command
from extractbench.suites.protocol import Suite
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import describe_options

__all__ = ["add_suites_parser", "suites_command", "suite_facts", "options_markdown"]


def add_suites_parser(sub: argparse._SubParsersAction) -> None:
    """The ``suites`` sub-command."""
    p = sub.add_parser(
        "suites",
        help="list each suite: its items, default item cap, options (type, default, meaning) "
        "and metrics",
        description="Every registered suite (this package's and any installed by entry "
        "point), as a run from this folder would see it: the items it holds in the data "
        "folder (loaded, nothing downloaded), the default item cap of the nearest "
        "pyproject.toml, each option of --suite-option SUITE.KEY=VALUE with its type, "
        "default, range and meaning, and the metrics it records. Exits 0; 4 for an "
        "unknown suite, a --data-dir that is not a folder or an unreadable pyproject.toml.",
    )
    p.add_argument("suites", nargs="*", metavar="SUITE", help="only these suites")
    p.add_argument("--data-dir", metavar="DIR",
                   help="the data folder (default: $EXTRACTBENCH_DATA, else the user cache)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _first_line(suite: Suite) -> str:
    """The first sentence of the suite module's docstring (what the suite measures)."""
    module = sys.modules.get(getattr(suite.run, "__module__", ""))
    doc = (module.__doc__ or "").strip() if module is not None else ""
    return " ".join(doc.split("\n\n")[0].split())


def _items(suite: Suite, data_dir: Path | None, values: Mapping[str, Any]) -> int | str:
    """The suite's item count, or one line saying why there is none."""
    try:
        options = suite.parse_options(values)
        if suite.missing_data(data_dir, options):
            return f"its data is not here (extractbench data fetch {suite.name}, or --data-dir DIR)"
        return len(suite.load(data_dir, options).items)
    except (DataMissing, DataError) as exc:
        return str(exc)


def suite_facts(
    suite: Suite, data_dir: Path | None, limit: int | None, values: Mapping[str, Any]
) -> dict[str, Any]:
    """What ``extractbench suites`` shows of one suite.

    Args:
        suite: the registered suite.
        data_dir: the data folder, or None (the items are then not counted).
        limit: its default item cap, or None.
        values: the project's options of this suite (``[tool.extractbench.options.NAME]``).

    Returns:
        ``name``, ``description``, ``items`` (a count, or why there is none),
        ``default_cap``, ``breakdown``, ``options`` (:func:`suites.suite_options.describe_options`,
        each with the project's ``value`` where it sets one), ``metrics``.
    """
    options = describe_options(suite.options)
    for row in options:
        if row["name"] in values:
            row["project_value"] = values[row["name"]]
    return {
        "name": suite.name,
        "description": _first_line(suite),
        "items": _items(suite, data_dir, values),
        "default_cap": limit,
        "on_request": suite.on_request,
        "breakdown": list(suite.breakdown),
        "options": options,
        "metrics": list(suite.metric_names()),
    }


def _where(suite: Suite, values: Mapping[str, Any], folder: str) -> str:
    """Where a suite's items come from: the data folder, or the project's own files (the
    options that name them, ``kv.path=items.jsonl``)."""
    try:
        local = suite.reads_local_data(values)
    except (DataError, ValueError):
        local = True
    if local:
        return f"in {folder}"
    named = ", ".join(f"{suite.name}.{k}={v}" for k, v in values.items())
    return f"from {named}" if named else "from the suite's options"


def _text(facts: dict[str, Any], where: str) -> list[str]:
    items = facts["items"]
    count = f"{items:,} {where}" if isinstance(items, int) else f"not counted: {items}"
    cap = facts["default_cap"]
    wrap = lambda text: textwrap.wrap(text, 92, subsequent_indent=" " * 4)  # noqa: E731
    lines = textwrap.wrap(f"{facts['name']}: {facts['description'].replace('``', '')}", 92,
                          subsequent_indent="  ")  # fmt: skip
    if facts["on_request"]:
        name = facts["name"]
        lines += wrap(f"  runs when named ({run_command(name)}), or with every suite "
                      f"({run_command()}) when the project gates it or sets its options")  # fmt: skip
    lines += [
        *wrap(f"  items: {count}"),
        f"  default cap: {cap:,} (--limit lowers it, --full lifts it)" if cap else
        "  default cap: none (every item)",
        f"  breakdown: {', '.join(facts['breakdown']) or '-'}",
        *wrap(f"  metrics: {', '.join(facts['metrics'])}"),
    ]  # fmt: skip
    if not facts["options"]:
        return [*lines, "  options: none"]
    lines.append(f"  options (--suite-option {facts['name']}.KEY=VALUE):")
    for row in facts["options"]:
        default = json.dumps(row["default"]) if row["default"] is not None else "unset"
        head = f"    {row['name']} ({row['type']}{', ' + row['range'] if row['range'] else ''}"
        head += f"; default {default}"
        if "project_value" in row:
            head += f"; this project: {json.dumps(row['project_value'])}"
        lines.append(head + ")")
        lines += textwrap.wrap(row["description"], 88, initial_indent=" " * 6,
                               subsequent_indent=" " * 6)  # fmt: skip
    return lines


def suites_command(args: argparse.Namespace) -> int:
    """``extractbench suites``: print the facts of each (named) suite; 0, or 4 on bad input."""
    from extractbench.suites.datasets.manifest import load_manifest

    registry = Registry.installed()
    unknown = [n for n in args.suites if registry.get(n) is None]
    if unknown:
        print(f"extractbench suites: unknown suite {unknown[0]!r}; known suites: "
              f"{', '.join(registry.names)}", file=sys.stderr)  # fmt: skip
        return 4
    chosen = [registry.suites[n] for n in args.suites or registry.names]
    try:
        choice = explicit_data_dir(args.data_dir) or choose_data_dir(
            load_manifest(), [s.name for s in chosen], offline=True, progress=False
        )
        limits, options = project_defaults(Path.cwd())
        listed = project_suites(Path.cwd())
    except (DataDirError, SettingsError) as exc:
        print(f"extractbench suites: {exc}", file=sys.stderr)
        return 4
    where = f"{choice.folder} ({choice.origin})" if choice.folder else "no data folder"
    facts = [
        suite_facts(s, choice.folder, limits.get(s.name), options.get(s.name, {})) for s in chosen
    ]
    if args.json:
        print(json.dumps({"data_dir": str(choice.folder or ""), "suites": facts}, indent=1))
        return 0
    blocks = [
        "\n".join(_text(f, _where(s, options.get(s.name, {}), where)))
        for s, f in zip(chosen, facts, strict=True)
    ]
    print("\n\n".join(blocks))
    which = (
        f"this project's suites: {', '.join(listed)}, as [tool.extractbench] suites lists them"
        if listed is not None
        else "every suite, and each run on request that the project gates or sets options of"
    )
    print(f"\nRun: {run_command()} ({which}); options: "
          "--suite-option SUITE.KEY=VALUE or [tool.extractbench.options.SUITE] in "
          "pyproject.toml.")  # fmt: skip
    return 0


def options_markdown(registry: Registry) -> str:
    """Every suite's options as markdown tables (generated into the usage docs)."""
    out = []
    for suite in registry.suites.values():
        out += [f"`{suite.name}`:", ""]
        rows = describe_options(suite.options)
        if not rows:
            out += ["no options", ""]
            continue
        out += ["| option | type | default | meaning |", "|---|---|---|---|"]
        for row in rows:
            default = json.dumps(row["default"]) if row["default"] is not None else "unset"
            kind = row["type"] + (f" ({row['range']})" if row["range"] else "")
            cells = [f"`{suite.name}.{row['name']}`", kind, f"`{default}`", row["description"]]
            out.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        out.append("")
    return "\n".join(out)
