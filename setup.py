"""Where the packages sit: the repository keeps ``plugins/``, ``fixtures/`` and ``suites/`` at
its top level, and the wheel installs them under the one import name ``extractbench``
(setuptools' package-dir mapping), so nothing else lands in ``site-packages``. Everything
else about the project is in ``pyproject.toml``."""

from setuptools import find_namespace_packages, setup

LAYERS = ("plugins", "fixtures", "suites")

setup(
    packages=["extractbench"]
    + [f"extractbench.{layer}" for layer in LAYERS]
    # namespace packages too: the HTML templates' folder is package data (no __init__.py)
    + [
        f"extractbench.{layer}.{sub}"
        for layer in LAYERS
        for sub in find_namespace_packages(layer, exclude=["__pycache__", "*.__pycache__"])
    ],
    package_dir={
        "extractbench": "extractbench",
        **{f"extractbench.{layer}": layer for layer in LAYERS},
    },
)
