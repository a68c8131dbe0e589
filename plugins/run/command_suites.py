"""The suites a pytest command selects, from its paths or, with ``--pyargs``, its package names.

``pytest --pyargs extractbench.suites.fda`` (the way a project that installed extractbench runs
it) names a package, not a path: pytest resolves it to the installed folder only when it
collects, so the plugin resolves it the same way first, to know before collection whether the
command runs suites (gates, reports, the data check) or the harness's own tests.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Collection

import pytest

from extractbench.suites.protocol import Suite
from extractbench.suites.registry import Registry

__all__ = ["command_paths", "selected_suites", "selects_whole_package"]


def _module_path(name: str) -> str | None:
    """The file or package folder of the dotted module ``name``; None if there is none."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return str(next(iter(spec.submodule_search_locations)))
    return spec.origin if spec.origin and spec.origin.endswith(".py") else None


def command_paths(config: pytest.Config) -> list[str]:
    """``config.args`` with each ``--pyargs`` package or module name (``extractbench.suites``,
    ``extractbench.suites.fda::test_fda``) replaced by its path, as pytest collects it; an
    argument that is a path already, or names no module, is kept as given."""
    if not config.getoption("pyargs", False):
        return list(config.args)
    paths = []
    for arg in config.args:
        name, sep, rest = str(arg).partition("::")
        found = None
        if not (config.invocation_params.dir / name).exists():
            found = _module_path(name)
        paths.append(f"{found}{sep}{rest}" if found else str(arg))
    return paths


def selected_suites(
    config: pytest.Config,
    registry: Registry,
    configured: Collection[str] = (),
    only: Collection[str] | None = None,
) -> list[Suite]:
    """The registered suites the command's paths (or ``--pyargs`` names) select, in registry
    order (:meth:`Registry.selected`); ``configured``: the suites the project configures,
    which a folder above them selects even when they run on request; ``only``: the
    project's ``[tool.extractbench] suites``, the only ones a folder above selects."""
    return registry.selected(command_paths(config), config.invocation_params.dir, configured, only)


def selects_whole_package(config: pytest.Config, registry: Registry) -> bool:
    """Whether the command selects suites from a folder above them (:meth:`Registry.whole`):
    then every gate the project declares must be evaluated."""
    return registry.whole(command_paths(config), config.invocation_params.dir)
