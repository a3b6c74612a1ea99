"""The wire types of ``/v1/sessions``: what a client sends and gets back, and what the
gateway and a sandbox worker exchange about a session (the same models)."""

from __future__ import annotations

from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from referee.sandbox.sessions import FileEntry, SessionKind, SessionLimits, SessionSpec

MAX_CODE_CHARS = 4 << 20


class SessionCreate(BaseModel):
    """``POST /v1/sessions``. ``files`` (relative path -> text) are written to the
    session's directory before it starts; ``database`` names a ``sqlite`` session's file.
    ``ttl_s``: the session ends this long after it starts; ``idle_ttl_s``: this long after
    its last request (server defaults when unset; at most the server's maxima)."""

    model_config = ConfigDict(extra="forbid")

    kind: SessionKind
    limits: SessionLimits = Field(default_factory=SessionLimits)
    ttl_s: float | None = Field(default=None, gt=0)
    idle_ttl_s: float | None = Field(default=None, gt=0)
    files: dict[str, str] = Field(default_factory=dict)
    database: str = Field(default="session.db", min_length=1, max_length=255)

    def spec(self) -> SessionSpec:
        """What the sandbox starts."""
        return SessionSpec(
            kind=self.kind, limits=self.limits, files=self.files, database=self.database
        )


class SessionInfo(BaseModel):
    """A session as the API shows it. ``expires_at`` is the absolute end; an idle session
    ends earlier, ``idle_ttl_s`` after ``last_used_at``."""

    id: str
    kind: SessionKind
    limits: SessionLimits
    created_at: datetime
    last_used_at: datetime
    expires_at: datetime
    idle_ttl_s: float


class SessionList(BaseModel):
    sessions: list[SessionInfo]


class ExecRequest(BaseModel):
    """``POST /v1/sessions/{id}/exec``: Python code, a bash command or SQL (the
    session's kind), given as ``code`` or ``command`` (the same thing; one of them)."""

    model_config = ConfigDict(extra="forbid")

    code: str | None = Field(default=None, max_length=MAX_CODE_CHARS)
    command: str | None = Field(default=None, max_length=MAX_CODE_CHARS)
    stdin: str = Field(default="", max_length=MAX_CODE_CHARS)
    timeout_s: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _one_text(self) -> Self:
        if (self.code is None) == (self.command is None):
            raise ValueError("give exactly one of code and command")
        return self

    @property
    def text(self) -> str:
        return self.code if self.code is not None else self.command or ""


class FileList(BaseModel):
    """The session's directory, depth first; ``truncated`` when it held too many entries."""

    entries: list[FileEntry]
    truncated: bool


class FileWritten(BaseModel):
    path: str
    size: int
