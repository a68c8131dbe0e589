"""Sphinx configuration of extractbench's documentation (MyST Markdown, furo theme).

Built strictly in CI (``sphinx-build -W --keep-going -b html docs DIR``: every warning is
an error). Three inputs are generated here, at build time, from the code they document, so
they cannot fall behind it: the run record's JSON Schema (``extractbench schema``,
``plugins.outputs.record_io.record_schema``), the exit-code table
(``plugins.verdict.exit_codes.EXIT_CODES``) and the suites' option tables
(``plugins.cli.suites.options_markdown``, what ``extractbench suites`` lists).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from extractbench.plugins.cli.suites import options_markdown  # noqa: E402
from extractbench.plugins.outputs.record_io import record_schema  # noqa: E402
from extractbench.plugins.verdict.exit_codes import EXIT_CODES  # noqa: E402
from extractbench.suites.registry import Registry  # noqa: E402

project = "extractbench"
author = "the extractbench authors"
copyright = "the extractbench authors"  # noqa: A001 - Sphinx's name
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/*.md"]
myst_heading_anchors = 3  # "## fda" is data.html#fda, as GitHub names the same heading
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
html_title = "extractbench"


def _generate() -> None:
    """Write the generated inputs of ``schema.md`` and ``usage.md``."""
    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    schema = json.dumps(record_schema(), indent=1) + "\n"
    (out / "run-record.schema.json").write_text(schema, encoding="utf-8")
    rows = ["| exit | meaning |", "|---:|---|"]
    rows += [f"| {code} | {text.replace('|', '/')} |" for code, text in sorted(EXIT_CODES.items())]
    (out / "exit-codes.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = options_markdown(Registry.installed())
    (out / "suite-options.md").write_text(options, encoding="utf-8")


_generate()
