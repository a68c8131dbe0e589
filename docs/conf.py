"""Sphinx configuration of extractbench's documentation (MyST Markdown, furo theme).

Built strictly in CI (``sphinx-build -W --keep-going -b html docs DIR``: every warning is
an error). The parts of the pages that the code states (the exit-code table, the suites'
option tables, the run record's JSON Schema, the CI recipes) are written into the Markdown
files by ``docs/generate.py``; a part that no longer matches the code is a warning here, so
the strict build fails on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import generate  # noqa: E402 - docs/generate.py, beside this file

project = "extractbench"
author = "the extractbench authors"
copyright = "the extractbench authors"  # noqa: A001 - Sphinx's name
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # "## fda" is data.html#fda, as GitHub names the same heading
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
html_title = "extractbench"


def _check_generated(app: object) -> None:
    """A warning (an error under ``-W``) per generated part that is stale."""
    from sphinx.util import logging

    for part in generate.stale():
        logging.getLogger(__name__).warning(
            f"stale generated part {part}: run python docs/generate.py"
        )


def setup(app: object) -> None:
    app.connect("builder-inited", _check_generated)  # type: ignore[attr-defined]
