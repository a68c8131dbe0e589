"""Table QA: HTML normalisation, synthetic tables, question uniqueness, metrics, heatmaps."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from extractbench.suites.tableqa import synthetic
from extractbench.suites.tableqa.html import HTMLTableError, html_to_table
from extractbench.suites.tableqa.metrics import (
    contains,
    exact_match,
    exact_match_normalized,
    normalize_answer,
)
from extractbench.suites.tableqa.prompts import SYSTEM_PROMPTS, build_prompt
from extractbench.suites.tableqa.questions import Question, sample_questions, valid_pairs
from extractbench.suites.tableqa.report import heatmap_w_d, heatmap_w_r, results_table
from extractbench.suites.tableqa.tables import Table, to_markdown

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_rowspan_and_colspan_are_split_with_text_duplicated():
    html = """<table>
      <tr><th>A</th><th>B</th><th>C</th></tr>
      <tr><td rowspan="2">x</td><td colspan="2">wide</td></tr>
      <tr><td>y</td><td rowspan="2">z</td></tr>
      <tr><td>p</td><td>q</td></tr>
    </table>"""
    table = html_to_table(html, "t")
    assert table.header == ("A", "B", "C")
    assert table.rows == (("x", "wide", "wide"), ("x", "y", "z"), ("p", "q", "z"))


@pytest.mark.parametrize(
    ("rowspan", "colspan", "header"),
    [
        ('"2;"', '"2;"', ("Rank", "Result/Time", "Result/Points", "Note")),  # 204-csv/719
        ('" +2"', '"2px"', ("Rank", "Result/Time", "Result/Points", "Note")),
        ('"x"', '"2"', ("Rank/Time", "Result/Points", "Result", "Note")),  # no digits: 1
    ],
)
def test_span_attributes_are_read_as_browsers_read_them(rowspan, colspan, header):
    """The HTML standard's rules for parsing non-negative integers: leading whitespace and
    '+', then the leading digits, whatever follows."""
    html = f"""<table>
      <tr><th rowspan={rowspan}>Rank</th><th colspan={colspan}>Result</th><th rowspan={rowspan}>Note</th></tr>
      <tr><th>Time</th><th>Points</th></tr>
      <tr><th>1</th><td>5h</td><td>40</td><td>a</td></tr>
    </table>"""
    assert html_to_table(html, "t").header[: len(header)] == header


def test_two_level_header_is_joined_with_slash():
    html = """<table>
      <tr><th rowspan="2">Rank</th><th colspan="2">Result</th><th rowspan="2">Note</th></tr>
      <tr><th>Time</th><th>Points</th></tr>
      <tr><th>1</th><td>5h</td><td>40</td><td>a</td></tr>
    </table>"""
    table = html_to_table(html, "t")
    assert table.header == ("Rank", "Result/Time", "Result/Points", "Note")
    assert table.rows == (("1", "5h", "40", "a"),)  # a <th> row label is data, not header


def test_cell_markup_and_whitespace_are_flattened_and_short_rows_padded():
    html = "<table><tr><th>Name</th><th>Team<br/>Points</th></tr><tr><td><b>Al</b>\n <a href='#'>Bo</a></td></tr></table>"
    table = html_to_table(html, "t")
    assert table.header == ("Name", "Team Points")
    assert table.rows == (("Al Bo", ""),)


def test_html_without_table_is_an_error():
    with pytest.raises(HTMLTableError):
        html_to_table("<p>no table</p>", "t")


def test_markdown_escapes_pipes_and_keeps_one_line_per_row():
    md = to_markdown(Table("t", ("a|b", "c"), (("1\n2", "x"),)))
    assert md.splitlines() == ["| a\\|b | c |", "|---|---|", "| 1 2 | x |"]


@pytest.mark.parametrize("subset", synthetic.SUBSETS)
def test_synthetic_tables_are_deterministic_unique_and_well_headed(subset):
    a = synthetic.generate(subset, 7, 20, seed=3, name="t")
    assert a == synthetic.generate(subset, 7, 20, seed=3, name="t")
    assert a != synthetic.generate(subset, 7, 20, seed=4, name="t")
    values = [v for row in a.rows for v in row]
    assert len(values) == 140 and len(set(values)) == 140
    if subset in ("syn2", "syn4", "syn5"):
        assert a.header == tuple("ABCDEFG")
    if subset in ("syn2", "syn3"):
        assert all(re.fullmatch(r"#[0-9A-F]{6}", v) for v in values)
    if subset == "syn3":
        assert len(set(a.header)) == 7 and not set(a.header) & set("ABCDEFG")
    if subset == "syn1":
        kinds = {h for h, _ in synthetic._HETEROGENEOUS}
        assert set(a.header) <= kinds and len(set(a.header)) == 7
    if subset in ("syn4", "syn5"):
        digits = 6 if subset == "syn4" else 15
        for v in values:
            mantissa = v.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
            assert len(mantissa) <= digits
            assert np.float32(float(v)) == np.float32(float(v))  # a float32-representable value
        assert max(len(v.lstrip("-").replace(".", "").lstrip("0")) for v in values) == digits


def test_synthetic_rejects_bad_sizes():
    with pytest.raises(ValueError):
        synthetic.generate("syn1", 21, 3, 0, "t")
    with pytest.raises(ValueError):
        synthetic.generate("syn9", 3, 3, 0, "t")


def _assert_one_answer(table: Table, qu) -> None:
    matches = [r for r in table.rows if r[qu.q] == qu.value]
    assert len(matches) == 1, f"{table.name}: {qu} has {len(matches)} rows with X"
    assert matches[0][qu.t] == qu.answer
    assert table.column(qu.t).count(qu.answer) == 1
    assert table.rows[qu.row - 1][qu.q] == qu.value


def test_every_question_on_duplicate_heavy_tables_has_exactly_one_answer():
    table = Table(
        "dup",
        ("A", "B", "C", "B2"),
        (("1", "x", "p", "k"), ("1", "y", "p", "k"), ("2", "x", "q", "m"), ("3", "z", "r", "")),
    )
    qs = sample_questions([table], per_cell=50, seed=0)
    assert qs, "some questions are valid"
    for qu in qs:
        _assert_one_answer(table, qu)
    # brute force over every (t, q, r): valid_pairs is exactly the set of unique-answer questions
    for row in range(1, table.height + 1):
        expected = {
            (t, q)
            for t in range(4)
            for q in range(4)
            if t != q
            and table.rows[row - 1][q]
            and table.rows[row - 1][t]
            and table.column(q).count(table.rows[row - 1][q]) == 1
            and table.column(t).count(table.rows[row - 1][t]) == 1
        }
        assert set(valid_pairs(table, row)) == expected


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "tableqa").is_dir(), reason="no ../shared/data/tableqa")
def test_every_generated_question_has_exactly_one_answer_brute_force():
    from extractbench.suites.tableqa.items import DEFAULTS
    from extractbench.suites.tableqa.subsets import LOOKUP_SUBSETS, subset_questions

    total = 0
    for subset in LOOKUP_SUBSETS:
        built = subset_questions(subset, DATA, DEFAULTS)
        by_name = {t.name: t for t in built.tables}
        for i, qu in enumerate(built.questions):
            if subset == "wiki":
                _assert_one_answer(by_name[qu.table], qu)
            elif i % 40 == 0:  # 240 of each subset's 9,600 tables, regenerated
                spec = built.specs[qu.table]
                table = synthetic.generate(subset, spec.width, spec.height, spec.seed, qu.table)
                assert (
                    table.header == spec.header and len(to_markdown(table)) == spec.markdown_chars
                )
                _assert_one_answer(table, qu)
            assert 2 <= qu.width <= 16 and 1 <= qu.row <= 64
            assert 0 < abs(qu.distance) <= qu.width - 1
        total += len(built.questions)
    assert total > 50000


@pytest.mark.parametrize("subset", synthetic.SUBSETS)
def test_every_synthetic_cell_draws_its_questions_from_distinct_tables(subset):
    from collections import defaultdict

    from extractbench.suites.tableqa.items import DEFAULTS
    from extractbench.suites.tableqa.subsets import subset_questions

    built = subset_questions(subset, DATA, DEFAULTS)
    cells: dict[tuple[int, int], list] = defaultdict(list)
    for qu in built.questions:
        cells[(qu.width, qu.row)].append(qu)
    assert set(cells) == {(w, r) for w in range(2, 17) for r in range(1, 65)}
    for (width, row), questions in cells.items():
        assert len(questions) == 10, (width, row)  # W = 2 and 3 too
        assert len({qu.table for qu in questions}) == 10
        for qu in questions:
            spec = built.specs[qu.table]
            assert spec.width == width and row <= spec.height <= 64
    assert len(built.specs) == 9600
    first_row = [built.specs[qu.table].height for qu in built.questions if qu.row == 1]
    assert len(set(first_row)) >= 40  # heights drawn from [1, 64] for the cells of row 1
    distances = {qu.distance for qu in built.questions if qu.width == 16}
    assert distances == set(range(-15, 16)) - {0}


def test_a_synthetic_prompt_is_built_when_read_and_checked_against_its_length():
    from extractbench.suites.item import DataError, LazyText
    from extractbench.suites.tableqa.items import DEFAULTS, _lookup_items
    from extractbench.suites.tableqa.prompts import prompt_prefix
    from extractbench.suites.tableqa.subsets import subset_questions

    built = subset_questions("syn2", DATA, DEFAULTS)
    items = _lookup_items("syn2", built, DEFAULTS)
    item = items[1234]
    assert isinstance(item.prefix, LazyText)
    spec = built.specs[item.meta["table"]]
    table = synthetic.generate("syn2", spec.width, spec.height, spec.seed, item.meta["table"])
    assert item.prompt == prompt_prefix(to_markdown(table)) + item.suffix
    assert item.prompt_chars == len(item.prompt) and item.meta["height"] == table.height
    from extractbench.suites.tableqa.items import _synthetic_prefix

    other = spec._replace(markdown_sha256="0" * 64)
    with pytest.raises(DataError, match="regenerated differently from when its question"):
        _synthetic_prefix("syn2", other, item.meta["table"], "en")
    wrong = LazyText(lambda: "abc", 4, "t prompt")
    with pytest.raises(DataError, match="t prompt: rebuilt with 3 characters, 4 when"):
        str(wrong)


def test_sampling_caps_cells_spreads_distances_and_is_seeded():
    tables = [synthetic.generate("syn2", w, 10, 0, f"w{w}") for w in (3, 8)]
    qs = sample_questions(tables, per_cell=10, seed=1)
    cells: dict[tuple[int, int], list] = {}
    for qu in qs:
        cells.setdefault((qu.width, qu.row), []).append(qu)
    assert all(len(v) == (6 if w == 3 else 10) for (w, _), v in cells.items())
    assert len(cells) == 20
    distances = {qu.distance for qu in qs if qu.width == 8}
    assert distances <= set(range(-7, 8)) - {0} and len(distances) >= 10
    assert qs == sample_questions(tables, per_cell=10, seed=1)
    assert qs != sample_questions(tables, per_cell=10, seed=2)


def test_question_text_and_prompt_follow_the_article():
    qu = Question("t", 1, 0, 1, "Leslie Kerhove", "Hard", 2)
    assert (
        qu.text(("Surface", "Opponent in the final"))
        == "What is the Surface if the Opponent in the final is Leslie Kerhove?"
    )
    assert (
        qu.text(("Покрытие", "Соперница в финале"), "ru")
        == "Какой Покрытие, если Соперница в финале — Leslie Kerhove?"
    )
    prompt = build_prompt("| a |", "Q?", "ru")
    assert prompt == SYSTEM_PROMPTS["ru"] + "\n\n-----\n\n| a |\n\n-----\n\nQ?"


@pytest.mark.parametrize(
    ("prediction", "answer", "strict", "em", "cont"),
    [
        (" Hard", "Hard", 1, 1, 1),
        ("«hard».", "Hard", 0, 1, 1),
        ('"Hard."\nbecause', "Hard", 0, 1, 1),
        ("The answer is Hard.", "Hard", 0, 0, 1),
        ("#a0ffff", "#A0FFFF", 0, 1, 1),
        ("#A0FFFF", "#A0FFFF", 1, 1, 1),
        ("12.5", "12.50", 0, 0, 0),
        ("", "x", 0, 0, 0),
        ("\n\n  Clay", "Clay", 1, 1, 1),
        ("Clay.", "Clay", 0, 1, 1),
    ],
)
def test_exact_match_strict_normalized_and_contains(prediction, answer, strict, em, cont):
    assert exact_match(prediction, answer) == strict
    assert exact_match_normalized(prediction, answer) == em
    assert contains(prediction, answer) == cont


def test_normalisation_is_documented_order():
    assert normalize_answer("  'A  b'. ") == "a b"


def _rec(subset, width, row, d, score):
    return {
        "suite": "tableqa",
        "scores": {"exact_match": score},
        "meta": {"subset": subset, "width": width, "row": row, "distance": d},
    }


def test_heatmaps_fold_distance_as_the_article_describes():
    items = [
        _rec("syn2", 5, 3, +2, 1.0),
        _rec("syn2", 5, 3, +2, 0.0),
        _rec("syn2", 5, 1, -3, 1.0),
        _rec("wiki", 5, 1, -3, 0.0),
    ]
    acc, n = heatmap_w_d(items, "syn2")
    assert n[2, 5] == 2 and acc[2, 5] == 0.5  # above the diagonal: i = d, j = W
    assert n[5, 3] == 1 and acc[5, 3] == 1.0  # below: i = W, j = -d
    assert n.sum() == 3 and np.isnan(acc[3, 3])
    acc_r, n_r = heatmap_w_r(items, "syn2")
    assert n_r[5, 3] == 2 and n_r[5, 1] == 1 and acc_r[5, 1] == 1.0


def test_heatmap_axes_span_the_tables_own_shape(tmp_path):
    """One user table of width 5 with six rows asked about is a 1 x 6 map (W 5, r 1..6),
    not the article's 16 x 64 grid of blank cells; the folded map spans 1..max(W, |q - t|)."""
    from PIL import Image

    from extractbench.suites.tableqa.report import _extent, write_artifacts

    items = [_rec("user", 5, r, (-1) ** r * (1 + r % 3), float(r % 2)) for r in range(1, 7)]
    _, n_r = heatmap_w_r(items, "user")
    assert _extent(n_r, square=False) == (range(5, 6), range(1, 7))
    _, n_d = heatmap_w_d(items, "user")
    assert _extent(n_d, square=True) == (range(1, 6), range(1, 6))
    record = {"items": items, "model": {"name": "m"}, "suites": {}}
    paths = write_artifacts(record, "tableqa", tmp_path, "run")
    (w_r,) = [p for p in paths if p.name == "run-tableqa-user-w_r.png"]
    width, height = Image.open(w_r).size
    assert width < 800 and height < 400, (width, height)  # a 16 x 64 grid: 2300 x 700
    wide = [_rec("syn1", w, r, 1, 1.0) for w in range(2, 17) for r in (1, 64)]
    assert _extent(heatmap_w_r(wide, "syn1")[1], square=False) == (range(2, 17), range(1, 65))


def test_results_table_averages_subsets_unweighted():
    items = [_rec("wiki", 3, 1, 1, 1.0)] + [_rec("syn1", 3, 1, 1, s) for s in (0.0, 0.0, 0.0, 1.0)]
    table = results_table(items)
    assert (
        table["subsets"]["wiki"]["accuracy_pct"] == 100
        and table["subsets"]["syn1"]["accuracy_pct"] == 25
    )
    assert table["average_pct"] == 62.5


@pytest.mark.parametrize(
    ("cell", "text"),
    [
        ("<td><a href='/p'>Paris</a>, France</td>", "Paris, France"),
        (
            "<td>Academy Awards, 1972<sup>[20]</sup><sup>[21]</sup></td>",
            "Academy Awards, 1972[20][21]",
        ),
        ("<td>UCI ProTour<br/>\nPoints</td>", "UCI ProTour Points"),
        ("<td>A<br>B</td>", "A B"),
        (
            '<td><span class="sortkey">Buchanan, James</span><a>James Buchanan</a></td>',
            "James Buchanan",
        ),
        (
            '<td><span style="display:none">01909-03-04-0000</span>March 4, 1909</td>',
            "March 4, 1909",
        ),
        ("<td>  two   words\n</td>", "two words"),
    ],
)
def test_cell_text_is_the_visible_text_without_inserted_separators(cell, text):
    table = html_to_table(f"<table><tr><th>h</th></tr><tr>{cell}</tr></table>", "t")
    assert table.rows[0][0] == text


@pytest.mark.skipif(not (DATA / "tableqa").is_dir(), reason="no ../shared/data/tableqa")
def test_wiki_cell_text_agrees_with_the_wtq_csv_and_has_no_tag_boundary_spaces():
    from extractbench.suites.tableqa.wiki import WTQ_DIR, wiki_tables
    from extractbench.suites.tableqa.wtq_csv import aligned_cells, csv_agreement

    tables = wiki_tables(DATA)
    assert len(tables) == 396
    agreement = csv_agreement(tables, DATA / WTQ_DIR)
    assert agreement["tables_same_shape"] >= 300
    share = agreement["cells_equal"] / agreement["cells_compared"]
    explained = (
        share + agreement["cells_differing_by_footnote_markers"] / agreement["cells_compared"]
    )
    assert share >= 0.98 and explained >= 0.995, agreement
    spaced = [
        (table.name, ours, theirs)
        for table, ours, theirs in aligned_cells(tables, DATA / WTQ_DIR)
        for gap in (" ,", "[ ", " ]", " .", " )")
        if gap in ours and gap not in theirs
    ]
    assert spaced == []


def test_only_one_merged_cell_is_dropped_and_every_filter_is_counted():
    from extractbench.suites.tableqa.questions import FILTERS, filter_counts, pair_filters

    html = """<table>
      <tr><th>Team</th><th>Alias</th><th>City</th><th></th></tr>
      <tr><td colspan="2">Reds</td><td>Rome</td><td>x</td></tr>
      <tr><td>Blues</td><td>B</td><td></td><td>y</td></tr>
      <tr><td>Greens</td><td>Greens</td><td>Oslo</td><td>z</td></tr>
    </table>"""
    table = html_to_table(html, "t")
    assert table.rows[0][:2] == ("Reds", "Reds") and table.merged == ((1, (0, 1)),)
    assert table.one_cell(1, 0, 1) and not table.one_cell(3, 0, 1)
    row1 = pair_filters(table, 1)
    assert row1[(0, 1)] == row1[(1, 0)] == "one_merged_cell"  # one cell split by colspan
    assert row1[(0, 3)] == "header_empty_or_duplicate"
    assert row1[(0, 2)] is None
    assert pair_filters(table, 2)[(0, 2)] == "value_or_answer_empty"
    row3 = pair_filters(table, 3)
    assert row3[(0, 1)] is None and row3[(1, 0)] is None  # two cells with equal text: kept
    assert (0, 1) not in valid_pairs(table, 1) and (0, 1) in valid_pairs(table, 3)
    counts = filter_counts([table])
    assert counts["candidates"] == 3 * 4 * 3
    assert counts["one_merged_cell"] == 2 and counts["tables_with_drops"]["one_merged_cell"] == 1
    assert counts["questions_value_equals_answer"] == 2
    assert counts["tables_with_questions_value_equals_answer"] == 1
    assert counts["questions"] + sum(counts[k] for k in FILTERS) == counts["candidates"]
    questions = sample_questions([table], per_cell=10, seed=0)
    assert all(not table.one_cell(q.row, q.t, q.q) for q in questions)
    assert {(q.row, q.t, q.q) for q in questions} >= {(3, 0, 1), (3, 1, 0)}


def test_a_cell_spanning_rows_and_columns_is_one_cell_in_every_row_it_covers():
    html = """<table>
      <tr><th>A</th><th>B</th><th>C</th></tr>
      <tr><td rowspan="2" colspan="2">w</td><td>1</td></tr>
      <tr><td>2</td></tr>
      <tr><td>w</td><td>w</td><td>3</td></tr>
    </table>"""
    table = html_to_table(html, "t")
    assert table.rows == (("w", "w", "1"), ("w", "w", "2"), ("w", "w", "3"))
    assert table.one_cell(1, 0, 1) and table.one_cell(2, 1, 0) and not table.one_cell(3, 0, 1)
    assert not table.one_cell(1, 0, 2)


@pytest.mark.skipif(not (DATA / "tableqa").is_dir(), reason="no ../shared/data/tableqa")
def test_wiki_keeps_equal_text_in_different_cells_as_the_article_does():
    from extractbench.suites.tableqa.questions import pair_filters
    from extractbench.suites.tableqa.wiki import wiki_tables

    table = next(t for t in wiki_tables(DATA) if t.name == "201-csv/0")
    t, q = (
        table.header.index("Peak chart positions/GER"),
        table.header.index("Peak chart positions/AUT"),
    )
    question = Question("201-csv/0", 1, t, q, "1", "1", table.width)
    assert table.rows[0][t] == table.rows[0][q] == "1"
    assert pair_filters(table, 1)[(t, q)] is None
    assert question.text(table.header) == (
        "What is the Peak chart positions/GER if the Peak chart positions/AUT is 1?"
    )


def test_the_results_table_follows_tableqa_match():
    from extractbench.suites.tableqa.report import headline_metric, summary_lines

    items = [
        {"suite": "tableqa", "status": "passed",
         "meta": {"subset": "wiki", "width": 2, "row": 1, "distance": 1},
         "scores": {"exact_match": 0.0, "exact_match_normalized": 1.0}}
        for i in range(4)
    ]  # fmt: skip
    record = {"items": items, "suites": {"tableqa": {"notes": {"options": {"match": "strict"}}}}}
    assert headline_metric(record, "tableqa") == "exact_match"
    assert "0.0" in summary_lines(record, "tableqa")[2]
    record["suites"]["tableqa"]["notes"]["options"]["match"] = "normalized"
    assert headline_metric(record, "tableqa") == "exact_match_normalized"
    lines = summary_lines(record, "tableqa")
    assert "exact_match_normalized" in lines[0] and "100.0" in lines[2]


def test_synthetic_dates_and_times_do_not_depend_on_today():
    # Faker draws dates up to "now" by default, which changed the tables from day to day
    dates = synthetic._pool("Date")
    assert len(dates) > 500 and max(dates) <= "2024-12-31"


@pytest.mark.skipif(not (DATA / "tableqa").is_dir(), reason="no ../shared/data/tableqa")
def test_the_run_record_notes_carry_every_deviation_the_readme_lists():
    from extractbench.suites.strucbench.items import load_items as strucbench_items
    from extractbench.suites.tableqa.items import load_items

    tableqa = load_items(DATA).notes
    for key in ("missing_subsets", "synthetic_tables", "wiki_tables", "answer_cue", "match",
                "wiki_cell_text", "wiki_cell_text_vs_wtq_csv", "question_filters"):  # fmt: skip
        assert tableqa[key], key
    wiki = tableqa["question_filters"]["wiki"]
    assert wiki["one_merged_cell"] > 0 and wiki["questions_value_equals_answer"] > 0
    assert set(tableqa["question_filter_rules"]) == set(wiki["tables_with_drops"])
    strucbench = strucbench_items(DATA).notes
    for key in ("data", "inputs", "budget", "hscore", "bertscore", "tables_rejected"):
        assert strucbench[key], key
    assert strucbench["hscore"]["mode"] == "reference" and "h_*" in strucbench["hscore"]
