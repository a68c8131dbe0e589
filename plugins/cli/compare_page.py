"""The HTML page of ``extractbench compare`` (jinja2, ``templates/compare.html.j2``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from extractbench.plugins.outputs.html_report import as_text
from jinja2 import Environment, PackageLoader, select_autoescape

if TYPE_CHECKING:
    from extractbench.plugins.cli.compare import RecordComparison

__all__ = ["compare_html"]

_ENV = Environment(
    loader=PackageLoader("extractbench.plugins.outputs", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
)
_ENV.filters["text"] = as_text


def compare_html(result: RecordComparison) -> str:
    """A self-contained page: both runs, per suite and per metric tables, and every item
    whose answer or scores changed (old and new answers side by side)."""
    changed = [
        c for c in result.items if c.answer_changed or any(a != b for a, b in c.scores.values())
    ]
    return _ENV.get_template("compare.html.j2").render(
        old=result.old, new=result.new, items=result.items, only_old=result.only_old,
        only_new=result.only_new, suites=sorted(result.suites().items()),
        metrics=result.metrics, changed=changed,
    )  # fmt: skip
