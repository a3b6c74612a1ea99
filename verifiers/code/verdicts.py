"""Per-case verdicts: what each case's run means for the score.

A case passes when its run ended ``ok`` and its output matches (stdio: the comparator or
the checker's score; function: the returned JSON value; assert: the run reached the end of
the tests). Anything else scores 0 with the sandbox's status (``runtime_error``,
``timeout``, ``memory_limit``, ``output_limit``, ``signal``) or ``wrong_answer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sandbox import CaseStatus, Outcome
from verifiers.code.comparison import DIFF_CHARS, Comparator, Tolerance, compare, compare_values
from verifiers.code.harness import returned_value, tests_completed
from verifiers.code.suite import Suite, TestCase

STDERR_CHARS = 300


@dataclass
class Verdict:
    """One case: ``status`` is ``passed``, ``wrong_answer``, ``skipped`` or the sandbox's
    case status; ``score`` in [0, 1]; ``diff`` the first difference (truncated)."""

    status: str
    score: float
    time_s: float = 0.0
    diff: str | None = None
    stderr: str | None = None

    def as_details(self) -> dict[str, Any]:
        """The JSON shape in ``details.cases``: empty fields are left out."""
        out: dict[str, Any] = {"status": self.status, "score": self.score, "time_s": self.time_s}
        if self.diff is not None:
            out["diff"] = self.diff
        if self.stderr:
            out["stderr"] = self.stderr
        return out


@dataclass(frozen=True)
class Rules:
    """How outputs are judged: the comparator, tolerances, the assert-run nonce, and
    whether an APPS-style ``[value]`` expected output also accepts ``value``."""

    compare: Comparator
    tolerance: Tolerance
    nonce: str
    accept_wrapped_output: bool = False


def judge(case: TestCase, outcome: Outcome, suite: Suite, rules: Rules) -> Verdict:
    """The verdict of one case run (before any checker)."""
    time_s = outcome.wall_s
    if outcome.status is not CaseStatus.OK:
        tail = outcome.stderr[-STDERR_CHARS:] or None
        return Verdict(outcome.status.value, 0.0, time_s, stderr=tail)
    if suite.kind == "assert":
        # No nonce: a test appended to a non-Python program; its exit status is the verdict.
        if not rules.nonce or tests_completed(outcome.stdout, rules.nonce):
            return Verdict("passed", 1.0, time_s)
        return Verdict("wrong_answer", 0.0, time_s, diff="the program exited before the tests ran")
    if suite.kind == "function":
        return _judge_value(case, outcome, rules)
    verdict = compare(outcome.stdout, case.expected, rules.compare, rules.tolerance)
    if verdict.passed:
        return Verdict("passed", 1.0, time_s)
    return Verdict("wrong_answer", 0.0, time_s, diff=verdict.diff)


def _judge_value(case: TestCase, outcome: Outcome, rules: Rules) -> Verdict:
    found, value = returned_value(outcome.stdout)
    if not found:
        return Verdict("wrong_answer", 0.0, outcome.wall_s, diff="the function returned nothing")
    expected = case.expected_value
    passed = compare_values(value, expected, rules.tolerance)
    if not passed and rules.accept_wrapped_output and isinstance(expected, list):
        passed = len(expected) == 1 and compare_values(value, expected[0], rules.tolerance)
    if passed:
        return Verdict("passed", 1.0, outcome.wall_s)
    diff = f"expected {_short(expected)}, got {_short(value)}"
    return Verdict("wrong_answer", 0.0, outcome.wall_s, diff=diff)


def skipped(count: int) -> list[Verdict]:
    """Verdicts for cases never run (early exit after a failure)."""
    return [Verdict("skipped", 0.0) for _ in range(count)]


def summarise(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """Counts by status, for the details."""
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    return counts


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= DIFF_CHARS else text[:DIFF_CHARS] + "..."
