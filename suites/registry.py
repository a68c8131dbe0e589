"""The known suites, by name: what the plugin may check before any item runs.

Suites come from the ``extractbench.suites`` entry-point group (this package's four
benchmarks register there in ``pyproject.toml``; another package registers its own the
same way) and from the ``pytest_extractbench_suites`` hook (a conftest). Each is a
:class:`suites.protocol.Suite`: where its test lives (so a command's paths tell which
suites it selects), which metrics it records (so a gate naming an unknown suite or metric
is a usage error), its typed options (so a bad ``--suite-option`` is a usage error), the
data files it reads (so missing data is found before any worker starts) and its report
(so a run record can never choose code to import).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from pathlib import Path

from extractbench.suites.links import docs_url
from extractbench.suites.protocol import Suite

__all__ = ["Registry", "RegistryError", "ENTRY_POINT_GROUP", "SOURCES_HINT"]

ENTRY_POINT_GROUP = "extractbench.suites"
SOURCES_HINT = (
    f"pass --data-dir DIR or set EXTRACTBENCH_DATA to a folder laid out as {docs_url('docs/data.md')} "
    "describes (fda/, strucbench/, tableqa/, minea/)"
)


class RegistryError(ValueError):
    """A suite cannot be registered: its entry point does not load or is not a Suite,
    or two suites share a name (the message names it)."""


def entry_point_suites(
    entry_points: Iterable[EntryPoint] | None = None,
) -> list[Suite]:
    """The suites of the ``extractbench.suites`` entry points, sorted by name.

    Args:
        entry_points: the entry points to load (default: those installed).

    Raises:
        RegistryError: one does not import, is not a :class:`Suite`, or its name differs
            from the suite's name.
    """
    if entry_points is None:
        entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    suites = []
    for ep in sorted(entry_points, key=lambda e: e.name):
        try:
            suite = ep.load()
        except Exception as exc:
            raise RegistryError(
                f"suite entry point {ep.name} = {ep.value}: cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(suite, Suite) or suite.name != ep.name:
            raise RegistryError(
                f"suite entry point {ep.name} = {ep.value}: must name a Suite called {ep.name!r}"
            )
        suites.append(suite)
    return suites


@dataclass
class Registry:
    """Suites by name: the installed ones (entry points) plus those a hook added.

    Raises:
        RegistryError: from :meth:`add`, when two suites share a name.
    """

    suites: dict[str, Suite] = field(default_factory=dict)

    @classmethod
    def installed(
        cls, extra: Iterable[Suite] = (), entry_points: Iterable[EntryPoint] | None = None
    ) -> Registry:
        """The entry-point suites followed by ``extra`` (a hook's).

        Raises:
            RegistryError: see :func:`entry_point_suites` and :meth:`add`.
        """
        registry = cls()
        for suite in [*entry_point_suites(entry_points), *extra]:
            registry.add(suite)
        return registry

    def add(self, suite: Suite) -> None:
        """Register one suite (a name may be registered once)."""
        if suite.name in self.suites:
            raise RegistryError(f"suite {suite.name!r} is registered twice")
        self.suites[suite.name] = suite

    def get(self, name: str) -> Suite | None:
        """The suite of that name, or None."""
        return self.suites.get(name)

    @property
    def names(self) -> list[str]:
        """Every registered suite name, sorted."""
        return sorted(self.suites)

    def selected(
        self,
        args: Iterable[str],
        invocation_dir: Path,
        configured: Collection[str] = (),
        only: Collection[str] | None = None,
    ) -> list[Suite]:
        """The suites a pytest command's paths select, in registry order.

        A path selects a suite when it is the suite's folder, a folder above it (a suite
        run ``on_request`` only when the project configures it: ``configured``; with
        ``only``, exactly the suites it lists), a path inside it, or the suite's test file;
        a node id (``file::function[...]``) selects the suite whose test function it names.

        Args:
            args: pytest's positional arguments (``config.args``: paths or node ids).
            invocation_dir: the folder pytest was started in (paths are relative to it).
            configured: suites the project configures (a gate on them, or their options
                given): a folder above selects them even when they run on request.
            only: the project's ``[tool.extractbench] suites``: a folder above selects
                these and no other; None: every suite as above.
        """
        chosen: list[Suite] = []
        for spec in self.suites.values():
            folder = spec.folder.resolve()
            test_file, _, function = spec.test.partition("::")
            for arg in args:
                path_text, _, rest = str(arg).partition("::")
                path = (invocation_dir / path_text).resolve()
                above = folder.is_relative_to(path)
                wanted = (
                    spec.name in only
                    if only is not None
                    else not spec.on_request or spec.name in configured
                )
                if path == folder or (above and wanted):
                    chosen.append(spec)
                    break
                if path.is_relative_to(folder):
                    if path.suffix == ".py" and path.name != test_file:
                        continue
                    named = rest.split("::")[-1].split("[")[0] if rest else ""
                    if not named or named == function:
                        chosen.append(spec)
                        break
        return chosen

    def whole(self, args: Iterable[str], invocation_dir: Path) -> bool:
        """Whether a pytest command selects suites from a folder above them (``pytest
        suites/``, ``pytest --pyargs extractbench.suites``): the whole suites package,
        whose run answers for every gate the project declares. A command that names
        suites one by one (their folders, files or node ids) selects fewer."""
        folders = [spec.folder.resolve() for spec in self.suites.values()]
        for arg in args:
            path_text, sep, _ = str(arg).partition("::")
            path = (invocation_dir / path_text).resolve()
            if not sep and any(f != path and f.is_relative_to(path) for f in folders):
                return True
        return False
