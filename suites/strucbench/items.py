"""Struc-Bench items in three formats from the substitute data (docs/data.md#strucbench).

- raw: E2E cleaned test set (``strucbench/e2e/test-fixed.csv``): one item per distinct
  original MR (630), input = the first human-written text of that MR, gold = the
  re-annotated MR as an attribute | value markdown table.
- html: the WikiTableQuestions page tables (``tableqa/wtq/csv/*/*.html``) reduced to
  their ``<table>``, and SciGen tables rendered as HTML.
- latex: SciGen tables (``strucbench/scigen/test-*.json``) rendered as a ``tabular`` in a
  ``table`` with ``\\caption``.
HTML and LaTeX inputs are deterministic content + format descriptions (see ``render``).
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.derived_cache import cached_json, digest_of
from extractbench.suites.files import data_file, data_folder, read_text
from extractbench.suites.item import DataError, DataMissing, Item, SuiteData
from extractbench.suites.links import docs_url
from extractbench.suites.meteor import wordnet_status
from extractbench.suites.protocol import Loader
from extractbench.suites.strucbench import render
from extractbench.suites.strucbench.bertscore import bertscore_note, resolve_encoder
from extractbench.suites.strucbench.hscore import CORRECTIONS
from extractbench.suites.strucbench.pair_item import FORMATS, MAX_TOKENS_CAP, make_item
from extractbench.suites.strucbench.suite import StrucbenchOptions
from extractbench.suites.suite_options import dump_options
from extractbench.suites.tableqa.html import HTMLTableError, check_complete

__all__ = ["FORMATS", "load_items", "make_item"]

DEFAULTS = StrucbenchOptions()  # the suite's options when a caller gives none

E2E_FILE = "strucbench/e2e/test-fixed.csv"
SCIGEN_FILES = ("strucbench/scigen/test-CL.json", "strucbench/scigen/test-Other.json")
WTQ_DIR = "tableqa/wtq/csv"
CACHE_VERSION = "strucbench-items-v4"  # bump when rendering, prompts or Item fields change


def _literal(value: Any) -> Any:
    return ast.literal_eval(value) if isinstance(value, str) else value


def _e2e(data_dir: Path) -> list[Item]:
    path = data_file(data_dir, E2E_FILE)
    if not path.is_file():
        raise DataMissing(f"{path} not found (see {docs_url('docs/data.md#strucbench')})")
    first: dict[str, dict[str, str]] = {}
    with io.StringIO(read_text(path), newline="") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            if not row.get("mr") or not row.get("ref") or "orig_mr" not in row:
                raise DataError(f"{path}:{lineno}: expected columns mr, ref, orig_mr")
            first.setdefault(row["orig_mr"], row)
    items = []
    for i, row in enumerate(first.values()):
        try:
            table = render.e2e_table(row["mr"])
        except ValueError as exc:
            raise DataError(f"{path}: {exc}") from None
        items.append(
            make_item("raw", "e2e", f"{i:04d}", row["ref"], table, render.to_markdown(table))
        )
    return items


def _strings(value: Any, where: str, field: str, nested: bool = False) -> list[Any]:
    try:
        value = _literal(value)
    except (ValueError, SyntaxError):
        value = None
    ok = isinstance(value, list) and all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) if nested else isinstance(v, str)
        for v in value
    )
    if not ok:
        kind = "a list of lists of strings" if nested else "a list of strings"
        raise DataError(f"{where}: field {field} must be {kind}")
    return value


def _scigen(
    data_dir: Path, max_cells: int, rejected: dict[str, list[str]]
) -> list[tuple[str, render.GoldTable]]:
    """SciGen tables up to ``max_cells``; empty or ragged tables (rows of another width
    than the header) are left out and listed in ``rejected``."""
    tables = []
    for name in SCIGEN_FILES:
        path = data_file(data_dir, name)
        if not path.is_file():
            raise DataMissing(f"{path} not found (see {docs_url('docs/data.md#strucbench')})")
        try:
            data = safe_json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise DataError(f"{path}: must be a JSON object of entries, not {type(data).__name__}")
        for key in sorted(data, key=lambda k: int(k) if k.isdigit() else k):
            entry, where = data[key], f"{path}: entry {key}"
            if not isinstance(entry, dict):
                raise DataError(f"{where}: must be an object, not {type(entry).__name__}")
            for field in ("table_column_names", "table_content_values", "table_caption"):
                if field not in entry:
                    raise DataError(f"{where}: field {field} is missing")
            header = _strings(entry["table_column_names"], where, "table_column_names")
            rows = _strings(entry["table_content_values"], where, "table_content_values", True)
            if not isinstance(entry["table_caption"], str):
                raise DataError(f"{where}: field table_caption must be a string")
            label = f"{Path(name).stem}-{key}"
            if not header or not rows:
                rejected["empty"].append(label)
                continue
            if any(len(r) != len(header) for r in rows):
                rejected["ragged"].append(label)
                continue
            table = render.scigen_table(entry["table_caption"], header, rows)
            if len(table.header) * (len(table.rows) + 1) <= max_cells:
                tables.append((label, table))
    return tables


def _wtq(data_dir: Path, max_cells: int, rejected: dict[str, list[str]]) -> list[Item]:
    from bs4 import BeautifulSoup

    root = data_dir / WTQ_DIR
    items = []
    for path in sorted(root.glob("*/*.html")):
        html = read_text(data_file(data_dir, path.relative_to(data_dir)))
        try:
            check_complete(html, str(path))
            gold = render.reduce_html(html)
        except HTMLTableError as exc:
            raise DataError(str(exc)) from None
        except ValueError:  # no <table>
            rejected["no_table"].append(str(path.relative_to(root)))
            continue
        parsed = BeautifulSoup(gold, "html.parser")
        grid = [
            [" ".join(c.get_text(" ").split()) for c in tr.find_all(["th", "td"])]
            for tr in parsed.find_all("tr")
        ]
        grid = [r for r in grid if r]
        if not grid or sum(len(r) for r in grid) > max_cells:
            continue
        table = render.GoldTable(grid[0], grid[1:])
        key = str(path.relative_to(root).with_suffix("")).replace("/", "-")
        items.append(make_item("html", "wtq", key, render.content_description(table), table, gold))
    return items


def _hscore_note(mode: str) -> dict[str, Any]:
    """What the H-Score metrics of this run are, for the run record's suite notes."""
    note: dict[str, Any] = {"mode": mode}
    if mode in ("reference", "both"):
        note["h_*"] = (
            "Struc-Bench's own scripts (score/table_scores.py, html_scores.py, latex_scores.py "
            "at 3907ed8), quirks included; Levenshtein terms are unclamped"
        )
    if mode in ("corrected", "both"):
        note["h_*_corrected"] = "the corrected scorer; its differences are listed in corrections"
        note["corrections"] = dict(CORRECTIONS)
    return note


def _notes(
    opts: StrucbenchOptions, encoder: Any, items: list[Item], data: Any, rejected: Any
) -> dict[str, Any]:
    """The run record's notes of the suite: its source, data, scoring and item counts."""
    notes = {
        "source": "Struc-Bench (Tang et al. 2023): text-to-table in raw text, HTML, LaTeX; H-Score, P-Score",
        "data": data,
        "inputs": "HTML/LaTeX content and format descriptions are written deterministically from the gold "
        "table (suites/strucbench/render.py), not generated by GPT-3.5"
        if opts.pairs is None
        else "the user's texts (strucbench.pairs); each prompt's format description is written "
        "from its gold table (suites/strucbench/render.py)",
        "budget": f"gold tables above {opts.max_cells} cells are left out and generation is "
        f"capped at {MAX_TOKENS_CAP} tokens, for CPU runs",
        "options": dump_options(opts),
        "hscore": _hscore_note(opts.hscore),
        "bertscore": bertscore_note(encoder, opts.bertscore),
        "meteor": {
            "metric": "nltk meteor_score (alpha 0.9, beta 3, gamma 0.5) of the prediction "
            "against the gold table, lowercased \\w+ words (suites/meteor.py); not among the "
            "paper's metrics"
        }
        | wordnet_status(),
        "items_per_format": {f: sum(1 for it in items if it.meta["format"] == f) for f in FORMATS},
        "tables_rejected": rejected,
    }
    return notes


def load_items(data_dir: Path | None, opts: StrucbenchOptions = DEFAULTS) -> SuiteData:
    """All three formats (``opts.max_cells`` decides which tables are items; ``pscore``
    and ``hscore`` how they are scored), or the user's pairs (``opts.pairs``).

    Raises:
        DataMissing: the E2E or SciGen files are absent.
        DataError: a malformed data row, a gold table its own parser rejects, or a
            BERTScore encoder asked for and missing (``strucbench.bertscore``).
    """
    encoder = resolve_encoder(opts.bertscore, opts.bertscore_layer)  # fails early
    if opts.pairs is not None:
        from extractbench.suites.strucbench.user_pairs import user_items

        items, data = user_items(opts.pairs, opts.max_cells, opts)
        return SuiteData(items=items, notes=_notes(opts, encoder, items, data, None))
    data_dir = data_folder(data_dir, "strucbench")
    files = [data_file(data_dir, f) for f in (E2E_FILE, *SCIGEN_FILES)]
    for path in files:
        if not path.is_file():
            raise DataMissing(f"{path} not found (see {docs_url('docs/data.md#strucbench')})")
    files += [data_file(data_dir, p.relative_to(data_dir))
              for p in sorted((data_dir / WTQ_DIR).glob("*/*.html"))]  # fmt: skip
    parts: list[bytes | str] = [CACHE_VERSION, str(opts.max_cells)]
    parts += [p.read_bytes() for p in files]

    def build() -> dict[str, Any]:
        rejected: dict[str, list[str]] = {"empty": [], "ragged": [], "no_table": []}
        built = _e2e(data_dir)
        scigen = _scigen(data_dir, opts.max_cells, rejected)
        built += _wtq(data_dir, opts.max_cells, rejected) if (data_dir / WTQ_DIR).is_dir() else []
        for fmt, to_text in (("html", render.to_html), ("latex", render.to_latex)):
            for name, table in scigen:
                text = render.content_description(table)
                built.append(make_item(fmt, "scigen", name, text, table, to_text(table)))
        return {"items": [it.to_json() for it in built], "rejected": rejected}

    value = cached_json("strucbench-items", digest_of(parts), build)
    items = [Item.from_json(row) for row in value["items"]]
    data = ("substitutes: E2E cleaned test set (raw), WikiTableQuestions tables and SciGen "
            "tables (HTML), SciGen tables rendered as LaTeX; the Struc-Bench release is not "
            "reachable")  # fmt: skip
    notes = _notes(opts, encoder, items, data, value["rejected"])
    return SuiteData(items=items, notes=notes)


# the suite declares this loader by name (suites.protocol.lazy): its type is checked here
LOADER: Loader[StrucbenchOptions] = load_items
