"""Isolated execution of untrusted code. Knows nothing of verifiers or the service.

from referee.sandbox import Case, Limits, Program, Sandbox
with Sandbox() as sandbox:
    program = Program(language="cpp", source=src)
    report = sandbox.run(program, [Case(stdin="1 2\\n")], Limits(wall_s=2))
report.sandbox_status, report.compile.status, report.cases[0].status, report.cases[0].stdout
"""

from referee.sandbox import leftovers
from referee.sandbox.runner import Sandbox
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import (
    Case,
    CaseOutcome,
    CaseStatus,
    CompileOutcome,
    CompileStatus,
    Limits,
    Program,
    RunReport,
    SandboxStatus,
)

__all__ = [
    "Case",
    "CaseOutcome",
    "CaseStatus",
    "CompileOutcome",
    "CompileStatus",
    "Limits",
    "Program",
    "RunReport",
    "Sandbox",
    "SandboxSettings",
    "SandboxStatus",
    "leftovers",
]
