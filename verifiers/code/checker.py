"""Special-judge checkers: a program from the reference that grades one case.

Contract for checker authors: the checker runs once per case (compiled once for all of
them) with three files in its working directory and their names as argv, in this order:
``input.txt`` (the case input), ``expected.txt`` (the reference output), ``actual.txt``
(the candidate's output). It prints a score in [0, 1]; the last whitespace-separated token
of its stdout is read. A checker that fails to compile is the reference's fault: the item is
``invalid`` (``reference.checker: ...``); so is one that crashes, or prints no such score,
on the expected output. On a candidate's output only, it is the output's doing: 0 for
the case (`Checker.check`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from referee.sandbox import (
    Case,
    CaseOutcome,
    CaseStatus,
    CompileStatus,
    Limits,
    Program,
    Sandbox,
)
from referee.verifiers.base import ItemInvalid, ItemTimeout
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
    """A case's score; when the candidate's output broke the checker (it still reads the
    expected output: the output's doing, scored 0), why, and its flag."""

    score: float
    failure: str | None = None
    flag: str | None = None


@dataclass(frozen=True)
class _Failed:
    """A checker run without a score: why, and whether it ran out of time."""

    why: str
    timed_out: bool = False
    cut: bool = False
    """It ran out of a time limit cut short by ``end_by``: no evidence against the checker."""
    wall_s: float = 0.0


#: Of the checker's time under ``end_by``, what the first pass may take; the rest places
#: the failures of the first (the soundness runs).
FIRST_PASS_SHARE = 0.7
#: Reading the expected output in under this share of the time the candidate's output
#: took is evidence that the output, not the checker, is slow.
SLOWED_RATIO = 0.5
SLOWED_GAP_S = 0.1
"""And by at least this much: two quick runs differ by twice at random (a right output
read in 12 ms beside the expected one in 5 ms was blamed once in the full suite)."""


@dataclass(frozen=True)
class Checker:
    """A special judge: its source and language, and the limits of each of its runs."""

    sandbox: Sandbox
    source: str
    language: str
    limits: Limits

    def check(self, cases: Sequence[Judged], end_by: float | None = None) -> list[Checked]:
        """One score in [0, 1] per case.

        A checker that crashes, runs out of time or prints no score on a candidate's
        output is asked again with the expected output in its place. Reading that, it is
        sound and the candidate's output is what broke it (``print("abc")`` for a checker
        that calls ``float()``): the case scores 0, never an ``invalid`` item a response
        could cause at will. Failing that too, the checker is broken: the reference's
        fault (``invalid``).

        With ``end_by`` (`time.monotonic`, from the executor's item timeout) every run
        ends by then, so that output on which the checker never ends fails its cases
        instead of timing the item out. Cases left unjudged when time runs out score 0,
        flagged ``time_budget``, when the candidate's output is shown to have kept the
        checker busy (a run out of time on it, the expected output read in less time; or
        the slowest case's expected output read in under half the time of its output,
        side by side, `_slowed`);
        otherwise (a checker merely slow) the item is a timeout (`ItemTimeout`), as is a
        soundness run cut short: a right program is never scored 0 for the checker's
        slowness. (The last runs started before time runs out are cut to the time left,
        so output that merely slows the checker is caught by them too.)
        """
        if not cases:
            return []
        first_end = None
        if end_by is not None:
            first_end = time.monotonic() + FIRST_PASS_SHARE * (end_by - time.monotonic())
        runs = self._run(cases, first_end)
        read = [self._score(run) for run in runs]
        failed = [(i, result) for i, result in enumerate(read) if isinstance(result, _Failed)]
        self._place([cases[i] for i, _ in failed], failed, end_by)
        checked = [_checked(result) for result in read]
        if len(read) < len(cases):
            busy = any(result.timed_out for _, result in failed)
            if not busy and not self._slowed(cases, runs, end_by):
                raise ItemTimeout("the item's time ran out before the checker judged every case")
            why = "not judged: the candidate's output kept the checker busy past its time"
            checked += [Checked(0.0, why, "time_budget")] * (len(cases) - len(read))
        return checked

    def _place(
        self,
        cases: Sequence[Judged],
        failures: Sequence[tuple[int, _Failed]],
        end_by: float | None,
    ) -> None:
        """Raise unless the checker reads the expected output of each failed case
        (``cases``, and per case its number and how it failed on the candidate's output):
        `ItemInvalid` when it fails on it, `ItemTimeout` when its time was cut short or
        ran out first, or when reading it took longer than a cut run on the candidate's
        output had (no evidence that the output, not the cut, made the checker fail)."""
        if not cases:
            return
        again = self._run([_sound(c) for c in cases], end_by)
        for (index, failed), run in zip(failures, again, strict=False):
            result = self._score(run)
            if isinstance(result, _Failed):
                if result.cut:
                    raise ItemTimeout("the item's time ran out while the checker was checked")
                message = f"reference.checker: case {index}: {result.why}"
                raise ItemInvalid("invalid_reference", message)
            if failed.cut and run.wall_s >= failed.wall_s:
                raise ItemTimeout("the item's time ran out before the checker judged every case")
        if len(again) < len(cases):
            raise ItemTimeout("the item's time ran out while the checker was checked")

    def _slowed(
        self, cases: Sequence[Judged], runs: Sequence[CaseOutcome], end_by: float | None
    ) -> bool:
        """Whether the candidate's output is what kept the checker slow, when no run of
        the first pass ran out of time (the last one started finished just in time). The
        slowest case is read again, side by side (so under the same load), with the
        candidate's output and with the expected one: evidence when the expected output
        takes under `SLOWED_RATIO` of the candidate's time, and `SLOWED_GAP_S` less. The
        first pass's own time is not used: a run slowed by the machine's load would blame
        a right output. An output equal to the expected one is never to blame."""
        if not runs:
            return False
        slowest = max(range(len(runs)), key=lambda i: runs[i].wall_s)
        case = cases[slowest]
        if case.actual == case.expected:
            return False
        again = self._run([case, _sound(case)], end_by)
        if len(again) < 2 or isinstance(self._score(again[1]), _Failed):
            return False
        output, expected = again[0].wall_s, again[1].wall_s
        return expected < SLOWED_RATIO * output and output - expected >= SLOWED_GAP_S

    def _run(self, cases: Sequence[Judged], end_by: float | None) -> list[CaseOutcome]:
        """The checker's runs, one per case started by ``end_by``."""
        files = [dict(zip(FILES, (c.input, c.expected, c.actual), strict=True)) for c in cases]
        runs = [Case(files=named, argv=list(FILES)) for named in files]
        program = Program(language=self.language, source=self.source)
        try:
            report = require_ok(self.sandbox.run(program, runs, self.limits, end_by=end_by))
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
        return report.cases

    def _score(self, case: CaseOutcome) -> float | _Failed:
        """The score a run printed, or how it failed."""
        limits = self.limits
        if case.status is not CaseStatus.OK:
            timed_out = case.status is CaseStatus.TIMEOUT
            # a run killed before its own limit had its limit cut by ``end_by``
            cut = timed_out and case.wall_s < limits.wall_s and case.cpu_s < limits.cpu_s
            why = f"failed ({case.status.value}): {case.stderr[-300:]}"
            return _Failed(why, timed_out, cut, case.wall_s)
        tokens = case.stdout.split()
        try:
            score = float(tokens[-1]) if tokens else math.nan
        except ValueError:
            score = math.nan
        if not 0.0 <= score <= 1.0:
            return _Failed(f"expected a score in [0, 1], got {case.stdout[-100:]!r}")
        return score


def _sound(case: Judged) -> Judged:
    """``case`` with the expected output as the candidate's."""
    return Judged(case.input, case.expected, case.expected)


def _checked(result: float | _Failed) -> Checked:
    if not isinstance(result, _Failed):
        return Checked(result)
    return Checked(0.0, result.why, "checker_timeout" if result.timed_out else "checker_failed")
