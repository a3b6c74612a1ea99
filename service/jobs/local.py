"""Batch jobs without a broker: the upload is spooled to disk and scored in order here.

The embedded twin of the Redis job store: the same routes, states and result shape, so
``referee serve`` alone accepts ``POST /v1/jobs``. Lines go to a file as they arrive (the
upload is never held whole), one background task per job scores them through the
dispatcher in batches and appends results in input order. Jobs live as long as this
process: a restart forgets them (the distributed mode keeps them in Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from referee.service.execution.dispatch import Dispatcher
from referee.service.execution.fair_queue import Priority, Ticket
from referee.service.http.errors import Overloaded
from referee.service.jobs.backend import split_lines
from referee.service.jobs.jsonl import read_items, write_result
from referee.service.jobs.quota import QuotaRules, UploadLimit, admit
from referee.service.jobs.redis_store import CANCELLED_LINE, JobStatus
from referee.verifiers.types import Item, Result, Status

BATCH = 512

log = logging.getLogger(__name__)
JOB_TICKET = Ticket(priority=Priority.BATCH)


@dataclass
class _Job:
    id: str
    total: int
    items: Path
    results: Path
    state: str = "running"
    done: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    created: float = field(default_factory=time.time)
    finished: float | None = None
    task: asyncio.Task[None] | None = None
    ticket: Ticket = JOB_TICKET


class LocalJobs:
    """Jobs scored in this process. Safe for concurrent requests on one event loop."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        directory: Path,
        max_bytes: int,
        ttl_s: float,
        quota: QuotaRules,
    ) -> None:
        self._dispatcher = dispatcher
        self._dir = directory
        self._max_bytes = max_bytes
        self._ttl_s = ttl_s
        self._quota = quota
        self._jobs: dict[str, _Job] = {}

    async def submit(
        self, body: AsyncIterator[bytes], ticket: Ticket = JOB_TICKET
    ) -> tuple[str, int]:
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._forget_expired()
        limit = self._limit(ticket.tenant)
        job_id = uuid.uuid4().hex
        items = self._dir / f"{job_id}.items.jsonl"
        total = 0
        try:
            with items.open("wb") as sink:
                async for batch in split_lines(body, limit):
                    if batch:
                        await asyncio.to_thread(sink.write, b"\n".join(batch) + b"\n")
                        total += len(batch)
        except BaseException:
            items.unlink(missing_ok=True)  # a failed upload leaves nothing behind
            raise
        job = _Job(job_id, total, items, self._dir / f"{job_id}.results.jsonl", ticket=ticket)
        job.results.touch()
        self._jobs[job_id] = job
        job.task = asyncio.create_task(self._run(job))
        return job_id, total

    def _limit(self, tenant: str) -> UploadLimit:
        """What ``tenant`` may upload now (raises `QuotaExceeded` when nothing)."""
        held = [job for job in self._jobs.values() if job.ticket.tenant == tenant]
        used = sum(_size(job.items) + _size(job.results) for job in held)
        left = admit(self._quota, len(held), used)
        return UploadLimit(self._max_bytes, left, self._dir, self._quota.reserve_bytes)

    async def status(self, job_id: str) -> JobStatus | None:
        job = self._jobs.get(job_id)
        if job is None:
            return None
        return JobStatus(
            id=job.id,
            state=job.state,
            total=job.total,
            done=job.done,
            counts=dict(job.counts),
            created=job.created,
            finished=job.finished,
            tenant=job.ticket.tenant,
        )

    async def results(self, job_id: str, total: int) -> AsyncIterator[bytes]:
        job = self._jobs[job_id]
        written = 0
        with job.results.open("rb") as source:
            while chunk := await asyncio.to_thread(source.readlines, 1 << 20):
                written += len(chunk)
                yield b"".join(chunk)
        if written < total:
            yield (CANCELLED_LINE + b"\n") * (total - written)

    async def cancel(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        if job is None:
            return False
        if job.state == "running":
            job.state, job.finished = "cancelled", time.time()
            if job.task is not None:
                job.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job.task
        return True

    async def delete(self, job_id: str) -> None:
        job = self._jobs.get(job_id)
        if job is not None and job.state != "running":
            self._forget(job)

    def _forget_expired(self) -> None:
        """Drop finished jobs older than the TTL, with their spool files."""
        cutoff = time.time() - self._ttl_s
        for job in [j for j in self._jobs.values() if j.finished and j.finished < cutoff]:
            self._forget(job)

    def _forget(self, job: _Job) -> None:
        job.items.unlink(missing_ok=True)
        job.results.unlink(missing_ok=True)
        del self._jobs[job.id]

    async def close(self) -> None:
        for job in self._jobs.values():
            if job.task is not None:
                job.task.cancel()

    async def _run(self, job: _Job) -> None:
        """Score the job; if anything breaks, the rest of its lines become ``error``
        results so the job still ends (a job stuck at "running" loses nothing visibly)."""
        try:
            await self._score_all(job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("job %s failed", job.id)
            await asyncio.to_thread(self._fail_rest, job, f"{type(exc).__name__}: {exc}")
        job.state, job.finished = "done", time.time()

    def _fail_rest(self, job: _Job, reason: str) -> None:
        failed = Result.failed(Status.ERROR, "job_failed", f"the job runner failed: {reason}")
        with job.results.open("ab") as sink:
            for _ in range(job.total - job.done):
                write_result(sink, failed)
        job.counts["error"] = job.counts.get("error", 0) + job.total - job.done
        job.done = job.total

    async def _score_all(self, job: _Job) -> None:
        entries = read_items(job.items)
        with job.results.open("ab") as sink:
            while batch := await asyncio.to_thread(lambda: list(islice(entries, BATCH))):
                results = await self._score(job, batch)
                for result in results:
                    write_result(sink, result)
                    job.counts[result.status.value] = job.counts.get(result.status.value, 0) + 1
                sink.flush()
                job.done += len(results)

    async def _score(self, job: _Job, batch: list[Item | Result]) -> list[Result]:
        items = [entry for entry in batch if isinstance(entry, Item)]
        while True:
            try:
                budget = self._dispatcher.budget(None, None, job.ticket)
                scored = iter(await self._dispatcher.score(items, budget))
                break
            except Overloaded:
                await asyncio.sleep(0.5)  # interactive requests first; the job waits its turn
        return [next(scored) if isinstance(entry, Item) else entry for entry in batch]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
