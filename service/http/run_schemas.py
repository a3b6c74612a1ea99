"""Wire models of the raw-execution routes and their translation to the sandbox API.

- ``POST /v1/run`` (`RunRequest` -> `RunResponse`): referee's own shape: a program, its
  cases (each with an optional ``expected`` stdout) and limits, capped for a request.
- ``POST /run_code`` (`RunCodeRequest` -> `RunCodeResponse`): SandboxFusion's fields
  (code, language, compile_timeout, run_timeout, memory_limit_MB, stdin, files as base64,
  fetch_files: read back after the run, base64) so verl's sandbox client can point here
  unchanged.
- ``POST /run_jupyter`` (`RunJupyterRequest` -> `RunJupyterResponse`): notebook cells.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox import (
    Case,
    CaseOutcome,
    CaseStatus,
    CompileOutcome,
    CompileStatus,
    Limits,
    Program,
    SandboxStatus,
)
from referee.service.settings import RunCaps
from referee.verifiers.code.comparison import Comparator, Tolerance
from referee.verifiers.code.execution import Execution

MAX_CASES = 1000


class RunLimits(BaseModel):
    """Per-case limits of a raw run, capped lower than the sandbox's own maxima so one
    request cannot hold the gateway's sandbox for long."""

    model_config = ConfigDict(extra="forbid")

    wall_s: float = Field(default=5.0, gt=0, le=30)
    cpu_s: float = Field(default=5.0, gt=0, le=30)
    memory_mb: int = Field(default=256, ge=16, le=4096)
    output_bytes: int = Field(default=1 << 20, ge=1, le=16 << 20)
    compile_wall_s: float = Field(default=30.0, gt=0, le=60)

    def sandbox_limits(self) -> Limits:
        """The sandbox `Limits` for these values."""
        return Limits(**self.model_dump())


class RunCase(BaseModel):
    """One run: stdin, argv, files placed in the working directory, and optionally the
    expected stdout (compared with ``compare``)."""

    model_config = ConfigDict(extra="forbid")

    stdin: str = ""
    argv: list[str] = Field(default_factory=list, max_length=256)
    files: dict[str, str] = Field(default_factory=dict)
    expected: str | None = None


class RunRequest(BaseModel):
    """``POST /v1/run``: compile ``source`` (plus ``files``) once, run every case."""

    model_config = ConfigDict(extra="forbid")

    language: str
    source: str
    files: dict[str, str] = Field(default_factory=dict)
    build_flags: list[str] = Field(default_factory=list, max_length=64)
    cases: list[RunCase] = Field(
        default_factory=lambda: [RunCase()], min_length=1, max_length=MAX_CASES
    )
    limits: RunLimits = Field(default_factory=RunLimits)
    compare: Comparator = "lines"
    abs_tol: float = Field(default=1e-6, ge=0)
    rel_tol: float = Field(default=1e-6, ge=0)

    def program(self) -> Program:
        return Program(
            language=self.language,
            source=self.source,
            files=self.files,
            build_flags=self.build_flags,
        )

    def sandbox_cases(self) -> list[Case]:
        return [Case(stdin=c.stdin, argv=c.argv, files=c.files) for c in self.cases]

    def tolerance(self) -> Tolerance:
        return Tolerance(self.abs_tol, self.rel_tol)


class CaseResult(CaseOutcome):
    """A case's outcome plus, when ``expected`` was given and the run ended ``ok``,
    whether the output matched and the first difference."""

    passed: bool | None = None
    diff: str | None = None


class RunResponse(BaseModel):
    """``sandbox_status`` ``sandbox_error``: the infrastructure failed (retry); nothing
    else in the body describes the program then. (A sandbox that cannot work on this
    host at all is a 503 ``not_configured``, never a body.)"""

    sandbox_status: SandboxStatus
    message: str = ""
    language: str = ""
    compile: CompileOutcome | None = None
    cases: list[CaseResult] = Field(default_factory=list)

    @classmethod
    def from_execution(cls, done: Execution) -> RunResponse:
        report = done.report
        cases = []
        for outcome, verdict in zip(report.cases, done.verdicts, strict=False):
            extra = {} if verdict is None else {"passed": verdict.passed, "diff": verdict.diff}
            cases.append(CaseResult(**outcome.model_dump(), **extra))
        return cls(
            sandbox_status=report.sandbox_status,
            message=report.message,
            language=report.language,
            compile=report.compile,
            cases=cases,
        )


# SandboxFusion's language names -> the sandbox's.
FUSION_LANGUAGES = {
    "python": "python3",
    "cpp": "cpp",
    "c": "c",
    "nodejs": "javascript",
    "go": "go",
    "go_test": "go_test",
    "java": "java",
    "bash": "bash",
    "sql": "sql",
    "rust": "rust",
    "verilog": "verilog",
    "php": "php",
    "csharp": "csharp",
    "typescript": "typescript",
    "lua": "lua",
    "R": "r",
    "perl": "perl",
    "ruby": "ruby",
    "scala": "scala",
    "racket": "racket",
    "D_ut": "d_unittest",
    "kotlin_script": "kotlin_script",
    "pytest": "pytest",
    "junit": "junit",
    "gtest": "gtest",
    "jest": "jest",
    "react": "react",
}
# SandboxFusion's other modes, and why they are not offered here.
FUSION_UNSUPPORTED = {
    "python2": "Python 2 is not packaged by Debian 12",
    "julia": "Julia is not packaged by Debian 12",
    "swift": "Swift is not packaged by Debian 12",
    "lean": "Lean is not packaged by Debian 12",
    "cuda": "no GPU in the sandbox",
    "python_gpu": "no GPU in the sandbox",
}


def decoded_files(files: dict[str, str | None]) -> dict[str, str]:
    """SandboxFusion's base64 files as text; ValueError naming ``files.<name>`` for content
    that is not base64 of UTF-8 text."""
    decoded: dict[str, str] = {}
    for name, content in files.items():
        try:
            decoded[name] = base64.b64decode(content or "", validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError(f"files.{name}: expected base64 of UTF-8 text") from None
    return decoded


class CommandRunResult(BaseModel):
    """SandboxFusion's result of one command (compile or run): ``execution_time`` in wall
    seconds, ``cpu_time`` in CPU seconds (of a run; a compile reports none)."""

    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = None
    cpu_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeRequest(BaseModel):
    """SandboxFusion's ``RunCodeRequest``. ``memory_limit_MB`` -1 (or 0) means the
    server's maximum (`RunCaps.memory_mb`); timeouts and memory past the maxima are
    capped, and the response's ``message`` says so (`capped`)."""

    code: str
    language: str
    compile_timeout: float = Field(default=10, gt=0)
    run_timeout: float = Field(default=10, gt=0)
    memory_limit_MB: int = -1  # noqa: N815 - SandboxFusion's field name
    stdin: str | None = None
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)

    def sandbox_language(self) -> str:
        """The sandbox language; ValueError naming ``language`` when unsupported."""
        if self.language not in FUSION_LANGUAGES:
            known = ", ".join(FUSION_LANGUAGES)
            why = FUSION_UNSUPPORTED.get(self.language, "not a SandboxFusion language")
            raise ValueError(
                f"language: {self.language!r} is not supported here ({why}); use {known}"
            )
        return FUSION_LANGUAGES[self.language]

    def sandbox_case(self) -> Case:
        """The one case; ValueError naming ``files.<name>`` for content that is not
        base64 of UTF-8 text."""
        return Case(stdin=self.stdin or "", files=decoded_files(self.files), fetch=self.fetch_files)

    def limits(self, defaults: Limits, caps: RunCaps) -> Limits:
        """This request's limits within ``caps``; ``defaults`` (the server's sandbox
        limits) give the rest, the output cap among them."""
        memory = caps.memory_mb if self.memory_limit_MB <= 0 else self.memory_limit_MB
        memory = max(min(memory, caps.memory_mb), 16)
        run_s, compile_s = (
            min(self.run_timeout, caps.run_s),
            min(self.compile_timeout, caps.compile_s),
        )
        return defaults.model_copy(
            update={
                "wall_s": run_s,
                "cpu_s": run_s,
                "memory_mb": memory,
                "compile_wall_s": compile_s,
            }
        )

    def capped(self, caps: RunCaps) -> list[str]:
        """What was asked for past the server's maxima, as said in the response."""
        said = []
        if self.run_timeout > caps.run_s:
            said.append(f"run_timeout {self.run_timeout:g} s capped at {caps.run_s:g} s")
        if self.compile_timeout > caps.compile_s:
            said.append(
                f"compile_timeout {self.compile_timeout:g} s capped at {caps.compile_s:g} s"
            )
        if self.memory_limit_MB > caps.memory_mb:
            said.append(f"memory_limit_MB {self.memory_limit_MB} capped at {caps.memory_mb}")
        return said


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``RunCodeResponse``: ``Success`` when it compiled and ran to exit
    code 0 in time, ``Failed`` otherwise, ``SandboxError`` when the sandbox broke."""

    status: Literal["Success", "Failed", "SandboxError"]
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_execution(cls, done: Execution, notes: list[str] | None = None) -> RunCodeResponse:
        """``notes``: what the request should know besides the run (limits capped)."""
        report = done.report
        said = list(notes or [])
        if report.sandbox_status is not SandboxStatus.OK:
            return cls(status="SandboxError", message="; ".join([report.message, *said]))
        compiled = _compile_result(report.compile)
        if compiled is not None and compiled.return_code != 0:
            return cls(status="Failed", compile_result=compiled, message="; ".join(said))
        case = report.cases[0] if report.cases else None
        run = _run_result(case) if case is not None else None
        over = case is not None and case.status is CaseStatus.OUTPUT_LIMIT
        if over:
            said.insert(0, "the program's output exceeded the output cap; it was stopped")
        ok = not over and run is not None and run.status == "Finished" and run.return_code == 0
        status: Literal["Success", "Failed"] = "Success" if ok else "Failed"
        return cls(
            status=status,
            compile_result=compiled,
            run_result=run,
            message="; ".join(said),
            files=case.files if case is not None else {},
        )


def _compile_result(outcome: CompileOutcome | None) -> CommandRunResult | None:
    if outcome is None or outcome.status is CompileStatus.SKIPPED:
        return None
    timed_out = outcome.status is CompileStatus.TIMEOUT
    return CommandRunResult(
        status="TimeLimitExceeded" if timed_out else "Finished",
        execution_time=outcome.wall_s,
        return_code=0 if outcome.status is CompileStatus.OK else 1,
        stdout="",
        stderr=outcome.output,
    )


def _run_result(outcome: CaseOutcome) -> CommandRunResult:
    code = outcome.exit_code if outcome.exit_code is not None else -(outcome.signal or 0)
    status: Literal["Finished", "Error", "TimeLimitExceeded"] = "Finished"
    if outcome.status is CaseStatus.TIMEOUT:
        status = "TimeLimitExceeded"
    elif outcome.status is CaseStatus.OUTPUT_LIMIT:
        status = "Error"
    return CommandRunResult(
        status=status,
        execution_time=outcome.wall_s,
        cpu_time=outcome.cpu_s,
        return_code=code,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
    )


class RunJupyterRequest(BaseModel):
    """SandboxFusion's ``RunJupyterRequest``: cells run in order in one interpreter.
    ``total_timeout`` is capped like ``/run_code``'s ``run_timeout``; ``cell_timeout`` 0
    means no limit per cell."""

    cells: list[str] = Field(min_length=1, max_length=256)
    cell_timeout: float = Field(default=0, ge=0)
    total_timeout: float = Field(default=45, gt=0)
    kernel: Literal["python3"] = "python3"
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list, max_length=256)

    def total_s(self, caps: RunCaps) -> float:
        return min(self.total_timeout, caps.run_s)

    def capped(self, caps: RunCaps) -> list[str]:
        if self.total_timeout > caps.run_s:
            return [f"total_timeout {self.total_timeout:g} s capped at {caps.run_s:g} s"]
        return []


class CellResult(BaseModel):
    """One cell's outcome, SandboxFusion's ``CellRunResult``: what it printed, the value
    of a last expression (``display``, ``text/plain``) and an exception (``error``)."""

    stdout: str = ""
    stderr: str = ""
    display: list[dict[str, str]] = Field(default_factory=list)
    error: list[dict[str, object]] = Field(default_factory=list)


class RunJupyterResponse(BaseModel):
    """SandboxFusion's ``RunJupyterResponse``. ``Success``: every cell ran (a cell's
    exception is in its ``error``, as in a kernel; one over ``cell_timeout`` has a
    ``TimeoutError``); ``Failed``: the run was stopped (its ``driver`` result says how:
    ``TimeLimitExceeded`` past ``total_timeout``, ``Error`` when the interpreter died)
    and ``cells`` is empty; ``SandboxError``: the sandbox broke."""

    status: Literal["Success", "Failed", "SandboxError"]
    message: str = ""
    driver: CommandRunResult | None = None
    cells: list[CellResult] = Field(default_factory=list)
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
