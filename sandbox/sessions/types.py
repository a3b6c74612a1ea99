"""The session API types: what a session is (`SessionSpec`), what one command did
(`ExecOutcome`), the files it holds (`FileEntry`), and the two ways a request fails.

Two layers, as for one-shot runs: `ExecOutcome.status` says whether the *command*
finished in time (``ok``: it ran, whatever it did; ``timeout``: it was stopped), and its
``exit_code`` / ``error`` what it did. An exception says the *session* could not answer:
`SessionLost` (its sandbox died or stopped answering: its state is gone, never silently
replaced) or `SessionFileProblem` (a file request that cannot be done: no such file...).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox.types import SandboxFailure


class SessionKind(StrEnum):
    """What a session keeps between commands (see `sandbox.sessions.agent`)."""

    PYTHON = "python"
    BASH = "bash"
    SQLITE = "sqlite"


class SessionLimits(BaseModel):
    """Limits on the whole session, for its whole life (not per command): its processes
    share ``memory_mb`` (plus the disk's ``disk_mb``, which lives in memory), ``processes``
    and ``cpu_s`` (CPU seconds over the session's life; a session that spends them is
    lost). ``output_bytes`` cuts each command's stdout and stderr; ``file_size_mb`` bounds
    any one file it writes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(default=512, ge=32, le=65536)
    disk_mb: int = Field(default=256, ge=1, le=65536)
    processes: int = Field(default=64, ge=4, le=4096)
    cpu_s: float = Field(default=600.0, gt=0, le=86400)
    output_bytes: int = Field(default=1 << 20, ge=1024, le=64 << 20)
    file_size_mb: int = Field(default=64, ge=1, le=65536)


class SessionSpec(BaseModel):
    """A session to start. ``files`` (relative path -> text) are written to its
    directory first; ``database`` names the SQLite file of a ``sqlite`` session."""

    model_config = ConfigDict(extra="forbid")

    kind: SessionKind
    limits: SessionLimits = Field(default_factory=SessionLimits)
    files: dict[str, str] = Field(default_factory=dict)
    database: str = "session.db"


ExecStatus = Literal["ok", "timeout"]


class ExecError(BaseModel):
    """An exception a Python command raised (Jupyter's ``ename``/``evalue``/``traceback``),
    or an SQL error."""

    ename: str
    evalue: str
    traceback: list[str] = Field(default_factory=list)


class ExecOutcome(BaseModel):
    """What one command did. ``exit_code``: 0 when it ran cleanly, 1 for an exception
    (Python, SQL), a ``sys.exit`` code, the shell's ``$?``; None when it timed out.
    ``display``: the value of a last Python expression (``text/plain``), the rows of the
    last SQL query (``text/plain`` and ``application/json``). ``state_lost``: the
    command ended the shell (``exit``) or the shell had to be restarted after a timeout:
    the next command starts in a fresh shell (files stay)."""

    status: ExecStatus
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    display: list[dict[str, Any]] = Field(default_factory=list)
    error: ExecError | None = None
    truncated: bool = False
    state_lost: bool = False
    wall_s: float = 0.0


class FileEntry(BaseModel):
    """One entry of a session's directory."""

    path: str
    size: int
    kind: Literal["file", "directory", "symlink", "other"]


class SessionLost(SandboxFailure):
    """The session's sandbox died (out of memory or CPU budget, killed) or stopped
    answering; ``reason`` says which. Its state is gone; the session is closed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SessionBusy(RuntimeError):
    """Another request to the session is still running (one at a time); retry after it."""


FileProblemCode = Literal[
    "not_found", "is_directory", "too_large", "outside", "no_space", "unreadable"
]


class SessionFileProblem(ValueError):
    """A file request the session cannot do; the session goes on."""

    def __init__(self, code: FileProblemCode, message: str) -> None:
        super().__init__(message)
        self.code = code
