"""Where a message sends its reader: a page of the published documentation, the command that
installs an extra, the command that runs the suites from where the user is.

The documentation's address is the package's ``Project-URL: Documentation`` (``[project.urls]``
in ``pyproject.toml``, the one place it is written), read from the installed package's
metadata, so a message names a page that a user of the wheel can open; its pages are the
Sphinx build of ``docs/`` (``docs/usage.md`` -> ``usage.html``).
"""

from __future__ import annotations

import functools
from importlib import metadata
from pathlib import Path

__all__ = ["docs_url", "install_command", "in_checkout", "run_command"]

DISTRIBUTION = "extractbench"
_SUITES = Path(__file__).resolve().parent  # this package's suites folder


@functools.cache
def _docs_base() -> str:
    """The ``Project-URL: Documentation`` of the installed package, without a trailing slash;
    "" when the package is not installed or declares none."""
    try:
        urls = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return ""
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation" and url.strip():
            return url.strip().rstrip("/")
    return ""


def docs_url(page: str) -> str:
    """The published address of a documentation page.

    Args:
        page: the page's path in the source tree, with an optional anchor:
            ``docs/data.md#fda`` (or ``data.md#fda``).

    Returns:
        ``<Documentation URL>/data.html#fda``; the source path (``docs/data.md#fda``) when
        the package's metadata names no documentation (a source tree that is not installed).
    """
    path, _, anchor = page.removeprefix("docs/").partition("#")
    base = _docs_base()
    if not base:
        return f"docs/{page.removeprefix('docs/')}"
    return f"{base}/{path.removesuffix('.md')}.html" + (f"#{anchor}" if anchor else "")


def install_command(extra: str) -> str:
    """The command that adds an extra to the installed package: ``pip install
    'extractbench[hf]'`` (pip keeps the installed extractbench, from a wheel, a git URL or a
    checkout, and adds the extra's packages)."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def in_checkout(cwd: Path | None = None) -> bool:
    """Whether ``cwd`` (default: the current folder) is the root of the checkout this package
    runs from: its ``suites/`` folder is the imported ``extractbench.suites``."""
    folder = (cwd or Path.cwd()) / "suites"
    try:
        return folder.resolve() == _SUITES
    except OSError:
        return False


def run_command(suite: str | None = None, cwd: Path | None = None) -> str:
    """The pytest command that runs every suite, or one: ``pytest suites/kv`` in the checkout's
    root, ``pytest --pyargs extractbench.suites.kv`` anywhere else (the installed package)."""
    if in_checkout(cwd):
        return f"pytest suites/{suite}" if suite else "pytest suites/"
    return "pytest --pyargs extractbench.suites" + (f".{suite}" if suite else "")
