"""Parse generated tables in the three Struc-Bench formats into one shape.

Raw text (markdown): rows on newlines or ``<NEWLINE>``, cells on ``|`` (Struc-Bench
``table_scores.py`` L9, L30-66); separator rows (``---``, ``:--:``) are formatting and
dropped. HTML: beautifulsoup4, cells are ``th``/``td`` (or ``li``) texts, the structure is
the pre-order sequence of the paper's RECOGNIZED_HTML_TAGS (Appendix D.2). LaTeX:
pylatexenc walks to the ``tabular`` environment; rows on ``\\\\``, cells on ``&`` at brace
depth 0, rules (``\\hline``, booktabs) dropped, cell text via pylatexenc's
LatexNodes2Text; alignment is the tabular's column spec, caption the ``\\caption`` text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "ParsedTable",
    "TableParseError",
    "parse_markdown",
    "parse_html",
    "parse_latex",
    "PARSERS",
    "RECOGNIZED_HTML_TAGS",
]

RECOGNIZED_HTML_TAGS = [
    "table", "tr", "th", "td", "ul", "ol", "li", "div", "span", "p", "a", "img", "embed", "pre",
    "h1", "h2", "h3", "h4", "h5", "h6", "input", "button",
]  # fmt: skip
NEWLINE_RE = re.compile(r"\n|<NEWLINE>|<newline>")
_SEPARATOR_CELL = re.compile(r"^:?-+:?$")
_RULES = re.compile(
    r"\\(hline|toprule|midrule|bottomrule|cmidrule(\([^)]*\))?\{[^}]*\}|cline\{[^}]*\})"
)
MAX_INPUT_CHARS = 200_000  # longer outputs are noise; cut before parsing


class TableParseError(ValueError):
    """The text holds no table of the expected format; the message says what is missing."""


@dataclass
class ParsedTable:
    """A table as the H-Score sees it.

    Attributes:
        header: column names (first row), possibly empty.
        rows: data rows (lists of cell texts).
        caption: caption text (LaTeX) or None.
        alignment: column spec without spaces and rules (LaTeX, e.g. ``lcr``) or None.
        tags: pre-order recognized tag names (HTML) or empty.
    """

    header: list[str]
    rows: list[list[str]]
    caption: str | None = None
    alignment: str | None = None
    tags: list[str] = field(default_factory=list)

    @property
    def cells(self) -> list[str]:
        """Every data cell, row by row."""
        return [c for row in self.rows for c in row]

    @property
    def n_rows(self) -> int:
        """Number of data rows (header excluded)."""
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        """Number of columns: the widest of header and rows."""
        return max([len(self.header)] + [len(r) for r in self.rows])


def _clean(text: str) -> str:
    return " ".join(text.split())


def parse_markdown(text: str) -> ParsedTable:
    """Parse a markdown / pipe table.

    Raises:
        TableParseError: no line with a ``|`` cell divider.
    """
    rows = []
    for line in NEWLINE_RE.split(text[:MAX_INPUT_CHARS]):
        if "|" not in line:
            continue
        cells = [_clean(c) for c in line.strip().strip("|").split("|")]
        if all(_SEPARATOR_CELL.match(c.replace(" ", "")) for c in cells if c) and any(cells):
            continue  # |---|:--:| alignment row
        rows.append(cells)
    if not rows:
        raise TableParseError("no markdown table: no line with | cell dividers")
    return ParsedTable(header=rows[0], rows=rows[1:])


def parse_html(text: str) -> ParsedTable:
    """Parse the first ``<table>`` (else ``<ul>``/``<ol>``) of an HTML snippet.

    Raises:
        TableParseError: no table or list element.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text[:MAX_INPUT_CHARS], "html.parser")
    root = soup.find("table") or soup.find(["ul", "ol"])
    if root is None:
        raise TableParseError("no <table>, <ul> or <ol> element")
    tags = [root.name] + [t.name for t in root.find_all(True) if t.name in RECOGNIZED_HTML_TAGS]
    if root.name == "table":
        grid = []
        for tr in root.find_all("tr"):
            cells = [_clean(c.get_text(" ")) for c in tr.find_all(["th", "td"])]
            if cells:
                grid.append(cells)
    else:
        grid = [[_clean(li.get_text(" "))] for li in root.find_all("li")]
    if not grid:
        return ParsedTable(header=[], rows=[], tags=tags)
    return ParsedTable(header=grid[0], rows=grid[1:], tags=tags)


def _split_top_level(text: str, sep: str) -> list[str]:
    parts, depth, current, i = [], 0, [], 0
    while i < len(text):
        ch = text[i]
        if depth == 0 and text.startswith(sep, i):
            parts.append("".join(current))
            current = []
            i += len(sep)
            continue
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def parse_latex(text: str) -> ParsedTable:
    """Parse the first ``tabular`` (or ``tabular*``/``tabularx``) environment and the caption.

    Raises:
        TableParseError: no tabular environment, or LaTeX pylatexenc cannot walk.
    """
    from pylatexenc.latex2text import LatexNodes2Text
    from pylatexenc.latexwalker import (
        LatexEnvironmentNode,
        LatexMacroNode,
        LatexWalker,
        LatexWalkerError,
        get_default_latex_context_db,
    )
    from pylatexenc.macrospec import MacroSpec, MacroStandardArgsParser

    context = get_default_latex_context_db()
    context.add_context_category("extractbench", macros=[MacroSpec("caption", MacroStandardArgsParser("[{"))], prepend=True)
    source = text[:MAX_INPUT_CHARS]
    try:
        nodes, _, _ = LatexWalker(
            source, tolerant_parsing=True, latex_context=context
        ).get_latex_nodes()
    except (LatexWalkerError, IndexError, ValueError, RecursionError) as exc:
        raise TableParseError(f"LaTeX cannot be parsed: {exc}") from None
    tabular = caption = None
    stack = list(nodes or [])
    while stack:
        node = stack.pop(0)
        if node is None:
            continue
        if (
            isinstance(node, LatexEnvironmentNode)
            and node.environmentname.rstrip("*") in ("tabular", "tabularx")
            and tabular is None
        ):
            tabular = node
        if (
            isinstance(node, LatexMacroNode)
            and node.macroname == "caption"
            and caption is None
            and node.nodeargd
        ):
            args = [a for a in node.nodeargd.argnlist if a is not None]
            if args:
                caption = _clean(LatexNodes2Text().nodelist_to_text([args[-1]]))
        for child in getattr(node, "nodelist", None) or []:
            stack.append(child)
        if isinstance(node, (LatexMacroNode, LatexEnvironmentNode)) and node.nodeargd:
            stack.extend(a for a in node.nodeargd.argnlist if a is not None)
    if tabular is None:
        raise TableParseError("no tabular environment")
    spec_nodes = [
        a for a in (tabular.nodeargd.argnlist if tabular.nodeargd else []) if a is not None
    ]
    alignment = ""
    if spec_nodes:
        spec = spec_nodes[-1].latex_verbatim().strip("{}")
        alignment = re.sub(r"[^lcrpmbX]", "", re.sub(r"\{[^}]*\}", "", spec))
    body = "".join(n.latex_verbatim() for n in tabular.nodelist or [] if n is not None)
    body = _RULES.sub(" ", body)
    to_text = LatexNodes2Text()
    grid = []
    for raw_row in _split_top_level(body, "\\\\"):
        if not raw_row.strip():
            continue
        cells = [_clean(to_text.latex_to_text(c)) for c in _split_top_level(raw_row, "&")]
        if any(cells):
            grid.append(cells)
    header, rows = (grid[0], grid[1:]) if grid else ([], [])
    return ParsedTable(header=header, rows=rows, caption=caption, alignment=alignment)


PARSERS = {"raw": parse_markdown, "html": parse_html, "latex": parse_latex}
