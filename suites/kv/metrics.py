"""The ``kv`` suite's metrics: whether a model's answer matches one accepted value.

``contains`` is the FDA protocol's (the default); the others are the named choices a team
that scores its own fields makes (``kv.metric``, ``kv.metrics``). Every function takes the
model's answer and one accepted value (strings) and returns 1.0 or 0.0; an item scores the
best over its accepted values (:func:`score`).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from extractbench.suites.fda.metrics import containment

__all__ = [
    "METRICS", "MetricName", "MetricSettings", "normalize", "parse_number", "parse_date",
    "matches", "score",
]  # fmt: skip

MetricName = Literal["contains", "exact", "normalized", "fuzzy", "number", "date"]
METRICS: tuple[str, ...] = ("contains", "exact", "normalized", "fuzzy", "number", "date")

# separators a number may group its thousands with: comma, point, apostrophe (Swiss), a
# space, a no-break space and a narrow no-break space (French, Norwegian)
_GROUPING = ",.'\u2019 \u00a0\u202f"


_ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")


@dataclass(frozen=True)
class MetricSettings:
    """How the metrics that take a setting apply it (the ``kv.*`` options of the same names).

    Attributes:
        fuzzy_threshold: the least rapidfuzz ``fuzz.ratio`` (0-100) that counts as a match.
        number_abs_tol: the largest absolute difference of two numbers that still matches.
        number_rel_tol: the largest difference relative to the accepted value's magnitude.
        decimal_separator: ``"."``, ``","`` or ``"auto"`` (per number, as written: see
            :func:`parse_number`); the other characters of :data:`_GROUPING` group thousands.
        date_dayfirst: a numeric date ``03/04/2025`` is day first (3 April), else month first.
    """

    fuzzy_threshold: float = 90.0
    number_abs_tol: float = 0.0
    number_rel_tol: float = 0.0
    decimal_separator: str = "."
    date_dayfirst: bool = False


def normalize(text: str) -> str:
    """``text`` in Unicode NFKC, case-folded, every punctuation character (Unicode category
    ``P*``) removed and whitespace runs collapsed to one space, stripped.

    SQuAD's answer normalisation (Rajpurkar et al. 2016, ``normalize_answer`` of its
    evaluation script: lower case, punctuation and extra whitespace removed) without its
    removal of English articles, with NFKC and full case folding so that full-width,
    ligature and ``ß`` spellings compare equal.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(c).startswith("P") else c for c in folded)
    return " ".join(kept.split())


def _number_pattern(decimal_separator: str) -> re.Pattern[str]:
    """A number with ``decimal_separator`` and thousands grouped by the other separators,
    not part of a longer run of digits and separators (``962,71`` with ``.`` is none)."""
    seps = re.escape(_GROUPING)
    grouping = re.escape(_GROUPING.replace(decimal_separator, ""))
    point = re.escape(decimal_separator)
    return re.compile(
        rf"(?<!\d)(?<!\d[{seps}])[-+\u2212]?(\d+(?:[{grouping}]\d{{3}})*)(?:{point}(\d+))?"
        rf"(?!\d)(?![{seps}]\d)"
    )


_RUN = re.compile(r"\d(?:[\d,.'\u2019 \u00a0\u202f]*\d)?")


def _auto_separator(text: str) -> str:
    """The decimal separator of the first number in ``text`` as it is written: the last of
    ``.`` and ``,`` when both occur; a single ``.`` or ``,`` not followed by exactly three
    digits; otherwise the other one (``1,854``, ``1.854`` and ``1.854.400`` read as thousands, ``1.854,40`` and
    ``962,71`` with a comma, ``5 343.75`` with a point)."""
    match = _RUN.search(text)
    run = match.group() if match else ""
    marks = [c for c in run if c in ".,"]
    if len(set(marks)) == 2:
        return marks[-1]
    other = {".": ",", ",": "."}
    if len(marks) == 1 and not re.search(r"[.,]\d{3}$", run):
        return marks[0]
    return other[marks[0]] if marks else "."  # the mark groups thousands


def parse_number(text: str, decimal_separator: str = ".") -> float | None:
    """The first number written in ``text``, or None when it holds none.

    ``decimal_separator`` (``.``, ``,``, or ``auto``: :func:`_auto_separator`) marks the
    fraction; every other separator of :data:`_GROUPING` groups thousands (groups of
    exactly three digits) and is dropped: ``1.854,40`` with ``,`` is 1854.4, ``5 343.75``
    and ``1,854.40`` with ``.`` are 5343.75 and 1854.4. A run of digits and separators that
    does not read so (``962,71`` with ``.``, ``1.854,40`` with ``.``) is no number, never a
    part of one.
    """
    if decimal_separator == "auto":
        decimal_separator = _auto_separator(text)
    for match in _number_pattern(decimal_separator).finditer(text):
        whole = re.sub(r"\D", "", match.group(1))
        value = float(whole + ("." + match.group(2) if match.group(2) else ""))
        return -value if match.group().startswith(("-", "\u2212")) else value
    return None


def parse_date(text: str, dayfirst: bool = False) -> dt.date | None:
    """The date written in ``text`` (``2025-07-30``, ``July 30, 2025``, ``30.07.2025``,
    ``30 juli``... as python-dateutil's ``parser.parse`` reads it, with ``fuzzy=True`` so the
    words around a date are skipped), or None when it holds none.

    An ISO 8601 date (``2025-05-08``) is read as one whatever ``dayfirst`` says (dateutil
    would swap its month and day). A missing year, month or day is not filled from today: a
    text without all three is no date (two runs on different days must score alike).
    """
    from dateutil import parser

    if not any(c.isdigit() for c in text):
        return None
    iso = _ISO_DATE.search(text)
    if iso is not None:
        try:
            return dt.date.fromisoformat(iso.group())
        except ValueError:
            pass
    sentinel_a, sentinel_b = dt.datetime(1, 1, 1), dt.datetime(2, 2, 2)
    try:
        a = parser.parse(text, fuzzy=True, dayfirst=dayfirst, default=sentinel_a)
        b = parser.parse(text, fuzzy=True, dayfirst=dayfirst, default=sentinel_b)
    except (ValueError, OverflowError):
        return None
    if (a.year, a.month, a.day) != (b.year, b.month, b.day):
        return None  # a part came from the default: the text does not say it
    return a.date()


def matches(answer: str, value: str, metric: str, settings: MetricSettings) -> float:
    """1.0 when ``answer`` matches the accepted ``value`` under ``metric``, else 0.0.

    - ``contains``: ``value`` occurs in ``answer``, case-insensitive (the FDA task's
      ``contains_score``: :func:`suites.fda.metrics.containment`).
    - ``exact``: the answer equals the value, both stripped of surrounding whitespace.
    - ``normalized``: :func:`normalize` of both are equal.
    - ``fuzzy``: rapidfuzz ``fuzz.ratio`` of :func:`normalize` of both (100 times one minus
      the normalised Indel distance) is at least ``settings.fuzzy_threshold``.
    - ``number``: :func:`parse_number` of both gives numbers ``a`` (answer) and ``v``
      (value) with ``|a - v| <= max(number_abs_tol, number_rel_tol * |v|)``.
    - ``date``: :func:`parse_date` of both gives the same ISO 8601 calendar date.

    Raises:
        ValueError: an unknown metric name.
    """
    if metric == "contains":
        return containment(answer, value)
    if metric == "exact":
        return float(answer.strip() == value.strip())
    if metric == "normalized":
        return float(normalize(answer) == normalize(value))
    if metric == "fuzzy":
        from rapidfuzz import fuzz

        return float(fuzz.ratio(normalize(answer), normalize(value)) >= settings.fuzzy_threshold)
    if metric == "number":
        a = parse_number(answer, settings.decimal_separator)
        v = parse_number(value, settings.decimal_separator)
        if a is None or v is None:
            return 0.0
        tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(v))
        return float(abs(a - v) <= tolerance)
    if metric == "date":
        a_date = parse_date(answer, settings.date_dayfirst)
        v_date = parse_date(value, settings.date_dayfirst)
        return float(a_date is not None and a_date == v_date)
    raise ValueError(f"unknown kv metric {metric!r}; one of {', '.join(METRICS)}")


def score(answer: str, values: Sequence[str], metric: str, settings: MetricSettings) -> float:
    """The best of :func:`matches` over the accepted ``values`` (any one counts), 0.0 or 1.0.

    Raises:
        ValueError: an unknown metric name.
    """
    return max(matches(answer, value, metric, settings) for value in values)
