"""The checkout's root conftest: it marks the rootdir and checks the plugin is installed.

The extractbench plugin (``plugins/extractbench.py`` with ``fixtures/plugin.py``) is not
registered here: it installs through the ``pytest11`` entry point of ``pip install -e .``,
so its options are known before pytest chooses the rootdir (``--rescore /elsewhere/RUN.json``
and ``--model /models/x.gguf`` work with a space before the path). This file only turns a
checkout used without installing it into one clear line instead of "fixture not found".
"""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("extractbench"):
        raise pytest.UsageError(
            "the extractbench pytest plugin is not installed in this Python: run "
            "`pip install -e .` in the checkout (it registers the plugin as a pytest11 entry point)"
        )
