"""H-Score (Struc-Bench Appendix D.2) per format, on the paper's scale and normalised.

Scales follow Struc-Bench's scripts (``score/table_scores.py`` L149-156,
``html_scores.py`` L125-128, ``latex_scores.py`` L292-295); every similarity term is
scored twice, by normalised Levenshtein and by Ratcliff/Obershelp, and summed:

- raw text: content = data_lev + data_difflib (0-2); structure = rows_match + cols_match
  + columns_lev + columns_difflib (0-4).
- HTML: content = cells_lev + cells_difflib (0-2); structure = cells_count_match +
  tags_lev + tags_difflib (0-3).
- LaTeX: content = caption_match + data_lev + data_difflib (0-3); structure =
  alignment_lev + alignment_difflib + rows_match + cols_match (0-4).

"Normalised" = paper scale / its maximum, in [0, 1].

This is the *corrected* scorer (``--suite-option strucbench.hscore=corrected``); the
default, ``reference``, reproduces the Struc-Bench scripts exactly
(:mod:`suites.strucbench.hscore_reference`). :data:`CORRECTIONS` lists every way this one
differs, each with the example that motivates it; the README and every run record carry
the same list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from extractbench.suites.strucbench.similarity import difflib_similarity, levenshtein_similarity
from extractbench.suites.strucbench.tables import PARSERS, ParsedTable, TableParseError

__all__ = ["CORRECTIONS", "HScore", "HScoreMode", "MAXIMA", "hscore", "hscore_tables"]

# which H-Score a run records: the Struc-Bench scripts' values, the corrected ones, or both
HScoreMode = Literal["reference", "corrected", "both"]

MAXIMA = {"raw": (2.0, 4.0), "html": (2.0, 3.0), "latex": (3.0, 4.0)}  # (content, structure)

# How the corrected scorer differs from the Struc-Bench scripts: name -> one line with the
# example that motivates it (tests/test_hscore_reference.py has one pair per correction).
CORRECTIONS: dict[str, str] = {
    "levenshtein_clamped": "Levenshtein similarity is clamped at 0: a 12-cell prediction for a "
    "3-cell gold scores 0, not 1 - 12/6 = -1, so one long answer cannot pull a mean below 0",
    "no_table_scores_zero": "a prediction with no table (empty, or prose only) scores 0 on every "
    "term; the scripts give it 0.5 per Levenshtein term (1 - n/2n) and can match row counts",
    "empty_equals_empty": "two empty sequences are equal (Levenshtein similarity 1); the scripts "
    "give 0 whenever the gold is empty",
    "difflib_autojunk_off": "difflib compares every element (autojunk off): with autojunk on, "
    "elements filling over 1% of a sequence of 200 or more (HTML tags of a long table) are "
    "ignored as junk",
    "raw_table_lines": "raw text: every line holding a | is a row and other lines are ignored; "
    "the scripts read the span from the first to the last | and keep prose lines inside it as "
    "one-cell rows",
    "raw_alignment_rows": "raw text: alignment rows such as |:--|--:| are dropped like |---|; "
    "the scripts drop a row only when it holds nothing but - and =",
    "raw_outer_pipes": "raw text: the outer | of each line is stripped line by line; the scripts "
    "drop an empty first or last column only when it is empty in every row, so one line "
    "without outer pipes shifts every other row by a column",
    "raw_cell_whitespace": "raw text: whitespace inside a cell is collapsed ('New  York' = "
    "'New York'); the scripts keep it",
    "html_first_table": "HTML: cells and tags are read inside the first <table> (else <ul>/<ol>), "
    "each tag once in document order; the scripts read the whole document and list a tag again "
    "under each recognised ancestor, so a wrapper <div> or prose <p> changes the structure",
    "html_cell_text": "HTML: cell text has its whitespace collapsed ('<td>\\n 5 </td>' = "
    "'<td>5</td>'); the scripts compare the raw text",
    "latex_alignment": "LaTeX: the alignment terms compare the column spec (lcr, p, m, b, X); "
    "the scripts never read it, so both terms are constant (0 and 1)",
    "latex_cell_text": "LaTeX: cell text is pylatexenc's text of the cell (\\textbf{0.91} = 0.91, "
    "\\% = %), empty cells are kept; the scripts drop every group and macro, so bold numbers "
    "and escaped characters vanish, and delete empty cells",
    "latex_tabular_star": "LaTeX: tabular*, tabularx are tables; the scripts find only tabular",
    "latex_caption": "LaTeX: the caption is the \\caption argument as text, whitespace "
    "collapsed; the scripts take the first group after \\caption, 'None' when absent",
}


@dataclass(frozen=True)
class HScore:
    """One prediction's H-Score.

    Attributes:
        format: ``raw``, ``html`` or ``latex``.
        content, structure: on the paper's scale (see module docstring).
        parts: every summed term, each in [0, 1].
        parse_error: why the prediction could not be parsed (scores are then 0), or None.
    """

    format: str
    content: float
    structure: float
    parts: dict[str, float] = field(default_factory=dict)
    parse_error: str | None = None


def _pair(name: str, pred: str | Sequence[str], gold: str | Sequence[str]) -> dict[str, float]:
    return {
        f"{name}_lev": levenshtein_similarity(pred, gold),
        f"{name}_difflib": difflib_similarity(pred, gold),
    }


def hscore_tables(fmt: str, pred: ParsedTable, gold: ParsedTable) -> HScore:
    """H-Score of two parsed tables in format ``fmt``."""
    parts: dict[str, float] = {}
    if fmt == "raw":
        parts["rows_match"] = float(pred.n_rows == gold.n_rows)
        parts["cols_match"] = float(pred.n_cols == gold.n_cols)
        parts |= _pair("columns", pred.header, gold.header)
        parts |= _pair("data", pred.cells, gold.cells)
        content = parts["data_lev"] + parts["data_difflib"]
        structure = (
            parts["rows_match"]
            + parts["cols_match"]
            + parts["columns_lev"]
            + parts["columns_difflib"]
        )
    elif fmt == "html":
        if pred.tags[:1] != gold.tags[:1] and "table" in pred.tags[:1] + gold.tags[:1]:
            return HScore(fmt, 0.0, 0.0, {}, f"a <{pred.tags[0]}> answered for a <{gold.tags[0]}>")
        pred_cells, gold_cells = pred.header + pred.cells, gold.header + gold.cells
        parts["cells_count_match"] = float(len(pred_cells) == len(gold_cells))
        parts |= _pair("cells", pred_cells, gold_cells)
        parts |= _pair("tags", pred.tags, gold.tags)
        content = parts["cells_lev"] + parts["cells_difflib"]
        structure = parts["cells_count_match"] + parts["tags_lev"] + parts["tags_difflib"]
    elif fmt == "latex":
        parts["caption_match"] = float(
            " ".join((pred.caption or "").split()) == " ".join((gold.caption or "").split())
        )
        parts |= _pair("data", pred.header + pred.cells, gold.header + gold.cells)
        parts |= _pair("alignment", pred.alignment or "", gold.alignment or "")
        parts["rows_match"] = float(pred.n_rows == gold.n_rows)
        parts["cols_match"] = float(pred.n_cols == gold.n_cols)
        content = parts["caption_match"] + parts["data_lev"] + parts["data_difflib"]
        structure = (
            parts["alignment_lev"]
            + parts["alignment_difflib"]
            + parts["rows_match"]
            + parts["cols_match"]
        )
    else:
        raise ValueError(f"unknown format {fmt!r}; one of raw, html, latex")
    return HScore(fmt, content, structure, parts)


def hscore(fmt: str, prediction: str, gold: str | ParsedTable) -> HScore:
    """H-Score of a generated table text against the gold table.

    A prediction that cannot be parsed (no table, unclosed markup, noise) scores 0 on
    both with ``parse_error`` set; this function never raises on model output.

    Raises:
        TableParseError: the gold text itself cannot be parsed (a data error).
        ValueError: unknown format.
    """
    gold_table = gold if isinstance(gold, ParsedTable) else PARSERS[fmt](gold)
    try:
        pred_table = PARSERS[fmt](prediction)
    except TableParseError as exc:
        return HScore(fmt, 0.0, 0.0, {}, str(exc))
    except (RecursionError, ValueError, IndexError, TypeError, AttributeError) as exc:
        return HScore(fmt, 0.0, 0.0, {}, f"{type(exc).__name__}: {exc}")
    return hscore_tables(fmt, pred_table, gold_table)
