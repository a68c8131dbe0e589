"""Where the packages sit: the repository keeps ``plugins/``, ``fixtures/`` and ``suites/`` at
its top level, and the wheel installs them under the one import name ``extractbench``
(setuptools' package-dir mapping), so nothing else lands in ``site-packages``. Everything
else about the project is in ``pyproject.toml``."""

from setuptools import find_packages, setup

LAYERS = ("plugins", "fixtures", "suites")

setup(
    packages=["extractbench"]
    + [f"extractbench.{layer}" for layer in LAYERS]
    + [f"extractbench.{layer}.{sub}" for layer in LAYERS for sub in find_packages(layer)],
    package_dir={
        "extractbench": "extractbench",
        **{f"extractbench.{layer}": layer for layer in LAYERS},
    },
)
