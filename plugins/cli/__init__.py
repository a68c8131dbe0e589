"""``extractbench``: the commands around a run (report, merge, schema, data, server); the
console script is ``plugins.cli.main:main``."""
