"""HTML: the run's page (jinja2): the verdict, the aggregate section with embedded plots, and
every item; written from the run record by every path that ends a run."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from plugins.outputs.record import RunRecord
from plugins.outputs.terminal import verdict_line

__all__ = ["summary_html", "page_html", "as_text"]

_ENV = Environment(
    loader=PackageLoader("plugins.outputs", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
)


def as_text(value: Any) -> str:
    """A prediction or reference as text: a string as it is, None as "", anything else a
    record may hold (an object, a list: a table, a MINEA extraction) as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def score_text(value: Any) -> str:
    """A score as the item table shows it: ``0.500``, ``–`` for None, else its text."""
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, int | float) else as_text(value)


_ENV.filters["text"] = as_text
_ENV.filters["score"] = score_text


def summary_html(
    record: RunRecord, images: Sequence[Path] = (), suite_lines: Sequence[str] = ()
) -> str:
    """The aggregate section: score table with CIs, gates, baseline deltas, embedded plots.

    Args:
        record: a decided run record (its ``verdict`` set).
        images: PNG files to embed (base64, so the HTML stays self-contained).
        suite_lines: extra text from suite report modules (e.g. Table-QA results table).
    """
    embedded = [
        (p.name, base64.b64encode(p.read_bytes()).decode("ascii"))
        for p in images
        if p.suffix == ".png" and p.is_file()
    ]
    return _ENV.get_template("summary.html.j2").render(
        verdict=verdict_line(record).removeprefix("extractbench verdict: "),
        model=record.model,
        run_id=record.run_id,
        counts=record.counts,
        complete=record.complete,
        aggregates=record.aggregates,
        gates=record.gates,
        baseline=record.baseline,
        images=embedded,
        suite_lines=list(suite_lines),
    )


def page_html(
    record: RunRecord, images: Sequence[Path] = (), suite_lines: Sequence[str] = ()
) -> str:
    """A whole self-contained page: the aggregate section and every item (for re-rendering)."""
    return _ENV.get_template("page.html.j2").render(
        run_id=record.run_id,
        summary=Markup(summary_html(record, images, suite_lines)),  # rendered, escaped HTML
        items=record.items,
        others=record.other_tests,
    )
