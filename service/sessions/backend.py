"""What the routes need from wherever sessions live: held here (`LocalSessions`, the
embedded server) or on sandbox workers (`RemoteSessions`, distributed). Both raise the
API's own errors (`service.http.errors`), so a route never tells them apart."""

from __future__ import annotations

from typing import Protocol

from referee.sandbox.sessions import ExecOutcome
from referee.service.sessions.schemas import (
    ExecRequest,
    FileList,
    FileWritten,
    SessionCreate,
    SessionInfo,
)


class SessionBackend(Protocol):
    """Sessions of every tenant; each call acts for ``tenant`` only (another tenant's
    session is ``404``, as one that never existed)."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def create(self, tenant: str, request: SessionCreate) -> SessionInfo: ...

    async def get(self, tenant: str, session_id: str) -> SessionInfo: ...

    async def of_tenant(self, tenant: str) -> list[SessionInfo]: ...

    async def execute(self, tenant: str, session_id: str, request: ExecRequest) -> ExecOutcome: ...

    async def write_file(
        self, tenant: str, session_id: str, path: str, data: bytes
    ) -> FileWritten: ...

    async def read_file(self, tenant: str, session_id: str, path: str) -> bytes: ...

    async def files(self, tenant: str, session_id: str) -> FileList: ...

    async def snapshot(self, tenant: str, session_id: str) -> dict[str, bytes]: ...

    async def delete(self, tenant: str, session_id: str) -> None: ...
