"""``--shard K/N`` and ``extractbench merge``: disjoint shards covering every group, and
merged shards equal to one run (record, exit status, JUnit), serial and with -n 2."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import pytest

from extractbench.plugins.cli.main import main as cli_main
from extractbench.plugins.cli.merge import MergeError, merge_records
from extractbench.plugins.record import parse_record
from extractbench.plugins.run.shard import Shard, parse_shard
from tests.conftest import read_json
from tests.test_plugin import MODES

GATE = "toy/accuracy>=0.7"  # the toy scores 0.625: the gate fails, in one run and merged


def test_shards_are_disjoint_and_cover_every_group():
    groups = [f"fda/K{n:06d}/c{c}" for n in range(300) for c in range(3)]
    for count in (1, 2, 3, 7):
        owners = [[k for k in range(1, count + 1) if Shard(k, count).holds(g)] for g in groups]
        assert all(len(o) == 1 for o in owners)  # each group in exactly one shard
        sizes = [sum(o == [k] for o in owners) for k in range(1, count + 1)]
        assert min(sizes) > 0.8 * len(groups) / count  # and the split is even
    assert parse_shard("2/3") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match=f"--shard {bad}: expected K/N"):
            parse_shard(bad)


def _shards(toy: pytest.Pytester, mode: list[str], count: int, *args: str) -> list[str]:
    paths = []
    for k in range(1, count + 1):
        path = str(toy.path / f"shard{k}.json")
        result = toy.runpytest_subprocess(
            "--backend", "fake", "--data-dir", "data", "--report-json", path,
            "--shard", f"{k}/{count}", *mode, *args,
        )  # fmt: skip
        # a shard never decides the gates; one that holds no group measured nothing (exit 5)
        shard = read_json(path)
        empty = shard["counts"]["expected"] == 0
        assert result.ret == (5 if empty else 0), result.stdout.str()
        if not empty:  # exit 0 for the CI matrix, but never the word PASS: merge decides
            assert shard["verdict"]["word"] == "SHARD"
            result.stdout.fnmatch_lines(
                [f"extractbench verdict: SHARD (exit 0): shard {k}/{count} complete: not a "
                 f"release decision; merge the {count} records (extractbench merge)*"]
            )  # fmt: skip
            assert "PASS" not in result.stdout.str().split("extractbench verdict")[-1]
        paths.append(path)
    return paths


def _cases(path) -> dict[tuple[str, str], bool]:
    """JUnit test cases (classname, name) -> failed."""
    root = ET.parse(path).getroot()
    return {
        (c.get("classname"), c.get("name")): c.find("failure") is not None
        for c in root.iter("testcase")
    }


@pytest.mark.parametrize("mode", MODES)
def test_three_merged_shards_equal_one_run(toy, mode, capsys):
    one = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "one.json",
        "--junitxml", "one.xml", "--gate", GATE, *mode,
    )  # fmt: skip
    single = read_json(toy.path / "one.json")
    paths = _shards(toy, mode, 3, "--gate", GATE)
    shards = [read_json(p) for p in paths]
    assert [s["settings"]["shard"] for s in shards] == ["1/3", "2/3", "3/3"]
    assert all(
        g["passed"] is None and "extractbench merge" in g["reason"]
        for s in shards
        for g in s["gates"]
    )
    ids = [{it["id"] for it in s["items"]} for s in shards]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    assert set().union(*ids) == {it["id"] for it in single["items"]}
    status = cli_main(["merge", *paths, "-o", str(toy.path / "merged.json"),
                       "--junitxml", str(toy.path / "merged.xml")])  # fmt: skip
    merged = read_json(toy.path / "merged.json")
    assert status == one.ret == 1 == merged["exit_status"] == single["exit_status"]
    assert merged["aggregates"] == single["aggregates"]  # to the last digit
    assert merged["gates"] == single["gates"]
    assert merged["verdict"] == single["verdict"]
    for key in ("items", "expected", "scored", "failed", "calls"):
        assert merged["counts"][key] == single["counts"][key], key
    assert [(it["id"], it["scores"], it["prediction"]) for it in merged["items"]] == [
        (it["id"], it["scores"], it["prediction"]) for it in single["items"]
    ]
    assert merged["suites"]["toy"]["items_selected"] == single["suites"]["toy"]["items_selected"]
    assert _cases(toy.path / "merged.xml") == _cases(toy.path / "one.xml")
    out = capsys.readouterr().out
    assert "merged 3 shards: 24 items scored" in out and "verdict: FAIL (exit 1)" in out


def test_merge_refuses_records_that_measured_something_else(toy, capsys):
    paths = _shards(toy, [], 2)
    shards = [read_json(p) for p in paths]
    names = ["a.json", "b.json"]
    first = parse_record(shards[0])
    assert merge_records([first, parse_record(shards[1])], names).counts.scored == 24

    def refused(change, message):
        other = copy.deepcopy(shards[1])
        change(other)
        with pytest.raises(MergeError, match=message):
            merge_records([first, parse_record(other)], names)

    refused(
        lambda r: r["model"].update(fingerprint="llama-cpp:abc:seed=0"),
        r"^b.json: another model than a.json \(model.fingerprint",
    )
    refused(lambda r: r["settings"].update(seed=1), r"another generation settings \(seed\)")
    refused(
        lambda r: r["settings"].update(suite_options={"toy": {"delay": "1"}}),
        "another suite options",
    )
    refused(lambda r: r["data"].update(manifest_version="1999.1"), "another data manifest")
    refused(lambda r: r["code"].update(source_sha256="0" * 64), "another code version")
    refused(lambda r: r["settings"].update(shard="1/2"), r"shard 1/2 is also a.json")
    refused(lambda r: r["settings"].update(shard="2/3"), "another split")
    refused(lambda r: r["settings"].pop("shard"), "not a shard's record")
    with pytest.raises(MergeError, match=r"^shard 2/2 missing"):
        merge_records([first], ["a.json"])
    assert cli_main(["merge", paths[0], "-o", str(toy.path / "m.json")]) == 4
    assert "extractbench merge: shard 2/2 missing" in capsys.readouterr().err


def test_a_shard_without_groups_measured_nothing_and_a_shard_cannot_decide_a_baseline(toy):
    """The toy's six groups leave shard 1/3 empty: like any run that measured nothing it
    exits 5 (its record still merges, above); a shard with --baseline is one usage line
    pointing to merge."""
    assert not any(Shard(1, 3).holds(f"toy/d{d}") for d in range(6))
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "empty.json", "--shard", "1/3"
    )
    record = read_json(toy.path / "empty.json")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert record["counts"]["items"] == 0 and record["verdict"]["word"] == "NOT EVALUATED"
    (toy.path / "old.json").write_text("{}")
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--shard", "1/3", "--baseline", "old.json"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--shard with --baseline: a shard decides nothing; give --baseline to `extractbench merge`*"
        ]
    )
    result = toy.runpytest_subprocess("--backend", "fake", "--shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard 4/3: expected K/N with 1 <= K <= N*"])


def test_a_rescored_shard_record_stays_that_shard(toy):
    """``--rescore`` of a shard's record re-scores that shard: its gates stay undecided
    (merge decides), a baseline is refused as for the shard, and ``--shard`` beside
    ``--rescore`` is one usage line."""
    (path,) = [p for p in _shards(toy, [], 2, "--gate", GATE) if p.endswith("shard2.json")]
    result = toy.runpytest_subprocess(
        "--rescore", path, "--data-dir", "data", "--gate", GATE, "--report-json", "again.json"
    )
    assert result.ret == 0, result.stdout.str()
    again, shard = read_json(toy.path / "again.json"), read_json(path)
    assert again["settings"]["shard"] == "2/2" and again["aggregates"] == shard["aggregates"]
    assert [g["passed"] for g in again["gates"]] == [None]
    assert "shard 2/2" in again["gates"][0]["reason"]
    (toy.path / "old.json").write_text("{}")
    result = toy.runpytest_subprocess(
        "--rescore", path, "--data-dir", "data", "--baseline", "old.json"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard with --baseline: a shard decides nothing*"])
    result = toy.runpytest_subprocess("--rescore", path, "--shard", "1/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--shard with --rescore: re-score each shard's record*"])


def test_merged_junit_is_valid_xml_when_an_answer_holds_control_characters(toy, tmp_path):
    from extractbench.plugins.outputs.junit import junit_xml

    paths = _shards(toy, [], 2)
    shard = read_json(paths[0])
    shard["items"][0]["prediction"] = "bell\x07 nul\x00 esc\x1b ok"
    shard["items"][0]["outcome"], shard["items"][0]["error"] = "failed", "bad\x0cpage"
    root = ET.fromstring(junit_xml(parse_record(shard)))  # raised ParseError before
    first = next(p for p in root.iter("system-out") if "prediction:" in (p.text or ""))
    assert "prediction: bell#x07 nul#x00 esc#x1B ok" in first.text
    assert [f.get("message") for f in root.iter("failure")] == ["bad#x0Cpage"]
