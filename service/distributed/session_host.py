"""The worker's side of distributed sessions: a sandbox worker holds sessions for the
gateway (``referee worker --pool sandbox``, when ``REFEREE_SESSIONS`` allows it).

`SessionHost` runs an event loop of its own in a thread: it keeps the heartbeat, reads
its request list, answers each call concurrently from its `LocalSessions` (which checks
the tenant again and enforces this worker's caps and TTLs), and pushes the answer to the
call's reply list. The sessions die with the worker process (their sandboxes are bound
to it); its heartbeat then lapses and the gateway answers ``410 session_lost``.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import logging
import threading
import time
from typing import Any

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.exceptions import RedisError

from referee.sandbox.sessions import Launcher
from referee.service.distributed.session_wire import (
    HEARTBEAT_S,
    HEARTBEAT_TTL_S,
    REPLY_TTL_S,
    CallError,
    HostLoad,
    SessionAnswer,
    SessionCall,
    heartbeat_key,
    requests_key,
)
from referee.service.http.errors import ApiError, Unprocessable
from referee.service.sessions.local import LocalSessions
from referee.service.settings import Settings

log = logging.getLogger(__name__)


class SessionHost:
    """Sessions held by this worker for the gateway. `start` returns at once; `stop`
    closes every session and the loop."""

    def __init__(self, settings: Settings, name: str) -> None:
        assert settings.broker_url
        self.settings = settings
        self.name = name
        self.sessions = LocalSessions(settings.sessions, Launcher(settings.engines.sandbox))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name=name)
        self._main: concurrent.futures.Future[None] | None = None

    def start(self) -> None:
        self._thread.start()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)

    def stop(self) -> None:
        if self._main is not None:
            self._loop.call_soon_threadsafe(self._main.cancel)
            with contextlib.suppress(BaseException):
                self._main.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)

    async def _serve(self) -> None:
        client = aioredis.from_url(self.settings.broker_url or "")
        await self.sessions.start()
        beat = asyncio.create_task(self._beat(client))
        answering: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    found = await client.blpop([requests_key(self.name)], timeout=1)
                except RedisError:  # Redis away: try again shortly
                    log.warning("session host %s cannot read its requests", self.name)
                    await asyncio.sleep(1)
                    continue
                if found is not None:
                    task = asyncio.create_task(self._answer(client, found[1]))
                    answering.add(task)
                    task.add_done_callback(answering.discard)
        finally:
            beat.cancel()
            await self.sessions.close()
            with contextlib.suppress(RedisError):
                await client.delete(heartbeat_key(self.name), requests_key(self.name))
            await client.aclose()

    async def _beat(self, client: aioredis.Redis) -> None:
        while True:
            await self._publish(client)
            await asyncio.sleep(HEARTBEAT_S)

    async def _publish(self, client: aioredis.Redis) -> None:
        """Say this host is alive and how full it is (also right after a session starts
        or ends, so the gateway places the next one on current numbers)."""
        load = HostLoad(open=self.sessions.count, most=self.settings.sessions.max_open)
        with contextlib.suppress(RedisError):  # Redis away: the next beat, then
            await client.set(heartbeat_key(self.name), load.model_dump_json(), ex=HEARTBEAT_TTL_S)

    async def _answer(self, client: aioredis.Redis, raw: bytes | str) -> None:
        try:
            call = SessionCall.model_validate_json(raw)
        except ValidationError as exc:
            log.error("dropping a malformed session call: %s", exc)
            return
        if call.deadline < time.time():
            return  # its caller gave up
        try:
            answer = SessionAnswer(value=await self._perform(call))
        except ApiError as exc:
            answer = SessionAnswer(
                error=CallError(status=exc.status_code, code=exc.code, message=exc.message)
            )
        except Exception as exc:  # a bug: said, and the caller is answered
            log.exception("session call %s failed", call.op)
            message = f"the session's worker failed: {type(exc).__name__}"
            answer = SessionAnswer(error=CallError(status=500, code="internal", message=message))
        if call.op in ("create", "delete"):
            await self._publish(client)
        with contextlib.suppress(RedisError):  # nobody to tell: its caller times out
            async with client.pipeline(transaction=False) as pipe:
                pipe.rpush(call.reply, answer.model_dump_json())
                pipe.expire(call.reply, REPLY_TTL_S)
                await pipe.execute()

    async def _perform(self, call: SessionCall) -> Any:
        s, tenant, sid = self.sessions, call.tenant, call.session_id
        if call.op == "create":
            if call.create is None:
                raise Unprocessable("create: no session described")
            created = await s.create(tenant, call.create, session_id=sid)
            return created.model_dump(mode="json")
        if call.op == "execute":
            if call.execute is None:
                raise Unprocessable("execute: no command given")
            return (await s.execute(tenant, sid, call.execute)).model_dump(mode="json")
        if call.op == "write_file":
            data = base64.b64decode(call.data or "")
            written = await s.write_file(tenant, sid, call.path or "", data)
            return written.model_dump(mode="json")
        if call.op == "read_file":
            return base64.b64encode(await s.read_file(tenant, sid, call.path or "")).decode()
        if call.op == "snapshot":
            files = await s.snapshot(tenant, sid)
            return {path: base64.b64encode(data).decode() for path, data in files.items()}
        if call.op == "files":
            return (await s.files(tenant, sid)).model_dump(mode="json")
        if call.op == "delete":
            await s.delete(tenant, sid)
            return None
        return (await s.get(tenant, sid)).model_dump(mode="json")
