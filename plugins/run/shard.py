"""``--shard K/N``: a deterministic 1/N of a run's groups, the same on every machine.

A group (an FDA chunk, a Table-QA table) is the unit that shares a prompt prefix, so a
shard takes whole groups: group ``g`` belongs to shard ``1 + int(sha256(g)) mod N``.
The split depends only on the group names, not on the machine, the worker count or the
order of collection; the shards are disjoint and together hold every group.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["Shard", "parse_shard"]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based, as users write ``--shard 2/3``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, group: str) -> bool:
        """Whether items of ``group`` run in this shard."""
        digest = hashlib.sha256(group.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """``"2/3"`` -> ``Shard(2, 3)``.

    Raises:
        ValueError: not ``K/N`` with integers ``1 <= K <= N`` (one line naming the value).
    """
    index, sep, count = str(text).partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not sep or shard is None or not 1 <= shard.index <= shard.count:
        raise ValueError(f"--shard {text}: expected K/N with 1 <= K <= N, e.g. --shard 2/3")
    return shard
