"""H-Score exactly as the Struc-Bench repository's scripts compute it (``hscore=reference``).

Struc-Bench (Tang et al. 2023, Appendix D.2) defines the H-Score by its scripts
(gersteinlab/Struc-Bench, commit ``3907ed8``): ``score/table_scores.py`` (raw text),
``score/html_scores.py`` and ``score/latex_scores.py``. This module reproduces their
per-pair values, quirks included, in our own code, so numbers put next to the paper's
tables measure the same thing. Every component keeps the reference's own name.

Quirks reproduced on purpose (``suites/strucbench/hscore.py`` is the corrected scorer; the
README's "H-Score: reference and corrected" lists each difference):

- Levenshtein similarity ``1 - d / (2 len(gold))`` is not clamped (negative for a prediction
  much longer than the gold) and is 0 when the gold is empty; an empty prediction against a
  non-empty gold scores 0.5.
- difflib's ``SequenceMatcher`` runs with autojunk on (its default).
- Raw text: only the text from the first to the last ``|`` is read; a row is dropped only
  when its characters are all ``-``/``=``; the first/last column is dropped only when empty
  in every row; cells are stripped but inner whitespace is kept; rows and columns count
  the header row.
- HTML (BeautifulSoup, ``html.parser``): cells are the text of every ``th``/``td`` (or
  ``li``, chosen from the gold) in the whole document; the structure sequence lists, for
  every recognised tag, its opening tag, then the sequence of its own descendants, then its
  closing tag, for every recognised descendant of the document (so a tag is listed once
  under each recognised ancestor).
- LaTeX (pylatexenc 2): the first ``tabular`` environment (``tabular*`` is not one); its
  alignment argument is a group the reader skips, so both alignment terms are constant
  (0 and 1); cells skip every group and every macro (``\\textbf{x}`` and ``\\%`` vanish),
  split on ``&`` and ``\\\\``, are stripped, and empty cells and rows are dropped; the
  caption is the text of the first group that follows a ``\\caption`` macro, ``"None"``
  when there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from extractbench.suites.strucbench.similarity import difflib_similarity, levenshtein_similarity
from extractbench.suites.strucbench.tables import NEWLINE_RE, RECOGNIZED_HTML_TAGS

__all__ = [
    "COMPONENTS",
    "MAX_STRUCTURE_TAGS",
    "ReferenceHScore",
    "reference_components",
    "reference_hscore",
]

# Component names per format, in the reference's words, with the sums that make
# content and structure (table_scores.py L149-156, html_scores.py L125-128,
# latex_scores.py L292-295).
COMPONENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "raw": {
        "content": ("data_levenshtein_score", "data_difflib_score"),
        "structure": (
            "num_rows_match",
            "num_cols_match",
            "columns_levenshtein_score",
            "columns_difflib_score",
        ),
    },
    "html": {
        "content": ("cells_text_difflib_score", "cells_text_levenshtein_score"),
        "structure": ("num_cells_match", "struct_levenshtein_score", "struct_difflib_score"),
    },
    "latex": {
        "content": ("caption_match_score", "data_levenshtein_score", "data_difflib_score"),
        "structure": (
            "alignment_levenshtein_score",
            "alignment_difflib_score",
            "num_rows_match",
            "num_cols_match",
        ),
    },
}

_RECOGNIZED = frozenset(RECOGNIZED_HTML_TAGS)


def _sequence_terms(prefix: str, pred: Sequence, gold: Sequence) -> dict[str, float]:
    return {
        f"{prefix}_levenshtein_score": levenshtein_similarity(pred, gold, reference=True),
        f"{prefix}_difflib_score": difflib_similarity(pred, gold, reference=True),
    }


# ---------------------------------------------------------------------------- raw text


def _raw_artifacts(text: str) -> tuple[int, int, list[str], list[str]]:
    """(rows incl. header, widest row, header cells, data cells) as the reference reads them."""
    first, last = text.find("|"), text.rfind("|")
    span = text[first : last + 1] if first >= 0 else ""
    rows = [[cell.strip() for cell in line.split("|")] for line in NEWLINE_RE.split(span)]
    rows = [row for row in rows if not set("".join(row)) <= {"-", "="}]
    if not any(row[0] for row in rows):
        rows = [row[1:] for row in rows]
    if not any(row[-1] for row in rows):
        rows = [row[:-1] for row in rows]
    if not rows:
        return 0, 0, [], []
    cells = [cell for row in rows[1:] for cell in row]
    return len(rows), max(len(row) for row in rows), rows[0], cells


def _raw_components(prediction: str, gold: str) -> dict[str, float]:
    p_rows, p_cols, p_header, p_cells = _raw_artifacts(prediction)
    g_rows, g_cols, g_header, g_cells = _raw_artifacts(gold)
    return {
        "num_rows_match": float(p_rows == g_rows),
        "num_cols_match": float(p_cols == g_cols),
        **_sequence_terms("columns", p_header, g_header),
        **_sequence_terms("data", p_cells, g_cells),
    }


# ---------------------------------------------------------------------------- HTML


# The reference's HTML structure sequence doubles with each level of nesting: 40 nested
# <div>s make 2^40 tags and the scripts never finish. Past this many the pair is scored
# as the reference scores an empty prediction, and the record says why.
MAX_STRUCTURE_TAGS = 1_000_000


class _Unscorable(Exception):
    """The reference's computation cannot finish on this text (the message says why)."""


def _html_structure(soup) -> list[str]:
    """The reference's tag sequence: each recognised descendant, wrapping its own sequence.

    Raises:
        _Unscorable: the sequence would exceed :data:`MAX_STRUCTURE_TAGS`, or the nesting
            is deeper than Python's recursion limit.
    """
    sizes: dict[int, int] = {}

    def size(node) -> int:
        key = id(node)
        if key not in sizes:
            sizes[key] = sum(2 + size(d) for d in node.descendants if d.name in _RECOGNIZED)
        return sizes[key]

    try:
        total = size(soup)
    except RecursionError:
        raise _Unscorable("HTML nested deeper than Python's recursion limit") from None
    if total > MAX_STRUCTURE_TAGS:
        raise _Unscorable(
            f"the scripts' HTML structure sequence would hold {total:.3g} tags "
            f"(limit {MAX_STRUCTURE_TAGS:,}): nested tags double it per level"
        )
    memo: dict[int, list[str]] = {}

    def sequence(node) -> list[str]:
        key = id(node)
        if key not in memo:
            out: list[str] = []
            for desc in node.descendants:
                if desc.name in _RECOGNIZED:
                    out.append(f"<{desc.name}>")
                    out.extend(sequence(desc))
                    out.append(f"</{desc.name}>")
            memo[key] = out
        return memo[key]

    return sequence(soup)


def _html_components(prediction: str, gold: str) -> dict[str, float]:
    from bs4 import BeautifulSoup

    pred_soup = BeautifulSoup(prediction, "html.parser")
    gold_soup = BeautifulSoup(gold, "html.parser")
    if gold_soup.find("table"):
        cell_tags: list[str] | None = ["th", "td"]
    elif gold_soup.find(["ul", "ol", "li"]):
        cell_tags = ["li"]
    else:  # the scripts' lenient mode: any recognised tag with text is a cell
        cell_tags = None

    def cells(soup) -> list[str]:
        if cell_tags:
            return [tag.text for tag in soup.find_all(cell_tags)]
        return [tag.text for tag in soup.find_all(sorted(_RECOGNIZED)) if tag.text]

    pred_cells, gold_cells = cells(pred_soup), cells(gold_soup)
    pred_tags, gold_tags = _html_structure(pred_soup), _html_structure(gold_soup)
    return {
        "num_cells_match": float(len(pred_cells) == len(gold_cells)),
        **_sequence_terms("cells_text", pred_cells, gold_cells),
        **_sequence_terms("struct", pred_tags, gold_tags),
    }


# ---------------------------------------------------------------------------- LaTeX


def _events(nodes, skip: Callable[[object], bool] = lambda node: False) -> Iterator:
    """Pre-order ``("enter"|"exit", node)`` over pylatexenc nodes: arguments, then body.

    A node for which ``skip`` is true is left out with everything under it.
    """
    for node in nodes:
        if node is None or skip(node):
            continue
        yield "enter", node
        children = list(node.nodeargd.argnlist) if getattr(node, "nodeargd", None) else []
        children += getattr(node, "nodelist", None) or []
        yield from _events(children, skip)
        yield "exit", node


def _latex_artifacts(text: str) -> tuple[list[list[str]], str, str]:
    """(cell rows, alignment string, caption) as the reference reads them."""
    from pylatexenc.latexwalker import (
        LatexCharsNode,
        LatexEnvironmentNode,
        LatexGroupNode,
        LatexMacroNode,
        LatexSpecialsNode,
        LatexWalker,
    )

    nodes = LatexWalker(text).get_latex_nodes()[0]
    tabular = next(
        (
            node
            for event, node in _events(nodes)
            if event == "enter"
            and isinstance(node, LatexEnvironmentNode)
            and node.envname == "tabular"
        ),
        None,
    )
    if tabular is None:
        return [], "", "None"

    def is_group(node) -> bool:
        return isinstance(node, LatexGroupNode)

    args = tabular.nodeargd.argnlist if tabular.nodeargd else []
    alignment = "".join(
        node.chars
        for event, node in _events(args[:1], is_group)
        if event == "enter" and isinstance(node, LatexCharsNode)
    )

    rows: list[list[str]] = []
    row: list[str] = []
    cell = ""
    for event, node in _events(tabular.nodelist, is_group):
        if event != "enter":
            continue
        if isinstance(node, LatexCharsNode):
            cell += node.chars
        elif isinstance(node, LatexSpecialsNode):
            if node.specials_chars == "&":
                row.append(cell)
                cell = ""
            else:
                cell += node.specials_chars
        elif isinstance(node, LatexMacroNode) and node.macroname == "\\":
            if cell:
                row.append(cell)
            rows.append(row)
            row, cell = [], ""
    if cell:
        row.append(cell)
    if row:
        rows.append(row)
    rows = [[c.strip() for c in r if c.strip()] for r in rows]
    rows = [r for r in rows if r]

    caption_group = None
    armed = False
    for event, node in _events(nodes):
        if event == "enter" and armed and isinstance(node, LatexGroupNode):
            caption_group = node
            break
        if event == "exit" and isinstance(node, LatexMacroNode) and node.macroname == "caption":
            armed = True
    caption = "None"
    if caption_group is not None:
        parts = []
        for event, node in _events(caption_group.nodelist):
            if isinstance(node, LatexGroupNode):
                parts.append(node.delimiters[0 if event == "enter" else 1])
            elif event == "enter" and isinstance(node, LatexCharsNode):
                parts.append(node.chars)
            elif event == "enter" and isinstance(node, LatexSpecialsNode):
                parts.append(node.specials_chars)
        caption = "".join(parts)
    return rows, alignment, caption


def _latex_components(prediction: str, gold: str) -> dict[str, float]:
    p_rows, p_align, p_caption = _latex_artifacts(prediction)
    g_rows, g_align, g_caption = _latex_artifacts(gold)

    def dims(rows: list[list[str]]) -> tuple[int, int]:
        return (len(rows), max(len(r) for r in rows)) if rows else (0, 0)

    return {
        **_sequence_terms("alignment", p_align, g_align),
        **_sequence_terms("data", [c for r in p_rows for c in r], [c for r in g_rows for c in r]),
        "caption_match_score": float(p_caption == g_caption),
        "num_rows_match": float(dims(p_rows)[0] == dims(g_rows)[0]),
        "num_cols_match": float(dims(p_rows)[1] == dims(g_rows)[1]),
    }


_SCORERS = {"raw": _raw_components, "html": _html_components, "latex": _latex_components}


def reference_components(fmt: str, prediction: str, gold: str) -> dict[str, float]:
    """Every H-Score component of one (prediction, gold) pair, under the reference's names.

    Args:
        fmt: ``raw``, ``html`` or ``latex``.
        prediction, gold: table texts.

    Returns:
        ``{component name: value}``; the names per format are :data:`COMPONENTS`.
        Levenshtein terms lie in (-inf, 1], the others in [0, 1].

    Raises:
        ValueError: unknown format.
    """
    if fmt not in _SCORERS:
        raise ValueError(f"unknown format {fmt!r}; one of raw, html, latex")
    return _SCORERS[fmt](prediction, gold)


@dataclass(frozen=True)
class ReferenceHScore:
    """One pair's H-Score as the Struc-Bench scripts compute it.

    Attributes:
        content, structure: the scripts' sums (raw 0-2 / 0-4, HTML 0-2 / 0-3, LaTeX
            0-3 / 0-4; the LaTeX structure reaches at most 3 there, its alignment
            Levenshtein term being constant 0); Levenshtein terms can make them negative.
        components: every term under the reference's name (:data:`COMPONENTS`).
        unscorable: why the scripts could not score the prediction (then it is scored as
            they score an empty one), or None.
    """

    content: float
    structure: float
    components: dict[str, float] = field(default_factory=dict)
    unscorable: str | None = None


def reference_hscore(fmt: str, prediction: str, gold: str) -> ReferenceHScore:
    """The reference's content and structure sums of :func:`reference_components`.

    Never raises on model output: a prediction the scripts cannot finish on (HTML nested
    so deep that their structure sequence explodes) is scored as an empty prediction, with
    ``unscorable`` set.

    Raises:
        ValueError: unknown format.
        _Unscorable: the gold itself cannot be scored (a data error).
    """
    unscorable = None
    try:
        parts = reference_components(fmt, prediction, gold)
    except (_Unscorable, RecursionError) as exc:
        unscorable = str(exc) or type(exc).__name__
        parts = reference_components(fmt, "", gold)
    content = sum(parts[name] for name in COMPONENTS[fmt]["content"])
    structure = sum(parts[name] for name in COMPONENTS[fmt]["structure"])
    return ReferenceHScore(content, structure, parts, unscorable)
