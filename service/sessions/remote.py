"""The gateway's side of distributed sessions: each session lives on one sandbox worker
(`service.distributed.session_host`); this routes every request there.

Where a session lives, and for whom, is a route key in Redis (expiring with the
session's absolute TTL). A new session goes to the live host with the most room. A
request goes to its host's request list and is answered on a reply list of its own;
while it waits, the host's heartbeat is watched: a host that stopped answers
``410 session_lost`` ("the worker holding it stopped"), never a silent fresh session.
The per-key cap counts the key's sessions across every host.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
import uuid
from typing import Any

import redis.asyncio as aioredis
from pydantic import ValidationError

from referee.sandbox.sessions import ExecOutcome
from referee.service.distributed.session_wire import (
    ENDED_TTL_S,
    HOST_PREFIX,
    REPLY_PREFIX,
    HostLoad,
    Op,
    SessionAnswer,
    SessionCall,
    ended_key,
    heartbeat_key,
    requests_key,
    route_key,
    tenant_key,
)
from referee.service.http.errors import (
    ApiError,
    Conflict,
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

CALL_S = 40.0
"""A request other than a command must be answered within this (a start takes ~0.1 s)."""
COMMAND_MARGIN_S = 10.0
"""On top of a command's own time limit."""
_ERRORS: dict[str, type[ApiError]] = {
    cls.code: cls
    for cls in (
        Conflict,
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
}
_HOST_STOPPED = "the worker holding the session stopped: its state is gone"


class RemoteSessions:
    """Sessions on the sandbox workers, reached through Redis."""

    def __init__(self, settings: SessionSettings, client: aioredis.Redis) -> None:
        self.settings = settings
        self.redis = client

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None  # the sessions live on the workers; the client is the executor's

    async def create(self, tenant: str, request: SessionCreate) -> SessionInfo:
        if len(await self._live_ids(tenant)) >= self.settings.max_per_key:
            raise TooManySessions(
                f"this API key holds {self.settings.max_per_key} sessions, its most: "
                "delete one first"
            )
        session_id = secrets.token_hex(16)
        for host in await self._hosts_by_room():
            try:
                raw = await self._send(host, "create", tenant, session_id, CALL_S, create=request)
            except TooManySessions:
                continue  # filled since its last heartbeat: the next one
            break
        else:
            raise TooManySessions("every sandbox worker holds all the sessions it may; retry later")
        info = SessionInfo.model_validate(raw)
        ttl = max(1, int(info.expires_at.timestamp() - time.time()) + 60)
        route = json.dumps({"host": host, "tenant": tenant})
        await self.redis.set(route_key(session_id), route, ex=ttl)
        await self.redis.sadd(tenant_key(tenant), session_id)
        if len(await self._live_ids(tenant)) > self.settings.max_per_key:  # a race lost
            await self.delete(tenant, session_id)
            raise TooManySessions(f"this API key holds {self.settings.max_per_key} sessions")
        return info

    async def get(self, tenant: str, session_id: str) -> SessionInfo:
        return SessionInfo.model_validate(await self._call("get", tenant, session_id))

    async def of_tenant(self, tenant: str) -> list[SessionInfo]:
        found = []
        for session_id in sorted(await self._live_ids(tenant)):
            try:
                found.append(await self.get(tenant, session_id))
            except (NotFound, SessionGone):
                continue
        return sorted(found, key=lambda info: info.created_at)

    async def execute(self, tenant: str, session_id: str, request: ExecRequest) -> ExecOutcome:
        wait = request.timeout_s + COMMAND_MARGIN_S
        raw = await self._call("execute", tenant, session_id, wait, execute=request)
        return ExecOutcome.model_validate(raw)

    async def write_file(self, tenant: str, session_id: str, path: str, data: bytes) -> FileWritten:
        if len(data) > self.settings.max_file_bytes:
            raise PayloadTooLarge(f"body: a file may hold {self.settings.max_file_bytes} bytes")
        encoded = base64.b64encode(data).decode()
        raw = await self._call("write_file", tenant, session_id, path=path, data=encoded)
        return FileWritten.model_validate(raw)

    async def read_file(self, tenant: str, session_id: str, path: str) -> bytes:
        raw = await self._call("read_file", tenant, session_id, path=path)
        return base64.b64decode(raw)

    async def files(self, tenant: str, session_id: str) -> FileList:
        return FileList.model_validate(await self._call("files", tenant, session_id))

    async def snapshot(self, tenant: str, session_id: str) -> dict[str, bytes]:
        raw = await self._call("snapshot", tenant, session_id)
        return {path: base64.b64decode(data) for path, data in raw.items()}

    async def delete(self, tenant: str, session_id: str) -> None:
        await self._call("delete", tenant, session_id)  # another key's: NotFound, untouched
        await self._forget(tenant, session_id, "the session was deleted")

    async def _call(
        self, op: Op, tenant: str, session_id: str, wait_s: float = CALL_S, **payload: Any
    ) -> Any:
        host = await self._host_of(tenant, session_id)
        try:
            return await self._send(host, op, tenant, session_id, wait_s, **payload)
        except SessionGone as exc:
            await self._forget(tenant, session_id, exc.message.partition(": ")[2] or exc.message)
            raise

    async def _host_of(self, tenant: str, session_id: str) -> str:
        raw = await self.redis.get(route_key(session_id))
        route = json.loads(raw) if raw else None
        if route is None or route.get("tenant") != tenant:
            ended = await self.redis.get(ended_key(session_id))
            said = json.loads(ended) if ended else None
            if said is not None and said.get("tenant") == tenant:
                raise SessionGone(f"session {session_id}: {said['reason']}")
            raise NotFound(f"no session {session_id}")
        host: str = route["host"]
        if not await self.redis.exists(heartbeat_key(host)):
            await self._forget(tenant, session_id, _HOST_STOPPED)
            await self.redis.delete(requests_key(host))
            raise SessionGone(f"session {session_id}: {_HOST_STOPPED}")
        return host

    async def _send(
        self, host: str, op: Op, tenant: str, session_id: str, wait_s: float, **payload: Any
    ) -> Any:
        reply = f"{REPLY_PREFIX}{uuid.uuid4().hex}"
        call = SessionCall(
            op=op,
            tenant=tenant,
            session_id=session_id,
            reply=reply,
            deadline=time.time() + wait_s,
            **payload,
        )
        await self.redis.rpush(requests_key(host), call.model_dump_json())
        answer = await self._answer(host, reply, time.monotonic() + wait_s)
        if answer.error is not None:
            kind = _ERRORS.get(answer.error.code)
            if kind is None:
                error = ApiError(answer.error.message)
                error.status_code, error.code = answer.error.status, answer.error.code
                raise error
            raise kind(answer.error.message)
        return answer.value

    async def _answer(self, host: str, reply: str, deadline: float) -> SessionAnswer:
        """The host's answer on ``reply``; SessionGone when the host stops meanwhile."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unavailable("the session's worker did not answer in time; retry")
            found = await self.redis.blpop([reply], timeout=min(max(left, 0.01), 1.0))
            if found is not None:
                try:
                    return SessionAnswer.model_validate_json(found[1])
                except ValidationError:
                    raise Unavailable("the session's worker answered nonsense") from None
            if not await self.redis.exists(heartbeat_key(host)):
                raise SessionGone(f"session: {_HOST_STOPPED}")

    async def _hosts_by_room(self) -> list[str]:
        """Live hosts with room for a session, the emptiest first."""
        rooms: dict[str, int] = {}
        async for key in self.redis.scan_iter(match=f"{HOST_PREFIX}*", count=1000):
            name = key.decode() if isinstance(key, bytes) else str(key)
            if name.endswith(":requests"):
                continue
            raw = await self.redis.get(name)
            try:
                load = HostLoad.model_validate_json(raw) if raw else None
            except ValidationError:
                load = None
            if load is not None:
                rooms[name.removeprefix(HOST_PREFIX)] = load.most - load.open
        if not rooms:
            raise NotConfiguredError(
                "no sandbox worker holds sessions: start `referee worker --pool sandbox` "
                "(with REFEREE_SESSIONS max_open above 0)"
            )
        return sorted((h for h, room in rooms.items() if room > 0), key=lambda h: -rooms[h])

    async def _live_ids(self, tenant: str) -> set[str]:
        members = await self.redis.smembers(tenant_key(tenant))
        ids = {m.decode() if isinstance(m, bytes) else str(m) for m in members}
        if not ids:
            return ids
        present = await asyncio.gather(*(self.redis.exists(route_key(i)) for i in ids))
        stale = [i for i, here in zip(ids, present, strict=True) if not here]
        if stale:
            await self.redis.srem(tenant_key(tenant), *stale)
        return ids - set(stale)

    async def _forget(self, tenant: str, session_id: str, reason: str) -> None:
        said = json.dumps({"tenant": tenant, "reason": reason})
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(route_key(session_id))
            pipe.srem(tenant_key(tenant), session_id)
            pipe.set(ended_key(session_id), said, ex=ENDED_TTL_S)
            await pipe.execute()
