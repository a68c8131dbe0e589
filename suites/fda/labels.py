"""Heading residue in the FDA silver labels: what a label may begin and end with.

The pinned labels file (``fda/fda_kv_labels_derived.jsonl``, built by
:func:`suites.datasets.derive.fda_labels`) holds, per key, the text after the key's heading
as the document has it. On some documents that text still holds heading text: the rest of a
heading longer than the one matched ("Predicate device name and 510(k) numbers:" leaves
"and 510(k) numbers: AL-5000 ..."), or the next heading on the same line
("k051087 B. Purpose for Submission:"). A model that answers the value itself then scores 0,
and "/Indications for Use:" is a label no answer can be right for. The suite applies this
rule to every label when it loads them (:func:`clean_label`):

1. A label may not begin with the rest of its own heading: a lowercase connective or plural
   ending (``and``, ``or``, ``s``, ``(s)`` as a word, or ``/``, ``&``) followed by at most 40
   characters without a colon, then a colon. That text is removed, through the colon.
2. A label may not begin with another heading: an enumerator (a capital letter or a number of
   one or two digits, and a period) and a capitalised title of at most 60 characters ending
   with a colon ("2. Predicate 510(k) number(s): k980528"). The text belongs to that heading,
   so the label is dropped.
3. A label may not run into the next heading: from whitespace followed by an enumerated title
   with its colon (as in 2) to the end of the label is removed.
4. A label left shorter than 2 characters (the derivation's own minimum) or ending with a
   colon is dropped.

A dropped label is not an item; the run record counts and names them
(``suites.fda.notes.label_rule``). The labels changed on the pinned data are listed in
``docs/suites/fda-label-changes.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["RULE", "apply_rule", "changes_table", "clean_label", "residue"]

RULE = (
    "a label may not begin with the rest of its own heading (a connective or plural ending: "
    "and, or, s, (s), /, & ... up to a colon: removed through the colon) nor with another "
    "enumerated heading ('2. Title:': dropped), and may not run into the next enumerated "
    "heading (' B. Title:' to the end: removed); a label left under 2 characters or ending "
    "with a colon is dropped (suites/fda/labels.py)"
)

_OWN_TAIL = re.compile(r"^(?:(?:and|or|s|\(s\))(?=[\s:])|[/&])[^:]{0,40}:\s*")
_TITLE = r"(?:[A-Z]|\d{1,2})\.\s*[A-Z][^:]{0,60}:"
_OTHER_HEADING = re.compile("^" + _TITLE)
_NEXT_HEADING = re.compile(r"\s" + _TITLE + ".*$", re.DOTALL)
MIN_CHARS = 2


def residue(value: str) -> str | None:
    """Which part of the rule ``value`` breaks: ``own_heading_tail``, ``other_heading``,
    ``next_heading``, ``too_short`` or ``ends_with_colon``; None for a clean label."""
    if _OWN_TAIL.match(value):
        return "own_heading_tail"
    if _OTHER_HEADING.match(value):
        return "other_heading"
    if _NEXT_HEADING.search(value):
        return "next_heading"
    if len(value) < MIN_CHARS:
        return "too_short"
    if value.endswith(":"):
        return "ends_with_colon"
    return None


def clean_label(value: str) -> str | None:
    """``value`` without heading residue (rules 1 and 3), or None when the rule drops it
    (rules 2 and 4). Whitespace at the ends is removed; a clean label comes back unchanged.
    """
    text = value.strip()
    text = _OWN_TAIL.sub("", text, count=1).strip()
    if _OTHER_HEADING.match(text):
        return None
    text = _NEXT_HEADING.sub("", text).strip()
    if residue(text) is not None:
        return None
    return text


def apply_rule(labels: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every label through :func:`clean_label`.

    Args:
        labels: rows with ``doc_id``, ``key`` and ``value`` (from
            :func:`suites.fda.items.read_labels`).

    Returns:
        (the kept rows, with ``value`` cleaned, in order; a summary for the run record:
        ``rule``, ``labels_read``, ``labels_kept``, ``changed`` (``doc_id/key`` -> [before,
        after]) and ``dropped`` (``doc_id/key`` -> the value read)).
    """
    kept: list[dict[str, Any]] = []
    changed: dict[str, list[str]] = {}
    dropped: dict[str, str] = {}
    read = 0
    for row in labels:
        read += 1
        name = f"{row['doc_id']}/{row['key']}"
        value = clean_label(row["value"])
        if value is None:
            dropped[name] = row["value"]
            continue
        if value != row["value"]:
            changed[name] = [row["value"], value]
        kept.append({**row, "value": value})
    summary = {
        "rule": RULE,
        "labels_read": read,
        "labels_kept": len(kept),
        "changed": changed,
        "dropped": dropped,
    }
    return kept, summary


def changes_table(summary: Mapping[str, Any]) -> str:
    """The labels :func:`apply_rule` changed or dropped, as a Markdown table (one row per
    label, sorted by document and key): document, key, the label read, the label kept
    (``dropped`` when none)."""
    rows = [
        (*name.split("/", 1), before, after) for name, (before, after) in summary["changed"].items()
    ]
    rows += [(*name.split("/", 1), before, None) for name, before in summary["dropped"].items()]
    lines = ["| document | key | label read | label kept |", "|---|---|---|---|"]
    for doc_id, key, before, after in sorted(rows, key=lambda r: (r[0], r[1])):
        kept = f"`{after}`" if after is not None else "dropped (no item)"
        lines.append(f"| {doc_id} | {key} | `{before}` | {kept} |")
    return "\n".join(lines) + "\n"
