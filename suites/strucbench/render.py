"""Gold tables in three formats, and the deterministic input texts that replace GPT-3.5's.

Struc-Bench (Appendix E) asked GPT-3.5 for a content description (every cell, in prose)
and a format description (rows, columns, names, alignment...) of each HTML and LaTeX
table. Those generations are not available, so this module writes both deterministically
from the gold table; every run record notes the substitution.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bs4 import BeautifulSoup, Tag

__all__ = [
    "GoldTable",
    "e2e_table",
    "scigen_table",
    "to_markdown",
    "to_html",
    "to_latex",
    "reduce_html",
    "content_description",
    "format_description",
]

_MR = re.compile(r"\s*([^\[,]+?)\s*\[([^\]]*)\]")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


class GoldTable:
    """A gold table: header, rows (cells may carry ``[BOLD]``), caption, alignment."""

    def __init__(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[str]],
        caption: str = "",
        alignment: str = "",
    ) -> None:
        width = max([len(header)] + [len(r) for r in rows])
        self.header = [*header, *[""] * (width - len(header))]
        self.rows = [[*r, *[""] * (width - len(r))] for r in rows]
        self.caption = caption
        self.alignment = alignment or "".join(
            "r" if _numeric_column(self.rows, j) else "l" for j in range(width)
        )


def _numeric_column(rows: Sequence[Sequence[str]], j: int) -> bool:
    values = [_plain(r[j]) for r in rows if _plain(r[j]) not in ("", "-")]
    return bool(values) and all(re.fullmatch(r"[-+±]?[\d.,]+%?", v) for v in values)


def _plain(cell: str) -> str:
    return " ".join(
        cell.replace("[BOLD]", " ").replace("[EMPTY]", " ").replace("[ITALIC]", " ").split()
    )


def _bold(cell: str) -> bool:
    return "[BOLD]" in cell


def e2e_table(mr: str) -> GoldTable:
    """E2E meaning representation ``name[X], eatType[Y]`` -> attribute | value table."""
    pairs = _MR.findall(mr)
    if not pairs:
        raise ValueError(f"not an E2E meaning representation: {mr!r}")
    return GoldTable(["attribute", "value"], [[a.strip(), v.strip()] for a, v in pairs])


def scigen_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> GoldTable:
    """A SciGen table; ``[BOLD]`` marks bold cells, ``[EMPTY]`` empty ones."""
    return GoldTable(list(header), [list(r) for r in rows], caption=caption)


def to_markdown(table: GoldTable) -> str:
    """Pipe table with a ``---`` separator row; markers removed."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_plain(c).replace("|", "/") for c in cells) + " |"

    return "\n".join(
        [
            line(table.header),
            "|" + "|".join("---" for _ in table.header) + "|",
            *(line(r) for r in table.rows),
        ]
    )


def _html_cell(tag: str, cell: str) -> str:
    from html import escape

    text = escape(_plain(cell))
    return f"<{tag}><b>{text}</b></{tag}>" if _bold(cell) and text else f"<{tag}>{text}</{tag}>"


def to_html(table: GoldTable) -> str:
    """``<table>`` with a header row of ``<th>`` and data rows of ``<td>``; bold as ``<b>``."""
    rows = ["<tr>" + "".join(_html_cell("th", c) for c in table.header) + "</tr>"]
    rows += ["<tr>" + "".join(_html_cell("td", c) for c in r) + "</tr>" for r in table.rows]
    caption = f"<caption>{_plain(table.caption)}</caption>" if table.caption else ""
    return "<table>" + caption + "".join(rows) + "</table>"


def _latex_cell(cell: str) -> str:
    text = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in _plain(cell))
    return f"\\textbf{{{text}}}" if _bold(cell) and text else text


def to_latex(table: GoldTable) -> str:
    """``table`` environment with ``\\caption`` and a ``tabular`` ruled by ``\\hline``."""
    lines = [
        "\\begin{table}",
        "\\centering",
        f"\\caption{{{_latex_cell(table.caption)}}}",
        f"\\begin{{tabular}}{{{table.alignment}}}",
        "\\hline",
        " & ".join(_latex_cell(c) for c in table.header) + " \\\\",
        "\\hline",
        *(" & ".join(_latex_cell(c) for c in r) + " \\\\" for r in table.rows),
        "\\hline",
        "\\end{tabular}",
        "\\end{table}",
    ]
    return "\n".join(lines)


def reduce_html(html: str) -> str:
    """Reduce a Wikipedia page table to its ``<table>``: only table/tr/th/td, only
    rowspan/colspan attributes, cell text without markup."""
    from html import escape

    soup = BeautifulSoup(html, "html.parser")
    table = soup.find("table")
    if not isinstance(table, Tag):
        raise ValueError("no <table> element")
    out = ["<table>"]
    for tr in table.find_all("tr"):
        out.append("<tr>")
        for cell in tr.find_all(["th", "td"], recursive=False):
            attrs = "".join(
                f' {a}="{cell[a]}"'
                for a in ("rowspan", "colspan")
                if cell.get(a) and str(cell.get(a)) != "1"
            )
            out.append(
                f"<{cell.name}{attrs}>{escape(' '.join(cell.get_text(' ').split()))}</{cell.name}>"
            )
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def content_description(table: GoldTable) -> str:
    """Prose stating every cell: ``Row 2: Model is "A"; Acc is "9.1".``"""
    parts = [f'The table\'s caption is "{_plain(table.caption)}".'] if table.caption else []
    parts.append("The columns are: " + ", ".join(f'"{_plain(h)}"' for h in table.header) + ".")
    for i, row in enumerate(table.rows, start=1):
        cells = [
            f'{_plain(h) or f"column {j + 1}"} is "{_plain(c)}"' + (" (bold)" if _bold(c) else "")
            for j, (h, c) in enumerate(zip(table.header, row, strict=True))
        ]
        parts.append(f"Row {i}: " + "; ".join(cells) + ".")
    return "\n".join(parts)


def format_description(table: GoldTable, fmt: str) -> str:
    """FormatCoT-style format description: counts, names, caption, alignment, markup."""
    n_cols, n_rows = len(table.header), len(table.rows)
    text = [
        f"There is 1 table with {n_cols} columns and {n_rows} data rows below one header row.",
        "The column names, in order, are: "
        + ", ".join(f'"{_plain(h)}"' for h in table.header)
        + ".",
    ]
    if fmt == "html":
        text.append(
            "Use one <table> element; each row is a <tr>; header cells are <th>, data cells are <td>; bold cells wrap their text in <b>."
        )
        if table.caption:
            text.append(f'The table has a <caption> "{_plain(table.caption)}".')
    elif fmt == "latex":
        text.append(
            f'The table is a table environment, centered, with the caption "{_plain(table.caption)}" above a tabular environment.'
        )
        text.append(
            f"The column alignment is {table.alignment} (l left, c center, r right); there are no vertical lines."
        )
        text.append(
            "Horizontal lines (\\hline) are above the header, below the header and below the last row; bold cells use \\textbf."
        )
    else:
        text.append(
            "Write one line per row with cells separated by |, the header row first, then a |---| separator row."
        )
    return " ".join(text)
