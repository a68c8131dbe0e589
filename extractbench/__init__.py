"""extractbench: a pytest-based benchmark suite for structured extraction with language models.

Everything installs under this one name: ``extractbench.plugins`` (the pytest plugin, the run,
the verdict, the outputs, the command line), ``extractbench.fixtures`` (the model backends and
the fixtures that provide them) and ``extractbench.suites`` (the benchmarks). The repository keeps
them at its top level (``plugins/``, ``fixtures/``, ``suites/``); a wheel maps them under this
package (``setup.py``), so it adds nothing else to ``site-packages``.
"""

from pathlib import Path

_HERE = Path(__file__).resolve().parent

# A checkout links ``plugins``, ``fixtures`` and ``suites`` into this folder, so static tools
# see them here; one cloned without links (git's ``core.symlinks=false``) holds the links as
# text files: let the import system find the folders beside this one then.
if not (_HERE / "plugins").is_dir() and (_HERE.parent / "plugins" / "extractbench.py").is_file():
    __path__.append(str(_HERE.parent))  # noqa: F821 - a package's own search path
