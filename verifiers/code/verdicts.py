"""Per-case verdicts: what each case's run means for the score.

A case passes when its run ended ``ok`` and its output matches (stdio: the comparator or
the checker's score; function: the returned JSON value; assert: the tester's verdict,
on the line its key marks). Anything else scores 0 with
the sandbox's status (``runtime_error``, ``timeout``, ``memory_limit``, ``output_limit``,
``signal``) or ``wrong_answer``. A verdict's ``flags`` name suspected gaming
(``custom_type``, ``custom_eq``, ``early_exit``) or an odd ending (``no_verdict``: a
linked test's own code ended its process); they explain a 0, never cause one alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.sandbox import CaseOutcome, CaseStatus
from referee.verifiers.base import ItemError, ItemInvalid
from referee.verifiers.code.boundary import assembly
from referee.verifiers.code.comparison import (
    DIFF_CHARS,
    Comparator,
    Tolerance,
    compare,
    compare_values,
)
from referee.verifiers.code.harness import returned_value
from referee.verifiers.code.suite import Suite, TestCase

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
    flags: tuple[str, ...] = ()
    exercised: bool = True
    """False for a linked test that passed without calling the program (the tester says
    so: `assembly.TestVerdict.called`): it would pass whatever the program is."""

    def as_details(self) -> dict[str, Any]:
        """The JSON shape in ``details.cases``: empty fields are left out."""
        out: dict[str, Any] = {"status": self.status, "score": self.score, "time_s": self.time_s}
        if self.diff is not None:
            out["diff"] = self.diff
        if self.stderr:
            out["stderr"] = self.stderr
        if self.flags:
            out["flags"] = list(self.flags)
        return out


@dataclass(frozen=True)
class Rules:
    """How outputs are judged: the comparator, tolerances, whether an APPS-style
    ``[value]`` expected output also accepts ``value``, and the key a tester's verdict
    line carries."""

    compare: Comparator
    tolerance: Tolerance
    accept_wrapped_output: bool = False
    verdict_key: str = ""
    """What a tester's verdict line carries (`harness.Plan.verdict_key`)."""


def judge(
    case: TestCase,
    outcome: CaseOutcome,
    suite: Suite,
    rules: Rules,
    peer: CaseOutcome | None = None,
) -> Verdict:
    """The verdict of one case run (before any checker); ``peer`` is the tester's run
    when the tests ran in a sandbox of their own."""
    if peer is not None:
        return judge_linked(outcome, peer, rules.verdict_key)
    time_s = outcome.wall_s
    if outcome.status is not CaseStatus.OK:
        tail = outcome.stderr[-STDERR_CHARS:] or None
        return Verdict(outcome.status.value, 0.0, time_s, stderr=tail)
    if suite.kind == "function":
        return _judge_value(case, outcome, rules)
    verdict = compare(outcome.stdout, case.expected, rules.compare, rules.tolerance)
    if verdict.passed:
        return Verdict("passed", 1.0, time_s)
    return Verdict("wrong_answer", 0.0, time_s, diff=verdict.diff)


def judge_linked(program: CaseOutcome, tester: CaseOutcome, key: str) -> Verdict:
    """A Python assert case whose tests ran in their own sandbox (`verifiers.code.boundary`).
    The tester's verdict decides; the program's own limits (timeout, memory, output)
    explain a failure first, and a tester that broke is the reference's or the sandbox's
    problem, never the program's pass."""
    time_s = max(program.wall_s, tester.wall_s)
    ok = tester.status is CaseStatus.OK
    verdict = assembly.read_verdict(tester.stdout, key) if ok else None
    if verdict is not None and verdict.harness_error:
        raise ItemInvalid("invalid_reference", f"reference.test: {verdict.harness_error}")
    if verdict is not None and not verdict.called:
        if not verdict.passed:  # its setup raised, a name it never imported, assert False
            said = f"fails without calling the program: {verdict.message}"
            raise ItemInvalid("invalid_reference", f"reference.test: {said}")
        return Verdict("passed", 1.0, time_s, flags=verdict.flags, exercised=False)
    if verdict is not None and verdict.passed:
        return Verdict("passed", 1.0, time_s, flags=verdict.flags)
    flags = verdict.flags if verdict is not None else ()
    tail = program.stderr[-STDERR_CHARS:] or None
    if program.status not in (CaseStatus.OK, CaseStatus.RUNTIME_ERROR):
        return Verdict(program.status.value, 0.0, time_s, stderr=tail, flags=flags)
    status = "runtime_error" if program.status is CaseStatus.RUNTIME_ERROR else "wrong_answer"
    if verdict is None:
        if tester.status not in (CaseStatus.OK, CaseStatus.RUNTIME_ERROR, CaseStatus.SIGNAL):
            # the tests' run hit a limit: a huge value from the program, or a slow test
            return Verdict(tester.status.value, 0.0, time_s, stderr=tail)
        ending = _ending(tester)
        if not assembly.test_started(tester.stdout, key):
            # the harness prints a verdict unless a limit stops it: no 0 for its failure
            raise ItemError("harness_failed", f"the test harness ended without a verdict: {ending}")
        # the test's own code ended the process (a goroutine's panic on what the program
        # returned): a failed test, as in a runner that runs it in one process
        diff = f"the test ended without a verdict: {ending}"
        return Verdict(status, 0.0, time_s, diff=diff, stderr=tail, flags=("no_verdict",))
    return Verdict(status, 0.0, time_s, diff=verdict.message, stderr=tail, flags=flags)


def _ending(tester: CaseOutcome) -> str:
    """How a tester with no verdict ended: its exit and the tail of its stderr."""
    if tester.signal is not None:
        how = f"killed by signal {tester.signal}"
    else:
        how = f"exit status {tester.exit_code}"
    said = tester.stderr[-STDERR_CHARS:].strip()
    return f"{how}; {said}" if said else how


def _judge_value(case: TestCase, outcome: CaseOutcome, rules: Rules) -> Verdict:
    found, value, unsupported = returned_value(outcome.stdout)
    if unsupported is not None:
        flags = ("custom_type", unsupported) if unsupported != "custom_type" else (unsupported,)
        diff = "the function returned an object that is not plain data"
        return Verdict("wrong_answer", 0.0, outcome.wall_s, diff=diff, flags=flags)
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
