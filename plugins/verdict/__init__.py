"""The verdict stage: aggregation, gates, baseline comparison, and the one decision.

``plugins.verdict.decide(record, gates, selection)`` is the only place a run's verdict is
made (:mod:`plugins.verdict.decision`); callers reach it through this package's
attribute, so every path (live run, ``--rescore``, merge, report) calls the same function.
"""

from extractbench.plugins.verdict.decision import GateSet, Verdict, decide
from extractbench.plugins.verdict.exit_codes import EXIT_CODES

__all__ = ["decide", "GateSet", "Verdict", "EXIT_CODES"]
