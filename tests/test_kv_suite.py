"""The ``kv`` suite: key-value extraction on a user's own JSON Lines file, run from a project
folder by ``--pyargs``; every bad input is one line naming ``file:line`` and exit 4 before
any model call."""

from __future__ import annotations

import json

import pytest

from tests.conftest import PROJECT_ADDOPTS

MODES = {"serial": (), "xdist": ("-n", "2")}


def _project(pytester: pytest.Pytester, rows: list[dict] | None = None) -> None:
    (pytester.path / "docs").mkdir()
    made = []
    for i in range(10):
        (pytester.path / "docs" / f"inv{i}.txt").write_text(
            f"INVOICE {i}\nissuer: Company{i} Ltd\ntotal: {100 + i}.50 EUR\n"
        )
        made += [
            {"document": f"docs/inv{i}.txt", "key": "issuer", "value": f"Company{i} Ltd"},
            {"document": f"docs/inv{i}.txt", "key": "total", "value": [f"{100 + i}.50", "x"]},
        ]
    rows = made if rows is None else rows
    (pytester.path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.makefile(
        ".toml",
        pyproject=f"""
        [tool.pytest.ini_options]
        addopts = "{PROJECT_ADDOPTS}"

        [tool.extractbench.gates]
        "kv/accuracy" = ">= 0.01"
        """,
    )


def _run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.kv", "--backend", "fake",
        "--suite-option", "kv.path=items.jsonl", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_a_project_s_own_items_run_under_its_gates(pytester, mode):
    _project(pytester)
    result = _run(pytester, *MODES[mode])
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    assert len(record["items"]) == 20
    assert {it["meta"]["key"] for it in record["items"]} == {"issuer", "total"}
    assert record["gates"][0]["expression"] == "kv/accuracy>=0.01"
    notes = record["suites"]["kv"]["notes"]
    assert notes["rows"] == 20 and notes["documents"] == 10 and len(notes["sha256"]) == 64
    # the fake backend copies what follows 'key:' in the document: every value is found
    assert record["aggregates"]["kv/accuracy"]["mean"] == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_a_label_not_found_in_its_document_is_counted_shown_and_gateable(pytester, mode):
    """A misspelt value is no item (n shrinks from 4 to 3): the verdict block, the markdown
    summary, the HTML page and the record say so, and ``kv/missing_labels<=0`` fails."""
    rows = [
        {"document": "Order 5\ncity: Oslo\n", "key": "city", "value": "Oslo"},
        {"document": "Order 6\ncity: Rome\n", "key": "city", "value": "Rome"},
        {"document": "Order 7\ncity: Lima\n", "key": "city", "value": "Lima"},
        {"document": "Order 8\ncity: Bergen\n", "key": "city", "value": "Bregen"},
    ]
    _project(pytester, rows)
    outputs = ("--html", "r.html", "--summary-md", "s.md")
    result = _run(pytester, "--gate", "kv/missing_labels<=0", *outputs, *MODES[mode])
    assert result.ret == 1, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    assert record["suites"]["kv"]["missing_labels"] == ["items.jsonl:4"]
    assert len(record["items"]) == 3
    (gate,) = [g for g in record["gates"] if g["metric"] == "kv/missing_labels"]
    assert (gate["passed"], gate["value"], gate["n"]) == (False, 1.0, 4)
    said = "kv: 1 of 4 labels not found in their document, so not items (n is 3;"
    lines = result.stdout.str().splitlines()
    verdict = next(i for i, line in enumerate(lines) if "extractbench verdict: FAIL" in line)
    shown = next(i for i, line in enumerate(lines) if line.startswith(f"MISSING LABELS  {said}"))
    assert verdict - 3 <= shown < verdict and lines[shown].endswith("items.jsonl:4")
    assert said in (pytester.path / "s.md").read_text()
    assert said in (pytester.path / "r.html").read_text()
    again = _run(pytester, *MODES[mode])  # counted and shown, but no gate refuses it
    assert again.ret == 0 and f"MISSING LABELS  {said}" in again.stdout.str()


def test_text_documents_and_ids(pytester):
    _project(pytester, [
        {"document": "Order 5\ncity: Oslo\n", "key": "city", "value": "Oslo", "id": "a"},
        {"document": "Order 6\ncity: Rome\n", "key": "city", "value": "Rome", "id": "b"},
    ])  # fmt: skip
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    ids = [it["id"] for it in json.loads(path.read_text())["items"]]
    assert sorted(i.rsplit("/", 1)[1] for i in ids) == ["a", "b"]
    assert all(i.startswith("kv/text_") for i in ids)  # a text document is named by its hash


BAD = {
    "missing field": ({"document": "docs/inv0.txt", "key": "issuer"}, "missing field(s) value"),
    "wrong type": ({"document": "docs/inv0.txt", "key": 7, "value": "x"}, "key must be a non-empty string"),
    "unreadable document": ({"document": "docs/nope.txt", "key": "k", "value": "x"}, "document 'docs/nope.txt' cannot be read"),
    "unknown field": ({"document": "docs/inv0.txt", "key": "k", "vaule": "x"}, "unknown field(s) vaule"),
    "empty value list": ({"document": "docs/inv0.txt", "key": "k", "value": []}, "value must be a non-empty string"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_a_bad_line_is_one_line_naming_file_and_line(pytester, case):
    row, message = BAD[case]
    good = {"document": "docs/inv1.txt", "key": "issuer", "value": "Company1 Ltd"}
    _project(pytester, [good, row])
    result = _run(pytester)
    assert result.ret == 4
    text = result.stdout.str() + result.stderr.str()
    assert f"items.jsonl:2: {message}" in text, text[-2000:]
    assert "model calls: 0" in text or "passed" not in text  # no item ran


@pytest.mark.parametrize(
    "rows, message",
    [
        ([], "no items"),
        ([{"document": "docs/inv0.txt", "key": "k", "value": "Company0", "id": "same"},
          {"document": "docs/inv1.txt", "key": "k", "value": "Company1", "id": "same"}],
         "items.jsonl:2: duplicate id 'same' (line 1)"),
        ([{"document": "docs/inv0.txt", "key": "k", "value": "Company0"},
          {"document": "docs/inv0.txt", "key": "k", "value": "INVOICE"}],
         "items.jsonl:2: duplicate item: document 'docs/inv0.txt', key 'k' (line 1)"),
    ],
    ids=["empty file", "duplicate id", "duplicate pair"],
)  # fmt: skip
def test_a_bad_file_is_one_line_and_exit_4(pytester, rows, message):
    _project(pytester, rows)
    result = _run(pytester)
    assert result.ret == 4
    assert message in result.stdout.str() + result.stderr.str()


def test_without_kv_path_the_suite_says_what_it_needs(pytester):
    _project(pytester)
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.kv", "--backend", "fake"
    )
    assert result.ret == 4
    assert "kv.path=FILE is required" in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
def test_the_user_s_items_shard_merge_compare_and_export_as_a_paper_suite_s(pytester, capsys):
    """Shards of the user's items merge into the single run's verdict, a later run compares
    with it as a baseline, and the JUnit, HTML and CTRF files hold its items."""
    from extractbench.plugins.cli.main import main as cli_main

    _project(pytester)
    whole = _run(pytester, "--report-json", "one.json", "--junitxml", "one.xml",
                 "--html", "one.html", "--ctrf", "ctrf.json")  # fmt: skip
    assert whole.ret == 0, whole.stdout.str()[-2000:]
    single = json.loads((pytester.path / "one.json").read_text())
    shards = []
    for k in (1, 2):
        shard = _run(pytester, "--shard", f"{k}/2", "--report-json", f"s{k}.json")
        assert shard.ret == 0, shard.stdout.str()[-2000:]
        shards.append(str(pytester.path / f"s{k}.json"))
    parts = [{it["id"] for it in json.loads(open(p).read())["items"]} for p in shards]
    assert parts[0] and parts[1] and not parts[0] & parts[1]
    assert cli_main(["merge", *shards, "-o", str(pytester.path / "merged.json")]) == 0
    capsys.readouterr()
    merged = json.loads((pytester.path / "merged.json").read_text())
    assert merged["aggregates"] == single["aggregates"] and merged["gates"] == single["gates"]
    again = _run(pytester, "--baseline", "one.json", "--max-regression", "0.02",
                 "--report-json", "two.json")  # fmt: skip
    assert again.ret == 0, again.stdout.str()[-2000:]
    baseline = json.loads((pytester.path / "two.json").read_text())["baseline"]
    assert baseline["shared_items"] == 20 and not baseline["failed"]
    junit = (pytester.path / "one.xml").read_text()
    assert junit.count("<testcase") == 21 and 'classname="gate"' in junit  # 20 items, 1 gate
    assert "kv/accuracy" in (pytester.path / "one.html").read_text()
    ctrf = json.loads((pytester.path / "ctrf.json").read_text())
    assert ctrf["results"]["summary"]["passed"] >= 20


OUTSIDE = {
    "dotdot": lambda p, secret: "../outside/creds.json",
    "absolute": lambda p, secret: str(secret),
    "symlink": lambda p, secret: (
        (p / "docs" / "passwd.txt").symlink_to(secret) or "docs/passwd.txt"
    ),
}


@pytest.mark.parametrize("case", OUTSIDE)
def test_a_document_outside_the_items_folder_is_refused_and_never_read(pytester, case):
    """A relative path leaving the folder, an absolute path, a link out of it: refused in
    one line (exit 4); the file's text lands in no record or report."""
    secret = pytester.path.parent / "outside" / "creds.json"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text('{"password": "hunter2"} issuer: hunter2')
    _project(pytester)
    name = OUTSIDE[case](pytester.path, secret)
    rows = [{"document": "docs/inv0.txt", "key": "issuer", "value": "Company0 Ltd"},
            {"document": name, "key": "issuer", "value": "hunter2"}]  # fmt: skip
    (pytester.path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = _run(pytester, "--html=page.html")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, text[-2000:]
    assert f"items.jsonl:2: {name!r} is outside {pytester.path.resolve()}" in text
    assert "--suite-option kv.root=DIR" in text and "hunter2" not in text.replace(
        '"value": "hunter2"', ""
    )
    (record,) = (pytester.path / "reports").glob("*.json")  # the usage error's record
    assert "password" not in record.read_text() and "password" not in text
    wider = _run(pytester, f"--suite-option=kv.root={pytester.path.parent}")
    assert wider.ret == 0, wider.stdout.str()[-2000:]  # a wider root the user names


def test_a_line_or_a_document_over_its_limit_is_one_line_naming_how_to_raise_it(pytester):
    _project(pytester)
    with (pytester.path / "items.jsonl").open("a") as fh:
        fh.write(
            json.dumps({"document": "x" * 3000 + "\ntotal: 1", "key": "total", "value": "1"}) + "\n"
        )
    result = _run(pytester, "--suite-option=kv.max_line_mb=0.002")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4
    assert (
        "items.jsonl:21: a line over the limit of 0.002 MB; raise it with --suite-option kv.max_line_mb=N"
        in text
    )
    result = _run(pytester, "--suite-option=kv.max_file_mb=0.00005")  # 50 bytes
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4
    assert (
        "over the limit of 5e-05 MB for one of your files; raise it with --suite-option kv.max_file_mb=N"
        in text
    )


def test_without_a_config_file_the_reports_stay_in_the_folder_the_command_runs_in(pytester):
    """With no pytest configuration file, pytest takes its rootdir from the arguments that
    name paths, ``--data-dir DIR`` after a space included: the run's files still go to
    ``reports/`` where the command runs, never into DIR or a folder above."""
    _project(pytester)
    (pytester.path / "pyproject.toml").unlink()
    elsewhere = pytester.path.parent / f"{pytester.path.name}-data"
    elsewhere.mkdir()
    result = _run(pytester, "--data-dir", str(elsewhere), "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-2000:]
    (record,) = (pytester.path / "reports").glob("*.json")
    assert len(json.loads(record.read_text())["items"]) == 20
    assert not (elsewhere / "reports").exists()
    assert not (pytester.path.parent / "reports").exists()


def _record(pytester: pytest.Pytester, name: str | None = None) -> dict:
    if name is not None:
        return json.loads((pytester.path / name).read_text())
    (path,) = (pytester.path / "reports").glob("*.json")
    return json.loads(path.read_text())


_BILL = "Bill 1\nissuer: Acme Ltd (trading as Acme)\ntotal: 1,204.50 EUR incl. VAT\ncity: OSLO.\ndue: 30.07.2025 (net 14)\n"
VERBOSE = [
    {"document": _BILL, "key": "issuer", "value": "Acme Ltd"},
    {"document": _BILL, "key": "total", "value": "1,204.50"},
    {"document": _BILL, "key": "city", "value": "Oslo"},
    {"document": _BILL, "key": "due", "value": "30.07.2025"},
]  # fmt: skip
PER_KEY = 'kv.metrics={"total": "number", "due": "date"}'


@pytest.mark.parametrize(
    "options, accuracy",
    [
        ((), 1.0),  # contains: every verbose answer holds its value
        (("kv.metric=exact",), 0.0),  # no answer is the value alone
        (("kv.metric=normalized",), 0.25),  # "OSLO." is "Oslo"
        (("kv.metric=normalized", PER_KEY, "kv.date_dayfirst=true"), 0.75),
        (("kv.metric=fuzzy", "kv.fuzzy_threshold=40"), 1.0),
    ],
    ids=["contains", "exact", "normalized", "normalized+number+date per key", "fuzzy"],
)
def test_the_metric_per_key_decides_what_matches(pytester, options, accuracy):
    """The fake backend answers the rest of the document's line: a verbose answer
    containment counts right, and each named metric decides as its definition says."""
    _project(pytester, VERBOSE)
    result = _run(pytester, *[f"--suite-option={o}" for o in options])
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    record = _record(pytester)
    assert record["aggregates"]["kv/accuracy"]["mean"] == accuracy
    protocol = record["suites"]["kv"]["notes"]["protocol"]
    assert protocol["metric"] == (options[0].split("=")[1] if options else "contains")
    metrics = {it["meta"]["key"]: it["details"]["metric"] for it in record["items"]}
    per_key = PER_KEY in options
    assert metrics["total"] == ("number" if per_key else protocol["metric"])
    assert metrics["due"] == ("date" if per_key else protocol["metric"])


@pytest.mark.slow
def test_a_prompt_template_budget_and_whole_documents_reach_the_model(pytester):
    """``kv.prompt``, ``kv.max_tokens`` and ``kv.whole_document`` change the items the
    model sees; the record names them; a document over ``kv.context_tokens`` is one line
    and exit 4 before any model call."""
    long_doc = "filler words here. " * 2000 + "\ncity: Bergen\n"
    rows = [{"document": long_doc, "key": "city", "value": "Bergen"}]
    _project(pytester, rows)
    template = "Read the text.\n{document}\nAnswer with the {key} only.\n{key}:"
    opts = [f"--suite-option=kv.prompt={template}", "--suite-option=kv.max_tokens=7",
            "--suite-option=kv.whole_document=true"]  # fmt: skip
    result = _run(pytester, *opts)
    assert result.ret == 0, result.stdout.str()[-2000:]
    record = _record(pytester)
    notes = record["suites"]["kv"]["notes"]
    assert notes["chunks"] == 1 and notes["max_tokens"] == 7  # one prompt: the whole document
    assert notes["protocol"]["prompt"] == template and notes["protocol"]["whole_document"]
    assert record["aggregates"]["kv/accuracy"]["mean"] == 1.0
    _run(pytester, "--report-json=chunked.json")
    assert _record(pytester, "chunked.json")["suites"]["kv"]["notes"]["chunks"] > 1
    small = _run(pytester, *opts, "--suite-option=kv.context_tokens=2000")
    text = small.stdout.str() + small.stderr.str()
    assert small.ret == 4, text[-2000:]
    assert "does not fit kv.context_tokens=2000" in text and "unset kv.whole_document" in text
    bad = _run(pytester, "--suite-option=kv.prompt={chunk} says:")
    assert bad.ret == 4
    assert "must hold {key} and {chunk} or {document}" in bad.stdout.str() + bad.stderr.str()


def test_a_baseline_measured_with_another_protocol_is_refused_in_one_line(pytester):
    _project(pytester)
    first = _run(pytester, "--report-json=base.json")
    assert first.ret == 0, first.stdout.str()[-2000:]
    other = _run(pytester, "--suite-option=kv.metric=exact", "--baseline=base.json")
    text = other.stdout.str() + other.stderr.str()
    assert other.ret == 4, text[-2000:]
    assert "measured with another protocol (kv.metric: 'contains' in the baseline, 'exact' in this run)" in text
    same = _run(pytester, "--baseline=base.json")
    assert same.ret == 0, same.stdout.str()[-2000:]
    anyway = _run(pytester, "--suite-option=kv.metric=exact", "--baseline=base.json",
                  "--allow-incomparable-baseline")  # fmt: skip
    assert anyway.ret == 0, anyway.stdout.str()[-2000:]


def test_compare_and_report_refuse_records_of_another_protocol(pytester):
    """``kv.metric`` differs between two records: ``compare`` and ``report --baseline``
    refuse in one line (exit 4), as ``--baseline`` does, also for records that do not name
    their protocol options (the installed suite's ``Options`` says which they are)."""
    _project(pytester)
    for name, extra in (("base.json", ()), ("exact.json", ("--suite-option=kv.metric=exact",))):
        result = _run(pytester, f"--report-json={name}", *extra)
        assert result.ret in (0, 1), result.stdout.str()[-2000:]
        record = _record(pytester, name)
        record["settings"].pop("protocol_options", None)
        (pytester.path / f"old-{name}").write_text(json.dumps(record))
    change = "kv.metric: 'contains' in the baseline, 'exact' in"
    for base, new in (("base.json", "exact.json"), ("old-base.json", "old-exact.json")):
        for command in (["compare", base, new], ["report", new, "--baseline", base]):
            refused = pytester.run("extractbench", *command)
            assert refused.ret == 4, refused.stdout.str() + refused.stderr.str()
            (line,) = refused.stderr.lines
            assert change in line and "--allow-incomparable-baseline" in line
    allowed = pytester.run("extractbench", "compare", "base.json", "exact.json",
                           "--allow-incomparable-baseline")  # fmt: skip
    assert allowed.ret == 0 and "kv/accuracy" in allowed.stdout.str()


SCHEMA = {
    "type": "object",
    "properties": {"number": {"type": "string"}, "total": {"type": "number"},
                   "city": {"type": "string", "maxLength": 20}},
    "required": ["number", "total", "city"],
}  # fmt: skip


def _schema_project(pytester: pytest.Pytester) -> None:
    """Four documents whose ``JSON:`` line the fake backend copies as its answer: one
    right, one with a wrong and an extra field, one missing a field, one not JSON."""
    answers = [
        '{"number": "A-1", "total": 10.5, "city": "Oslo"}',
        '{"number": "A-2", "total": 99, "city": "Rome", "note": "x"}',
        '{"number": "A-3", "city": "Lima"}',
        '{"number": "A-4", "total": 7, "city": "Bergen"',
    ]
    expected = [
        {"number": "A-1", "total": 10.5, "city": "Oslo"},
        {"number": "A-2", "total": 20, "city": "Rome"},
        {"number": "A-3", "total": 3, "city": "Lima"},
        {"number": "A-4", "total": 7, "city": "Bergen"},
    ]
    rows = [{"document": f"Order {i}\nJSON: {a}\n", "expected": e}
            for i, (a, e) in enumerate(zip(answers, expected, strict=True))]  # fmt: skip
    _project(pytester, rows)
    (pytester.path / "schema.json").write_text(json.dumps(SCHEMA))


@pytest.mark.parametrize("mode", MODES)
def test_schema_mode_scores_fields_documents_and_json_validity(pytester, mode):
    _schema_project(pytester)
    result = _run(pytester, "--suite-option=kv.schema=schema.json",
                  "--suite-option=kv.schema_prompt={document}\nJSON:",
                  "--suite-option=kv.metric=exact", "--ignore-project-gates",
                  *MODES[mode])  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    record = _record(pytester)
    agg = {k: v["mean"] for k, v in record["aggregates"].items() if k.startswith("kv/")}
    assert agg["kv/accuracy"] == 0.25  # one document with every field right
    assert agg["kv/json_valid"] == 0.75 and agg["kv/schema_valid"] == 0.5  # A-3 lacks total
    assert agg["kv/field/number"] == 0.75 and agg["kv/field/total"] == 0.25
    assert agg["kv/field_accuracy"] == pytest.approx((1 + 2 / 3 + 2 / 3 + 0) / 4)
    details = {it["meta"]["doc_id"][-4:]: it["details"] for it in record["items"]}
    by_number = {d["problem"] or "ok": d for d in details.values()}
    assert any(d["wrong"] == ["total"] and d["extra"] == ["note"] for d in details.values())
    assert any(d["missing"] == ["total"] and not d["wrong"] for d in details.values())
    assert any(p.startswith("not valid JSON") for p in by_number)
    assert {d["constraint"] for d in details.values()} == {"none"}  # the fake honours no grammar
    notes = record["suites"]["kv"]["notes"]
    assert notes["mode"] == "schema" and notes["grammar"].startswith("llama.cpp json_schema_to_gbnf")
    assert notes["fields"] == ["number", "total", "city"]


def test_schema_mode_refuses_an_expected_object_its_schema_rejects(pytester):
    _schema_project(pytester)
    rows = [{"document": "Order\nJSON: {}\n", "expected": {"number": 5, "total": 1, "city": "x"}}]
    (pytester.path / "items.jsonl").write_text(json.dumps(rows[0]) + "\n")
    result = _run(pytester, "--suite-option=kv.schema=schema.json")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, text[-2000:]
    assert "items.jsonl:1: expected is not valid under kv.schema (number: 5 is not of type 'string')" in text


@pytest.mark.parametrize(
    ("flavour", "chat", "sent", "constraint"),
    [
        (None, "off", "response_format", "response_format json_schema"),
        (None, "on", "response_format", "response_format json_schema"),
        ("llama-server", "off", "grammar", "json-schema grammar"),
    ],
    ids=["server-completions", "server-chat", "llama-server"],
)
def test_schema_mode_sends_the_schema_to_a_server_and_the_grammar_to_llama_server(
    pytester, flavour, chat, sent, constraint
):
    from tests.fake_openai import MODEL_ID, FakeOpenAIServer

    _schema_project(pytester)
    server = FakeOpenAIServer(flavour=flavour).start()
    try:
        result = pytester.runpytest_subprocess(
            "--pyargs", "extractbench.suites.kv", "--backend", "openai", "--base-url",
            server.url, "--model-name", MODEL_ID, "--chat", chat, "--no-cache",
            "--suite-option", "kv.path=items.jsonl", "--suite-option=kv.schema=schema.json",
            "--suite-option=kv.schema_prompt={document}\nJSON:",
            "--suite-option=kv.metric=exact", "--ignore-project-gates",
        )  # fmt: skip
    finally:
        server.stop()
    assert result.ret == 0, result.stdout.str()[-2000:]
    asked = [r for r in server.requests if r["path"].endswith("completions")]
    assert len(asked) == 4
    for request in asked:
        if sent == "response_format":  # OpenAI's structured outputs: the bounded schema, strict
            assert "grammar" not in request
            form = request["response_format"]
            assert form["type"] == "json_schema" and form["json_schema"]["strict"] is True
            assert form["json_schema"]["name"] == "extraction"
            schema = form["json_schema"]["schema"]
            assert schema["required"] == SCHEMA["required"]
            assert schema["properties"]["city"] == {"type": "string", "maxLength": 20}
            assert schema["properties"]["number"]["maxLength"] > 0  # bounded like the grammar
        else:  # llama.cpp's GBNF, the in-process backend's very grammar
            assert "response_format" not in request
            assert "root ::=" in request["grammar"]
    record = _record(pytester)
    assert {it["details"]["constraint"] for it in record["items"]} == {constraint}
    agg = {k: v["mean"] for k, v in record["aggregates"].items() if k.startswith("kv/")}
    assert agg["kv/accuracy"] == 0.25  # the server answers as the fake backend does
