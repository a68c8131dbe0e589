"""Struc-Bench error taxonomy (Appendix A.2), counted per prediction.

- structure errors: extra or missing rows or columns (|rows - rows*| + |cols - cols*|);
- structure naming errors: column names that differ from the gold ones;
- element errors: wrong values or inappropriately empty cells;
- element format errors: the same value in another format (``50`` vs ``50.0%``,
  ``1,000`` vs ``1000``) - Appendix A.1's examples, counted apart from element errors.

Columns are aligned by header (a renamed column stays aligned, a dropped one is
unmatched) and rows by content (difflib), so one dropped row or column is one structure
error, not a cascade of element errors.
"""

from __future__ import annotations

import difflib
import re

from extractbench.suites.strucbench.tables import ParsedTable

__all__ = ["ERROR_TYPES", "count_errors", "same_value_other_format"]

ERROR_TYPES: tuple[str, ...] = ("structure", "structure_naming", "element", "element_format")
_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?$")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _as_number(text: str) -> float | None:
    t = _norm(text).replace(",", "").replace("%", "").replace("$", "").replace(" ", "")
    return float(t) if _NUMBER.match(t) else None


def same_value_other_format(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ as text but are the same number (``50`` / ``50.0%``)."""
    if _norm(a) == _norm(b):
        return False
    x, y = _as_number(a), _as_number(b)
    return x is not None and y is not None and x == y


def _column_map(pred: list[str], gold: list[str]) -> dict[int, int]:
    """gold column index -> pred column index."""
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(
        None, [_norm(h) for h in pred], [_norm(h) for h in gold], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(j2 - j1):
                mapping[j1 + k] = i1 + k
    return mapping


def count_errors(pred: ParsedTable, gold: ParsedTable) -> dict[str, int]:
    """Counts of each error type of ``pred`` against ``gold`` (keys: :data:`ERROR_TYPES`)."""
    counts = dict.fromkeys(ERROR_TYPES, 0)
    counts["structure"] = abs(pred.n_rows - gold.n_rows) + abs(pred.n_cols - gold.n_cols)
    cols = _column_map(pred.header, gold.header)
    counts["structure_naming"] = sum(
        1 for j, i in cols.items() if _norm(pred.header[i]) != _norm(gold.header[j])
    )

    def project(row: list[str], which: str) -> tuple[str, ...]:
        if which == "gold":
            return tuple(_norm(row[j]) if j < len(row) else "" for j in sorted(cols))
        return tuple(_norm(row[cols[j]]) if cols[j] < len(row) else "" for j in sorted(cols))

    pred_rows = [project(r, "pred") for r in pred.rows]
    gold_rows = [project(r, "gold") for r in gold.rows]
    matcher = difflib.SequenceMatcher(None, pred_rows, gold_rows, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        for p_row, g_row in zip(pred.rows[i1:i2], gold.rows[j1:j2], strict=False):
            for j in sorted(cols):
                g = g_row[j] if j < len(g_row) else ""
                p = p_row[cols[j]] if cols[j] < len(p_row) else ""
                if _norm(p) == _norm(g):
                    continue
                if same_value_other_format(p, g):
                    counts["element_format"] += 1
                else:
                    counts["element"] += 1
    return counts
