"""Hooks extractbench adds to pytest."""

from __future__ import annotations

import pytest

from suites.registry import SuiteSpec


@pytest.hookspec
def pytest_extractbench_suites() -> list[SuiteSpec]:
    """Return suites defined outside the ``suites`` package (a conftest, a plugin).

    Each :class:`suites.registry.SuiteSpec` makes its suite known to the registry, so its
    gates, options and data are checked before any item runs. Every implementation's
    list is added; a name may be registered once.
    """
    return []
