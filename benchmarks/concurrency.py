"""``--concurrency``: throughput against a server that takes 50 ms per request.

A fake OpenAI-compatible server (``tests/fake_openai.py``) answers every completion after
``--latency`` seconds, whatever the load (as a GPU server with free slots does). The FDA
items of the first ``--groups`` chunks run through the model wrapper the ``model`` fixture
gives, in order, as one process runs them: concurrency 1 sends one request at a time;
concurrency N keeps the next N items' first calls in flight (``CachingBackend.prefetch``,
as ``plugins/run/suite_test.py`` does; under xdist the window stays within a group). Prints items/s of each, the speed-up, the most requests in flight the server
saw, and whether the answers are identical. Target: concurrency 8 at least 6x concurrency 1.
Run:

    python benchmarks/concurrency.py --groups 12 --latency 0.05
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, caching_backend  # noqa: E402
from extractbench.fixtures.models.openai.kind import OpenAIOptions  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from tests.fake_openai import MODEL_ID, FakeOpenAIServer  # noqa: E402


def run(items, url: str, concurrency: int) -> tuple[dict, list[str]]:
    spec = ModelSpec(
        "openai", None, 0, 1, options=OpenAIOptions(base_url=(url,), model_name=MODEL_ID)
    )
    model = caching_backend(spec, items, None, concurrency)
    start = time.perf_counter()
    texts = []
    for n, item in enumerate(items):
        window = items[n : n + concurrency]  # as plugins/run/suite_test.py does in one process
        model.prefetch(it.request() for it in window)
        texts.append(model.generate(item.prompt, max_tokens=item.max_tokens, stop=item.stop).text)
    wall = time.perf_counter() - start
    model.close()
    return {"concurrency": concurrency, "wall_s": round(wall, 2),
            "items_per_s": round(len(items) / wall, 1)}, texts  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=12, help="FDA chunks (groups) to run")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    all_items = load_items(data_dir).items
    groups = sorted({it.group for it in all_items})[: args.groups]
    items = [it for it in all_items if it.group in set(groups)]
    results, answers = [], {}
    for concurrency in (1, 8):
        server = FakeOpenAIServer(latency_s=args.latency).start()
        try:
            result, answers[concurrency] = run(items, server.url, concurrency)
        finally:
            server.stop()
        result["max_in_flight_server_side"] = server.max_in_flight
        results.append(result)
    print(json.dumps({
        "items": len(items), "groups": len(groups), "latency_s": args.latency,
        "runs": results,
        "speedup_8_vs_1": round(results[1]["items_per_s"] / results[0]["items_per_s"], 2),
        "identical_answers": answers[1] == answers[8],
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
