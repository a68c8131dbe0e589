"""Synthetic tables syn1-syn5 of the Table-QA article, seeded and deterministic.

Article ("Data" section): syn1 heterogeneous values (a column is recognisable from its
values); syn2 homogeneous RGB colours, columns named by letters; syn3 RGB colours with
noisy column names unrelated to the values; syn4 float32 numbers with 6 significant
digits, letter columns; syn5 float32 numbers with 15 digits, letter columns. Every value
is unique within its table (so a value names one cell).
"""

from __future__ import annotations

import datetime
import hashlib
import random
import string
import struct
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from faker import Faker

from extractbench.suites.tableqa.tables import Table

if TYPE_CHECKING:
    from extractbench.suites.tableqa.questions import Question

__all__ = ["SUBSETS", "TableSpec", "generate", "letters", "sample_questions"]

SUBSETS = ("syn1", "syn2", "syn3", "syn4", "syn5")

# Faker draws dates and times up to "now" unless told otherwise: a fixed end keeps the
# tables the same on every day and machine.
_END = datetime.datetime(2024, 12, 31, 23, 59, 59)

# syn1: (header, value generator); 20 kinds of value that identify their column
_HETEROGENEOUS: list[tuple[str, Callable[[Faker, random.Random], str]]] = [
    ("Name", lambda f, r: f.name()),
    ("Date", lambda f, r: f.date(end_datetime=_END)),
    ("City", lambda f, r: f.city()),
    ("Amount", lambda f, r: f"${r.randrange(100, 10**6) / 100:,.2f}"),
    ("Email", lambda f, r: f.email()),
    ("Phone", lambda f, r: f.phone_number()),
    ("Company", lambda f, r: f.company()),
    ("Job", lambda f, r: f.job()),
    ("Country", lambda f, r: f.country()),
    ("Licence plate", lambda f, r: f.license_plate()),
    ("Colour", lambda f, r: f.color_name()),
    ("IP address", lambda f, r: f.ipv4()),
    ("ISBN", lambda f, r: f.isbn13()),
    ("Currency", lambda f, r: f.currency_name()),
    ("File", lambda f, r: f.file_name()),
    ("Username", lambda f, r: f.user_name()),
    ("Percentage", lambda f, r: f"{r.randrange(0, 10000) / 100:.2f}%"),
    ("Time", lambda f, r: f.time(end_datetime=_END)),
    ("Street", lambda f, r: f.street_address()),
    ("Age", lambda f, r: f"{r.randrange(18, 100)} years"),
]


def letters(width: int) -> list[str]:
    """Column names A, B, ..., Z, AA, AB, ... (spreadsheet style)."""
    names = []
    for i in range(width):
        name = ""
        i += 1
        while i:
            i, rem = divmod(i - 1, 26)
            name = string.ascii_uppercase[rem] + name
        names.append(name)
    return names


POOL_SIZE = 1000  # distinct Faker values drawn once per kind of column (fewer if it has fewer)


@cache
def _pool(kind: str) -> tuple[str, ...]:
    """Up to :data:`POOL_SIZE` distinct values of one syn1 column kind (or ``"word"``: syn3
    column names), drawn once per process from Faker seeded with 0, in a fixed order.

    Tables sample from these pools instead of calling Faker per cell, which keeps building
    thousands of tables fast (Faker takes about 50 us a value).
    """
    fake = Faker("en_US")
    fake.seed_instance(0)
    rng = random.Random(f"pool/{kind}")
    make = dict(_HETEROGENEOUS).get(kind) or (lambda f, r: f.word().capitalize())
    values: dict[str, None] = {}
    for _ in range(POOL_SIZE * 20):
        values.setdefault(make(fake, rng))
        if len(values) == POOL_SIZE:
            break
    return tuple(values)


_FLOAT32 = struct.Struct("f")


def _float32(digits: int) -> Callable[[random.Random], str]:
    """A float32 drawn uniformly from [-1000, 1000] (rounded to float32 as numpy's
    ``float32()`` does), printed with ``digits`` significant digits."""

    def make(rng: random.Random) -> str:
        (value,) = _FLOAT32.unpack(_FLOAT32.pack(rng.uniform(-1000.0, 1000.0)))
        return f"{value:.{digits}g}"

    return make


def _unique(make: Callable[[], str], used: set[str]) -> str:
    for _ in range(1000):
        value = make()
        if value not in used:
            used.add(value)
            return value
    raise RuntimeError("could not draw a unique value in 1000 tries")


def generate(subset: str, width: int, height: int, seed: int | str, name: str) -> Table:
    """One synthetic table of ``subset`` with W = ``width`` columns and H = ``height`` rows.

    Deterministic for (subset, width, height, seed) with a given Faker version (syn1 values
    and syn3 column names come from Faker's en_US data, through :func:`_pool`). All W·H
    values are distinct.

    Raises:
        ValueError: unknown subset, width outside 1..26 for syn1..syn3 (20 for syn1), or
            height < 1.
    """
    if subset not in SUBSETS:
        raise ValueError(f"unknown synthetic subset {subset!r}; one of {', '.join(SUBSETS)}")
    if height < 1 or width < 1:
        raise ValueError(f"table size must be at least 1x1, got {width}x{height}")
    rng = random.Random(f"{subset}/{width}/{height}/{seed}")
    if subset == "syn1":
        if width > len(_HETEROGENEOUS):
            raise ValueError(f"syn1 has {len(_HETEROGENEOUS)} kinds of column, asked for {width}")
        header = [kind for kind, _ in rng.sample(_HETEROGENEOUS, width)]
        used: set[str] = set()
        columns = []
        for kind in header:  # distinct within a column by sampling, across columns by check
            pool = _pool(kind)
            column = rng.sample(pool, height)
            for i, value in enumerate(column):
                column[i] = (
                    value if value not in used else _unique(lambda p=pool: rng.choice(p), used)
                )
                used.add(column[i])
            columns.append(column)
        return Table(name=name, header=tuple(header), rows=tuple(zip(*columns, strict=True)))
    if subset in ("syn2", "syn3"):  # distinct RGB colours by sampling without replacement
        header = letters(width) if subset == "syn2" else rng.sample(_pool("word"), width)
        values = [f"#{v:06X}" for v in rng.sample(range(16**6), width * height)]
        rows = tuple(tuple(values[i : i + width]) for i in range(0, len(values), width))
        return Table(name=name, header=tuple(header), rows=rows)
    make = _float32(6 if subset == "syn4" else 15)
    floats: set[str] = set()
    rows = tuple(
        tuple(_unique(lambda: make(rng), floats) for _ in range(width)) for _ in range(height)
    )
    header = letters(width)
    return Table(name=name, header=tuple(header), rows=rows)


class TableSpec(NamedTuple):
    """What regenerates one synthetic table: ``generate(subset, width, height, seed, name)``,
    and what is known of it without regenerating: its header, the length and SHA-256 of
    its markdown."""

    width: int
    height: int
    seed: str
    header: tuple[str, ...]
    markdown_chars: int
    markdown_sha256: str


def sample_questions(
    subset: str, per_cell: int, seed: int, widths: range = range(2, 17), max_row: int = 64
) -> tuple[list[Question], dict[str, TableSpec]]:
    """The article's synthetic protocol: ``per_cell`` questions per (W, r) cell, each from a
    table of its own.

    Article ("Data" section): each synthetic subset is a set of unique tables of heights 1
    to 64. For every width W in ``widths``, answer row r in 1..``max_row`` and k <
    ``per_cell``, a table ``w{W}/r{r}/k{k}`` of height drawn uniformly from [r, ``max_row``]
    (so row r exists) is generated; the question's distance q - t is drawn uniformly from
    the non-zero distances in [-W+1, W-1], then t uniformly among the columns that have it.
    Every value of a table is unique, so every question has exactly one answer. Seeded by
    (subset, ``seed``, W, r, k); deterministic with a given Faker version.

    Returns:
        (questions in (W, r, k) order, table name -> :class:`TableSpec`).
    """
    from extractbench.suites.tableqa.questions import Question
    from extractbench.suites.tableqa.tables import to_markdown

    questions: list[Question] = []
    specs: dict[str, TableSpec] = {}
    for width in widths:
        distances = [d for d in range(-width + 1, width) if d]
        for row in range(1, max_row + 1):
            for k in range(per_cell):
                name = f"w{width}/r{row}/k{k}"
                rng = random.Random(f"{subset}/{seed}/{name}")
                height = rng.randint(row, max_row)
                table_seed = f"{seed}/{name}"
                table = generate(subset, width, height, table_seed, name)
                d = rng.choice(distances)
                t = rng.randrange(max(0, -d), min(width, width - d))
                cells = table.rows[row - 1]
                questions.append(Question(name, row, t, t + d, cells[t + d], cells[t], width))
                markdown = to_markdown(table)
                specs[name] = TableSpec(
                    width, height, table_seed, table.header, len(markdown),
                    hashlib.sha256(markdown.encode("utf-8")).hexdigest(),
                )  # fmt: skip
    return questions, specs
