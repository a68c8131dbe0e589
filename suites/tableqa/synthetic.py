"""Synthetic tables syn1-syn5 of the Table-QA article, seeded and deterministic.

Article ("Data" section): syn1 heterogeneous values (a column is recognisable from its
values); syn2 homogeneous RGB colours, columns named by letters; syn3 RGB colours with
noisy column names unrelated to the values; syn4 float32 numbers with 6 significant
digits, letter columns; syn5 float32 numbers with 15 digits, letter columns. Every value
is unique within its table (so a value names one cell).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

import numpy as np
from faker import Faker

from suites.tableqa.tables import Table

__all__ = ["SUBSETS", "generate", "letters"]

SUBSETS = ("syn1", "syn2", "syn3", "syn4", "syn5")

# syn1: (header, value generator); 20 kinds of value that identify their column
_HETEROGENEOUS: list[tuple[str, Callable[[Faker, random.Random], str]]] = [
    ("Name", lambda f, r: f.name()),
    ("Date", lambda f, r: f.date()),
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
    ("Time", lambda f, r: f.time()),
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


def _hex(f: Faker, r: random.Random) -> str:
    return f"#{r.randrange(16**6):06X}"


def _float32(digits: int) -> Callable[[Faker, random.Random], str]:
    def make(f: Faker, r: random.Random) -> str:
        value = np.float32(r.uniform(-1000.0, 1000.0))
        return f"{float(value):.{digits}g}"

    return make


def _unique(make: Callable[[], str], used: set[str]) -> str:
    for _ in range(1000):
        value = make()
        if value not in used:
            used.add(value)
            return value
    raise RuntimeError("could not draw a unique value in 1000 tries")


def generate(subset: str, width: int, height: int, seed: int, name: str) -> Table:
    """One synthetic table of ``subset`` with W = ``width`` columns and H = ``height`` rows.

    Deterministic for (subset, width, height, seed) with a given Faker version (syn1 and
    syn3 use Faker's en_US data). All W·H values are distinct.

    Raises:
        ValueError: unknown subset, width outside 1..26 for syn1..syn3 (20 for syn1), or
            height < 1.
    """
    if subset not in SUBSETS:
        raise ValueError(f"unknown synthetic subset {subset!r}; one of {', '.join(SUBSETS)}")
    if height < 1 or width < 1:
        raise ValueError(f"table size must be at least 1x1, got {width}x{height}")
    rng = random.Random(f"{subset}/{width}/{height}/{seed}")
    fake = Faker("en_US")
    fake.seed_instance(rng.randrange(2**31))
    if subset == "syn1":
        if width > len(_HETEROGENEOUS):
            raise ValueError(f"syn1 has {len(_HETEROGENEOUS)} kinds of column, asked for {width}")
        kinds = rng.sample(_HETEROGENEOUS, width)
        header = [h for h, _ in kinds]
        makers = [m for _, m in kinds]
    elif subset in ("syn2", "syn3"):
        makers = [_hex] * width
        if subset == "syn2":
            header = letters(width)
        else:
            used_names: set[str] = set()
            header = [_unique(lambda: fake.word().capitalize(), used_names) for _ in range(width)]
    else:
        makers = [_float32(6 if subset == "syn4" else 15)] * width
        header = letters(width)
    used: set[str] = set()
    rows = tuple(
        tuple(_unique(lambda m=m: m(fake, rng), used) for m in makers) for _ in range(height)
    )
    return Table(name=name, header=tuple(header), rows=rows)
