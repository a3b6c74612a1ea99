"""The sandbox API types: what to run (`Program`, `Case`), under which `Limits`, and what
happened (`CaseOutcome` per case, `CompileOutcome`, and the `RunReport` that holds them).

Two layers of status, on purpose:

- `RunReport.sandbox_status` says whether the *sandbox* worked. ``sandbox_error`` means the
  infrastructure broke (bwrap missing, cgroup setup failed, a toolchain crashed in a way
  that is not the program's fault); nothing in the report says anything about the program,
  and a caller must treat it as retryable, never as a wrong answer.
- `CaseOutcome.status` (per case) and `CompileOutcome.status` say what the *program* did.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class CaseStatus(StrEnum):
    """What one case did. ``ok`` means exit code 0 within every limit; the caller compares
    the output. ``signal`` is a death by a signal that is not a limit (e.g. SIGSEGV)."""

    OK = "ok"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    SIGNAL = "signal"


class CompileStatus(StrEnum):
    """``skipped`` for interpreted languages; ``error`` is the program's fault (bad source)."""

    OK = "ok"
    ERROR = "compile_error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"


class SandboxStatus(StrEnum):
    """Did the infrastructure work? Independent of what the program did."""

    OK = "ok"
    ERROR = "sandbox_error"
    """The infrastructure failed this time (retryable)."""
    UNAVAILABLE = "sandbox_unavailable"
    """This host cannot run the program at all (the backend does not work here, the
    language's toolchain is missing): an operator's fix, not a retry."""


class Limits(BaseModel):
    """Per-case limits. Units are in the names. ``output_bytes`` caps stdout and stderr
    together; going over it kills the case (``output_limit``). ``compile_*`` apply to the
    single compile step, whose output is capped at ``output_bytes`` as well. ``spawn``
    False keeps the program from starting other processes (threads stay allowed; see
    `sandbox.seccomp`): for a program whose tests run in its own process."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(default=5.0, gt=0, le=600)
    cpu_s: float = Field(default=4.0, gt=0, le=600)
    memory_mb: int = Field(default=256, ge=16, le=65536)
    processes: int = Field(default=64, ge=1, le=4096)
    file_size_mb: int = Field(default=16, ge=0, le=4096)
    disk_mb: int = Field(default=64, ge=1, le=8192)
    output_bytes: int = Field(default=1 << 20, ge=1, le=1 << 30)
    compile_wall_s: float = Field(default=60.0, gt=0, le=600)
    compile_memory_mb: int = Field(default=2048, ge=64, le=65536)
    spawn: bool = True


class Program(BaseModel):
    """Source to compile (once) and run. ``source`` goes into the language's main file
    (e.g. ``Main.java``); ``files`` are extra source files next to it (names are plain file
    names, no directories). ``build_flags`` are appended to the compiler's argv.
    ``keep_build`` False: the build is for this
    run only (a program carrying a per-run secret), never kept in the build cache."""

    model_config = ConfigDict(extra="forbid")

    language: str
    source: str
    files: dict[str, str] = Field(default_factory=dict)
    build_flags: list[str] = Field(default_factory=list)
    keep_build: bool = True


class Case(BaseModel):
    """One run of the compiled program: ``stdin``, extra ``argv``, and ``files`` placed in
    the (private, writable) working directory before the program starts. File names are
    relative paths (``data/in.txt``); their directories are created, writable. ``fetch``
    names files (relative paths) to read back when the program has ended; they come back
    in `CaseOutcome.files` (SandboxFusion's ``fetch_files``)."""

    model_config = ConfigDict(extra="forbid")

    stdin: str = ""
    argv: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)
    data_files: dict[str, bytes] = Field(default_factory=dict)
    """Files placed byte for byte, as ``files`` (a database, an image...)."""
    fetch: list[str] = Field(default_factory=list, max_length=256)


class CaseOutcome(BaseModel):
    """What one case did. ``stdout``/``stderr`` are decoded UTF-8 (invalid bytes replaced)
    and hold at most ``Limits.output_bytes`` together. ``exit_code`` is None when the
    process died by a signal (``signal`` then holds its number). ``memory_kb`` is the peak
    resident memory (cgroup peak where available, else the largest ``ru_maxrss``)."""

    status: CaseStatus
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    memory_kb: int = 0
    truncated: bool = False
    files: dict[str, str] = Field(default_factory=dict)
    """The case's ``fetch`` files that existed as regular files when the program ended,
    base64, at most ``Limits.output_bytes`` in all (files past it are left out)."""


class CompileOutcome(BaseModel):
    """The compile step. ``output`` is the compiler's stderr and stdout (capped).
    ``cached``: the build of an earlier run of the same program was reused
    (`sandbox.builds`); ``wall_s`` is then 0."""

    status: CompileStatus
    output: str = ""
    wall_s: float = 0.0
    cached: bool = False


class RunReport(BaseModel):
    """Everything one `run` produced. When ``sandbox_status`` is ``sandbox_error`` the
    ``message`` says why and ``compile``/``cases`` must not be interpreted. When the
    compile fails, ``cases`` is empty."""

    sandbox_status: SandboxStatus = SandboxStatus.OK
    message: str = ""
    backend: str = ""
    language: str = ""
    compile: CompileOutcome | None = None
    peer_compile: CompileOutcome | None = None
    """For `Sandbox.run_linked`: the peer's compile (None: nothing to compile)."""
    cases: list[CaseOutcome] = Field(default_factory=list)
    peers: list[CaseOutcome] = Field(default_factory=list)
    """For `Sandbox.run_linked`: what the peer did in each case (same order as ``cases``)."""

    @property
    def ok(self) -> bool:
        """True when the sandbox worked, the compile (if any) succeeded and every case is ok."""
        compiled = self.compile is None or self.compile.status in {
            CompileStatus.OK,
            CompileStatus.SKIPPED,
        }
        return (
            self.sandbox_status is SandboxStatus.OK
            and compiled
            and all(c.status is CaseStatus.OK for c in self.cases)
        )


class SandboxFailure(Exception):
    """Raised inside the package when the infrastructure broke; `run` turns it into a
    `RunReport` with ``sandbox_error``. Callers of `run` never see it."""


class FastPathDeclined(SandboxFailure):
    """The Python fast path does not take this case (a program past what its server
    reads in one request): the case runs in a bwrap of its own, as planned, which is
    neither a failure to warn about nor a fallback to count."""
