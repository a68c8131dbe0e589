"""One path from score to exit code: the verdict (``plugins.verdict.decide``) and the
outputs (``plugins.outputs.write_outputs``) are called once per live run, per
``--rescore``, per ``merge`` and per ``report``, and all four agree on the recorded runs
of the harness's scenarios; a backend installs through the ``extractbench.backends``
entry point."""

from __future__ import annotations

import os

import pytest

from extractbench import plugins
from extractbench.plugins.cli.main import main as cli_main
from tests.conftest import read_json
from tests.test_plugin import MODES


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[object]]:
    """Count the calls of the two functions every path ends with."""
    calls: dict[str, list[object]] = {"decide": [], "write_outputs": []}
    real_decide, real_write = plugins.verdict.decide, plugins.outputs.write_outputs

    def decide(*args: object, **kwargs: object) -> object:
        calls["decide"].append(args[0])
        return real_decide(*args, **kwargs)

    def write_outputs(*args: object, **kwargs: object) -> object:
        calls["write_outputs"].append(args[0])
        return real_write(*args, **kwargs)

    monkeypatch.setattr(plugins.verdict, "decide", decide)
    monkeypatch.setattr(plugins.outputs, "write_outputs", write_outputs)
    return calls


def _counts(calls: dict[str, list[object]]) -> tuple[int, int]:
    counts = (len(calls["decide"]), len(calls["write_outputs"]))
    calls["decide"].clear()
    calls["write_outputs"].clear()
    return counts


def test_each_path_decides_once_and_writes_once(toy, spies, capsys):
    common = ["--backend", "fake", "--data-dir", "data", "-p", "no:cacheprovider"]
    for shard in ("1/2", "2/2"):
        result = toy.runpytest_inprocess(
            *common,
            "--shard",
            shard,
            "--report-json",
            f"s{shard[0]}.json",
            "--gate",
            "toy/accuracy>=0.5",
        )
        assert result.ret in (0, 5) and _counts(spies) == (1, 1)
    result = toy.runpytest_inprocess(*common, "--report-json", "run.json", "--junitxml", "j.xml")
    assert result.ret == 0 and _counts(spies) == (1, 1)
    result = toy.runpytest_inprocess(*common, "--rescore", "run.json", "--report-json", "re.json")
    assert result.ret == 0 and _counts(spies) == (1, 1)
    path = str(toy.path)
    status = cli_main(["merge", f"{path}/s1.json", f"{path}/s2.json", "-o", f"{path}/m.json"])
    assert status == 0 and _counts(spies) == (1, 1)
    status = cli_main(["report", f"{path}/run.json", "--html", f"{path}/p.html"])
    assert status == 0 and _counts(spies) == (1, 1)
    capsys.readouterr()


# Scenarios of the harness's tests, each a recorded run: the exit status, the record's
# verdict, `extractbench report` of the record and, where the record logs generations,
# `--rescore` of it all agree.
SCENARIOS = {
    "pass": [],
    "fail-gate": ["--gate", "toy/accuracy>=0.9"],
    "pass-gate": ["--gate", "toy/accuracy>=0.5"],
    "limit": ["--limit", "8", "--gate", "toy/accuracy>=0.5"],
    "subset-refused": ["-k", "d1/ or d2/", "--gate", "toy/accuracy>=0.5"],
    "subset-allowed": ["-k", "d1/ or d2/", "--gate", "toy/accuracy>=0.5", "--allow-subset"],
    "subset-ungated": ["-k", "d1/ or d2/"],
    "shard": ["--shard", "1/2", "--gate", "toy/accuracy>=0.5"],
    "fail-second-gate": ["--gate", "toy/accuracy>=0.5", "--gate", "toy/length>=0.9"],
    "lost-summary": ["--summary-md", "/dev/full"],  # a write that fails: exit 6
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_live_report_and_rescore_agree(toy, mode, scenario, capsys):
    record_path = toy.path / "run.json"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record_path),
        "-p", "no:cacheprovider", *mode, *SCENARIOS[scenario],
    )  # fmt: skip
    record = read_json(record_path)  # schema-valid, and `report`'s decision agrees
    assert result.ret == record["exit_status"], result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines([f"extractbench verdict: {record['verdict']['word']}*"])
    assert cli_main(["report", str(record_path)]) == record["exit_status"]
    assert f"extractbench verdict: {record['verdict']['word']}" in capsys.readouterr().out
    if record["output_errors"]:
        return  # a re-score writes its own outputs
    args = SCENARIOS[scenario]
    gates = [a for i, a in enumerate(args) if a == "--gate" or args[i - 1] == "--gate"]
    again = toy.runpytest_subprocess(  # the same gates, on the record's items and calls
        "--rescore", str(record_path), "--data-dir", "data", "--report-json", "again.json",
        "-p", "no:cacheprovider", *mode, *gates, *[a for a in args if a == "--allow-subset"],
    )  # fmt: skip
    rescored = read_json(toy.path / "again.json")
    assert again.ret == rescored["exit_status"] == record["exit_status"], again.stdout.str()[-2000:]
    assert rescored["verdict"]["word"] == record["verdict"]["word"]
    assert [g["passed"] for g in rescored["gates"]] == [g["passed"] for g in record["gates"]]


TOY_BACKEND = '''
from dataclasses import replace

from pydantic import Field

from extractbench.fixtures.models.backend_options import BackendOptions
from extractbench.fixtures.models.fake.backend import FakeBackend
from extractbench.fixtures.models.registry import BackendKind
from extractbench.suites.model import Capabilities, Generation, ModelInfo


class ShoutOptions(BackendOptions):
    exclaim: int = Field(0, ge=0, le=3, description="exclamation marks after each answer")


class Shouting(FakeBackend):
    """The fake model, answering in capitals."""

    def __init__(self, exclaim):
        super().__init__()
        self.exclaim = exclaim

    def generate(self, prompt, **kwargs):
        out = super().generate(prompt, **kwargs)
        return replace(out, text=out.text.upper().rstrip() + "!" * self.exclaim)


TOY = BackendKind(
    name="toy-shout",
    resolve=lambda spec, model: spec,
    info=lambda spec: ModelInfo("shouting-lookup", "toy-shout", "", ""),
    fingerprint=lambda spec: "toy-shout",
    load=lambda spec, items: Shouting(spec.options.exclaim),
    capabilities=lambda spec, items: Capabilities(),
    description="the fake model in capitals",
    options=ShoutOptions,
)
'''


def test_a_third_party_backend_installs_through_the_entry_point(toy, monkeypatch):
    site = toy.mkdir("site")
    (site / "toy_backend.py").write_text(TOY_BACKEND)
    dist = site / "toy_backend-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[extractbench.backends]\ntoy-shout = toy_backend:TOY\n")
    env = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", env)
    result = toy.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--backend*", "*--exclaim=INT*toy-shout: exclamation marks*"])
    assert "toy-shout" in result.stdout.str()
    result = toy.runpytest_subprocess(
        "--backend", "toy-shout", "--data-dir", "data", "--report-json", "r.json", "-n", "2",
    )  # fmt: skip
    record = read_json(toy.path / "r.json")
    assert result.ret == 0, result.stdout.str()
    assert record["model"]["backend"] == "toy-shout"
    assert record["model"]["fingerprint"] == "toy-shout:seed=0"  # the default: unnamed
    assert record["model"]["options"] == {"exclaim": 0}
    predictions = [it["prediction"] for it in record["items"]]
    assert predictions and all(p == p.upper() for p in predictions)
    assert any(p.strip() == "ACME 3" for p in predictions)
    assert record["aggregates"]["toy/accuracy"]["mean"] > 0  # the toy's check ignores case
    # Its own option, parsed by its class and carried to its backend.
    toy.runpytest_subprocess(
        "--backend", "toy-shout", "--exclaim", "2", "--data-dir", "data", "--report-json", "x.json"
    )  # fmt: skip
    record = read_json(toy.path / "x.json")
    assert record["model"]["options"] == {"exclaim": 2}
    assert record["model"]["fingerprint"] == "toy-shout:seed=0:exclaim=2"
    assert all(it["prediction"].endswith("!!") for it in record["items"])
    for args, needle in [
        (["--backend", "toy-shout", "--exclaim", "9"], "--exclaim 9: must be <= 3"),
        (["--backend", "toy-shout", "--exclaim", "x"], "--exclaim x: must be int"),
        (
            ["--backend", "fake", "--exclaim", "1"],
            "applies to --backend toy-shout, not --backend fake",
        ),
        (["--backend", "toy-shout", "--batch-size", "2"], "applies to --backend hf in process"),
    ]:
        result = toy.runpytest_subprocess(*args, "--data-dir", "data")
        errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
        assert result.ret == 4 and len(errors) == 1 and needle in errors[0], result.stderr.str()
