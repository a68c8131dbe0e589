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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from suites.strucbench.similarity import difflib_similarity, levenshtein_similarity
from suites.strucbench.tables import PARSERS, ParsedTable, TableParseError

__all__ = ["HScore", "MAXIMA", "hscore", "hscore_tables"]

MAXIMA = {"raw": (2.0, 4.0), "html": (2.0, 3.0), "latex": (3.0, 4.0)}  # (content, structure)


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

    @property
    def content_norm(self) -> float:
        """Content on 0-1."""
        return self.content / MAXIMA[self.format][0]

    @property
    def structure_norm(self) -> float:
        """Structure on 0-1."""
        return self.structure / MAXIMA[self.format][1]


def _pair(name: str, pred: object, gold: object) -> dict[str, float]:
    return {
        f"{name}_lev": levenshtein_similarity(pred, gold),
        f"{name}_difflib": difflib_similarity(pred, gold),
    }  # type: ignore[arg-type]


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
