"""Batch jobs: a JSONL upload becomes stored lines plus chunk tasks for the workers.

The upload is streamed: lines are pushed to Redis in batches as they arrive and only
the plan of chunks (pool and line range) is kept in memory. Lines are not validated
here beyond reading their ``verifier`` to choose a pool; a bad line becomes an
``invalid`` result in its place when a worker reads it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

import orjson
from redis.exceptions import RedisError

from referee.service.distributed.celery_app import CHUNK_SIZE
from referee.service.distributed.executor import CeleryExecutor
from referee.service.distributed.ledger import job_chunks
from referee.service.execution.fair_queue import Ticket
from referee.service.jobs.quota import QuotaRules, UploadLimit, admit
from referee.service.jobs.redis_store import JobStore
from referee.service.jobs.status import JobStatus
from referee.service.jobs.summary import JobSummary
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import Pool

UPLOAD_BATCH = 500
FOLLOW_S = 2.0
"""How often the gateway that accepted a job folds its summary while it runs."""
log = logging.getLogger(__name__)


@dataclass
class ChunkPlan:
    """Contiguous line ranges that share a pool, cut at each pool's chunk size."""

    chunks: list[tuple[Pool, int, int]] = field(default_factory=list)
    size: int = 0
    """Bytes of the upload read so far."""

    def add(self, index: int, pool: Pool) -> None:
        if self.chunks:
            last_pool, start, stop = self.chunks[-1]
            if last_pool == pool and stop == index and stop - start < CHUNK_SIZE[pool]:
                self.chunks[-1] = (pool, start, index + 1)
                return
        self.chunks.append((pool, index, index + 1))


async def split_lines(body: AsyncIterator[bytes], limit: UploadLimit) -> AsyncIterator[list[bytes]]:
    """Non-blank lines of a streamed upload, in batches; raises as soon as the upload is
    past ``limit`` (`UploadLimit.check`)."""
    pending, batch = b"", []
    async for chunk in body:
        limit.check(limit.seen + len(chunk))
        *lines, pending = (pending + chunk).split(b"\n")
        batch += [line for line in lines if line.strip()]
        if len(batch) >= UPLOAD_BATCH:
            yield batch
            batch = []
    if pending.strip():
        batch.append(pending)
    yield batch


class JobBackend(Protocol):
    """What the job routes need; Redis-backed (distributed) or in-process (embedded)."""

    async def submit(self, body: AsyncIterator[bytes], ticket: Ticket) -> tuple[str, int]:
        """Store an upload; ``ticket`` is its owner's place in the fair queues (batch)."""
        ...

    async def status(self, job_id: str) -> JobStatus | None:
        """The job, with the tenant that owns it; None when unknown or expired."""
        ...

    async def of_tenant(self, tenant: str) -> list[JobStatus]:
        """``tenant``'s unexpired jobs, newest first."""
        ...

    def results(self, job_id: str, total: int) -> AsyncIterator[bytes]: ...

    async def summary(self, job_id: str) -> JobSummary | None:
        """The job's summary so far (`JobSummary`), stored with the job; None when
        unknown."""
        ...

    async def line(self, job_id: str, index: int) -> tuple[bytes | None, bytes | None]:
        """The uploaded line ``index`` (0-based, blank lines not counted) and its result
        line, each None when there is none (yet)."""
        ...

    async def start(self) -> None:
        """Resume what a stopped server left unfinished (embedded jobs)."""
        ...

    async def cancel(self, job_id: str) -> bool: ...

    async def delete(self, job_id: str) -> None:
        """Forget a finished job and everything stored for it (frees its owner's quota)."""
        ...

    async def close(self) -> None:
        """Stop background work (embedded jobs); Redis jobs carry on in the workers."""
        ...


class JobService:
    """Submit, inspect, read and cancel jobs (distributed mode)."""

    def __init__(
        self,
        store: JobStore,
        executor: CeleryExecutor,
        registry: Registry,
        max_bytes: int,
        item_timeout_s: float,
        quota: QuotaRules,
    ) -> None:
        self.store = store
        self._executor = executor
        self._registry = registry
        self._max_bytes = max_bytes
        self._item_timeout = item_timeout_s
        self._quota = quota
        self._followers: set[asyncio.Task[None]] = set()

    async def submit(self, body: AsyncIterator[bytes], ticket: Ticket) -> tuple[str, int]:
        """Store the upload and queue its chunks; returns (job id, line count)."""
        plan = ChunkPlan()
        used, held = await self.store.usage(ticket.tenant)
        limit = UploadLimit(self._max_bytes, admit(self._quota, held, used))
        job_id, total = await self.store.create(self._batches(body, plan, limit), ticket.tenant)
        await self.store.record_size(job_id, ticket.tenant, plan.size)
        if total == 0:
            await self.store.finish_empty(job_id)
            return job_id, 0
        chunks = job_chunks(job_id, plan.chunks, self._item_timeout, ticket)
        await self._executor.submit_job(job_id, chunks)
        follower = asyncio.create_task(self._follow(job_id))
        self._followers.add(follower)
        follower.add_done_callback(self._followers.discard)
        return job_id, total

    async def _follow(self, job_id: str) -> None:
        """Fold the job's summary as its results arrive (every `FOLLOW_S`, and once at the
        end), so a look at it never has the whole job to fold. A job this gateway did not
        accept (another replica's, or one from before a restart) is folded when looked at."""
        while True:
            job = await self.store.status(job_id)
            if job is None:
                return
            try:
                await self.store.summary(job_id, job.total)
            except (OSError, ValueError, RedisError) as exc:  # a view: never the job's fault
                log.warning("job %s: summary not folded: %s", job_id, exc)
            if job.state.finished:
                return
            await asyncio.sleep(FOLLOW_S)

    async def status(self, job_id: str) -> JobStatus | None:
        return await self.store.status(job_id)

    async def of_tenant(self, tenant: str) -> list[JobStatus]:
        return await self.store.of_tenant(tenant)

    def results(self, job_id: str, total: int) -> AsyncIterator[bytes]:
        return self.store.results(job_id, total)

    async def line(self, job_id: str, index: int) -> tuple[bytes | None, bytes | None]:
        return await self.store.line(job_id, index)

    async def summary(self, job_id: str) -> JobSummary | None:
        job = await self.store.status(job_id)
        if job is None:
            return None
        return await self.store.summary(job_id, job.total)

    async def start(self) -> None:
        return None  # Redis keeps the jobs; the workers carry on with them

    async def cancel(self, job_id: str) -> bool:
        return await self.store.cancel(job_id)

    async def delete(self, job_id: str) -> None:
        await self.store.delete(job_id)

    async def close(self) -> None:
        for follower in list(self._followers):
            follower.cancel()

    async def _batches(
        self, body: AsyncIterator[bytes], plan: ChunkPlan, limit: UploadLimit
    ) -> AsyncIterator[list[bytes]]:
        """`split_lines`, planning each line's chunk as it passes."""
        index = 0
        async for batch in split_lines(body, limit):
            for line in batch:
                plan.add(index, self._pool_of(line))
                index += 1
            yield batch
        plan.size = limit.seen

    def _pool_of(self, line: bytes) -> Pool:
        """The pool of the line's verifier; cpu for anything unreadable (it becomes an
        ``invalid`` result there, cheaply)."""
        try:
            ref = orjson.loads(line).get("verifier")
            return self._registry.get(ref).pool if isinstance(ref, str) else Pool.CPU
        except (orjson.JSONDecodeError, AttributeError, UnknownVerifier):
            return Pool.CPU
