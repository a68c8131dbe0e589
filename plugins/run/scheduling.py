"""``--dist loadgroup`` that survives a crashed worker.

pytest-xdist 3.8's ``LoadScopeScheduling`` (which ``loadgroup`` extends) hangs the run
when a worker dies (an out-of-memory kill): ``remove_node`` puts the dead worker's whole
workload back on the queue, completed groups included, which later go out as empty work
units that never complete, so no worker is given work again (pytest-xdist#1378); it also
puts back the item the worker died on, which then runs (and may kill) the next worker
(#1371); a replacement worker given a single item waits forever for a second one
(#1327); and rescheduling after a crash assigns work to a replacement worker that has not
collected yet (``KeyError`` in ``_assign_work_unit``: INTERNALERROR). This scheduler fixes
the four and changes nothing else.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadGroupScheduling

__all__ = ["CrashSafeLoadGroupScheduling"]


class CrashSafeLoadGroupScheduling(LoadGroupScheduling):
    """``LoadGroupScheduling`` whose recovery from a crashed worker cannot deadlock."""

    def remove_node(self, node: Any) -> str | None:
        """Take ``node`` out; return the item it crashed on (None at a normal shutdown).

        Only the unfinished items of the dead worker go back on the queue; the item it
        died on is counted as done (xdist reports it failed), not run again.
        """
        workload = self.assigned_work.pop(node)
        if not self._pending_of(workload):
            return None
        crashitem = next(
            nodeid for unit in workload.values() for nodeid, done in unit.items() if not done
        )
        workload[self._split_scope(crashitem)][crashitem] = True
        for scope, unit in workload.items():
            if not all(unit.values()):
                self.workqueue[scope] = unit
        for other in self.assigned_work:
            self._reschedule(other)
        return crashitem

    def _reschedule(self, node: Any) -> None:
        """xdist's rule (one more work unit when the node has at most two items pending),
        plus: a node left with a single pending item gets more, or is shut down once the
        queue is empty (a worker runs an item only when it knows the next one or that
        there is none, so a lone item would wait forever)."""
        if node.shutting_down or node not in self.registered_collections:
            return  # a replacement worker gets work once it has collected (schedule())
        if not self.workqueue:
            node.shutdown()
            return
        if self._pending_of(self.assigned_work[node]) > 2:
            return
        self._assign_work_unit(node)
        while self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
            self._assign_work_unit(node)
        if not self.workqueue:
            node.shutdown()
