"""Hooks extractbench adds to pytest."""

from __future__ import annotations

import pytest

from extractbench.suites.protocol import Suite


@pytest.hookspec
def pytest_extractbench_suites() -> list[Suite]:
    """Return suites defined in a conftest (an installed package registers its suites
    through the ``extractbench.suites`` entry-point group instead).

    Each :class:`suites.protocol.Suite` becomes known to the registry, so its gates,
    options and data are checked before any item runs. Every implementation's list is
    added; a name may be registered once.
    """
    return []
