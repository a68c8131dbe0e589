"""The HTML page and the side files of a run: from a synthetic record (the suites' own
declarations of scale and judged metrics) and black-box through pytester, with and
without -n 2."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from extractbench.plugins.outputs.metric_facts import metric_facts, scale_of
from extractbench.plugins.outputs.terminal import summary_lines
from extractbench.plugins.outputs.write import Targets, write_outputs
from extractbench.plugins.record import SCHEMA_VERSION, parse_record
from extractbench.plugins.verdict.decision import GateSet
from extractbench.plugins.verdict.gates import parse_gate
from extractbench.suites.protocol import Suite
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import NoOptions
from tests.conftest import read_json

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

# a suite report that draws one picture, as Table QA's heatmaps and MINEA's criteria plot
PICTURE_REPORT = """
from pathlib import Path


def summary_lines(record, suite):
    return [f"{suite}: own table line"]


def write_artifacts(record, suite, folder, stem):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.imshow([[0.0, 1.0], [1.0, 0.5]])
    path = Path(folder) / f"{stem}-{suite}-heatmap.png"
    fig.savefig(path)
    plt.close(fig)
    table = Path(folder) / f"{stem}-{suite}-table.json"
    table.write_text("{}")
    return [path, table]
"""


def _suite(name: str, **kwargs: object) -> Suite:
    def never(*_: object) -> None:
        raise AssertionError("a report never loads or runs a suite")

    return Suite(name, Path("."), "t.py::t", load=never, run=never, options=NoOptions, **kwargs)


def _item(suite: str, n: int, scores: dict, **extra: object) -> dict:
    return {
        "id": f"{suite}/{n}", "suite": suite, "group": f"{suite}/g", "prediction": f"answer {n}",
        "reference": f"gold {n}", "scores": scores, "latency_s": 0.5, "meta": {"k": f"k{n % 6}"},
        "prompt_sha256": "ab" * 32, "prompt_tail": f"question {n}:", "prompt_chars": 900,
        "calls": [{"key": "c", "text": "x", "cached": n % 2 == 0}], **extra,
    }  # fmt: skip


@pytest.fixture
def written(tmp_path, monkeypatch):
    """A record of two suites written with a JSON record and a page: ``judge`` (24 items
    scored, enough for charts) has a 0-1 score, a 0-100 BLEU-like one, a count and a
    self-judged 0-10 one; ``pics`` (4 items: too few for an interval or a chart) draws a
    picture of its own. Items judge/0, judge/19-23 and pics/0 score 0 wherever higher is
    better."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "picture_report.py").write_text(PICTURE_REPORT)
    registry = Registry()
    registry.add(_suite("judge", ranges=(("bleu", 0.0, 100.0), ("p", 0.0, 10.0),
                                         ("error_*", 0.0, float("inf"))), judged=("p",)))  # fmt: skip
    registry.add(_suite("pics", report="picture_report"))
    items = [
        *(_item("judge", n, {"acc": 0.0, "bleu": 0.0, "p": 0.0, "error_rows": 3.0},
                details={"self_judged": True}) for n in (0, *range(19, 24))),
        *(_item("judge", n, {"acc": 1.0, "bleu": 40.0 + n, "p": 10.0, "error_rows": 0.0},
                details={"self_judged": True}) for n in range(1, 19)),
        _item("judge", 24, {}, outcome="failed", error="x.py:1: ModelError: boom"),
        *(_item("pics", n, {"acc": n / 4}) for n in range(4)),
    ]  # fmt: skip
    record = parse_record({
        "schema_version": SCHEMA_VERSION, "run_id": "20261126T120000Z-abcdef",
        "model": {"name": "m", "backend": "fake"}, "items": items, "complete": True,
        "suites": {"judge": {"breakdown": ["k"]}, "pics": {"breakdown": ["k"]}},
        "selection": {"suites": ["judge", "pics"]},
        "counts": {"items": 29, "expected": 29, "scored": 28, "failed": 1},
    })  # fmt: skip
    gates = GateSet((parse_gate("judge/acc>=0.9"),))
    from extractbench import plugins

    verdict = plugins.verdict.decide(record, gates, record.selection)
    out = tmp_path / "out"
    targets = Targets({"record": out / "x.json", "html": out / "x.html"})
    written = write_outputs(record, verdict, targets, registry)
    written.registry = registry  # the re-rendering test reads it with the same suites
    return written, out


def test_side_files_go_to_one_folder_named_after_the_run_and_in_the_record(written):
    result, out = written
    folder = out / "20261126T120000Z-abcdef"
    assert sorted(p.name for p in out.iterdir()) == ["20261126T120000Z-abcdef", "x.html", "x.json"]
    record = read_json(out / "x.json")
    named = {Path(p) for p in record["artifacts"]}
    assert named == set(folder.iterdir()) and len(named) >= 5
    # pics scored 4 items: its table is written, its picture is not drawn (MIN_PLOT_N)
    pics = record["suites"]["pics"]["artifacts"]
    assert any(p.endswith("pics-table.json") for p in pics)
    assert not any(p.endswith(".png") for p in pics)
    assert result.record_path == out / "x.json"


def test_one_chart_per_scale_and_small_breakdowns_in_a_table(written):
    _, out = written
    names = {p.name.split("-abcdef-", 1)[1] for p in (out / "20261126T120000Z-abcdef").iterdir()}
    assert {"metrics-unit.png", "metrics-0-100.png", "metrics-0-10.png",
            "metrics-count.png"} <= names  # fmt: skip
    assert "metrics.png" not in names
    assert not [n for n in names if "-by-" in n]  # levels of 4 items: a table, no chart
    assert "pics-distribution.png" not in names and "judge-distribution.png" in names
    page = (out / "x.html").read_text()
    breakdowns = page.split('id="breakdowns"')[1].split("</details>")[0]
    assert "<td>judge/acc</td><td>k</td><td>k0</td>" in breakdowns


def test_every_picture_is_embedded_gates_first_and_filters_present(written):
    _, out = written
    page = (out / "x.html").read_text()
    pictures = [p for p in (out / "20261126T120000Z-abcdef").iterdir() if p.suffix == ".png"]
    assert page.count("data:image/png;base64,") == len(pictures)
    assert 'alt="pics-heatmap"' not in page  # the suite's own picture, of 4 items: not drawn
    assert page.index('id="verdict"') < page.index('id="gates"') < page.index('id="scores"')
    assert page.index('id="scores"') < page.index('id="plots"') < page.index('id="items"')
    gate = page.split('<tr class="gate">')[1].split("</tr>")[0]
    assert "judge/acc&gt;=0.9" in gate and "FAIL" in gate and "0.7500" in gate  # value, mean
    assert re.search(r'<td class="num">24</td>', gate)  # n
    assert 'href="#items:suite=judge&amp;metric=acc"' in gate
    for control in ("f-failed", "f-zero", "f-suite", "f-metric", "f-text", "f-count"):
        assert f'id="{control}"' in page
    assert 'href="20261126T120000Z-abcdef/20261126T120000Z-abcdef-pics-table.json"' in page


def _row(page: str, item_id: str) -> str:
    return next(r for r in page.split('<tbody class="item"')[1:] if f"<code>{item_id}</code>" in r)


def test_an_item_that_scored_0_is_not_shown_as_passed(written):
    _, out = written
    page = (out / "x.html").read_text()
    zero, good, failed = _row(page, "judge/0"), _row(page, "judge/1"), _row(page, "judge/24")
    assert 'data-status="zero"' in zero and ">passed, scored 0<" in zero
    assert 'data-status="passed"' in good and ">passed<" in good
    assert 'data-status="failed"' in failed and "ModelError: boom" in failed
    assert "question 1:" in good and "of 900 characters" in good  # the prompt's end
    assert ">hit<" in zero and ">miss<" in good  # cache: judge/0's call was cached
    assert "0.50 s" in good


def test_self_judged_metrics_are_marked_in_the_page_and_the_terminal(written):
    result, out = written
    page = (out / "x.html").read_text()
    assert result.facts.self_judged == {"judge/p"}
    assert 'id="self-judged"' in page and "<code>judge/p</code>" in page
    score_row = next(r for r in page.split('id="score-table"')[1].split("<tr>") if ">p<" in r
                     or ">p <" in r)  # fmt: skip
    assert "SELF-JUDGED" in score_row
    assert re.search(r"p=10\.000 <span class=\"sj\"", _row(page, "judge/1"))
    assert "acc=1.000 <span" not in _row(page, "judge/1")
    lines = summary_lines(result.record, [], None, result.facts.self_judged)
    assert any(re.match(r"judge\s+p \[SELF-JUDGED\]", line) for line in lines)
    assert any(
        line.startswith("[SELF-JUDGED] the model under test judged judge/p") for line in lines
    )
    assert not any("acc [SELF-JUDGED]" in line for line in lines)


def test_scales_come_from_the_suites_declared_ranges(written):
    result, _ = written
    facts = result.facts
    assert facts.scale("judge/acc").key == "unit" and facts.scale("judge/bleu").key == "0-100"
    assert facts.scale("judge/error_rows").key == "count" and facts.scale("judge/p").key == "0-10"
    assert facts.scale("unknown/x").key == "unit"
    assert scale_of(float("-inf"), 1.0).key == "unit"
    assert metric_facts(result.record, None).self_judged == frozenset()


def test_a_page_rendered_again_from_the_record_shows_the_same(written, monkeypatch):
    from extractbench import plugins
    from extractbench.plugins.record import load_record

    result, out = written
    record = load_record(out / "x.json")
    verdict = plugins.verdict.decide(record, GateSet((parse_gate("judge/acc>=0.9"),)),
                                     record.selection)  # fmt: skip
    targets = Targets({"html": out / "y.html"}, artifacts=False)
    again = write_outputs(record, verdict, targets, result.registry)
    first, second = (out / "x.html").read_text(), (out / "y.html").read_text()
    assert again.facts == result.facts
    assert re.findall(r'alt="([^"]+)"', first) == re.findall(r'alt="([^"]+)"', second)
    assert first.count("data:image/png;base64,") == second.count("data:image/png;base64,") >= 5
    assert first.replace("x.html", "") == second.replace("y.html", "")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="no chromium to run the page's script")
def test_the_filters_hide_the_other_items_in_a_browser(written):
    _, out = written
    url = (out / "x.html").resolve().as_uri()

    def shown(fragment: str) -> list[str]:
        dom = subprocess.run(
            [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--dump-dom", url + fragment],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        rows = dom.split('<tbody class="item"')[1:]
        return [
            re.search(r"<code>([^<]+)</code>", r).group(1)
            for r in rows
            if " hidden" not in r.split(">")[0]
        ]

    zeros = ["judge/0", *(f"judge/{n}" for n in range(19, 24))]
    assert len(shown("")) == 29
    assert shown("#items:zero=1") == [*zeros, "pics/0"]
    assert shown("#items:failed=1&zero=1") == [*zeros, "judge/24", "pics/0"]
    assert shown("#items:suite=judge&zero=1") == zeros
    assert shown("#items:suite=pics") == [f"pics/{n}" for n in range(4)]
    assert sorted(shown("#items:suite=judge&metric=bleu")) == sorted(
        f"judge/{n}" for n in range(24)
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_live_run_writes_its_side_files_in_the_run_folder(toy, mode):
    html = toy.path / "report.html"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "out/run.json",
        "--html", str(html), "--gate", "toy/accuracy>=0.5", "--report-plots", "on", *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    record = read_json(toy.path / "out/run.json")
    folder = toy.path / "out" / record["run_id"]
    assert sorted(p.name for p in (toy.path / "out").iterdir()) == [record["run_id"], "run.json"]
    assert {Path(p).resolve() for p in record["artifacts"]} == set(folder.iterdir())
    page = html.read_text()
    assert page.count("data:image/png;base64,") == len(list(folder.glob("*.png"))) >= 3
    assert 'id="f-failed"' in page and 'data-status="passed"' in page


def test_report_plots_off_draws_no_plot_and_loses_nothing_else(toy):
    html = toy.path / "report.html"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "out/run.json",
        "--html", str(html), "--report-plots", "off",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    record = read_json(toy.path / "out/run.json")
    assert record["counts"]["scored"] == record["counts"]["expected"] > 0
    assert not any(p.endswith(".png") for p in record["artifacts"])
    page = html.read_text()
    assert "data:image/png;base64," not in page and "toy/accuracy" in page
