"""The distributed executor: chunks go to per-pool Celery queues, replies come via Redis.

The gateway never blocks its event loop: chunks are published from a thread, and results
are awaited with an asyncio BLPOP on a reply list private to the call. Whatever has not
come back by the deadline is ``timeout``; tasks carry the deadline as their expiry, so a
worker that picks one up too late drops it instead of doing useless work.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis

from referee.service.distributed.celery_app import (
    CHUNK_SIZE,
    TASK_NAME,
    make_celery,
    send_job_chunk,
)
from referee.service.distributed.ledger import record, watch
from referee.service.distributed.payloads import ChunkReply, JobChunk, ReplyChunk, WireTicket
from referee.service.distributed.shares import Shares
from referee.service.distributed.worker import HEARTBEAT_PREFIX, HEARTBEAT_S
from referee.service.execution.fair_queue import ANONYMOUS, Ticket
from referee.service.http.errors import Overloaded
from referee.service.jobs.redis_store import aretrying
from referee.service.settings import Settings
from referee.verifiers.base import echo
from referee.verifiers.types import Item, Pool, Result, Status

REPLY_PREFIX = "referee:reply:"
CANCEL_PREFIX = "referee:cancel:"
CANCEL_TTL_S = 3600


def cancel_key(reply: str) -> str:
    """Set when the gateway gave up on the call answering to ``reply``: workers stop
    its chunks (or never start them)."""
    return CANCEL_PREFIX + reply.removeprefix(REPLY_PREFIX)


class CeleryExecutor:
    """Runs items on ``referee worker`` processes through Redis."""

    name = "celery"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = make_celery(settings)
        assert settings.broker_url
        self.redis: aioredis.Redis = aretrying(settings.broker_url, retries=4, max_connections=2048)
        self._status: dict[str, dict[str, Any]] = {}
        self._shares = {pool: Shares() for pool in Pool}
        self._capacities: dict[Pool, tuple[float, int | None]] = {}

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
        call = _Call(pool, reply, item_timeout, deadline, ticket)
        capacity = await self._capacity(pool)
        senders = [
            asyncio.ensure_future(self._send(call, index, chunk, capacity))
            for index, chunk in enumerate(chunks)
        ]
        replies: dict[int, list[Result]] = {}
        try:
            await self._collect(call, len(chunks), replies)
        finally:
            for sender in senders:
                sender.cancel()
            await asyncio.gather(*senders, return_exceptions=True)
            for _ in range(len(call.out)):
                await self._shares[pool].release(ticket.tenant)
            await self._abandon(call, done=len(replies) == len(chunks))
        results: list[Result] = []
        for index, chunk in enumerate(chunks):
            results += replies.get(index) or [_late(item) for item in chunk]
        return results

    async def _send(self, call: _Call, index: int, chunk: list[Item], capacity: int | None) -> None:
        """Publish one chunk once its key's share allows (`service.distributed.shares`)."""
        if await self._shares[call.pool].acquire(call.ticket.tenant, capacity, call.deadline):
            call.out.add(index)
            await asyncio.to_thread(self._publish, call, index, chunk)

    async def submit_job(self, job: str, chunks: list[JobChunk]) -> None:
        """Write a job's chunks to its ledger (`service.distributed.ledger`), queue them
        on their pools' batch queues, then make the job one the sweep watches."""
        await record(self.redis, job, chunks, self.settings.job_ttl_s)
        await asyncio.to_thread(self._publish_job, chunks)
        await watch(self.redis, job)

    def _publish_job(self, chunks: list[JobChunk]) -> None:
        with self.app.producer_or_acquire() as producer:
            for chunk in chunks:
                send_job_chunk(self.app, chunk, producer)

    def _publish(self, call: _Call, index: int, chunk: list[Item]) -> None:
        payload = ReplyChunk(
            reply=call.reply,
            chunk=index,
            pool=call.pool,
            items=[item.model_dump(mode="json") for item in chunk],
            item_timeout=call.item_timeout,
            deadline=call.deadline_ts,
            ticket=WireTicket.of(call.ticket),
        ).model_dump(mode="json")
        self.app.send_task(
            TASK_NAME,
            args=[payload],
            queue=call.pool.value,
            expires=datetime.fromtimestamp(call.deadline_ts, tz=UTC),
            task_id=f"score:{call.reply.removeprefix(REPLY_PREFIX)}:{index}",
        )

    async def _abandon(self, call: _Call, done: bool) -> None:
        """Drop the reply list; when chunks are still out (deadline, cancelled request),
        tell the workers to stop them (`cancel_key`). Best effort: a broker failure here
        only means the workers run on until the deadline."""
        with contextlib.suppress(Exception):
            if not done:
                await self.redis.set(cancel_key(call.reply), 1, ex=CANCEL_TTL_S)
            await self.redis.delete(call.reply)

    async def _collect(self, call: _Call, expected: int, replies: dict[int, list[Result]]) -> None:
        """Fill ``replies`` (chunk index -> results) until all came or the deadline."""
        while len(replies) < expected:
            remaining = call.deadline - time.monotonic()
            if remaining <= 0:
                break
            popped = await self.redis.blpop([call.reply], timeout=min(remaining, 1.0))
            if popped is None:
                continue
            data = ChunkReply.model_validate_json(popped[1])
            # A redelivered task may answer twice; the first answer stands.
            if data.chunk not in replies and data.chunk in call.out:
                call.out.discard(data.chunk)
                await self._shares[call.pool].release(call.ticket.tenant)
            replies.setdefault(data.chunk, [Result.model_validate(r) for r in data.results])

    async def _capacity(self, pool: Pool) -> int | None:
        """Processes scoring ``pool`` across live workers (re-read every `HEARTBEAT_S`);
        None when unknown (no worker, or the broker did not say)."""
        read_at, capacity = self._capacities.get(pool, (0.0, None))
        if time.monotonic() - read_at < HEARTBEAT_S:
            return capacity
        capacity = None
        with contextlib.suppress(Exception):  # no reading: no limit, never a failure
            keys = [k async for k in self.redis.scan_iter(f"{HEARTBEAT_PREFIX}{pool.value}:*")]
            values = await self.redis.mget(keys) if keys else []
            capacity = sum(int(v) for v in values if v is not None and v.isdigit()) or None
        self._capacities[pool] = (time.monotonic(), capacity)
        return capacity

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


@dataclass
class _Call:
    """One `CeleryExecutor.run`: where its chunks go and come back, whose they are, and
    which of them are out (published, not yet answered)."""

    pool: Pool
    reply: str
    item_timeout: float
    deadline: float
    ticket: Ticket
    out: set[int] = field(default_factory=set)

    @property
    def deadline_ts(self) -> float:
        """The deadline on the wall clock (tasks cross hosts)."""
        return time.time() + (self.deadline - time.monotonic())


def _late(item: Item) -> Result:
    message = "no worker answered before the request deadline"
    return echo(Result.failed(Status.TIMEOUT, "deadline", message), item)
