"""``extractbench suites``: each suite with its items, default cap, options and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractbench.plugins.cli.main import main
from extractbench.suites.registry import Registry

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder whose pyproject.toml caps fda and sets one of its options."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.extractbench.limits]\nfda = 5\n\n[tool.extractbench.options.fda]\nsplit = "test"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EXTRACTBENCH_DATA", raising=False)
    return tmp_path


def test_json_lists_the_project_cap_options_and_metrics(project, capsys):
    empty = project / "data"
    empty.mkdir()
    assert main(["suites", "fda", "tableqa", "--json", "--data-dir", str(empty)]) == 0
    listed = json.loads(capsys.readouterr().out)
    fda, tableqa = listed["suites"]
    assert (fda["name"], fda["default_cap"], tableqa["default_cap"]) == ("fda", 5, None)
    assert fda["metrics"] == ["accuracy"] and fda["breakdown"] == ["key"]
    split = next(o for o in fda["options"] if o["name"] == "split")
    assert split["default"] == "validation" and split["project_value"] == "test"
    assert "extractbench data fetch fda" in fda["items"]  # not counted: no data there
    per_cell = next(o for o in tableqa["options"] if o["name"] == "per_cell")
    assert (per_cell["type"], per_cell["range"], per_cell["default"]) == ("int", ">= 1", 10)


def test_text_names_every_option_and_an_unknown_suite_is_a_usage_error(project, capsys):
    assert main(["suites", "minea", "--data-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert "options (--suite-option minea.KEY=VALUE):" in out
    assert "    iterations (int, >= 0; default 3)" in out
    assert main(["suites", "fdaa"]) == 4
    assert "unknown suite 'fdaa'; known suites: fda" in capsys.readouterr().err
    assert main(["suites", "--data-dir", str(project / "nowhere")]) == 4


@pytest.mark.skipif(not (DATA / "tableqa").is_dir(), reason="no ../shared/data")
def test_a_team_s_own_items_are_counted_from_its_file_with_the_installed_run_command(
    project, capsys
):
    """Outside a checkout the hints name the installed package (``--pyargs``); the kv suite's
    items are counted from the project's ``kv.path``, not "in no data folder", and the line
    saying when it runs follows its description instead of splitting it."""
    (project / "items.jsonl").write_text(
        '{"document": "Invoice 7\\nTotal due: 12.50 EUR\\n", "key": "total due", "value": "12.50"}\n',
        encoding="utf-8",
    )
    with (project / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write('\n[tool.extractbench.options.kv]\npath = "items.jsonl"\n')
    assert main(["suites", "kv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = next(i for i, line in enumerate(lines) if "runs when named" in line)
    assert lines[runs - 1].rstrip().endswith("docs/suites/kv.md).")  # the description's end
    assert "(pytest --pyargs extractbench.suites.kv)" in lines[runs]
    assert "  items: 1 from kv.path=items.jsonl" in lines
    assert lines[-1].startswith("Run: pytest --pyargs extractbench.suites (")


def test_in_the_checkout_the_hints_name_its_folder(monkeypatch, capsys):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert main(["suites", "kv"]) == 0
    out = capsys.readouterr().out
    assert "(pytest suites/kv)" in out and "\nRun: pytest suites/ (" in out


def test_items_are_counted_from_the_data_folder(project, capsys):
    assert main(["suites", "tablebench", "minea", "--json", "--data-dir", str(DATA)]) == 0
    counts = {s["name"]: s["items"] for s in json.loads(capsys.readouterr().out)["suites"]}
    registry = Registry.installed()
    loaded = {n: len(registry.get(n).load(DATA, registry.get(n).parse_options()).items)
              for n in ("tablebench", "minea")}  # fmt: skip
    assert counts == loaded and min(loaded.values()) > 0


def test_output_cut_short_by_its_reader_ends_quietly(tmp_path):
    """``extractbench suites | head -1``: the reader closes the pipe; the command ends with
    the shell's closed-pipe status (141), no traceback and no "Exception ignored"."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # every write to the pipe now fails with EPIPE
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from extractbench.plugins.cli.main import main; "
         "sys.exit(main(['suites']))"],
        stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    os.close(write)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_a_broken_pipe_that_is_not_the_output_is_not_hidden(monkeypatch):
    """A BrokenPipeError from a socket or another pipe (a download, a server) while the
    output is open is a failure, raised as it is, never the quiet closed-pipe status."""
    import extractbench.plugins.cli.main as cli

    def broken(argv):  # noqa: ANN001, ANN202
        raise BrokenPipeError("the server went away")

    monkeypatch.setattr(cli, "_main", broken)
    with pytest.raises(BrokenPipeError, match="the server went away"):
        cli.main(["suites"])
