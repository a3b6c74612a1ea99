"""A language whose toolchain starts slowly needs a time limit its programs can meet."""

from __future__ import annotations

import pytest

from referee.sandbox import languages, toolchains
from referee.verifiers import Status
from tests.conftest import require
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

KOTLIN = languages.find("kotlin_script")
SUM = 'val (a, b) = readLine()!!.trim().split(" ").map { it.toInt() }\nprintln(a + b)'
TESTS = {"inputs": ["1 2\n"], "outputs": ["3\n"]}


def test_a_limit_below_the_start_is_refused_naming_the_param(score_many: ScoreMany) -> None:
    item = code_item(fenced(SUM, "kotlin"), TESTS, language="kotlin_script")  # 2 s default
    (result,) = score_many([item])
    assert (result.status, result.reward) == (Status.INVALID, None)
    assert result.error is not None
    assert result.error.message.startswith("params.time_limit_s: kotlin_script takes about")
    assert "give at least 12" in result.error.message


@pytest.mark.slow
def test_at_the_least_limit_a_right_script_passes(score_many: ScoreMany) -> None:
    assert KOTLIN is not None
    missing = toolchains.missing_tools(KOTLIN)
    require(not missing, f"kotlin_script toolchain absent on this host: {', '.join(missing)}")
    limit = 2 * KOTLIN.start_s
    item = code_item(fenced(SUM, "kotlin"), TESTS, language="kotlin_script", time_limit_s=limit)
    (result,) = score_many([item])
    assert (result.status, result.reward) == (Status.OK, 1.0), result
