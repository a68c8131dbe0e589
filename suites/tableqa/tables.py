"""A flat table (one header row) and its markdown rendering."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Table", "to_markdown"]


@dataclass(frozen=True)
class Table:
    """A rectangular table with one header row.

    Attributes:
        name: stable id within its subset (``203-csv/733``, ``syn2/w5/t0``).
        header: W column names.
        rows: H rows of W cell texts.
        merged: the positions of one merged source cell, per data row: (1-based row, the
            0-based columns holding copies of one HTML cell split by colspan, alone or with
            rowspan); empty for tables without merged cells.
    """

    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    merged: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @property
    def width(self) -> int:
        """W, the number of columns."""
        return len(self.header)

    @property
    def height(self) -> int:
        """H, the number of data rows (header excluded)."""
        return len(self.rows)

    def column(self, j: int) -> list[str]:
        """The values of column ``j`` (0-based), top to bottom."""
        return [row[j] for row in self.rows]

    def cell_groups(self, row: int) -> dict[int, int]:
        """Column -> group number for the columns of 1-based ``row`` that belong to a
        merged source cell (see ``merged``); two columns with one number are one cell."""
        return {j: k for k, (r, cols) in enumerate(self.merged) if r == row for j in cols}

    def one_cell(self, row: int, a: int, b: int) -> bool:
        """Whether columns ``a`` and ``b`` of 1-based ``row`` are copies of one merged
        source cell."""
        groups = self.cell_groups(row)
        return a in groups and groups.get(a) == groups.get(b)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def to_markdown(table: Table) -> str:
    """GitHub-flavoured markdown: header row, ``---`` separator row, one line per row.

    Pipes in cells are escaped as ``\\|`` and whitespace (newlines included) collapses
    to one space, so every row is one line with W cells.
    """
    lines = ["| " + " | ".join(_cell(h) for h in table.header) + " |"]
    lines.append("|" + "|".join("---" for _ in table.header) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)
