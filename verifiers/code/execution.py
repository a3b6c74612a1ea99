"""Raw execution for tools and agents (``POST /v1/run``, ``POST /run_code``): compile once,
run the cases, and compare each output with its expected text when one is given.

Blocking: call it from a thread in an event loop. Raises `ValueError` for a request that
can never run (unknown language, a bad file name); a broken sandbox comes back in the
report (``sandbox_error``), never as an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from referee.sandbox import Case, CaseStatus, Limits, Program, RunReport, Sandbox, SandboxStatus
from referee.verifiers.code.comparison import Comparator, Match, Tolerance, compare


@dataclass(frozen=True)
class Execution:
    """The sandbox's report and, per case, the comparison (None: no expected output,
    or the case did not end ``ok`` and so was not compared)."""

    report: RunReport
    verdicts: list[Match | None]


def execute(
    sandbox: Sandbox,
    program: Program,
    cases: Sequence[Case],
    limits: Limits,
    expected: Sequence[str | None],
    how: Comparator = "lines",
    tolerance: Tolerance | None = None,
) -> Execution:
    """Run ``program`` on ``cases`` in ``sandbox``; ``expected[i]`` (or None)
    is compared with case i's stdout using ``how``."""
    tol = tolerance or Tolerance()
    report = sandbox.run(program, cases, limits)
    verdicts: list[Match | None] = [None] * len(cases)
    if report.sandbox_status is SandboxStatus.OK:
        for index, (outcome, want) in enumerate(zip(report.cases, expected, strict=False)):
            if want is not None and outcome.status is CaseStatus.OK:
                verdicts[index] = compare(outcome.stdout, want, how, tol)
    return Execution(report, verdicts)


class RunSpec(BaseModel):
    """Everything one raw run needs, as plain data: what `execute` takes, so the run can
    cross a process boundary (an item of the internal ``sandbox.run`` verifier)."""

    model_config = ConfigDict(extra="forbid")

    program: Program
    cases: list[Case]
    limits: Limits
    expected: list[str | None]
    compare: Comparator = "lines"
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)

    def run(self, sandbox: Sandbox) -> Execution:
        """`execute` this spec in ``sandbox`` (blocking; same errors)."""
        tolerance = Tolerance(self.abs_tol, self.rel_tol)
        return execute(
            sandbox, self.program, self.cases, self.limits, self.expected, self.compare, tolerance
        )


def encode_execution(done: Execution) -> dict[str, Any]:
    """``done`` as JSON-ready data; `decode_execution` is its inverse."""
    return {
        "report": done.report.model_dump(mode="json"),
        "verdicts": [
            None if v is None else {"passed": v.passed, "diff": v.diff} for v in done.verdicts
        ],
    }


def decode_execution(data: dict[str, Any]) -> Execution:
    """The `Execution` that `encode_execution` encoded (ValueError for anything else)."""
    try:
        report = RunReport.model_validate(data["report"])
        verdicts = [
            None if v is None else Match(bool(v["passed"]), v["diff"]) for v in data["verdicts"]
        ]
    except (KeyError, TypeError, ValidationError) as exc:
        raise ValueError(f"not an encoded execution: {exc}") from None
    return Execution(report, verdicts)
