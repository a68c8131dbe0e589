"""Black-box tests of the scoring plugin through pytester, each with and without -n 2."""

from __future__ import annotations

import signal
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from extractbench.plugins.outputs.plots import distribution_plot
from extractbench.plugins.record import parse_record
from tests.conftest import (
    PROJECT_ADDOPTS,
    TOY_CONFTEST,
    TOY_SUITE,
    Output,
    interruptible,
    read_json,
)

# the toy suite with a model that fails on every item
FAILING_SUITE = TOY_SUITE.replace(
    "generation = generate(item, models.model)", 'raise RuntimeError("model exploded")'
)

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

TOY_CONFTEST_STRIPPING_GROUPS = (
    TOY_CONFTEST
    + """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if "@" in item.nodeid:
            item._nodeid = item.nodeid.split("@")[0]
"""
)


def run(toy: pytest.Pytester, mode: list[str], *args: str) -> tuple[pytest.RunResult, dict]:
    record = toy.path / "record.json"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record), *mode, *args
    )
    return result, (read_json(record) if record.exists() else {})


@pytest.mark.parametrize("mode", MODES)
def test_scores_are_aggregated_with_ci_and_breakdown(toy, mode):
    result, record = run(toy, mode)
    assert result.ret == 0, result.stdout.str()
    acc = record["aggregates"]["toy/accuracy"]
    # fake model: applicant and size always right, colour right on even docs, weight never
    assert acc["n"] == 24
    assert acc["mean"] == pytest.approx(15 / 24)
    # the 24 items are 6 documents' 4 keys: the interval accounts for the 6 groups
    assert (acc["ci_method"], acc["groups"]) == ("wilson_deff", 6)
    assert acc["ci_low"] < acc["mean"] < acc["ci_high"]
    groups = acc["breakdowns"]["key"]
    assert groups["applicant"]["mean"] == 1.0 and groups["weight"]["mean"] == 0.0
    assert groups["colour"]["mean"] == 0.5
    assert record["aggregates"]["toy/length"]["ci_method"] == "cluster_bootstrap"
    assert (groups["colour"]["ci_method"], groups["colour"]["groups"]) == ("wilson", None)
    assert set(record) >= {"model", "settings", "items", "aggregates", "gates", "complete"}
    assert record["complete"] is True
    item = next(it for it in record["items"] if it["id"] == "toy/d1/colour")
    assert item["prediction"].strip() == "red" and item["reference"] == "blue"
    assert item["scores"]["accuracy"] == 0.0
    assert len(item["prompt_sha256"]) == 64 and item["group"] == "toy/d1"
    assert item["tokens"]["prompt"] > 0 and item["latency_s"] >= 0
    result.stdout.fnmatch_lines(["*extractbench scores*", "toy*accuracy*0.6250*[[]0.*24*"])


def test_same_aggregates_with_and_without_xdist(toy):
    _, serial = run(toy, [])
    _, parallel = run(toy, ["-n", "2"])
    assert serial["aggregates"] == parallel["aggregates"]
    assert [i["scores"] for i in serial["items"]] == [i["scores"] for i in parallel["items"]]


def workers_by_group(output: str) -> dict[str, set[str]]:
    """``{group: {worker, ...}}`` from the lines ``-n 2 -v`` prints per finished item."""
    found: dict[str, set[str]] = {}
    for line in output.splitlines():
        if line.startswith("[gw") and "test_toy[toy/" in line:
            worker = line.split("]")[0].lstrip("[")
            item_id = line.split("test_toy[")[1].split("]")[0]
            found.setdefault(item_id.rsplit("/", 1)[0], set()).add(worker)
    return found


def test_a_group_runs_on_one_worker(toy):
    result, record = run(toy, ["-n", "2"], "-v")
    assert result.ret == 0
    by_group = workers_by_group(result.stdout.str())
    assert len(by_group) == 6 and sum(len(v) for v in by_group.values()) == 6, by_group
    assert {w for v in by_group.values() for w in v} == {"gw0", "gw1"}  # both worked
    assert "GroupingLost" not in result.stdout.str()


def test_lost_grouping_is_warned(toy):
    toy.makeconftest(
        TOY_CONFTEST_STRIPPING_GROUPS
    )  # emulates pytest-xdist#1386: the "@group" suffix does not take effect
    result, record = run(toy, ["-n", "2"], "-v")
    assert result.ret == 0
    assert len(record["items"]) == 24  # the scores are still all there
    result.stdout.fnmatch_lines(["*GroupingLost*--dist loadgroup is not grouping*pytest<9.2*"])


@pytest.mark.parametrize("mode", MODES)
def test_passing_gate_exits_zero(toy, mode):
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.5")
    assert result.ret == 0
    assert record["gates"][0]["passed"] is True
    assert record["gates"][0]["value"] == pytest.approx(0.625)


@pytest.mark.parametrize("mode", MODES)
def test_failing_gate_exits_one_and_names_the_gate(toy, mode):
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.99", "--gate", "toy/length<1")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*GATE FAILED*toy/accuracy>=0.99*"])
    assert [g["passed"] for g in record["gates"]] == [False, True]
    assert record["exit_status"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_gate_on_unknown_metric_is_a_usage_error(toy, mode):
    result, record = run(toy, mode, "--gate", "toy/acuracy>=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not record
    result.stderr.fnmatch_lines(
        ["*toy/acuracy>=0.1*suite toy has no metric 'acuracy'*accuracy, length*"]
    )


def test_pyproject_gate_on_unknown_suite_is_a_usage_error(toy):
    toy.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n"
        "[tool.extractbench.gates]\n'FDA/accuracy' = '>= 0.99'\n"
    )
    result, record = run(toy, [])
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not record
    result.stderr.fnmatch_lines(
        ["*FDA/accuracy>=0.99 (*pyproject.toml): unknown suite 'FDA'; known suites: fda, *toy*"]
    )


@pytest.mark.parametrize("expr", ["toy/accuracy<=1e999", "toy/accuracy>=nan"])
def test_gate_threshold_must_be_finite(toy, expr):
    result, record = run(toy, [], "--gate", expr)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not record
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_max_regression_must_be_finite(toy):
    _, first = run(toy, [])
    result, record = run(
        toy, [], "--baseline", str(toy.path / "record.json"), "--max-regression", "nan"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--max-regression nan: needs --baseline and a finite value*"])


@pytest.mark.parametrize("mode", MODES)
def test_gate_of_a_selected_suite_without_scores_fails(toy, mode):
    toy.makepyfile(toy_suite=FAILING_SUITE)
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1
    gate = record["gates"][0]
    assert gate["passed"] is False and "24 items of toy failed" in gate["reason"]
    assert record["verdict"]["word"] == "FAIL"
    result.stdout.fnmatch_lines(
        [
            "*verdict: FAIL (exit 1): 24 of 24 items failed: toy/d0/applicant: *RuntimeError: model exploded*"
        ]
    )


@pytest.mark.parametrize("mode", MODES)
def test_an_incomplete_run_never_shows_a_passed_gate(toy, mode):
    """-x stops the run after one failed item: the gate that the scored items would pass
    is left undecided, and the verdict is INCOMPLETE."""
    toy.makepyfile(
        toy_suite=TOY_SUITE.replace(
            "generation = generate(item, models.model)",
            'if item.id == "toy/d0/applicant":\n        raise RuntimeError("model exploded")\n'
            "    generation = generate(item, models.model)",
        )
    )
    result, record = run(
        toy, mode, "-x", "--gate", "toy/accuracy>=0.1", "--suite-option", "toy.delay=0.2"
    )
    assert result.ret == 1, result.stdout.str()
    assert record["complete"] is False and record["verdict"]["word"] == "INCOMPLETE"
    [gate] = record["gates"]
    assert gate["passed"] is None and "not evaluated: the run is incomplete" in gate["reason"]
    assert "failed: toy/accuracy" not in result.stdout.str()


@pytest.mark.parametrize("mode", MODES)
def test_shard_1_of_1_is_the_whole_run_and_decides_its_gates(toy, mode):
    result, record = run(toy, mode, "--shard", "1/1", "--gate", "toy/accuracy>=0.99")
    assert result.ret == 1, result.stdout.str()
    [gate] = record["gates"]
    assert gate["passed"] is False and record["verdict"]["word"] == "FAIL"
    result, record = run(toy, mode, "--shard", "1/1", "--gate", "toy/accuracy>=0.1")
    assert result.ret == 0 and record["gates"][0]["passed"] is True


@pytest.mark.parametrize("mode", MODES)
def test_details_json_cannot_hold_are_made_safe_and_the_record_is_written(toy, mode):
    toy.makepyfile(
        toy_suite=TOY_SUITE.replace(
            "return ItemResult({",
            "return ItemResult(details={'ratio': float('nan'), 'keys': {'b', 'a'}, "
            "'where': (1, object)}, scores={",
        ).replace("}, generation)", "}, generation=generation)")
    )
    result, record = run(toy, mode, "--junitxml", "junit.xml")
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = record["items"][0]["details"]
    assert details["ratio"] is None and details["keys"] == ["a", "b"]
    assert details["where"] == [1, "<class 'object'>"]
    assert details["sanitised"] == ["ratio", "keys", "where"]
    assert (toy.path / "junit.xml").exists()


def test_collect_only_says_that_nothing_was_decided(toy):
    result, record = run(toy, [], "--collect-only", "--gate", "toy/accuracy>=0.1")
    assert result.ret == 5  # nothing measured (the exit table's 5), never a pass
    assert record == {}  # nothing written
    result.stdout.fnmatch_lines(["extractbench: --collect-only: nothing was measured and no gate*"])


@pytest.mark.parametrize("mode", MODES)
def test_pyproject_gates_apply(toy, mode):
    toy.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n"
        "[tool.extractbench.gates]\n'toy/accuracy' = '> 0.9'\n'fda/accuracy' = '>= 0.5'\n"
    )
    result, record = run(toy, mode)
    assert result.ret == 1
    by_metric = {g["metric"]: g for g in record["gates"]}
    assert by_metric["toy/accuracy"]["passed"] is False
    fda = by_metric["fda/accuracy"]  # a suite this command did not select
    assert fda["passed"] is None and "not selected by this command" in fda["reason"]
    result.stdout.fnmatch_lines(
        ["GATE NOT EVALUATED  fda/accuracy>=0.5: not evaluated: suite 'fda' not selected*"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_junit_has_scores_and_gate_cases(toy, mode):
    """xunit1 (pytest's junit_family): each item's scores are its case's properties
    (xunit2: tests/test_junit_schema.py)."""
    junit = toy.path / "junit.xml"
    result, _ = run(
        toy,
        mode,
        "--junitxml",
        str(junit),
        "--gate",
        "toy/accuracy>=0.99",
        "-o",
        "junit_family=xunit1",
    )
    assert result.ret == 1
    root = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    item = next(c for name, c in cases.items() if "toy/d0/applicant" in name)
    props = {p.get("name"): p.get("value") for p in item.iter("property")}
    assert props["toy/accuracy"] == "1.0"
    assert "toy/length" in props and "prediction" in props
    suite_props = {p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")}
    assert suite_props["toy/accuracy"] == "0.625000"
    assert suite_props["extractbench.model.backend"] == "fake"
    gate = next(c for c in root.iter("testcase") if c.get("classname") == "gate")
    assert gate.get("name") == "toy/accuracy"
    assert gate.find("failure") is not None
    assert "toy/accuracy>=0.99" in gate.find("failure").get("message")


@pytest.mark.parametrize("mode", MODES)
def test_limit_selects_stratified_subset(toy, mode):
    result, record = run(toy, mode, "--limit", "8")
    assert result.ret == 0
    keys = sorted(i["meta"]["key"] for i in record["items"])
    assert keys == ["applicant"] * 2 + ["colour"] * 2 + ["size"] * 2 + ["weight"] * 2
    _, again = run(toy, mode, "--limit", "8")
    assert [i["id"] for i in again["items"]] == [i["id"] for i in record["items"]]


@pytest.mark.parametrize("mode", MODES)
def test_malformed_gate_is_usage_error(toy, mode):
    result, _ = run(toy, mode, "--gate", "toy/accuracy=>0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gate*cannot parse gate*toy/accuracy=>0.5*"])


@pytest.mark.parametrize("mode", MODES)
def test_missing_model_file_is_usage_error_before_any_item(toy, mode):
    result = toy.runpytest_subprocess("--model", "nowhere/model.gguf", "--data-dir", "data", *mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--model nowhere/model.gguf: no such file*"])
    assert "passed" not in result.stdout.str()


def test_non_gguf_model_file_is_usage_error(toy):
    (toy.path / "weights.bin").write_bytes(b"PK\x03\x04 not a gguf")
    result = toy.runpytest_subprocess("--model", "weights.bin", "--data-dir", "data")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*weights.bin: not a GGUF file*"])


@pytest.mark.parametrize("mode", MODES)
def test_missing_data_is_a_usage_error_naming_what_and_how(toy, mode):
    (toy.path / "data" / "toy.jsonl").unlink()
    start = time.monotonic()
    result, record = run(toy, mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not record
    assert time.monotonic() - start < 10
    result.stderr.fnmatch_lines(
        [
            "ERROR: toy: data missing in *data: toy.jsonl (the toy rows)",
            "*--data-dir DIR*--skip-missing-data*",
        ]
    )


def test_no_data_folder_at_all_is_a_usage_error(toy):
    (toy.path / "data" / "toy.jsonl").unlink()
    (toy.path / "data").rmdir()
    result = toy.runpytest_subprocess("--backend", "fake", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: toy: data missing in no data folder*: toy.jsonl*"])


@pytest.mark.parametrize("mode", MODES)
def test_skip_missing_data_is_explicit_and_measures_nothing(toy, mode):
    (toy.path / "data" / "toy.jsonl").unlink()
    result, record = run(toy, mode, "-rs", "--skip-missing-data", "--gate", "toy/accuracy>=0.1")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # nothing measured: not a pass
    assert record["verdict"]["word"] == "NOT EVALUATED"
    assert record["counts"]["expected"] == 0 and record["counts"]["items"] == 0
    gate = record["gates"][0]
    assert gate["passed"] is None and "skipped (data missing" in gate["reason"]
    result.stdout.fnmatch_lines(
        ["*GATE NOT EVALUATED*skipped*", "*SKIPPED*toy: data missing (--skip-missing-data)*"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_malformed_data_line_is_a_usage_error_with_file_and_line(toy, mode):
    with (toy.path / "data" / "toy.jsonl").open("a") as fh:
        fh.write("{broken\n")
    result, record = run(toy, mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "passed" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*toy: *toy.jsonl:25: not valid JSON*"])
    assert record["counts"]["items"] == 0 and not record["complete"]


@pytest.mark.parametrize("mode", MODES)
def test_a_suite_without_items_is_a_usage_error(toy, mode):
    (toy.path / "data" / "toy.jsonl").write_text("")
    result, record = run(toy, mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["usage error: toy: the suite has no items*"])
    assert record["complete"] is False


@pytest.mark.parametrize("mode", MODES)
def test_unscored_item_fails(toy, mode):
    toy.makepyfile(
        test_unscored="""
import pytest

@pytest.mark.suite("toy")
def test_bare(bench_item, score):
    pass
"""
    )
    result, record = run(toy, mode, "test_unscored.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*recorded no score*"])
    assert record["counts"]["failed"] == 24


@pytest.mark.parametrize("mode", MODES)
def test_sigint_leaves_a_record_of_finished_items(toy, mode):
    record = toy.path / "record.json"
    args = [
        sys.executable,
        "-m",
        "pytest",
        "--backend",
        "fake",
        "--data-dir",
        "data",
        "--report-json",
        str(record),
        "--suite-option",
        "toy.delay=1.0",
        "--gate",
        "toy/accuracy>=0.99",
        "-p",
        "no:cacheprovider",
        "-v",
        *mode,
    ]
    proc = interruptible(args, toy.path)
    output = Output(proc)
    # interrupted once an item has passed (24 items at 1 s each: far from done), never
    # while a loaded machine is still starting pytest
    assert output.wait_for("PASSED"), "".join(output.lines)
    proc.send_signal(signal.SIGINT)
    out = output.finish()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    data = read_json(record)
    assert data["complete"] is False
    assert 1 <= data["counts"]["scored"] < 24
    assert data["counts"]["scored"] == len(data["items"])
    assert data["counts"]["expected"] == 24
    assert all(it["outcome"] == "passed" for it in data["items"])
    assert all(g["passed"] is None for g in data["gates"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "select",
    [["-k", "d1/ or d2/"], ["--deselect", "test_toy.py::test_toy[toy/d0/size]"]],
    ids=["k", "deselect"],
)
def test_a_subset_of_a_suite_decides_no_gate_unless_allowed(toy, mode, select):
    """-k, --deselect (and -m, --lf) leave out part of the suite: the gate that the subset
    passes is not decided and the run is INCOMPLETE; --allow-subset decides on it and the
    record says subset. merge refuses such a record as a shard."""
    kept = 8 if select[0] == "-k" else 23
    result, record = run(toy, mode, *select, "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1, result.stdout.str()
    assert record["counts"]["scored"] == record["counts"]["expected"] == kept
    assert record["complete"] is False and record["verdict"]["word"] == "INCOMPLETE"
    assert record["selection"]["deselected"] == {"toy": 24 - kept}
    assert record["selection"]["allow_subset"] is False
    [gate] = record["gates"]
    assert gate["passed"] is None and "--allow-subset decides on it" in gate["reason"]
    result.stdout.fnmatch_lines(
        [f"*INCOMPLETE (exit 1): a subset ran: *left out {24 - kept} of toy*"]
    )
    result, record = run(toy, mode, *select, "--gate", "toy/accuracy>=0.1", "--allow-subset")
    assert result.ret == 0, result.stdout.str()
    assert record["complete"] is True and record["selection"]["allow_subset"] is True
    assert record["gates"][0]["passed"] is True
    result.stdout.fnmatch_lines([f"*items: {kept} scored, 0 failed, of {kept} selected*"])
    from extractbench.plugins.cli.merge import MergeError, merge_records
    from extractbench.plugins.record import parse_record

    with pytest.raises(MergeError, match="made with a selection .* that left out items"):
        merge_records([parse_record(record)], ["subset.json"])


@pytest.mark.parametrize("mode", MODES)
def test_baseline_regression_gate_fails_only_on_a_real_drop(toy, mode):
    _, first = run(toy, mode)
    baseline = toy.path / "baseline.json"
    baseline.write_text((toy.path / "record.json").read_text())
    same, rec = run(toy, mode, "--baseline", str(baseline), "--max-regression", "0.02")
    assert same.ret == 0
    assert {c["verdict"] for c in rec["baseline"]["comparisons"]} == {"no significant change"}
    # degrade the "model": the colour answers move to a line the fake cannot find
    data = toy.path / "data" / "toy.jsonl"
    data.write_text(
        data.read_text().replace("Colour: red", "Hue: red").replace("Applicant:", "Firm:")
    )
    junit = toy.path / "junit.xml"
    worse, rec = run(
        toy, mode, "--baseline", str(baseline), "--max-regression", "0.02", "--junitxml", str(junit)
    )
    assert worse.ret == 1
    acc = next(c for c in rec["baseline"]["comparisons"] if c["metric"] == "toy/accuracy")
    assert acc["delta"] == pytest.approx(-9 / 24) and acc["failed"] is True
    worse.stdout.fnmatch_lines(["*FAILED regression::toy/accuracy*"])
    cases = [
        c for c in ET.parse(junit).getroot().iter("testcase") if c.get("classname") == "regression"
    ]
    assert {c.get("name") for c in cases} >= {"toy/accuracy"}


def test_missing_baseline_is_usage_error(toy):
    result, _ = run(toy, [], "--baseline", "nope.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--baseline nope.json: no such run record*"])


@pytest.mark.parametrize("mode", MODES)
def test_html_and_markdown_reports(toy, mode):
    html, md = toy.path / "report.html", toy.path / "summary.md"
    result, rec = run(
        toy,
        mode,
        "--html",
        str(html),
        "--self-contained-html",
        "--summary-md",
        str(md),
        "--gate",
        "toy/accuracy>=0.5",
        "--report-plots",
        "on",
    )
    assert result.ret == 0
    page = html.read_text()
    assert "extractbench: PASS" in page and "data:image/png;base64," in page
    assert "toy/d1/colour" in page and "accuracy=0.000" in page
    text = md.read_text()
    assert "| toy | accuracy | 0.6250 |" in text and "PASS >=0.5" in text
    assert any(p.endswith("-metrics-unit.png") for p in rec["artifacts"])
    assert any(p.endswith("-toy-distribution.png") for p in rec["artifacts"])
    assert page.count("data:image/png;base64,") >= 3  # means, distribution, by key


def test_distribution_plot_histograms_item_scores(tmp_path):
    from PIL import Image

    items = [
        {
            "id": f"s/{i}",
            "suite": "s",
            "scores": {"accuracy": float(i % 2), "length": i / 10, "none": None},
        }
        for i in range(20)
    ] + [{"id": f"other/{i}", "suite": "other", "scores": {"accuracy": 1.0}} for i in range(19)]
    record = parse_record({"schema_version": 2, "run_id": "r", "items": items})
    path = distribution_plot(record, "s", tmp_path / "d.png")
    assert path == tmp_path / "d.png"
    with Image.open(path) as image:  # two panels side by side: accuracy, length
        assert image.size[0] > image.size[1] > 100
    assert distribution_plot(record, "missing", tmp_path / "x.png") is None
    assert not (tmp_path / "x.png").exists()
    # 19 items: too few for a histogram (MIN_PLOT_N)
    assert distribution_plot(record, "other", tmp_path / "o.png") is None


def test_chart_titles_fit_their_figure(tmp_path, monkeypatch):
    """A long model name and run id wrap inside the figure instead of running off its edge
    (the score chart's title was cut off)."""
    from extractbench.plugins.outputs import plots

    checked: list[str] = []

    def save(plt, fig, path):
        fig.tight_layout()
        fig.canvas.draw()
        renderer, box = fig.canvas.get_renderer(), fig.bbox
        for text in [*fig.texts, *(ax.title for ax in fig.axes)]:
            if text.get_text():
                extent = text.get_window_extent(renderer)
                assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
                assert extent.y1 <= box.y1 + 1, text.get_text()
                checked.append(text.get_text())
        plt.close(fig)
        return path

    monkeypatch.setattr(plots, "_save", save)
    agg = {"mean": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 20, "ci_method": "bootstrap"}
    record = parse_record({
        "schema_version": 2, "run_id": "20261128T081445Z-ddc972",
        "model": {"name": "acme-invoice-extractor-v2.3-instruct-2025-11-27-Q4_K_M.gguf"},
        "aggregates": {"kv/accuracy": agg, "kv/accuracy_normalized_by_document_and_key": agg},
    })  # fmt: skip
    plots.metric_plots(record, tmp_path, "run")
    assert checked and "acme-invoice-extractor" in checked[0]


def test_help_lists_every_option(toy):
    result = toy.runpytest_subprocess("--help")
    assert result.ret == 0
    text = result.stdout.str()
    for option in (
        "--model",
        "--backend",
        "--data-dir",
        "--limit",
        "--full",
        "--gate",
        "--suite-option",
        "--baseline",
        "--max-regression",
        "--summary-md",
        "--report-json",
        "--skip-missing-data",
        "--allow-incomparable-baseline",
        "--request-timeout",
        "--max-retries",
        "--max-failures",
        "--offline",
        "--mirror",
    ):
        assert option in text


@pytest.mark.parametrize("mode", MODES)
def test_default_caps_apply_unless_full_and_limit_never_enlarges(toy, mode):
    toy.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n[tool.extractbench.limits]\ntoy = 4\n"
    )
    _, capped = run(toy, mode)
    assert capped["counts"]["scored"] == 4
    assert capped["suites"]["toy"]["limit"] == {"value": 4, "source": "[tool.extractbench.limits]"}
    _, limited = run(toy, mode, "--limit", "8")
    assert limited["counts"]["scored"] == 4
    _, full = run(toy, mode, "--full", "--limit", "8")
    assert full["counts"]["scored"] == 8
    _, everything = run(toy, mode, "--full")
    assert everything["counts"]["scored"] == 24


def test_the_checkout_without_the_installed_plugin_is_one_usage_line():
    """The root conftest turns a checkout used without ``pip install -e .`` (here: the
    entry point blocked) into one line naming the fix."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:extractbench", "-p", "no:cacheprovider",
         "--collect-only", "-q", "suites/fda"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "pip install -e ." in proc.stderr
    assert "fixture 'bench_item' not found" not in proc.stdout
