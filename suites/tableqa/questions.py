"""'What is t if q is X' questions with exactly one answer, sampled per (W, r) cell.

Article ("Task" and "Method" sections): enumerate every (t, q, r) of a table and keep a
question only when the answer r[t] exists and occurs once in column t (and X = r[q]
occurs once in column q, so the row is determined); for each cell of the W x r heatmap
take up to 10 questions, the column distance q - t drawn uniformly from [-W+1, W-1].
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from suites.tableqa.tables import Table

__all__ = ["Question", "TEMPLATES", "valid_pairs", "sample_questions"]

TEMPLATES = {
    "en": "What is the {t} if the {q} is {x}?",
    # the article's formalisation «Какой t, если q — r[q]?»
    "ru": "Какой {t}, если {q} — {x}?",
}


@dataclass(frozen=True)
class Question:
    """One question over one table.

    Attributes:
        table: the table's name.
        row: r, 1-based row of the answer (header excluded).
        t: 0-based answer (target) column.
        q: 0-based query column.
        value: X = r[q], the value named in the question.
        answer: r[t].
        width: W of the table.
    """

    table: str
    row: int
    t: int
    q: int
    value: str
    answer: str
    width: int

    @property
    def distance(self) -> int:
        """q - t: positive when the query column is right of the answer column."""
        return self.q - self.t

    def text(self, header: Sequence[str], language: str = "en") -> str:
        """The question in ``language`` (``en`` or ``ru``) using the table's header."""
        return TEMPLATES[language].format(t=header[self.t], q=header[self.q], x=self.value)


def valid_pairs(
    table: Table, row: int, counts: Sequence[Counter[str]] | None = None
) -> list[tuple[int, int]]:
    """All (t, q) with t != q whose question on 1-based ``row`` has exactly one answer.

    A pair is valid when the headers of t and q are non-empty and occur once in the
    header, X = row[q] is non-empty and occurs once in column q, and the answer row[t]
    is non-empty and occurs once in column t.

    Args:
        counts: per-column value counts of ``table`` (computed when not given).
    """
    cells = table.rows[row - 1]
    header_counts = Counter(table.header)
    if counts is None:
        counts = [Counter(table.column(j)) for j in range(table.width)]
    usable = [
        j
        for j in range(table.width)
        if table.header[j].strip()
        and header_counts[table.header[j]] == 1
        and cells[j].strip()
        and counts[j][cells[j]] == 1
    ]
    return [(t, q) for t in usable for q in usable if t != q]


def sample_questions(
    tables: Sequence[Table], per_cell: int, seed: int, max_width: int = 16, max_height: int = 64
) -> list[Question]:
    """Up to ``per_cell`` questions per (W, r) cell over ``tables``.

    For each cell, candidates are the valid (table, t, q) at row r of the tables of width
    W; each pick draws a distance d = q - t uniformly from the distances that still have
    candidates, then one candidate with that distance (seeded per cell), without
    replacement.

    Returns:
        Questions sorted by table then row then (t, q), so questions on one table are
        consecutive.
    """
    cells: dict[tuple[int, int], list[tuple[Table, int, int]]] = defaultdict(list)
    for table in tables:
        if table.width > max_width:
            continue
        counts = [Counter(table.column(j)) for j in range(table.width)]
        for row in range(1, min(table.height, max_height) + 1):
            for t, q in valid_pairs(table, row, counts):
                cells[(table.width, row)].append((table, t, q))
    questions = []
    for (width, row), candidates in sorted(cells.items()):
        rng = random.Random(f"{seed}/{width}/{row}")
        by_distance: dict[int, list[tuple[Table, int, int]]] = defaultdict(list)
        for cand in candidates:
            by_distance[cand[2] - cand[1]].append(cand)
        for _ in range(per_cell):
            if not by_distance:
                break
            d = rng.choice(sorted(by_distance))
            pool = by_distance[d]
            table, t, q = pool.pop(rng.randrange(len(pool)))
            if not pool:
                del by_distance[d]
            cells_row = table.rows[row - 1]
            questions.append(Question(table.name, row, t, q, cells_row[q], cells_row[t], width))
    order = {table.name: i for i, table in enumerate(tables)}
    return sorted(questions, key=lambda qu: (order[qu.table], qu.row, qu.t, qu.q))
