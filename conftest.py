"""Registers the extractbench plugins; nothing else."""

pytest_plugins = ["fixtures.plugin", "plugins.extractbench"]
