"""A report a team reads at a glance: its own suites first, a public suite of a few items
folded (no interval below the minimum n: "n too small"), its suite's metrics by key with
intervals in the HTML page, a terminal summary of a small run that fits a screen, JUnit
marking an item below the pass mark failed on request, and heatmap text readable on
every cell colour."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from extractbench import plugins
from extractbench.plugins.outputs.junit import junit_xml
from extractbench.plugins.outputs.metric_facts import MIN_INTERVAL_N, metric_facts
from extractbench.plugins.outputs.terminal import summary_lines
from extractbench.plugins.outputs.write import Targets, write_outputs
from extractbench.plugins.record import SCHEMA_VERSION, parse_record
from extractbench.plugins.verdict.decision import GateSet
from extractbench.plugins.verdict.gates import parse_gate
from extractbench.suites.figures import cell_text_colour, pyplot
from extractbench.suites.protocol import Suite
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import NoOptions


def _suite(name: str, **kwargs: object) -> Suite:
    def never(*_: object) -> None:
        raise AssertionError("a report never loads or runs a suite")

    return Suite(name, Path("."), "t.py::t", load=never, run=never, options=NoOptions, **kwargs)


def _item(suite: str, n: int, scores: dict, key: str) -> dict:
    return {
        "id": f"{suite}/{n}", "suite": suite, "group": f"{suite}/g{n}", "scores": scores,
        "meta": {"key": key}, "prompt_sha256": "ab" * 32, "prediction": f"p{n}",
        "test": f"t.py::test_{suite}[{suite}/{n}]",
    }  # fmt: skip


def _record(settings: dict | None = None):
    """``team`` (on request: the project's own items) has 12 fields, 10 of key ``total``
    (8 right) and 2 of key ``date``; ``alpha`` and ``beta`` are public suites of 2 items
    with 3 metrics each; a gate reads ``beta/m0``."""
    items = [_item("team", n, {"accuracy": float(n < 8)}, "total") for n in range(10)]
    items += [_item("team", n, {"accuracy": 1.0}, "date") for n in (10, 11)]
    for suite in ("alpha", "beta"):
        items += [_item(suite, n, {f"m{i}": 0.5 for i in range(3)}, "x") for n in range(2)]
    record = parse_record({
        "schema_version": SCHEMA_VERSION, "run_id": "20261126T120000Z-abcdef",
        "model": {"name": "m", "backend": "fake"}, "items": items, "complete": True,
        "suites": {s: {"breakdown": ["key"]} for s in ("team", "alpha", "beta")},
        "selection": {"suites": ["alpha", "beta", "team"]}, "settings": settings or {},
        "counts": {"items": 16, "expected": 16, "scored": 16, "failed": 0},
    })  # fmt: skip
    registry = Registry()
    registry.add(_suite("alpha", breakdown=("key",)))
    registry.add(_suite("beta", breakdown=("key",)))
    registry.add(_suite("team", breakdown=("key",), on_request=True))
    gates = GateSet((parse_gate("beta/m0>=0.1"), parse_gate("team/accuracy>=0.5")))
    return record, registry, gates


@pytest.fixture
def page(tmp_path):
    record, registry, gates = _record()
    verdict = plugins.verdict.decide(record, gates, record.selection)
    targets = Targets({"record": tmp_path / "x.json", "html": tmp_path / "x.html"})
    written = write_outputs(record, verdict, targets, registry)
    return written, (tmp_path / "x.html").read_text()


def test_the_team_s_suite_first_and_public_suites_of_few_items_folded(page):
    written, html = page
    assert written.facts.own_suites == {"team"}
    table = html.split('id="score-table"')[1].split("</table>")[0]
    folded = html.split('id="scores-small"')[1].split("</details>")[0]
    # team before the public suites, though it sorts last by name
    assert table.index("<td>team</td>") < table.index("<td>beta</td>")
    assert "<td>alpha</td>" not in table and "<td>m0</td>" in table  # beta/m0 is gated
    assert folded.count("<td>alpha</td>") == 3 and folded.count("<td>beta</td>") == 2
    assert "2 public suites at small n (5 metrics" in folded
    # no interval of 2 items; team/accuracy (n 12) has one
    assert "n too small" in folded and "[0." not in folded
    team_row = table.split("<td>team</td>")[1].split("</tr>")[0]
    assert "[0." in team_row and "n too small" not in team_row


def test_the_team_s_suite_by_key_with_intervals_in_the_page(page):
    _, html = page
    by_key = html.split('id="by-team-accuracy"')[1].split("</table>")[0]
    total = by_key.split("<td>total</td>")[1].split("</tr>")[0]
    date = by_key.split("<td>date</td>")[1].split("</tr>")[0]
    assert "0.8000" in total and "[0." in total and ">10<" in total  # 10 items: an interval
    assert "1.0000" in date and "n too small" in date  # 2 items: none
    assert html.index('id="by-team-accuracy"') < html.index('id="plots"')


def test_no_plot_from_fewer_than_20_items(page, tmp_path):
    _, html = page
    assert not list(tmp_path.rglob("*.png"))
    assert "No plots (none is drawn from fewer than 20 items)" in html


def test_the_terminal_summary_shows_the_team_first_and_folds_small_public_suites(page):
    written, _ = page
    facts = metric_facts(written.record, None)  # without the registry: no suite is the team's
    lines = summary_lines(written.record, [], None, set(), written.facts.own_suites)
    table = [line for line in lines if line.split(" ", 1)[0] in ("team", "alpha", "beta", "")]
    suites = [line.split()[0] for line in table if line.strip() and not line.startswith(" ")]
    assert suites == ["team", "alpha", "beta", "beta"]
    assert any(line.startswith("  key=total") or "key=total" in line for line in table)
    alpha = next(line for line in lines if line.startswith("alpha"))
    assert "3 metrics: in the HTML page and record" in alpha and "n too small" in alpha
    beta = [line for line in lines if line.startswith("beta")]
    assert len(beta) == 2 and "m0" in beta[0] and "n too small" in beta[0]  # gated: its row
    assert "2 metrics" in beta[1]
    assert not facts.own_suites
    assert len(lines) <= 40


def test_a_small_interval_is_said_too_small_in_the_terminal_too():
    record, _, _ = _record()
    lines = summary_lines(record)
    key_date = [line for line in lines if "m0" in line]
    assert all("n too small" in line for line in key_date)
    assert MIN_INTERVAL_N > 2


@pytest.mark.parametrize(
    "mark, failed",
    [(None, []), (0.4, ["team/8", "team/9"]), (0.6, ["team/8", "team/9", "alpha/0", "alpha/1",
                                                     "beta/0", "beta/1"])],
)  # fmt: skip
def test_junit_marks_an_item_below_the_pass_mark_failed_on_request(mark, failed):
    settings = {"junit_pass_mark": mark} if mark is not None else {}
    record, registry, _ = _record(settings)
    xml = junit_xml(record, metric_facts(record, registry))
    cases = ET.fromstring(xml).iter("testcase")
    marked = [c.get("name") for c in cases if c.find("failure") is not None]
    assert [m.split("[")[1].rstrip("]") for m in marked if "[" in m] == failed
    if mark is not None:
        case = next(c for c in ET.fromstring(xml).iter("testcase") if "team/8" in c.get("name"))
        message = case.find("failure").get("message")
        assert message == f"below the pass mark {mark:g}: team/accuracy=0"
        assert "team/accuracy" in case.find("system-out").text  # the score stays beside it


def test_the_pass_mark_is_checked_on_the_command_line(pytester):
    pytester.makepyprojecttoml("")
    result = pytester.runpytest_subprocess("--junit-pass-mark", "2", "--co")
    assert result.ret == 4
    assert "--junit-pass-mark: '2': must be a number in (0, 1]" in result.stderr.str()


def test_heatmap_text_is_white_on_dark_cells_and_black_on_light_ones():
    cmap = pyplot().get_cmap("RdYlGn")
    assert cell_text_colour(cmap(0.0)) == "white"  # dark red: black text did not read
    assert cell_text_colour(cmap(0.5)) == "black"  # pale yellow
    assert cell_text_colour(cmap(1.0)) == "white"  # dark green
    assert cell_text_colour((0.0, 0.0, 0.0, 1.0)) == "white"
    assert cell_text_colour((1.0, 1.0, 1.0, 1.0)) == "black"


def test_a_key_s_items_link_shows_that_key_s_items_in_a_browser(page):
    """The by-key table's link filters the items by ``key=VALUE;`` (the item rows carry it),
    so ``total`` shows the 10 items of key total and no other."""
    import shutil
    import subprocess

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    _, html = page
    by_key = html.split('id="by-team-accuracy"')[1].split("</table>")[0]
    assert 'href="#items:suite=team&amp;text=key%3Dtotal%3B"' in by_key
    if browser is None:
        pytest.skip("no chromium to run the page's script")
    written, _ = page
    url = Path(written.record_path).with_name("x.html").resolve().as_uri()
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--dump-dom", url + "#items:suite=team&text=key%3Dtotal%3B"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    rows = dom.split('<tbody class="item"')[1:]
    shown = [r.split("<code>")[1].split("<")[0] for r in rows if " hidden" not in r.split(">")[0]]
    assert shown == [f"team/{n}" for n in range(10)]


def test_a_folded_suite_s_own_tables_are_one_terminal_line(page):
    from extractbench.plugins.outputs.terminal import terminal_suite_lines

    record = page[0].record
    said = {"alpha": ["alpha table:", "  row 1", "  row 2"], "team": ["team: a", "team: b"]}
    assert terminal_suite_lines(said, record, {"team"}) == [
        "alpha: its own tables (3 lines): in the HTML page", "team: a", "team: b",
    ]  # fmt: skip
    # without the team marked its own, team (n 12) still has intervals: shown whole
    assert terminal_suite_lines(said, record, set())[1:] == ["team: a", "team: b"]
