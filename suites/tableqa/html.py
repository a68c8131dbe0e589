"""Wikipedia HTML tables to flat tables, as the Table-QA article normalised them.

Article (IDP team, 2024, "Data" section): HTML is the source of structure; multi-level
headers are joined with "/" into flat headers; merged cells are split and their text
duplicated into every covered position. A cell's text is its visible text (see
:func:`cell_text`).
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag

from extractbench.suites.tableqa.tables import Table

__all__ = ["html_to_table", "HTMLTableError", "cell_text", "check_complete"]


class HTMLTableError(ValueError):
    """The HTML holds no ``<table>`` with rows (``broken`` False), or is truncated or
    broken: a ``<table>`` never closed, markup left inside a cell (``broken`` True)."""

    def __init__(self, message: str, broken: bool = False) -> None:
        super().__init__(message)
        self.broken = broken


_OPEN_TABLE = re.compile(r"<table\b", re.IGNORECASE)
_CLOSE_TABLE = re.compile(r"</table\s*>", re.IGNORECASE)
_MARKUP = re.compile(r"<[A-Za-z/!]")


_LEADING_DIGITS = re.compile(r"\s*\+?(\d+)")


def _span(cell: Tag, attr: str) -> int:
    """A cell's ``rowspan`` or ``colspan`` as browsers read it (the HTML standard's rules
    for parsing non-negative integers: leading whitespace and ``+``, then the leading digits,
    whatever follows: ``"2;"`` is 2), at least 1 and at most 1000; 1 when there is no
    number (the attribute's default)."""
    found = _LEADING_DIGITS.match(str(cell.get(attr, "1")))
    return max(1, min(int(found.group(1)), 1000)) if found else 1


_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)


def cell_text(cell: Tag) -> str:
    """A cell's text as a reader sees it: the text of its nodes joined without inserted
    separators (``<a>Paris</a>, France`` -> ``Paris, France``, ``1972<sup>[20]</sup>`` ->
    ``1972[20]``), ``<br>`` read as a space, hidden elements left out (styled ``display:none``,
    or of class ``sortkey``, which Wikipedia's stylesheet hides: sort keys such as
    ``01909-03-04-0000`` or ``Buchanan, James``), whitespace collapsed.

    Modifies ``cell`` (its ``<br>`` and hidden elements are replaced).
    """
    for hidden in [*cell.find_all(style=_HIDDEN), *cell.find_all(class_="sortkey")]:
        hidden.decompose()
    for br in cell.find_all("br"):
        br.replace_with(" ")
    return " ".join(cell.get_text().split())


def _fill_spans(
    row: list[str], ids: list[int], col: int, carry: dict[int, tuple[int, str, int]]
) -> int:
    """Append texts (and source-cell ids) of cells spanning down from above into ``row``
    from ``col``; new col."""
    while col in carry:
        left, text, cid = carry[col]
        row.append(text)
        ids.append(cid)
        if left <= 1:
            del carry[col]
        else:
            carry[col] = (left - 1, text, cid)
        col += 1
    return col


def _grid(table: Tag) -> tuple[list[list[str]], list[list[int]], list[bool]]:
    """Expand rowspan/colspan; return the grid, the id of the HTML cell each position was
    copied from (-1: padding), and per row whether all its cells are <th>."""
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    grid: list[list[str]] = []
    id_grid: list[list[int]] = []
    header_flags: list[bool] = []
    carry: dict[int, tuple[int, str, int]] = {}  # column -> (rows still covered, text, id)
    next_id = 0
    for tr in rows:
        cells = tr.find_all(["td", "th"], recursive=False)
        row: list[str] = []
        ids: list[int] = []
        col = _fill_spans(row, ids, 0, carry)
        for cell in cells:
            text = cell_text(cell)
            cid, next_id = next_id, next_id + 1
            rowspan, colspan = _span(cell, "rowspan"), _span(cell, "colspan")
            for _ in range(colspan):
                row.append(text)
                ids.append(cid)
                if rowspan > 1:
                    carry[col] = (rowspan - 1, text, cid)
                col = _fill_spans(row, ids, col + 1, carry)
        while carry and col <= max(carry):  # spans from above past this row's last cell
            if col not in carry:
                row.append("")
                ids.append(-1)
                col += 1
            col = _fill_spans(row, ids, col, carry)
        if row:
            grid.append(row)
            id_grid.append(ids)
            header_flags.append(bool(cells) and all(c.name == "th" for c in cells))
    return grid, id_grid, header_flags


def _merged(ids: list[int]) -> tuple[tuple[int, ...], ...]:
    """The columns of one row that hold copies of one HTML cell (colspan, or a cell
    spanning rows and columns), as groups of two or more column indices."""
    columns: dict[int, list[int]] = {}
    for j, cid in enumerate(ids):
        if cid >= 0:
            columns.setdefault(cid, []).append(j)
    return tuple(tuple(cols) for cols in columns.values() if len(cols) > 1)


def check_complete(html: str, name: str) -> None:
    """Refuse truncated HTML: every ``<table>`` must be closed.

    Raises:
        HTMLTableError: (``broken``) more ``<table>`` than ``</table>`` tags.
    """
    opened, closed = len(_OPEN_TABLE.findall(html)), len(_CLOSE_TABLE.findall(html))
    if opened > closed:
        raise HTMLTableError(
            f"{name}: truncated or broken HTML ({opened} <table> but {closed} </table>)", True
        )


def html_to_table(html: str, name: str) -> Table:
    """Parse the first ``<table>`` of ``html`` into a flat :class:`Table`.

    Header rows are the leading rows made only of ``<th>`` cells (at least the first row).
    A column's flat header joins its header texts top to bottom with "/", dropping a
    text equal to the one above it (a header cell spanning two header rows gives one
    name, not "Rank/Rank"). Short rows are padded with empty cells. The table's ``merged``
    names the data-row positions copied from one HTML cell (:attr:`Table.merged`).

    Raises:
        HTMLTableError: no table, or a table without rows; ``broken`` when the HTML is
            truncated (more ``<table>`` than ``</table>``) or a cell holds markup text
            (a tag cut in half), which would silently give another table.
    """
    check_complete(html, name)
    soup = BeautifulSoup(html, "html.parser")
    table = soup.find("table")
    if not isinstance(table, Tag):
        raise HTMLTableError(f"{name}: no <table> element")
    grid, id_grid, header_flags = _grid(table)
    if not grid:
        raise HTMLTableError(f"{name}: <table> has no rows")
    n_header = 1
    while n_header < len(grid) and header_flags[n_header] and header_flags[n_header - 1]:
        n_header += 1
    if n_header == len(grid):  # all-<th> table: keep one header row, the rest is data
        n_header = 1
    width = max(len(r) for r in grid)
    grid = [r + [""] * (width - len(r)) for r in grid]
    header = []
    for j in range(width):
        parts: list[str] = []
        for i in range(n_header):
            text = grid[i][j]
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        header.append("/".join(parts))
    for r in grid:
        for cell in r:
            if _MARKUP.search(cell):
                raise HTMLTableError(f"{name}: broken HTML: markup in a cell ({cell[:60]!r})", True)
    rows = tuple(tuple(r) for r in grid[n_header:])
    merged = tuple(
        (i + 1, group) for i, ids in enumerate(id_grid[n_header:]) for group in _merged(ids)
    )
    return Table(name=name, header=tuple(header), rows=rows, merged=merged)
