"""The Struc-Bench item of one (text, gold table) pair, in one of the three formats: the
prompt (Struc-Bench's instruction, the text, the FormatCoT-style format description of the
gold), the gold as the reference, a generation budget from the gold's length."""

from __future__ import annotations

from extractbench.suites.item import DataError, Item
from extractbench.suites.strucbench import render
from extractbench.suites.strucbench.prompts import build_prompt, instruction
from extractbench.suites.strucbench.tables import PARSERS, TableParseError

__all__ = ["FORMATS", "MAX_TOKENS_CAP", "make_item"]

FORMATS = ("raw", "html", "latex")
MAX_TOKENS_CAP = 512


def _budget(gold: str) -> int:
    """Generation budget: about 1.5x the gold's length in tokens (~3 chars/token)."""
    return min(MAX_TOKENS_CAP, max(64, len(gold) // 2 + 32))


def make_item(
    fmt: str,
    source: str,
    key: str,
    text: str,
    gold_table: render.GoldTable,
    gold: str,
) -> Item:
    """The item of one (text, gold table) pair: the FormatCoT-style prompt for ``fmt`` built
    from the text and the gold's format description, the gold as the reference.

    Raises:
        DataError: the gold does not parse as a table of ``fmt`` (its own scorer's parser).
    """
    try:
        PARSERS[fmt](gold)
    except TableParseError as exc:
        raise DataError(
            f"strucbench {source}/{key}: gold {fmt} table does not parse: {exc}"
        ) from None
    return Item(
        id=f"strucbench/{fmt}/{source}/{key}",
        group=f"strucbench/{fmt}/{source}/{key}",
        prefix=build_prompt(fmt, text, render.format_description(gold_table, fmt)),
        suffix="",
        reference=gold,
        meta={
            "format": fmt,
            "source": source,
            "rows": len(gold_table.rows),
            "cols": len(gold_table.header),
        },
        max_tokens=_budget(gold),
        stop=("\n\n",) if fmt == "raw" else (),
        system=instruction(fmt),  # the prompt begins with it; a chat model's system message
    )
