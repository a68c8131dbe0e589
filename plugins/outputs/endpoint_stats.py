"""Per-endpoint facts of a run, from the items' call logs: requests answered, requests
failed (and why the endpoint was taken out), and prompt tokens the server reused from
its cache where it reports them (llama-server ``timings.cache_n``, vLLM
``usage.prompt_tokens_details.cached_tokens``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["endpoint_stats", "endpoint_lines"]


def endpoint_stats(items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """URL -> ``{"requests", "failures", "taken_out", "prompt_tokens",
    "reused_prompt_tokens", "reuse_reported"}`` over every logged call (cached calls
    excluded: no server answered them); empty when no server answered."""
    stats: dict[str, dict[str, Any]] = {}

    def entry(url: str) -> dict[str, Any]:
        return stats.setdefault(url, {
            "requests": 0, "failures": 0, "taken_out": None, "prompt_tokens": 0,
            "reused_prompt_tokens": 0, "reuse_reported": 0,
        })  # fmt: skip

    for item in items:
        for call in item.get("calls", []):
            for failed in call.get("failed_over", []):
                url, _, error = str(failed).partition(": ")
                got = entry(url)
                got["failures"] += 1
                got["taken_out"] = got["taken_out"] or error
            if not call.get("endpoint") or call.get("cached"):
                continue
            got = entry(call["endpoint"])
            got["requests"] += 1
            got["prompt_tokens"] += int(call.get("prompt_tokens") or 0)
            if call.get("reused_prompt_tokens") is not None:
                got["reuse_reported"] += 1
                got["reused_prompt_tokens"] += int(call["reused_prompt_tokens"])
    return dict(sorted(stats.items()))


def endpoint_lines(stats: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One terminal line per endpoint (none for a run with at most one endpoint that
    never failed)."""
    if len(stats) < 2 and not any(s["failures"] for s in stats.values()):
        return []
    lines = []
    for url, s in stats.items():
        reuse = (
            f"{s['reused_prompt_tokens']} of {s['prompt_tokens']} prompt tokens reused from its cache"
            if s["reuse_reported"]
            else "prompt-cache reuse not reported"
        )
        out = f"; TAKEN OUT: {s['taken_out']}" if s["taken_out"] else ""
        lines.append(
            f"endpoint {url}: {s['requests']} requests, {s['failures']} failed, {reuse}{out}"
        )
    return lines
