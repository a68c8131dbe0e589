"""The MINEA score from per-needle hits: per type and criterion, then per type and overall
(MINEA Section 5.2.3, Tables 3 and 5), with the needle-free control.

Each needle row holds its ``hits`` on the extraction of the enriched document and, when the
control is on, its ``control`` hits: the same criteria against the extraction of the same
document without needles (Section 5.2.2: "compare extracted information from the document
with and without needles"). A criterion that fires on the control fires without the
needle, so it is that criterion's false positive:

- a needle counts as *found* by criterion c only when c fires on the enriched document and
  not on the control (so a document without needles finds nothing);
- the control's false-positive rate of (type, c) is the share of the type's needles that c
  "finds" in the control; a criterion whose rate exceeds ``max_control_fp`` is not used
  for that type.

MINEA of a type is the maximum over its remaining criteria of the share of needles found
(Table 5, highlighted values; without a control every criterion remains and found = hit,
the paper's rule); 0 when no criterion remains. Overall MINEA is the needle-weighted mean
of the per-type values (Table 3: 0.780 over 695 needles is exactly that weighted mean).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extractbench.suites.minea.matching import CRITERIA

__all__ = ["MAX_CONTROL_FP", "found", "criteria_table", "minea_scores"]

MAX_CONTROL_FP = 0.05


def found(hit: int | None, control: int | None, has_control: bool) -> int | None:
    """Whether one criterion finds one needle: the hit, and without a control hit when
    there is a control; None when either is unknown (an unreadable judge answer)."""
    if hit is None or (has_control and control is None):
        return None
    return int(bool(hit) and not (has_control and control))


def _share(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def criteria_table(
    needles: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Per type and criterion: hit rate, control false-positive rate and share found
    (Table 5 plus the control).

    Args:
        needles: ``{"type": ..., "hits": {criterion: 0/1/None}, "control": {criterion:
            0/1/None} or None}`` per needle (``control`` absent or None: no control run);
            None values are left out of that criterion's shares.

    Returns:
        ``{type: {"_count": needles, criterion: {"share": hit rate, "n": needles with a
        known hit, "control": control false-positive rate or None, "control_n": ...,
        "found": share found, "found_n": ...}}}``, types sorted; rates are None where no
        needle has a known value.
    """
    hits: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    controls: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    founds: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, int] = defaultdict(int)
    for row in needles:
        kind = row["type"]
        counts[kind] += 1
        control = row.get("control")
        for criterion in CRITERIA:
            hit = row["hits"].get(criterion)
            ctrl = control.get(criterion) if control is not None else None
            if hit is not None:
                hits[kind][criterion].append(int(hit))
            if ctrl is not None:
                controls[kind][criterion].append(int(ctrl))
            got = found(hit, ctrl, control is not None)
            if got is not None:
                founds[kind][criterion].append(got)
    table: dict[str, dict[str, Any]] = {}
    for kind in sorted(counts):
        entry: dict[str, Any] = {"_count": counts[kind]}
        for criterion in CRITERIA:
            h, c, f = hits[kind][criterion], controls[kind][criterion], founds[kind][criterion]
            entry[criterion] = {
                "share": _share(h), "n": len(h), "control": _share(c), "control_n": len(c),
                "found": _share(f), "found_n": len(f),
            }  # fmt: skip
        table[kind] = entry
    return table


def minea_scores(
    table: Mapping[str, Mapping[str, Any]], max_control_fp: float = MAX_CONTROL_FP
) -> dict[str, Any]:
    """MINEA per type and overall, with and without the ``llm`` criterion.

    Args:
        table: :func:`criteria_table`'s result.
        max_control_fp: the largest control false-positive rate a criterion may have to be
            used for a type (``minea.max_control_fp``; ignored for criteria without a
            control rate).

    Returns:
        ``{"per_type": {type: {"minea", "criterion", "needles", "excluded"}},
        "per_type_no_llm": {...}, "overall": float | None, "overall_no_llm": float | None,
        "needles": int}``; ``criterion`` is the best remaining criterion (None when none
        remains, ``minea`` then 0), ``excluded`` the criteria over the control threshold.
        Overall values are None without needles.
    """

    def best_of(criteria: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for kind, entry in table.items():
            measured = [c for c in criteria if entry[c]["found"] is not None]
            excluded = [
                c for c in measured
                if entry[c]["control"] is not None and entry[c]["control"] > max_control_fp
            ]  # fmt: skip
            usable = [(entry[c]["found"], c) for c in measured if c not in excluded]
            best, criterion = max(usable, key=lambda pair: pair[0]) if usable else (0.0, None)
            out[kind] = {
                "minea": best, "criterion": criterion, "needles": entry["_count"],
                "excluded": excluded,
            }  # fmt: skip
        return out

    def weighted(per_type: Mapping[str, Mapping[str, Any]]) -> float | None:
        total = sum(v["needles"] for v in per_type.values())
        return sum(v["minea"] * v["needles"] for v in per_type.values()) / total if total else None

    per_type = best_of(CRITERIA)
    no_llm = best_of([c for c in CRITERIA if c != "llm"])
    return {
        "per_type": per_type,
        "per_type_no_llm": no_llm,
        "overall": weighted(per_type),
        "overall_no_llm": weighted(no_llm),
        "needles": sum(v["needles"] for v in per_type.values()),
    }
