"""Special-judge checkers: a program from the reference that grades one case.

Contract for checker authors: the checker runs once per case (compiled once for all of
them) with three files in its working directory and their names as argv, in this order:
``input.txt`` (the case input), ``expected.txt`` (the reference output), ``actual.txt``
(the candidate's output). It prints a score in [0, 1]; the last whitespace-separated token
of its stdout is read. A checker that fails to compile, crashes, or prints no such score is
the reference's fault: the item is ``invalid`` (``reference.checker: ...``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from referee.sandbox import Case, CaseStatus, CompileStatus, Limits, Program, Sandbox
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code.runtime import require_ok

FILES = ("input.txt", "expected.txt", "actual.txt")


@dataclass(frozen=True)
class Judged:
    """One case to judge: what went in, what was expected, what the candidate printed."""

    input: str
    expected: str
    actual: str


def run_checker(
    sandbox: Sandbox, source: str, language: str, cases: Sequence[Judged], limits: Limits
) -> list[float]:
    """Scores in [0, 1], one per case, from the checker program ``source``."""
    if not cases:
        return []
    runs = [
        Case(files=dict(zip(FILES, (c.input, c.expected, c.actual), strict=True)), argv=list(FILES))
        for c in cases
    ]
    try:
        report = require_ok(sandbox.run(Program(language=language, source=source), runs, limits))
    except ValueError as exc:
        raise ItemInvalid("invalid_reference", f"reference.checker_language: {exc}") from None
    if report.compile is not None and report.compile.status not in (
        CompileStatus.OK,
        CompileStatus.SKIPPED,
    ):
        raise ItemInvalid(
            "invalid_reference",
            f"reference.checker: does not compile: {report.compile.output[:500]}",
        )
    return [
        _score(index, outcome.status, outcome.stdout, outcome.stderr)
        for index, outcome in enumerate(report.cases)
    ]


def _score(index: int, status: CaseStatus, stdout: str, stderr: str) -> float:
    if status is not CaseStatus.OK:
        raise ItemInvalid(
            "invalid_reference",
            f"reference.checker: failed on case {index} ({status.value}): {stderr[-300:]}",
        )
    tokens = stdout.split()
    try:
        score = float(tokens[-1]) if tokens else math.nan
    except ValueError:
        score = math.nan
    if not 0.0 <= score <= 1.0:
        raise ItemInvalid(
            "invalid_reference",
            f"reference.checker: case {index}: expected a score in [0, 1], got {stdout[-100:]!r}",
        )
    return score
