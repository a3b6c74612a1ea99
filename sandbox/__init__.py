"""Isolated execution of untrusted code. Knows nothing of verifiers or the service.

from referee.sandbox import Program, Case, Limits, run
report = run(Program(language="cpp", source=src), [Case(stdin="1 2\\n")], Limits(wall_s=2))
report.sandbox_status, report.compile.status, report.cases[0].status, report.cases[0].stdout
"""

from referee.sandbox import leftovers
from referee.sandbox.runner import Sandbox, run
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import (
    Case,
    CaseStatus,
    CompileOutcome,
    CompileStatus,
    Limits,
    Outcome,
    Program,
    RunReport,
    SandboxStatus,
)

__all__ = [
    "Case",
    "CaseStatus",
    "CompileOutcome",
    "CompileStatus",
    "Limits",
    "Outcome",
    "Program",
    "RunReport",
    "Sandbox",
    "SandboxSettings",
    "SandboxStatus",
    "leftovers",
    "run",
]
