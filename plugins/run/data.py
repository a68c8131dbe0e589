"""Before any worker starts: which suites the command selects, where their data is, and
whether it is all there (missing data is a usage error, one line per suite)."""

from __future__ import annotations

import sys

import pytest

from extractbench.fixtures.plugin import ModelSetup
from extractbench.plugins.run.command_suites import selected_suites, selects_whole_package
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.progress import uncaptured
from extractbench.plugins.run.state import RunState
from extractbench.suites.datasets.manifest import load_manifest
from extractbench.suites.datasets.provenance import data_provenance
from extractbench.suites.datasets.resolve import (
    DataChoice,
    DataDirError,
    choose_data_dir,
    offline_from_env,
)
from extractbench.suites.links import docs_url
from extractbench.suites.registry import SOURCES_HINT

__all__ = ["select_suites", "prepare_data"]


def select_suites(config: pytest.Config, cfg: RunConfig, state: RunState) -> None:
    """The suites the command's paths select (with ``--rescore``: those the record holds;
    over the whole suites package: those ``[tool.extractbench] suites`` lists, if it does).

    Raises:
        pytest.UsageError: ``--rescore`` of a record that holds none of them; a gate on a
            suite ``[tool.extractbench] suites`` leaves out of the whole package's run.
    """
    selected = selected_suites(config, cfg.registry, cfg.settings.configured, cfg.settings.suites)
    state.whole = selects_whole_package(config, cfg.registry)
    if cfg.rescore is not None:  # the recorded run's own command
        state.whole = not cfg.rescore.selection.narrow
        held = sorted({it.suite for it in cfg.rescore.items})
        chosen = [spec for spec in selected if spec.name in held]
        if selected and not chosen:
            raise pytest.UsageError(
                f"--rescore {cfg.rescore_path}: the record holds no item of the selected suites "
                f"({', '.join(s.name for s in selected)}); it holds: {', '.join(held) or 'no items'}"
            )
        selected = chosen
    elif state.whole and cfg.settings.suites is not None:
        _check_listed_gates(cfg, [spec.name for spec in selected])
    state.selected = [spec.name for spec in selected]


def _check_listed_gates(cfg: RunConfig, selected: list[str]) -> None:
    """A gate on a suite that ``[tool.extractbench] suites`` leaves out of a command over
    the whole suites package could never be decided (it would fail the run after every
    item): refused before the first model call, one line per gate.

    Raises:
        pytest.UsageError: such a gate.
    """
    listed = ", ".join(cfg.settings.suites or ())
    lines = [
        f"gate {gate.expression} ({gate.source}): suite {gate.suite} is not in "
        f"[tool.extractbench] suites ({listed}), so this command does not run it; list it "
        "there, or name its package "
        f"(pytest --pyargs extractbench.suites.{gate.suite})"
        for gate in cfg.settings.gates
        if gate.suite not in selected
    ]
    if lines:
        raise pytest.UsageError("\n".join(lines))


def _choose(config: pytest.Config, cfg: RunConfig, setup: ModelSetup, local: list[str]) -> str:
    """Choose (and fetch) the data folder when none was given; the fetch error, if any."""
    manifest = load_manifest()
    try:
        with uncaptured(config):
            setup.data_choice = choose_data_dir(  # progress goes to the real terminal, live
                manifest, local,
                offline=cfg.offline or offline_from_env(), mirror=cfg.mirror,
                progress=sys.stderr.isatty(),
                say=lambda line: print(line, file=sys.stderr, flush=True),
            )  # fmt: skip
    except DataDirError as exc:  # each suite is then named as missing, below
        setup.data_choice = DataChoice(None, "fetch failed")
        return str(exc)
    return ""


def prepare_data(config: pytest.Config, cfg: RunConfig, state: RunState, setup: ModelSetup) -> None:
    """Find the selected suites' data (the user cache, or a fetch),
    check every required file is there, and note the data's provenance for the record.

    Raises:
        pytest.UsageError: a selected suite's data is missing (one line per suite naming
            the files and the command that fetches them), unless ``--skip-missing-data``.
    """
    manifest = load_manifest()
    selected = [cfg.registry.suites[name] for name in state.selected]
    fetch_error = ""
    if setup.data_choice is None:  # nothing explicit: the user cache, or fetch
        local = [s.name for s in selected if s.reads_local_data(cfg.suite_options.get(s.name))]
        fetch_error = _choose(config, cfg, setup, local)
    data_dir = setup.data_dir
    where = (
        str(data_dir)
        if data_dir
        else "no data folder (no --data-dir or $EXTRACTBENCH_DATA given, none in the user cache)"
    )
    lines = []
    for spec in selected:
        missing = spec.missing_data(data_dir, cfg.suite_options.get(spec.name))
        if not missing:
            continue
        if cfg.skip_missing_data:
            state.skipped[spec.name] = f"data missing: {', '.join(missing)}"
        else:
            lines.append(
                f"{spec.name}: data missing in {where}: {', '.join(missing)} "
                f"({docs_url(spec.data_source) if spec.data_source.startswith('docs/') else spec.data_source})"
            )
    if lines:
        fetchable = [s for s in state.selected if s in manifest.suites and s not in state.skipped]
        offline = cfg.offline or offline_from_env()
        how = (
            f"`extractbench data fetch {' '.join(fetchable)}`"
            + (" (or run without --offline / EXTRACTBENCH_OFFLINE)" if offline else "")
            + ", or "
            if fetchable
            else ""
        )
        raise pytest.UsageError(
            (f"{fetch_error}\n" if fetch_error else "")
            + "\n".join(lines)
            + f"\nto get the data: {how}{SOURCES_HINT}; or --skip-missing-data to skip such suites"
        )
    if fetch_error:  # skipped with --skip-missing-data: still say why the data is absent
        print(f"extractbench: {fetch_error}", file=sys.stderr, flush=True)
    state.data = data_provenance(
        manifest, setup.data_choice, data_dir, state.selected, state.skipped
    )
