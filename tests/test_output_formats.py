"""The table of output formats (``plugins/outputs/formats.py``): every entry is found on
the command line, path-checked, locked and written, so a new format cannot be left out by
one of its readers."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from extractbench.plugins.outputs import write
from extractbench.plugins.outputs.formats import (
    FORMATS,
    RECORD,
    FormatOption,
    OutputFormat,
    Rendering,
    given_paths,
    named_outputs,
)
from extractbench.plugins.outputs.paths import path_problems
from extractbench.plugins.record import SCHEMA_VERSION, parse_record
from extractbench.plugins.run.controller import locked_outputs
from extractbench.suites.registry import Registry
from tests.conftest import decide_facts


def _paths(tmp_path: Path) -> dict[str, Path]:
    return {f.name: tmp_path / f"out-{f.name}" for f in FORMATS}


def test_the_formats_have_distinct_names_and_options_and_every_one_is_locked():
    assert len({f.name for f in FORMATS}) == len({f.option for f in FORMATS}) == len(FORMATS)
    assert [f.name for f in FORMATS if not f.locked] == []


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_each_format_is_found_on_the_command_line_and_path_checked(fmt, tmp_path):
    """Given by its own option (or ``--export``), a format's path is checked against the
    command's inputs: naming the baseline is one line naming the format's option."""
    path = tmp_path / "baseline.json"
    path.write_text("{}")
    ways = []
    if fmt.dest:  # its own option
        ways.append(given_paths([], lambda f: str(path) if f is fmt else None))
    if fmt.export:  # --export NAME=PATH
        ways.append(given_paths([f"{fmt.name}={path}"], lambda f: None))
    assert ways and all(given == {fmt.name: path} for given in ways)
    files, folders = named_outputs(ways[0])
    assert (fmt.option, path) in (folders if fmt.folder else files)
    problems = path_problems([("--baseline", path)], files, folders)
    assert (
        f"--baseline {path} {fmt.option} {path}: the same file; write to another path "
        "(the command would replace a file it reads)" in problems
    )


def test_the_controller_locks_every_format(tmp_path):
    paths = _paths(tmp_path)
    assert sorted(locked_outputs(write.Targets(paths))) == sorted(paths.values())


def test_the_writer_renders_every_format_to_its_path(tmp_path, monkeypatch):
    """Each entry's renderer is called with the decided record and its own path, and what it
    returns is written there (a folder format's files under its folder), the record last."""
    calls: list[tuple[str, Path]] = []

    def stub(fmt: OutputFormat) -> OutputFormat:
        def render(record: object, path: Path, rendering: Rendering) -> str | dict[str, str]:
            assert isinstance(rendering, Rendering) and rendering.facts is not None
            calls.append((fmt.name, path))
            return {"part.txt": fmt.name} if fmt.folder else f"{fmt.name} of {record.run_id}"

        return dataclasses.replace(fmt, render=render)

    stubs = tuple(stub(f) for f in FORMATS)
    monkeypatch.setattr(write, "FORMATS", stubs)
    monkeypatch.setattr(write, "BY_NAME", {f.name: f for f in stubs})
    paths = _paths(tmp_path)
    verdict = decide_facts()
    record = parse_record({"schema_version": SCHEMA_VERSION, "run_id": "t", "selection": {}})
    written = write.write_outputs(
        record, verdict, write.Targets(paths, plots=False), Registry.installed()
    )
    assert sorted(calls) == sorted(paths.items()) and calls[-1] == (RECORD, paths[RECORD])
    for fmt in FORMATS:
        path = paths[fmt.name]
        text = (path / "part.txt" if fmt.folder else path).read_text()
        assert text == (fmt.name if fmt.folder else f"{fmt.name} of t"), fmt.name
    assert written.record_path == paths[RECORD] and written.record.output_errors == []


SHOUT = OutputFormat(
    "shout", "--shout", "shout", None, lambda r, p, c: f"{r.run_id} at {c.settings['shout_level']}",
    options=(
        FormatOption("--shout", "shout", "write the run loudly here"),
        FormatOption("--shout-level", "shout_level", "how loud", metavar="N", type=int),
    ),
)  # fmt: skip


def test_a_format_with_its_own_option_is_one_row_of_the_table(tmp_path, monkeypatch):
    """A format's path option and its own setting are declared with its row: pytest's
    options and ``extractbench report``/``merge`` take both from the table, and the setting
    reaches the renderer, with no other file naming them."""
    import argparse

    from extractbench.plugins.cli import records
    from extractbench.plugins.outputs import formats
    from extractbench.plugins.run import command_line

    monkeypatch.setattr(formats, "FORMATS", (*FORMATS, SHOUT))
    monkeypatch.setattr(write, "BY_NAME", {f.name: f for f in formats.FORMATS})
    cli = argparse.ArgumentParser()
    records.add_export_arguments(cli)
    args = cli.parse_args(["--shout", str(tmp_path / "s.txt"), "--shout-level", "11"])
    targets = records._targets(args, None)
    assert targets.paths == {"shout": tmp_path / "s.txt"}
    assert targets.settings == {"ctrf_run_id": None, "shout_level": 11}
    declared: dict[str, dict] = {}  # pytest's option group, as the plugin fills it
    group = SimpleNamespace(addoption=lambda flag, **how: declared.setdefault(flag, how))
    command_line._export_options(group)
    assert declared["--shout-level"]["type"] is int and declared["--shout"]["dest"] == "shout"
    record = parse_record({"schema_version": SCHEMA_VERSION, "run_id": "t", "selection": {}})
    monkeypatch.setattr(write, "FORMATS", formats.FORMATS)
    write.write_outputs(record, decide_facts(), targets, Registry.installed())
    assert (tmp_path / "s.txt").read_text() == "t at 11"
