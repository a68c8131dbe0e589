"""HTML: the aggregate section (jinja2) for pytest-html's report and for `extractbench report`."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from plugins.verdict.decide import verdict

__all__ = ["summary_html", "page_html", "scores_cell", "item_details", "as_text"]

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
    record: Mapping[str, Any], images: Sequence[Path] = (), suite_lines: Sequence[str] = ()
) -> str:
    """The aggregate section: score table with CIs, gates, baseline deltas, embedded plots.

    Args:
        record: the run record.
        images: PNG files to embed (base64, so the HTML stays self-contained).
        suite_lines: extra text from suite report modules (e.g. Table-QA results table).
    """
    embedded = [
        (p.name, base64.b64encode(p.read_bytes()).decode("ascii"))
        for p in images
        if p.suffix == ".png" and p.is_file()
    ]
    return _ENV.get_template("summary.html.j2").render(
        verdict=verdict(record).headline(),
        model=record.get("model", {}),
        run_id=record.get("run_id", ""),
        counts=record.get("counts", {}),
        complete=record.get("complete", True),
        aggregates=record.get("aggregates", {}),
        gates=record.get("gates", []),
        baseline=record.get("baseline"),
        images=embedded,
        suite_lines=list(suite_lines),
    )


def page_html(
    record: Mapping[str, Any], images: Sequence[Path] = (), suite_lines: Sequence[str] = ()
) -> str:
    """A whole self-contained page: the aggregate section and every item (for re-rendering)."""
    return _ENV.get_template("page.html.j2").render(
        run_id=record.get("run_id", ""),
        summary=Markup(summary_html(record, images, suite_lines)),  # rendered, escaped HTML
        items=record.get("items", []),
    )


def scores_cell(entry: Mapping[str, Any]) -> str:
    """``<td>`` listing an item's scores, for pytest-html's results table."""
    from markupsafe import escape

    parts = [f"{escape(k)}={escape(score_text(v))}" for k, v in entry.get("scores", {}).items()]
    return f'<td class="col-scores">{"<br/>".join(parts)}</td>'


def item_details(entry: Mapping[str, Any]) -> str:
    """Folded prediction and reference of an item, for pytest-html's expandable row."""
    from markupsafe import escape

    return (
        "<details><summary>prediction / reference</summary>"
        f"<b>prediction</b><pre style='white-space:pre-wrap'>{escape(as_text(entry.get('prediction')))}</pre>"
        f"<b>reference</b><pre style='white-space:pre-wrap'>{escape(as_text(entry.get('reference')))}</pre></details>"
    )
