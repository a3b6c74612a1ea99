"""The distributed executor: chunks go to per-pool Celery queues, replies come via Redis.

The gateway never blocks its event loop: chunks are published from a thread, and results
are awaited with an asyncio BLPOP on a reply list private to the call. Whatever has not
come back by the deadline is ``timeout``; tasks carry the deadline as their expiry, so a
worker that picks one up too late drops it instead of doing useless work.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
import redis.asyncio as aioredis

from service.celery_app import CHUNK_SIZE, TASK_NAME, make_celery
from service.errors import Overloaded
from service.fair_queue import ANONYMOUS, Ticket
from service.job_store import aretrying
from service.settings import Settings
from service.worker import HEARTBEAT_PREFIX
from verifiers.base import echo
from verifiers.types import Item, Pool, Result, Status

REPLY_PREFIX = "referee:reply:"


class CeleryExecutor:
    """Runs items on ``referee worker`` processes through Redis."""

    name = "celery"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = make_celery(settings)
        assert settings.broker_url
        self.redis: aioredis.Redis = aretrying(settings.broker_url, retries=4, max_connections=2048)
        self._status: dict[str, dict[str, Any]] = {}

    async def start(self) -> None:
        await self.refresh()

    async def close(self) -> None:
        await self.redis.aclose()

    async def check_capacity(self, pools: set[Pool]) -> None:
        """Raise `Overloaded` if any of ``pools`` has a queue deeper than the limit."""
        for pool in pools:
            depth = int(await self.redis.llen(pool.value))
            if depth > self.settings.max_queue_depth:
                raise Overloaded(
                    f"the {pool.value} queue holds {depth} tasks "
                    f"(limit {self.settings.max_queue_depth}); retry later",
                    retry_after_s=max(1, depth // 1000),
                )

    async def run(
        self,
        pool: Pool,
        items: list[Item],
        item_timeout: float,
        deadline: float,
        ticket: Ticket = ANONYMOUS,
    ) -> list[Result]:
        reply = f"{REPLY_PREFIX}{uuid.uuid4().hex}"
        size = self.settings.chunk_size or CHUNK_SIZE[pool]
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        deadline_ts = time.time() + (deadline - time.monotonic())
        await asyncio.to_thread(self._publish, pool, chunks, reply, item_timeout, deadline_ts)
        try:
            replies = await self._collect(reply, len(chunks), deadline)
        finally:
            await self.redis.delete(reply)
        results: list[Result] = []
        for index, chunk in enumerate(chunks):
            results += replies.get(index) or [_late(item) for item in chunk]
        return results

    def publish_job(
        self, job: str, pools: list[tuple[Pool, int, int]], item_timeout: float
    ) -> None:
        """Queue a job's chunks: (pool, start, stop) ranges of its lines. Blocking."""
        with self.app.producer_or_acquire() as producer:
            for pool, start, stop in pools:
                payload = {
                    "job": job,
                    "start": start,
                    "stop": stop,
                    "pool": pool.value,
                    "item_timeout": item_timeout,
                }
                self.app.send_task(
                    TASK_NAME,
                    args=[payload],
                    queue=pool.value,
                    task_id=f"job:{job}:{start}",
                    producer=producer,
                )

    def _publish(
        self,
        pool: Pool,
        chunks: list[list[Item]],
        reply: str,
        item_timeout: float,
        deadline_ts: float,
    ) -> None:
        expires = datetime.fromtimestamp(deadline_ts, tz=UTC)
        with self.app.producer_or_acquire() as producer:
            for index, chunk in enumerate(chunks):
                payload = {
                    "reply": reply,
                    "chunk": index,
                    "pool": pool.value,
                    "items": [item.model_dump(mode="json") for item in chunk],
                    "item_timeout": item_timeout,
                    "deadline": deadline_ts,
                }
                self.app.send_task(
                    TASK_NAME,
                    args=[payload],
                    queue=pool.value,
                    expires=expires,
                    task_id=f"score:{reply.removeprefix(REPLY_PREFIX)}:{index}",
                    producer=producer,
                )

    async def _collect(self, reply: str, expected: int, deadline: float) -> dict[int, list[Result]]:
        replies: dict[int, list[Result]] = {}
        while len(replies) < expected:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            popped = await self.redis.blpop([reply], timeout=min(remaining, 1.0))
            if popped is None:
                continue
            data = orjson.loads(popped[1])
            # A redelivered task may answer twice; the first answer stands.
            replies.setdefault(data["chunk"], [Result.model_validate(r) for r in data["results"]])
        return replies

    async def refresh(self) -> None:
        """Re-read broker reachability and live consumers per pool (for ``/readyz``)."""
        status: dict[str, dict[str, Any]] = {}
        try:
            await self.redis.ping()
            keys = [k.decode() async for k in self.redis.scan_iter(f"{HEARTBEAT_PREFIX}*")]
            for pool in Pool:
                workers = sum(1 for k in keys if k.startswith(f"{HEARTBEAT_PREFIX}{pool.value}:"))
                depth = int(await self.redis.llen(pool.value))
                status[pool.value] = {"consumers": workers, "queued_tasks": depth}
        except Exception as exc:  # noqa: BLE001 - any broker failure is "not ready"
            status = {"broker": {"reachable": False, "error": f"{type(exc).__name__}: {exc}"}}
        self._status = status

    def readiness(self) -> dict[str, dict[str, Any]]:
        return self._status


def _late(item: Item) -> Result:
    message = "no worker answered before the request deadline"
    return echo(Result.failed(Status.TIMEOUT, "deadline", message), item)
