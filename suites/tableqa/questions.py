"""'What is t if q is X' questions with exactly one answer, sampled per (W, r) cell.

Article ("Task" and "Method" sections): enumerate every (t, q, r) of a table and keep a
question only when the answer r[t] exists and occurs once in column t (and X = r[q]
occurs once in column q, so the row is determined); for each cell of the W x r heatmap
take up to 10 questions, the column distance q - t drawn uniformly from [-W+1, W-1].
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from extractbench.suites.tableqa.tables import Table

__all__ = [
    "FILTERS",
    "FILTER_RULES",
    "Question",
    "candidates",
    "TEMPLATES",
    "filter_counts",
    "pair_filters",
    "valid_pairs",
    "sample_questions",
]

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


# Why a candidate (row, t, q) is not a question, in the order the checks apply.
FILTERS = (
    "header_empty_or_duplicate",  # the name of t or q is empty or names two columns
    "value_or_answer_empty",  # X = row[q] or the answer row[t] is empty
    "value_or_answer_not_unique",  # X occurs twice in column q, or the answer in column t
    # X and the answer are copies of one merged cell (colspan): the question names its answer.
    # Different cells with equal text stay questions, as in the article.
    "one_merged_cell",
)


# What each filter is and whose rule it is, for the run record and the docs.
FILTER_RULES = {
    "header_empty_or_duplicate": "ours: the question cannot name t or q unambiguously",
    "value_or_answer_empty": "the article's: the answer r[t] must exist (and X = r[q])",
    "value_or_answer_not_unique": "the article's: the answer occurs once in column t and X "
    "once in column q",
    "one_merged_cell": "ours: X and the answer are copies of one merged (colspan) cell, so "
    "the question names its answer; different cells with equal text stay questions",
}


def pair_filters(
    table: Table, row: int, counts: Sequence[Counter[str]] | None = None
) -> dict[tuple[int, int], str | None]:
    """Every (t, q) with t != q on 1-based ``row``, mapped to the first filter of
    :data:`FILTERS` that drops it, or None for a question with exactly one answer.

    Args:
        counts: per-column value counts of ``table`` (computed when not given).
    """
    cells = table.rows[row - 1]
    header_counts = Counter(table.header)
    if counts is None:
        counts = [Counter(table.column(j)) for j in range(table.width)]
    bad_header = [
        not table.header[j].strip() or header_counts[table.header[j]] > 1
        for j in range(table.width)
    ]
    empty = [not cells[j].strip() for j in range(table.width)]
    repeated = [counts[j][cells[j]] > 1 for j in range(table.width)]
    groups = table.cell_groups(row)
    out: dict[tuple[int, int], str | None] = {}
    for t in range(table.width):
        for q in range(table.width):
            if t == q:
                continue
            if bad_header[t] or bad_header[q]:
                out[(t, q)] = FILTERS[0]
            elif empty[t] or empty[q]:
                out[(t, q)] = FILTERS[1]
            elif repeated[t] or repeated[q]:
                out[(t, q)] = FILTERS[2]
            elif t in groups and groups[t] == groups.get(q):
                out[(t, q)] = FILTERS[3]
            else:
                out[(t, q)] = None
    return out


def valid_pairs(
    table: Table, row: int, counts: Sequence[Counter[str]] | None = None
) -> list[tuple[int, int]]:
    """All (t, q) with t != q whose question on 1-based ``row`` has exactly one answer.

    A pair is valid when the headers of t and q are non-empty and occur once in the
    header, X = row[q] is non-empty and occurs once in column q, the answer row[t] is
    non-empty and occurs once in column t, and X and the answer are not copies of one
    merged cell (see :func:`pair_filters`).
    """
    return [pair for pair, why in pair_filters(table, row, counts).items() if why is None]


def candidates(
    tables: Sequence[Table], max_width: int = 16, max_height: int = 64
) -> Iterator[tuple[Table, int, int, int, str | None]]:
    """Every candidate ``(table, row, t, q, filter)`` of ``tables``: tables of width <=
    ``max_width``, their first ``max_height`` rows, each (t, q) with t != q, and the
    filter that drops it (None for a question; :func:`pair_filters`)."""
    for table in tables:
        if table.width > max_width:
            continue
        counts = [Counter(table.column(j)) for j in range(table.width)]
        for row in range(1, min(table.height, max_height) + 1):
            for (t, q), why in pair_filters(table, row, counts).items():
                yield table, row, t, q, why


def filter_counts(tables: Sequence[Table], max_width: int = 16, max_height: int = 64) -> dict:
    """How many candidate (row, t, q) of ``tables`` each filter drops, and how many pass.

    Returns:
        ``{"candidates": n, "questions": n, <filter>: n, ..., "tables_with_drops": {<filter>: n},
        "questions_value_equals_answer": n, "tables_with_questions_value_equals_answer": n}``
        over the :func:`candidates` of ``tables``; the last two count the questions kept
        whose X has the answer's text in another cell (the article keeps them).
    """
    totals: Counter[str] = Counter()
    hit: set[tuple[str, str]] = set()
    equal: Counter[str] = Counter()  # table -> kept questions whose X has the answer's text
    for table, row, t, q, why in candidates(tables, max_width, max_height):
        totals[why or "questions"] += 1
        if why:
            hit.add((table.name, why))
        elif table.rows[row - 1][t] == table.rows[row - 1][q]:
            equal[table.name] += 1
    return {
        "candidates": sum(totals.values()),
        "questions": totals["questions"],
        **{name: totals[name] for name in FILTERS},
        "tables_with_drops": {name: sum(1 for _, w in hit if w == name) for name in FILTERS},
        "questions_value_equals_answer": sum(equal.values()),
        "tables_with_questions_value_equals_answer": len(equal),
    }


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
    for table, row, t, q, why in candidates(tables, max_width, max_height):
        if why is None:
            cells[(table.width, row)].append((table, t, q))
    questions = []
    for (width, row), in_cell in sorted(cells.items()):
        rng = random.Random(f"{seed}/{width}/{row}")
        by_distance: dict[int, list[tuple[Table, int, int]]] = defaultdict(list)
        for cand in in_cell:
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
