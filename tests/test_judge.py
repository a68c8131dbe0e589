"""The judge is any backend, like the model: a separate judge reaches the suites as a
model of its own; none, or the model under test named again, is self-judged (the same
object, as suites check with ``models.judge is models.model``)."""

from __future__ import annotations

import pytest

from tests.conftest import TOY_SUITE
from tests.test_plugin import MODES, run

JUDGED = TOY_SUITE.replace(
    'return ItemResult({"accuracy": accuracy,',
    'verdict = models.judge.generate(item.prompt, max_tokens=4, stop=("\\\\n",))\n'
    '    return ItemResult({"separate": float(models.judge is not models.model), '
    '"judged": float(bool(verdict.text)), "accuracy": accuracy,',
).replace('metrics=("accuracy", "length")', 'metrics=("accuracy", "length", "separate", "judged")')


@pytest.mark.parametrize("mode", MODES)
def test_a_judge_of_any_backend_is_a_separate_model_and_named_in_the_record(toy, mode):
    toy.makepyfile(toy_suite=JUDGED)
    result, record = run(toy, mode, "--judge-backend", "fake", "--judge-model", "judge-copy")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert record["aggregates"]["toy/separate"]["mean"] == 1.0
    assert record["judge"]["name"] == "judge-copy" and record["judge"]["backend"] == "fake"
    result, record = run(toy, mode)  # no judge: the model under test judges itself
    assert record["aggregates"]["toy/separate"]["mean"] == 0.0 and "judge" not in record
    result, record = run(toy, mode, "--judge-backend", "fake")  # nothing named: no judge
    assert record["aggregates"]["toy/separate"]["mean"] == 0.0


def test_a_judge_that_cannot_be_reached_is_one_usage_line(toy):
    toy.makepyfile(toy_suite=JUDGED)
    result, _ = run(toy, [], "--judge-backend", "openai", "--judge-base-url",
                    "http://127.0.0.1:9/v1", "--judge-model", "big")  # fmt: skip
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--judge-base-url http://127.0.0.1:9/v1*"])
