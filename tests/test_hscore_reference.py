"""Struc-Bench H-Score: the scripts' values reproduced (reference) and each correction shown.

The 735 reference pairs were scored by the Struc-Bench repository's own functions
(../shared/data/SOURCES.md section 2); every component must match to 1e-9 by its name.
Each entry of ``CORRECTIONS`` has one pair where the corrected scorer and the reference
give different values for the term that correction is about.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from extractbench.suites.item import DataError
from extractbench.suites.strucbench import render
from extractbench.suites.strucbench.hscore import CORRECTIONS, hscore
from extractbench.suites.strucbench.hscore_reference import COMPONENTS, reference_hscore
from extractbench.suites.strucbench.metrics import table_metrics
from extractbench.suites.strucbench.similarity import difflib_similarity, levenshtein_similarity
from extractbench.suites.strucbench.suite import SUITE as STRUCBENCH

PAIRS = Path(__file__).resolve().parents[2] / "shared/data/strucbench/hscore_reference_pairs.jsonl"

TABLE = render.GoldTable(
    ["Model", "Acc", "F1"],
    [["[BOLD] Ours", "91.2", "50"], ["Base", "88.0", "47"], ["Rule", "70.5", "31"]],
    caption="Table 1: Results",
)
RAW, HTML, LATEX = render.to_markdown(TABLE), render.to_html(TABLE), render.to_latex(TABLE)
RAW2 = RAW.replace("| Ours |", "| Our model |")


@pytest.mark.skipif(not PAIRS.is_file(), reason="../shared/data/strucbench not present")
def test_reference_mode_equals_every_value_of_the_struc_bench_scripts():
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 735
    compared = 0
    for row in rows:
        h = reference_hscore(row["format"], row["prediction"], row["gold"])
        names = {n for group in COMPONENTS[row["format"]].values() for n in group}
        assert set(row["components"]) == names == set(h.components), row["item"]
        for name, value in row["components"].items():
            assert h.components[name] == pytest.approx(value, abs=1e-9), (row["kind"], name)
            compared += 1
        assert h.content == pytest.approx(row["content"], abs=1e-9)
        assert h.structure == pytest.approx(row["structure"], abs=1e-9)
        assert h.unscorable is None
    assert compared == sum(len(r["components"]) for r in rows) > 4000


def _both(fmt: str, pred: str, gold: str) -> tuple[dict[str, float], dict[str, float]]:
    return reference_hscore(fmt, pred, gold).components, hscore(fmt, pred, gold).parts


# correction -> (format, prediction, gold, reference term, corrected term, reference value,
# corrected value); the values are worked out by hand from the definitions.
CASES = {
    # 3 header + 9 data cells in the gold; the prediction repeats the data rows 4 times:
    # 27 insertions over 2 * 9 -> 1 - 27/18 = -0.5.
    "levenshtein_clamped": ("raw", RAW + ("\n" + "\n".join(RAW.splitlines()[2:])) * 3, RAW,
                            "data_levenshtein_score", "data_lev", -0.5, 0.0),
    "no_table_scores_zero": ("raw", "I cannot make this table.", RAW,
                             "data_levenshtein_score", None, 0.5, 0.0),
    "empty_equals_empty": ("raw", "| a | b |\n|---|---|", "| a | b |\n|---|---|",
                           "data_levenshtein_score", "data_lev", 0.0, 1.0),
    # a prose line inside the table becomes a one-cell row in the scripts: 5 rows, not 4
    "raw_table_lines": ("raw", RAW.replace("\n| Base", "\nand then:\n| Base"), RAW,
                        "num_rows_match", "rows_match", 0.0, 1.0),
    "raw_alignment_rows": ("raw", RAW.replace("|---|---|---|", "|:---|:---:|---:|"), RAW,
                           "num_rows_match", "rows_match", 0.0, 1.0),
    "raw_outer_pipes": ("raw", RAW.replace("| Base | 88.0 | 47 |", "Base | 88.0 | 47"), RAW,
                        "num_cols_match", "cols_match", 0.0, 1.0),
    # one of 9 data cells differs: one substitution over 2 * 9
    "raw_cell_whitespace": ("raw", RAW2.replace("Our model", "Our  model"), RAW2,
                            "data_levenshtein_score", "data_lev", 1 - 1 / 18, 1.0),
    "html_first_table": ("html", f"<div><p>Here it is:</p>{HTML}</div>", HTML,
                         "struct_difflib_score", "tags_difflib", None, 1.0),
    # one of 12 cells differs
    "html_cell_text": ("html", HTML.replace(">91.2<", ">\n 91.2 <"), HTML,
                       "cells_text_levenshtein_score", "cells_lev", 1 - 1 / 24, 1.0),
    "latex_alignment": ("latex", LATEX.replace("{lrr}", "{lll}"), LATEX,
                        "alignment_levenshtein_score", "alignment_lev", 0.0, 1 - 2 / 6),
    # the scripts drop the bold cell of the gold (a \textbf group): 11 cells, the
    # prediction's 12: one insertion over 2 * 11
    "latex_cell_text": ("latex", LATEX.replace("\\textbf{Ours}", "Ours"), LATEX,
                        "data_levenshtein_score", "data_lev", 1 - 1 / 22, 1.0),
    "latex_tabular_star": ("latex", LATEX.replace("{tabular}{lrr}", "{tabular*}{\\linewidth}{lrr}")
                           .replace("{tabular}", "{tabular*}"), LATEX,
                           "data_levenshtein_score", "data_lev", 0.5, 1.0),
    "latex_caption": ("latex", LATEX.replace("Table 1: Results", "Table 1:  Results"), LATEX,
                      "caption_match_score", "caption_match", 0.0, 1.0),
}  # fmt: skip


def test_every_correction_has_a_case_and_a_reason():
    assert set(CASES) | {"difflib_autojunk_off"} == set(CORRECTIONS)
    page = Path(__file__).resolve().parents[1] / "docs" / "suites" / "strucbench.md"
    text = page.read_text(encoding="utf-8")
    missing = [name for name in CORRECTIONS if f"`{name}`" not in text]
    assert missing == [], "docs/suites/strucbench.md's H-Score section must list every correction"


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_correction_changes_the_score_of_its_pair(name):
    fmt, pred, gold, ref_term, ours_term, ref_value, ours_value = CASES[name]
    assert pred != gold or name == "empty_equals_empty"
    ref, ours = _both(fmt, pred, gold)
    if ref_value is not None:
        assert ref[ref_term] == pytest.approx(ref_value), (name, ref)
    if ours_term is None:  # no table: every term is 0
        assert ours == {} and hscore(fmt, pred, gold).content == ours_value
    else:
        assert ours[ours_term] == pytest.approx(ours_value), (name, ours)
        assert ref[ref_term] != pytest.approx(ours[ours_term])


def test_latex_alignment_is_read_only_by_the_corrected_scorer():
    pred = LATEX.replace("{lrr}", "{lll}")
    ref, ours = _both("latex", pred, LATEX)
    same_ref, same_ours = _both("latex", LATEX, LATEX)
    assert (ref["alignment_levenshtein_score"], ref["alignment_difflib_score"]) == (0.0, 1.0)
    assert ref == same_ref  # the scripts cannot see the change
    assert ours["alignment_lev"] < same_ours["alignment_lev"] == 1.0


def test_latex_bold_cells_vanish_in_the_scripts_but_not_in_the_corrected_scorer():
    assert "\\textbf{Ours}" in LATEX
    pred = LATEX.replace("\\textbf{Ours}", "Ours")
    ref, ours = _both("latex", pred, LATEX)
    assert ref["data_levenshtein_score"] < 1.0 and ref["num_cols_match"] == 1.0
    assert ours["data_lev"] == 1.0


def test_difflib_autojunk_off_is_the_one_difference_of_the_difflib_term():
    # 150 cells of one row, the prediction opens with one more tag: with autojunk on, <td>
    # and </td> (each over 1% of 200+ items) are junk and nothing is matched
    gold = ["<td>", "</td>"] * 150
    pred = ["<tr>", *gold]
    assert difflib_similarity(pred, gold, reference=True) == 0.0
    assert difflib_similarity(pred, gold) == pytest.approx(2 * 300 / 601)
    short_gold, short_pred = gold[:50], pred[:51]  # under 200 items autojunk does nothing
    assert difflib_similarity(short_pred, short_gold, reference=True) == difflib_similarity(
        short_pred, short_gold
    )


def test_levenshtein_reference_is_unclamped_and_zero_for_an_empty_gold():
    gold, long_pred = ["a", "b"], ["a", "b", "c", "d", "e", "f", "g"]
    assert levenshtein_similarity(long_pred, gold, reference=True) == 1 - 5 / 4
    assert levenshtein_similarity(long_pred, gold) == 0.0
    assert levenshtein_similarity([], [], reference=True) == 0.0
    assert levenshtein_similarity([], []) == 1.0
    assert (
        levenshtein_similarity([], gold, reference=True) == 0.5 == levenshtein_similarity([], gold)
    )


def test_a_list_answered_for_a_table_is_no_table_in_both_scorers():
    pred = "<ul>" + "".join(f"<li>{c}</li>" for c in TABLE.header) + "</ul>"
    corrected = hscore("html", pred, HTML)
    assert corrected.parse_error and corrected.content == corrected.structure == 0.0
    ref = reference_hscore("html", pred, HTML).components
    assert ref["cells_text_levenshtein_score"] == 0.5 and ref["cells_text_difflib_score"] == 0.0


def test_modes_record_their_own_metric_names():
    pred = RAW.replace("88.0", "88")
    keys = {
        m: set(table_metrics("raw", pred, RAW, m).scores)
        for m in ("reference", "corrected", "both")
    }
    assert {"h_content", "h_structure_norm"} <= keys["reference"]
    assert not any(k.endswith("_corrected") for k in keys["reference"])
    assert {"h_content_corrected", "h_structure_norm_corrected"} <= keys["corrected"]
    assert "h_content" not in keys["corrected"]
    assert keys["both"] == keys["reference"] | keys["corrected"]
    both = table_metrics("raw", pred, RAW, "both")
    assert both.scores["h_content"] == reference_hscore("raw", pred, RAW).content
    assert both.scores["h_content_corrected"] == hscore("raw", pred, RAW).content
    with pytest.raises(ValueError, match="one of reference, corrected, both"):
        table_metrics("raw", pred, RAW, "paper")


def test_the_default_is_reference_and_a_wrong_mode_is_one_line():
    assert STRUCBENCH.parse_options({}).hscore == "reference"
    with pytest.raises(
        DataError, match=r"strucbench.hscore=paper: must be one of reference, corrected, both"
    ):
        STRUCBENCH.parse_options({"hscore": "paper"})


def nested(depth: int) -> str:
    return "<div>" * depth + "x" + "</div>" * depth


def test_an_exploding_html_structure_is_scored_as_an_empty_prediction_with_the_reason():
    # the scripts' sequence for n nested tags holds 2^(n+1) - 2 tags: 18 levels are
    # 524,286 (scored), 19 are 1,048,574 (over MAX_STRUCTURE_TAGS)
    assert reference_hscore("html", nested(18), HTML).unscorable is None
    h = reference_hscore("html", nested(19), HTML)
    empty = reference_hscore("html", "", HTML)
    assert h.unscorable and "1.05e+06 tags" in h.unscorable
    assert (h.content, h.structure) == (empty.content, empty.structure)
    deep = reference_hscore("html", nested(5000), HTML)  # past Python's recursion limit
    assert deep.unscorable and math.isfinite(deep.content)
