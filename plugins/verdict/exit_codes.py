"""The exit statuses of a run and what each means (the README's exit-code table): no
status means two things, and an ``extractbench`` command-line mistake is a usage error
(4), as pytest's own. 130 is not the plugin's: it is how a process Ctrl-C ends before the
plugin handles the signal looks to a shell."""

from __future__ import annotations

__all__ = [
    "EXIT_CODES", "OK", "FAILED", "INTERRUPTED", "INTERNAL_ERROR", "USAGE_ERROR",
    "NOTHING_MEASURED", "OUTPUT_ERROR", "CRASHED",
]  # fmt: skip

OK, FAILED, INTERRUPTED, INTERNAL_ERROR, USAGE_ERROR, NOTHING_MEASURED, OUTPUT_ERROR, CRASHED = (
    range(8)
)
EXIT_CODES: dict[int, str] = {
    OK: "PASS: every selected item scored, every evaluated gate and regression check passed, "
    "every output written; or SHARD: one complete shard (--shard K/N), which decides no gate "
    "and is not a release decision (`extractbench merge` of the shards' records is)",
    FAILED: "FAIL or INCOMPLETE: a gate or regression check failed, an item failed, a selected "
    "suite scored nothing, the baseline shares no item (with --max-regression: no item of a "
    "selected suite), a subset of a gated suite ran "
    "(-k, -m, --deselect, --lf without --allow-subset), a declared gate was not evaluated "
    "(its suite skipped, or not selected by the command: without --allow-subset), or the "
    "run was "
    "stopped (circuit breaker, a --serve server that died)",
    INTERRUPTED: "INCOMPLETE: interrupted by Ctrl-C (SIGINT) or SIGTERM (a second signal is "
    "absorbed); the record holds the finished items",
    INTERNAL_ERROR: "FAIL: pytest internal error (a plugin or hook crashed)",
    USAGE_ERROR: "usage error: bad option or gate, an unknown key or a wrong type in "
    "[tool.extractbench], missing, changed or malformed data, a user's file outside its folder "
    "or over its size limit, a suite with no items, a model that does not load, a chat "
    "template that cannot send the run's messages, an unreadable record or cache, a partial "
    "record (stopped early, incomplete, one shard) as the baseline of --max-regression, "
    "--rescore with an option that chooses another model, two of a "
    "command's files naming one file, an output naming a folder, a FIFO or a socket, under a "
    "regular file or in a folder that takes no file, gates of the project's pyproject.toml that the run would not "
    "apply, a command-line mistake of `extractbench`",
    NOTHING_MEASURED: "NOT EVALUATED: nothing was measured (no test collected, --collect-only "
    "(--co) listing the suites' items, every selected "
    "suite skipped with --skip-missing-data, or a shard that holds no item)",
    OUTPUT_ERROR: "FAIL: an output could not be written (run record, JUnit, HTML, markdown, an "
    "export); the record (when it could be written) names it",
    130: "NOT STARTED: Ctrl-C (SIGINT) while pytest was still starting, before the plugin "
    "took over the signal (its first seconds: imports, plugin loading): Python ends by the "
    "signal (the shell's 130, a negative status -2 from a parent process), with its traceback; "
    "nothing ran and no record was written",
    CRASHED: "CRASHED: a process running items died from a signal (a segfault in native "
    "code, an out-of-memory kill); the record names the item, the signal and the top frame, "
    "the other items ran on; gates not decided",
}
