"""extractbench: a pytest-based benchmark suite for structured extraction with language models.

Everything installs under this one name: ``extractbench.plugins`` (the pytest plugin, the run,
the verdict, the outputs, the command line), ``extractbench.fixtures`` (the model backends and
the fixtures that provide them) and ``extractbench.suites`` (the benchmarks). The repository keeps
them at its top level (``plugins/``, ``fixtures/``, ``suites/``); a wheel maps them under this
package (``setup.py``), so it adds nothing else to ``site-packages``.
"""

from pathlib import Path

_HERE = Path(__file__).resolve().parent

# In a checkout the subpackages sit beside this folder, not in it: let the import system find
# them there too (an editable install maps them the same way; a plain ``PYTHONPATH`` does not).
if not (_HERE / "plugins").is_dir() and (_HERE.parent / "plugins" / "extractbench.py").is_file():
    __path__.append(str(_HERE.parent))  # noqa: F821 - a package's own search path
