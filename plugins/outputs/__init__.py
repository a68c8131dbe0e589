"""The outputs stage: the run record's JSON file, JUnit, HTML, markdown,
plots, and ``write_outputs``, the one function that writes them all from a decided record
(:mod:`plugins.outputs.write`); callers reach it through this package's attribute."""

from extractbench.plugins.outputs.write import Targets, Written, write_outputs

__all__ = ["write_outputs", "Targets", "Written"]
