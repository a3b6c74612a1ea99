"""The sessions this process holds: the gateway's when embedded, a sandbox worker's when
distributed (the gateway then reaches them through `service.sessions.remote`).

`LocalSessions` owns every session it starts: who may use it (the API key's tenant, and
nobody else, who is told ``404`` as for an id that never existed), its time to live
(absolute and idle, enforced by a reaper task), the caps (per key and per process), and
its end. Requests run on a thread pool of their own (a command may take minutes: the
event loop's default pool is far too small to wait on hundreds of sessions). A session
that ended is remembered for an hour, so a client is told ``410 session_lost`` with the
reason (lost, expired, deleted), never ``404``, never a fresh session in its place.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from referee.sandbox.paths import relative_path
from referee.sandbox.sessions import (
    ExecOutcome,
    Launcher,
    Session,
    SessionBusy,
    SessionFileProblem,
    SessionLost,
)
from referee.sandbox.types import SandboxFailure
from referee.service.http.errors import (
    ApiError,
    InsufficientStorage,
    NotConfiguredError,
    NotFound,
    PayloadTooLarge,
    SessionBusyError,
    SessionGone,
    TooManySessions,
    Unavailable,
    Unprocessable,
)
from referee.service.sessions.schemas import (
    ExecRequest,
    FileList,
    FileWritten,
    SessionCreate,
    SessionInfo,
)
from referee.service.settings import SessionSettings

T = TypeVar("T")
REAP_EVERY_S = 1.0
REMEMBER_ENDED_S = 3600.0
log = logging.getLogger(__name__)


@dataclass
class _Open:
    id: str
    tenant: str
    session: Session
    created_at: datetime
    expires: float  # monotonic
    idle_ttl_s: float
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0

    def info(self) -> SessionInfo:
        now = time.monotonic()
        wall = datetime.now(UTC)
        return SessionInfo(
            id=self.id,
            kind=self.session.spec.kind,
            limits=self.session.limits,
            created_at=self.created_at,
            last_used_at=wall - timedelta(seconds=now - self.last_used),
            expires_at=wall + timedelta(seconds=self.expires - now),
            idle_ttl_s=self.idle_ttl_s,
        )


@dataclass(frozen=True)
class _Ended:
    tenant: str
    reason: str
    until: float


class LocalSessions:
    """Sessions started and held here. Use from one event loop; `start` and `close` it."""

    def __init__(self, settings: SessionSettings, launcher: Launcher) -> None:
        self.settings = settings
        self.launcher = launcher
        self._open: dict[str, _Open] = {}
        self._ended: OrderedDict[str, _Ended] = OrderedDict()
        self._starting: dict[str, int] = {}
        workers = max(4, min(settings.max_open, 1024))
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="session")
        self._reaper: asyncio.Task[None] | None = None

    @property
    def count(self) -> int:
        """Sessions open (or starting) here."""
        return len(self._open) + sum(self._starting.values())

    def problem(self) -> str | None:
        """Why no session can start here, or None."""
        if self.settings.max_open == 0:
            return "sessions are turned off here (REFEREE_SESSIONS max_open is 0)"
        return self.launcher.problem()

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        entries, self._open = list(self._open.values()), {}
        await asyncio.gather(*(self._call(e.session.close, "the server stopped") for e in entries))
        self._threads.shutdown(wait=False)
        self.launcher.close()

    async def create(
        self, tenant: str, request: SessionCreate, session_id: str | None = None
    ) -> SessionInfo:
        """Start a session for ``tenant``; raises the API's errors (caps, limits...)."""
        ttl_s, idle_ttl_s = self._lifetimes(request)
        problem = await self._call(self.problem)
        if problem is not None:
            raise NotConfiguredError(f"sessions cannot start on this server: {problem}")
        self._admit(tenant)
        self._starting[tenant] = self._starting.get(tenant, 0) + 1
        try:
            session = await self._call(self.launcher.start, request.spec())
        except ValueError as exc:
            raise Unprocessable(str(exc)) from None
        except SandboxFailure as exc:
            raise Unavailable(f"the session's sandbox did not start: {exc}; retry") from None
        finally:
            self._starting[tenant] -= 1
            if not self._starting[tenant]:
                del self._starting[tenant]
        entry = _Open(
            id=session_id or secrets.token_hex(16),
            tenant=tenant,
            session=session,
            created_at=datetime.now(UTC),
            expires=time.monotonic() + ttl_s,
            idle_ttl_s=idle_ttl_s,
        )
        self._open[entry.id] = entry
        return entry.info()

    async def get(self, tenant: str, session_id: str) -> SessionInfo:
        return (await self._entry(tenant, session_id)).info()

    async def of_tenant(self, tenant: str) -> list[SessionInfo]:
        """``tenant``'s open sessions, oldest first."""
        return [entry.info() for entry in self._open.values() if entry.tenant == tenant]

    async def execute(self, tenant: str, session_id: str, request: ExecRequest) -> ExecOutcome:
        if request.timeout_s > self.settings.max_exec_s:
            raise Unprocessable(f"timeout_s: at most {self.settings.max_exec_s:g}")
        entry = await self._entry(tenant, session_id)
        text, stdin, timeout_s = request.text, request.stdin, request.timeout_s
        return await self._use(entry, lambda session: session.execute(text, stdin, timeout_s))

    async def write_file(self, tenant: str, session_id: str, path: str, data: bytes) -> FileWritten:
        _require_path(path)
        if len(data) > self.settings.max_file_bytes:
            raise PayloadTooLarge(f"body: a file may hold {self.settings.max_file_bytes} bytes")
        entry = await self._entry(tenant, session_id)
        await self._use(entry, lambda session: session.put(path, data))
        return FileWritten(path=path, size=len(data))

    async def read_file(self, tenant: str, session_id: str, path: str) -> bytes:
        _require_path(path)
        entry = await self._entry(tenant, session_id)
        return await self._use(entry, lambda session: session.get(path))

    async def files(self, tenant: str, session_id: str) -> FileList:
        entry = await self._entry(tenant, session_id)
        entries, truncated = await self._use(entry, lambda session: session.files())
        return FileList(entries=entries, truncated=truncated)

    async def snapshot(self, tenant: str, session_id: str) -> dict[str, bytes]:
        """Every file of the session's directory (at most ``max_file_bytes`` in all)."""
        limit = self.settings.max_file_bytes
        entry = await self._entry(tenant, session_id)
        return await self._use(entry, lambda session: session.snapshot(limit))

    async def delete(self, tenant: str, session_id: str) -> None:
        entry = await self._entry(tenant, session_id)
        await self._end(entry, "the session was deleted")

    def _lifetimes(self, request: SessionCreate) -> tuple[float, float]:
        s = self.settings
        ttl_s = request.ttl_s or min(s.ttl_s, s.max_ttl_s)
        if ttl_s > s.max_ttl_s:
            raise Unprocessable(f"ttl_s: at most {s.max_ttl_s:g}")
        for name in type(request.limits).model_fields:
            asked, most = getattr(request.limits, name), getattr(s.max_limits, name)
            if asked > most:
                raise Unprocessable(f"limits.{name}: at most {most:g} on this server")
        return ttl_s, min(request.idle_ttl_s or s.idle_ttl_s, ttl_s)

    def _admit(self, tenant: str) -> None:
        if self.count >= self.settings.max_open:
            raise TooManySessions(
                f"this server holds {self.settings.max_open} sessions, its most; retry later"
            )
        mine = sum(e.tenant == tenant for e in self._open.values()) + self._starting.get(tenant, 0)
        if mine >= self.settings.max_per_key:
            raise TooManySessions(
                f"this API key holds {mine} sessions, its most "
                f"({self.settings.max_per_key}): delete one first"
            )

    async def _entry(self, tenant: str, session_id: str) -> _Open:
        """``tenant``'s open session ``session_id``; one past its time is ended now (the
        reaper may not have come by yet), and said to be gone."""
        entry = self._open.get(session_id)
        if entry is not None and entry.tenant == tenant:
            expired = _expiry(entry, time.monotonic())
            if expired is None:
                return entry
            await self._end(entry, expired)
        ended = self._ended.get(session_id)
        if ended is not None and ended.tenant == tenant:
            raise SessionGone(f"session {session_id}: {ended.reason}")
        raise NotFound(f"no session {session_id}")

    async def _use(self, entry: _Open, work: Callable[[Session], T]) -> T:
        entry.busy += 1
        entry.last_used = time.monotonic()
        try:
            return await self._call(work, entry.session)
        except SessionLost as exc:
            await self._end(entry, exc.reason)
            raise SessionGone(f"session {entry.id}: {exc.reason}") from None
        except SessionBusy as exc:
            raise SessionBusyError(f"session {entry.id}: {exc}") from None
        except SessionFileProblem as exc:
            raise _file_error(exc) from None
        finally:
            entry.busy -= 1
            entry.last_used = time.monotonic()

    async def _end(self, entry: _Open, reason: str) -> None:
        if self._open.pop(entry.id, None) is None:
            return  # ended by someone else meanwhile
        self._ended[entry.id] = _Ended(entry.tenant, reason, time.monotonic() + REMEMBER_ENDED_S)
        while len(self._ended) > 4 * max(self.settings.max_open, 1) + 1000:
            self._ended.popitem(last=False)
        await self._call(entry.session.close, reason)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(REAP_EVERY_S)
            try:
                await self._reap()
            except Exception:  # the reaper must outlive one bad session
                log.exception("reaping sessions failed")

    async def _reap(self) -> None:
        now = time.monotonic()
        for entry in list(self._open.values()):
            expired = _expiry(entry, now)
            if expired is not None:
                await self._end(entry, expired)
        while self._ended and next(iter(self._ended.values())).until <= now:
            self._ended.popitem(last=False)

    async def _call(self, work: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(work, *args))


def _expiry(entry: _Open, now: float) -> str | None:
    """Why ``entry`` has expired at ``now``, or None while it has not."""
    if now >= entry.expires:
        return "the session expired (its ttl_s passed)"
    if not entry.busy and now - entry.last_used >= entry.idle_ttl_s:
        return f"the session expired (idle for {entry.idle_ttl_s:g} s)"
    return None


def _require_path(path: str) -> None:
    if not relative_path(path):
        raise Unprocessable(f"path: {path[:64]!r} is not a relative path inside the session")


def _file_error(exc: SessionFileProblem) -> ApiError:
    message = f"path: {exc}"
    if exc.code == "not_found":
        return NotFound(message)
    if exc.code == "too_large":
        return PayloadTooLarge(message)
    if exc.code == "no_space":
        return InsufficientStorage(f"{message} (the session's disk_mb is full)")
    return Unprocessable(message)
