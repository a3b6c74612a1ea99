"""Special-judge checkers: a program from the reference that grades one case.

Contract for checker authors: the checker runs once per case (compiled once for all of
them) with three files in its working directory and their names as argv, in this order:
``input.txt`` (the case input), ``expected.txt`` (the reference output), ``actual.txt``
(the candidate's output). It prints a score in [0, 1]; the last whitespace-separated token
of its stdout is read. A checker that fails to compile is the reference's fault: the item is
``invalid`` (``reference.checker: ...``); so is one that crashes, or prints no such score,
on the expected output. On a candidate's output only, it is the output's doing: 0 for
the case (`run_checker`).
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


@dataclass(frozen=True)
class Checked:
    """A case's score, and why the checker failed on the candidate's output when it did
    (it still reads the expected output: the output's doing, scored 0)."""

    score: float
    failure: str | None = None


def run_checker(
    sandbox: Sandbox, source: str, language: str, cases: Sequence[Judged], limits: Limits
) -> list[Checked]:
    """One score in [0, 1] per case, from the checker program ``source``.

    A checker that crashes, runs out of time or prints no score on a candidate's output
    is asked again with the expected output in its place. Reading that, it is sound and
    the candidate's output is what broke it (``print("abc")`` for a checker that calls
    ``float()``): the case scores 0, never an ``invalid`` item a response could cause at
    will. Failing that too, the checker is broken: the reference's fault (``invalid``).
    """
    if not cases:
        return []
    read = _run(sandbox, source, language, cases, limits)
    failed = [index for index, result in enumerate(read) if isinstance(result, str)]
    if failed:
        sound = [Judged(cases[i].input, cases[i].expected, cases[i].expected) for i in failed]
        for index, again in zip(
            failed, _run(sandbox, source, language, sound, limits), strict=True
        ):
            if isinstance(again, str):
                raise ItemInvalid(
                    "invalid_reference", f"reference.checker: case {index}: {read[index]}"
                )
    return [Checked(0.0, result) if isinstance(result, str) else Checked(result) for result in read]


def _run(
    sandbox: Sandbox, source: str, language: str, cases: Sequence[Judged], limits: Limits
) -> list[float | str]:
    """Per case: the checker's score, or how it failed."""
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
    return [_score(o.status, o.stdout, o.stderr) for o in report.cases]


def _score(status: CaseStatus, stdout: str, stderr: str) -> float | str:
    if status is not CaseStatus.OK:
        return f"failed ({status.value}): {stderr[-300:]}"
    tokens = stdout.split()
    try:
        score = float(tokens[-1]) if tokens else math.nan
    except ValueError:
        score = math.nan
    if not 0.0 <= score <= 1.0:
        return f"expected a score in [0, 1], got {stdout[-100:]!r}"
    return score
