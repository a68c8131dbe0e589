"""``--stop-when-decided`` end to end (pytester, the fake backend, with and without -n 2):
a suite stops once its confidence sequences decide every gate, the items left are listed
as not run, ``--rescore`` and ``extractbench report`` decide the same from the record, and
a suite the sequence cannot decide early runs every item."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import PROJECT_ADDOPTS, TOY_CONFTEST, TOY_SUITE, TOY_TEST, read_json, toy_rows

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
# 100 documents, every third without its "weight" key: groups of 3 and 4 items (xdist's
# loadgroup would hand the larger ones out first). The fake answers applicant and size,
# colour on even documents, never weight: accuracy 250/366.
ROWS = [r for r in toy_rows(100) if r["key"] != "weight" or int(r["doc"][1:]) % 3]
ITEMS = len(ROWS)
MEAN = 250 / ITEMS


@pytest.fixture
def toy100(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(TOY_CONFTEST)
    pytester.makepyfile(toy_suite=TOY_SUITE, test_toy=TOY_TEST)
    data = pytester.mkdir("data")
    (data / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    pytester.makepyprojecttoml(f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n")
    return pytester


def run(project: pytest.Pytester, *args: str, name: str = "record.json"):
    record = project.path / name
    result = project.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record), *args
    )
    return result, (read_json(record) if record.exists() else {})


def assert_ran_in_order(record: dict) -> None:
    """The order is the groups', fixed by the order seed: a document's keys stay together,
    and the groups ran in that order (those after the decision only while it was being
    made, at most a few per worker)."""
    order, sequence = record["suites"]["toy"]["run_order"], record["gates"][0]["sequence"]
    ran = {it["id"] for it in record["items"]}
    groups = order["groups"]
    assert all(len({i.split("/")[1] for i in group}) == 1 for group in groups)
    decided = next(k for k in range(len(groups)) if sum(map(len, groups[: k + 1])) >= sequence["n"])
    last = max(k for k, group in enumerate(groups) if ran & set(group))
    assert all(set(group) <= ran for group in groups[: decided + 1])
    assert last <= decided + 6, (decided, last)


@pytest.mark.parametrize("mode", MODES)
def test_a_clear_gate_stops_the_suite_and_lists_the_items_not_run(toy100, mode):
    junit = toy100.path / "junit.xml"
    result, record = run(
        toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", f"--junitxml={junit}", *mode
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    gate = record["gates"][0]
    sequence = gate["sequence"]
    assert gate["passed"] is True and sequence["population"] == ITEMS
    assert sequence["n"] < 100 and sequence["low"] >= 0.2
    assert f"decided after {sequence['n']} of {ITEMS} items" in gate["reason"]
    counts, order = record["counts"], record["suites"]["toy"]["run_order"]
    assert record["complete"] is True and counts["expected"] == ITEMS
    assert counts["items"] + counts["not_run"] == ITEMS and counts["not_run"] > 250
    ran = {it["id"] for it in record["items"]}
    assert len(order["not_run"]) == counts["not_run"] and not ran & set(order["not_run"])
    assert_ran_in_order(record)
    cases = ET.parse(junit).getroot().iter("testcase")
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == counts["not_run"]
    assert all("not run: decided early" in c.find("skipped").get("message") for c in skipped)
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    agg = record["aggregates"]["toy/accuracy"]
    assert "toy/accuracy.ci95" not in props and props["toy/accuracy.stopped_estimate"] == "true"
    assert props["toy/accuracy.anytime_bounds"] == f"[{agg['ci_low']:.6f}, {agg['ci_high']:.6f}]"
    result.stdout.fnmatch_lines(
        [f"*{counts['not_run']} not run: decided early*", "GATE PASSED  toy/accuracy>=0.2: *"]
    )
    assert record["aggregates"]["toy/accuracy"]["stopped_early"] is True
    # pytest's own summary line counts every item not run, none as skipped
    summary = result.stdout.lines[-1]
    assert f"{counts['not_run']} not run (decided early)" in summary and "skipped" not in summary


def test_the_order_holds_under_pytests_default_dist(toy100):
    """A project whose addopts name no --dist: ``-n 2`` is xdist's ``--dist load``, which
    would send the second worker a block from a quarter of the way down the order; the
    early stop runs with ``--dist loadgroup`` instead, and says so."""
    toy100.makepyprojecttoml('[tool.pytest.ini_options]\naddopts = ""\n')
    result, record = run(toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*running with --dist loadgroup instead of --dist load*"])
    assert record["counts"]["not_run"] > 250
    assert_ran_in_order(record)


def test_the_order_seed_is_the_models_and_items_not_the_generation_seed(toy100):
    gate = ("--stop-when-decided", "--gate", "toy/accuracy>=0.2")
    _, zero = run(toy100, *gate, "--seed", "0")
    _, one = run(toy100, *gate, "--seed", "1", name="one.json")
    orders = [r["suites"]["toy"]["run_order"] for r in (zero, one)]
    assert orders[0]["groups"] == orders[1]["groups"] and orders[0]["seed"] == orders[1]["seed"]
    assert orders[0]["seed_given"] is False and "--order-seed" not in zero["gates"][0]["reason"]
    _, other = run(toy100, *gate, "--order-seed", "7", name="other.json")
    order = other["suites"]["toy"]["run_order"]
    assert order["seed"] == 7 and order["seed_given"] is True
    assert order["groups"] != orders[0]["groups"]
    assert other["gates"][0]["reason"].endswith("; order --order-seed 7")
    assert other["gates"][0]["sequence"]["order_seed"] == 7


def test_rescore_and_report_decide_the_same_from_the_record(toy100, tmp_path):
    page = toy100.path / "report.html"
    _, first = run(toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", f"--html={page}")
    assert first["counts"]["not_run"] > 0
    # the page gives the sequence in words, never as the record's object
    seq, html = first["gates"][0]["sequence"], page.read_text(encoding="utf-8")
    assert (
        f"[{seq['low']:.4f}, {seq['high']:.4f}] after {seq['n']:,} of {seq['population']:,} items"
        in html
    )
    assert "method&#39;:" not in html and "'method':" not in html
    result, again = run(
        toy100, "--rescore", "record.json", "--gate", "toy/accuracy>=0.2", name="again.json"
    )  # read_json has `extractbench report`'s decision of each record checked too
    assert result.ret == 0, result.stdout.str()
    assert again["gates"][0]["reason"] == first["gates"][0]["reason"]
    assert again["counts"]["not_run"] == first["counts"]["not_run"]
    assert again["suites"]["toy"]["run_order"] == first["suites"]["toy"]["run_order"]


def test_a_threshold_at_the_models_own_accuracy_runs_every_item(toy100):
    """``--order-seed 1``: an order the sequence does not decide early (at a threshold at
    the mean, a wrong FAIL may come in at most 5% of orders, and a PASS is wrong in none
    as the threshold is met)."""
    threshold = f"{int(MEAN * 10_000) / 10_000:.4f}"  # 0.6830, the mean rounded down
    args = ("--stop-when-decided", "--order-seed", "1", "--gate", f"toy/accuracy>={threshold}")
    result, record = run(toy100, *args)
    assert result.ret == 0, result.stdout.str()
    gate = record["gates"][0]
    assert record["counts"]["items"] == ITEMS and record["counts"]["not_run"] == 0
    assert gate["sequence"]["n"] == ITEMS and gate["value"] == pytest.approx(MEAN)
    assert f"decided at n = N = {ITEMS}" in gate["reason"]


def test_the_project_setting_turns_it_on_and_a_flag_off(toy100):
    toy100.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n"
        '[tool.extractbench]\nstop_when_decided = true\n[tool.extractbench.gates]\n"toy/accuracy" = ">= 0.2"\n'
    )
    _, on = run(toy100)
    assert on["counts"]["not_run"] > 0
    result, off = run(toy100, "--no-stop-when-decided", name="off.json")
    assert result.ret == 0 and off["counts"]["items"] == ITEMS
    assert "run_order" not in off["suites"]["toy"] or off["suites"]["toy"]["run_order"] is None


def test_an_interval_gate_stops_on_the_iid_sequence(toy100):
    result, record = run(toy100, "--stop-when-decided", "--gate", "toy/accuracy:ci_low>=0.2")
    assert result.ret == 0, result.stdout.str()
    gate = record["gates"][0]
    assert gate["passed"] is True and record["counts"]["not_run"] > 200
    assert gate["sequence"]["method"].startswith("hedged capital, i.i.d.")
    assert gate["value"] == gate["sequence"]["low"] >= 0.2
    assert gate["reason"].startswith("toy/accuracy:ci_low = ")


def test_suites_the_sequence_cannot_decide_run_every_item(toy100):
    """A gate on an interval's far side (``:ci_low <=``) needs every item; a suite without a
    gate runs as without the option."""
    args = ("--stop-when-decided", "--limit", "40")
    result, record = run(toy100, *args, "--gate", "toy/accuracy:ci_low<=0.9")
    assert result.ret == 0, result.stdout.str()
    assert record["counts"]["items"] == 40 and record["suites"]["toy"].get("run_order") is None
    result, record = run(toy100, *args, name="ungated.json")
    assert result.ret == 0 and record["counts"]["items"] == 40


def test_a_count_known_before_the_first_item_does_not_hold_the_stop_back(toy100):
    gates = ("--gate", "toy/accuracy>=0.2", "--gate", "toy/missing_labels<=0")
    result, record = run(toy100, "--stop-when-decided", *gates)
    assert result.ret == 0, result.stdout.str()
    assert record["counts"]["not_run"] > 250
    count = next(g for g in record["gates"] if g["metric"] == "toy/missing_labels")
    assert count["passed"] is True and count["value"] == 0


def test_a_speed_comparison_against_a_baseline_is_refused_in_one_line(toy100):
    result, _ = run(toy100, "--limit", "20")
    assert result.ret == 0
    args = ("--baseline", "record.json", "--max-slowdown", "0.2", "--gate", "toy/accuracy>=0.2")
    result, _ = run(toy100, "--stop-when-decided", *args, name="again.json")
    assert result.ret == 4
    assert "--stop-when-decided with --max-slowdown 0.2: a speed comparison needs a full run" in (
        result.stderr.str() + result.stdout.str()
    )


@pytest.mark.parametrize(
    ("setting", "args", "says"),
    [
        ("", ["--stop-when-decided", "--shard", "1/2"], "--stop-when-decided with --shard 1/2"),
        ("stop_when_decided = 'yes'", [], "stop_when_decided = 'yes': must be true or false"),
    ],
)
def test_usage_errors_are_one_line(toy100, setting, args, says):
    toy100.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n[tool.extractbench]\n{setting}\n"
    )
    result, _ = run(toy100, *args)
    assert result.ret == 4
    assert says in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize("mode", MODES)
def test_after_a_stop_every_report_shows_the_anytime_bounds_and_marks_the_mean(toy100, mode):
    """The terminal table, the markdown summary and the HTML Scores table give each metric
    of a stopped suite (the gated one and the other, ``length``) the anytime-valid bounds
    of its suite's sequence, its mean marked as a stopped estimate with a one-line legend,
    and no breakdown row an interval, none under a "95% CI" header."""
    page, summary = toy100.path / "report.html", toy100.path / "summary.md"
    result, record = run(
        toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", f"--html={page}",
        f"--summary-md={summary}", "--export", "every-eval-ever=eee", *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert record["counts"]["not_run"] > 0
    # the Every Eval Ever export keeps a 0/1 metric binary, its bounds at their own level
    (doc,) = [p for p in (toy100.path / "eee").rglob("*.json")]
    results = {r["evaluation_name"]: r for r in json.loads(doc.read_text())["evaluation_results"]}
    accuracy = results["toy/accuracy"]
    assert accuracy["metric_config"]["score_type"] == "binary"
    assert results["toy/length"]["metric_config"]["score_type"] == "continuous"
    level = accuracy["score_details"]["uncertainty"]["confidence_interval"]["confidence_level"]
    assert level == pytest.approx(0.9)
    gate_seq = record["gates"][0]["sequence"]
    rows = {}
    for key in ("toy/accuracy", "toy/length"):
        agg = record["aggregates"][key]
        assert agg["stopped_early"] is True and agg["ci_method"].startswith("anytime-valid")
        assert agg["ci_low"] <= agg["mean"] <= agg["ci_high"]
        rows[key] = f"[{agg['ci_low']:.4f}, {agg['ci_high']:.4f}] anytime"
        for sub in agg["breakdowns"]["key"].values():
            assert sub["stopped_early"] is True and sub["ci_method"].startswith("none")
    # the gated metric's bounds are its gate's sequence's (wider or equal: a few more
    # items may have run after the decision, and the bounds only narrow)
    acc = record["aggregates"]["toy/accuracy"]
    assert gate_seq["low"] <= acc["ci_low"] and acc["ci_high"] <= gate_seq["high"]
    legend = "† stopped estimate (--stop-when-decided)"
    out = result.stdout.str()
    table = out.split("suite  metric", 1)[1].split(legend, 1)[0]
    header = table.splitlines()[0]
    assert "interval" in header and "95%" not in header
    for key, bounds in rows.items():
        line = next(x for x in table.splitlines() if f" {key.split('/')[1]} " in f" {x} ")
        assert f"{record['aggregates'][key]['mean']:.4f}†" in line and bounds in line
    levels = [x for x in table.splitlines() if "key=" in x]
    assert levels and all("†" in x and "[" not in x and "–" in x for x in levels)
    assert legend in out
    md = summary.read_text(encoding="utf-8")
    assert "| suite | metric | mean | interval | n | gate |" in md and legend in md
    assert all(bounds in md for bounds in rows.values())
    html = page.read_text(encoding="utf-8")
    scores = html.split('id="score-table"')[1].split("</table>")[0]
    assert "95% CI" not in scores and "<th>interval</th>" in scores
    assert all(bounds in scores for bounds in rows.values()) and scores.count("†") == 2
    assert 'id="stopped-legend"' in html and legend in html
    breakdowns = html.split('id="breakdowns"')[1].split("</table>")[0]
    assert "95% CI" not in breakdowns and "[0." not in breakdowns


def error_bars(ax) -> list:
    """The error bars a bar chart drew: each a segment of two (x, y) points, finite."""
    (bars,) = [c for c in ax.containers if hasattr(c, "errorbar")]
    segments = bars.errorbar.lines[2][0].get_segments()
    return [s for s in segments if len(s) and all(map(math.isfinite, s.ravel()))]


def test_after_a_stop_the_charts_read_as_the_tables(toy100, monkeypatch):
    """A stopped suite's charts say what the scores table says: the score chart's axis is
    headed ``interval`` with the tables' legend (anytime-valid bounds, stopped estimate),
    never "95% CI", each stopped mean's label marked ``†`` and its bar the anytime bounds;
    the breakdown chart draws no interval; the HTML page's plots heading says so too. A
    full run's charts keep "mean, 95% CI"."""
    from markupsafe import escape

    from extractbench.plugins.outputs import plots
    from extractbench.plugins.outputs.early_stop_report import STOPPED_LEGEND
    from extractbench.plugins.outputs.metric_facts import MIN_PLOT_N
    from extractbench.plugins.record import load_record

    page = toy100.path / "report.html"
    args = ("--gate", "toy/accuracy>=0.4", f"--html={page}", "--report-plots=on")
    result, record = run(toy100, "--stop-when-decided", *args)
    assert result.ret == 0, result.stdout.str()
    acc = record["aggregates"]["toy/accuracy"]
    assert record["counts"]["not_run"] > 0 and acc["n"] >= MIN_PLOT_N
    html = page.read_text(encoding="utf-8")
    plots_part = html.split('id="plots"')[1]
    assert "95% CI" not in plots_part and "means with their intervals" in plots_part
    assert str(escape(STOPPED_LEGEND)) in plots_part

    charts: dict[str, object] = {}

    def save(plt, fig, path):  # each chart's axes, its labels checked inside the figure
        fig.tight_layout()
        fig.canvas.draw()
        ax, box = fig.axes[0], fig.bbox
        extent = ax.xaxis.label.get_window_extent(fig.canvas.get_renderer())
        assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and box.y0 - 1 <= extent.y0
        charts[path.name] = ax
        plt.close(fig)
        return path

    monkeypatch.setattr(plots, "_save", save)
    plots.metric_plots(load_record(toy100.path / "record.json"), toy100.path, "run")
    scores, by_key = charts["run-metrics-unit.png"], charts["run-toy-accuracy-by-key.png"]
    for ax in (scores, by_key):
        label = " ".join(ax.get_xlabel().split())
        assert "95% CI" not in label and label.startswith("mean, interval")
        assert STOPPED_LEGEND in label
        assert all(t.get_text().endswith("†") for t in ax.get_yticklabels())
    ends = {tuple(round(float(x), 4) for x in seg[:, 0]) for seg in error_bars(scores)}
    assert (round(acc["ci_low"], 4), round(acc["ci_high"], 4)) in ends
    assert not error_bars(by_key)

    result, _ = run(toy100, *args, name="full.json")
    assert result.ret == 0
    charts.clear()
    plots.metric_plots(load_record(toy100.path / "full.json"), toy100.path, "full")
    assert charts["full-metrics-unit.png"].get_xlabel() == "mean, 95% CI (scores 0-1)"
    assert len(error_bars(charts["full-toy-accuracy-by-key.png"])) == 4
    assert "means with 95% CI" in page.read_text(encoding="utf-8")
