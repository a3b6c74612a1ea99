"""Stateful sessions from the client side: ``client.session(kind)`` (sync and async).

A `Session` (or `AsyncSession`) is a context manager: entering starts the session on
the server, leaving deletes it (whatever happened inside). ``run`` sends one command and
returns what it did (`ExecOutcome`); files go in and out with ``write`` and ``read``.
Nothing is retried: a command is not idempotent, and a session created twice would be
held twice. A server error is raised as `RefereeError` (``code`` ``session_lost`` when the
session ended: its state is gone, and the server says why).
"""

from __future__ import annotations

from typing import Any

import httpx

from referee.sandbox.sessions import ExecOutcome, FileEntry, SessionKind
from referee.service.client.wire import RefereeError, checked, error_of
from referee.service.sessions.schemas import SessionCreate, SessionInfo


def _create_body(kind: SessionKind | str, options: dict[str, Any]) -> dict[str, Any]:
    request = SessionCreate.model_validate({"kind": kind, **options})
    return request.model_dump(mode="json", exclude_none=True)


def _exec_body(code: str, stdin: str, timeout_s: float) -> dict[str, Any]:
    return {"code": code, "stdin": stdin, "timeout_s": timeout_s}


def _content(data: bytes | str) -> bytes:
    return data.encode() if isinstance(data, str) else data


def _read(response: httpx.Response) -> bytes:
    if response.status_code >= 300:
        raise error_of(response)
    return response.content


def _closed(response: httpx.Response) -> None:
    """A delete's answer: gone already (404, 410) is as good as deleted."""
    if response.status_code >= 300 and response.status_code not in (404, 410):
        raise error_of(response)


class Session:
    """One server session, used from one thread. See the module docstring."""

    def __init__(self, http: httpx.Client, kind: SessionKind | str, **options: Any) -> None:
        self._http = http
        self._body = _create_body(kind, options)
        self.info: SessionInfo | None = None

    @property
    def id(self) -> str:
        if self.info is None:
            raise RefereeError(0, "not_open", "the session is not open (use it in a with block)")
        return self.info.id

    def open(self) -> Session:
        """Start the session (``with`` does it)."""
        if self.info is None:
            response = self._http.post("/v1/sessions", json=self._body)
            self.info = SessionInfo.model_validate(checked(response))
        return self

    def run(self, code: str, stdin: str = "", timeout_s: float = 10.0) -> ExecOutcome:
        """Run one command; its state stays for the next."""
        body = _exec_body(code, stdin, timeout_s)
        where = f"/v1/sessions/{self.id}/exec"
        response = self._http.post(where, json=body, timeout=timeout_s + 60)
        return ExecOutcome.model_validate(checked(response))

    def write(self, path: str, data: bytes | str) -> None:
        checked(self._http.put(f"/v1/sessions/{self.id}/files/{path}", content=_content(data)))

    def read(self, path: str) -> bytes:
        return _read(self._http.get(f"/v1/sessions/{self.id}/files/{path}"))

    def files(self) -> list[FileEntry]:
        listed = checked(self._http.get(f"/v1/sessions/{self.id}/files"))
        return [FileEntry.model_validate(entry) for entry in listed["entries"]]

    def close(self) -> None:
        """Delete the session (nothing when it is not open or already gone)."""
        if self.info is not None:
            _closed(self._http.delete(f"/v1/sessions/{self.id}"))
            self.info = None

    def __enter__(self) -> Session:
        return self.open()

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncSession:
    """The async twin of `Session`, used from one event loop."""

    def __init__(self, http: httpx.AsyncClient, kind: SessionKind | str, **options: Any) -> None:
        self._http = http
        self._body = _create_body(kind, options)
        self.info: SessionInfo | None = None

    @property
    def id(self) -> str:
        if self.info is None:
            raise RefereeError(0, "not_open", "the session is not open (use it in async with)")
        return self.info.id

    async def open(self) -> AsyncSession:
        if self.info is None:
            response = await self._http.post("/v1/sessions", json=self._body)
            self.info = SessionInfo.model_validate(checked(response))
        return self

    async def run(self, code: str, stdin: str = "", timeout_s: float = 10.0) -> ExecOutcome:
        body = _exec_body(code, stdin, timeout_s)
        response = await self._http.post(
            f"/v1/sessions/{self.id}/exec", json=body, timeout=timeout_s + 60
        )
        return ExecOutcome.model_validate(checked(response))

    async def write(self, path: str, data: bytes | str) -> None:
        where = f"/v1/sessions/{self.id}/files/{path}"
        checked(await self._http.put(where, content=_content(data)))

    async def read(self, path: str) -> bytes:
        return _read(await self._http.get(f"/v1/sessions/{self.id}/files/{path}"))

    async def files(self) -> list[FileEntry]:
        listed = checked(await self._http.get(f"/v1/sessions/{self.id}/files"))
        return [FileEntry.model_validate(entry) for entry in listed["entries"]]

    async def close(self) -> None:
        if self.info is not None:
            _closed(await self._http.delete(f"/v1/sessions/{self.id}"))
            self.info = None

    async def __aenter__(self) -> AsyncSession:
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        await self.close()
