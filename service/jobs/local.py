"""Batch jobs without a broker: durable, scored in this process, resumed after a restart.

The embedded twin of the Redis job store: the same routes, states and result shape, so
``referee serve`` alone accepts ``POST /v1/jobs``. The upload streams to a file in the
data directory (never held whole); one background task per job scores it through the
dispatcher in batches and appends results in input order. Every `CHECKPOINT_S` the
results are fsynced and then the progress they make is committed to the `JobCatalog`,
so a server killed at any moment
resumes every unfinished job when it starts again, under the same id, with the same
counts and results as an uninterrupted run. A job whose results cannot be written (a
full disk) is ``failed`` with the reason, and tries again from its last committed line
every `RETRY_S` (and at the next start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import orjson

from referee.service.execution.dispatch import Dispatcher
from referee.service.execution.fair_queue import Priority, Ticket
from referee.service.http.errors import Overloaded
from referee.service.jobs.backend import split_lines
from referee.service.jobs.catalog import JobCatalog, Progress
from referee.service.jobs.jsonl import Entry, items_of, merged, read_items_from
from referee.service.jobs.line_index import LineIndexes
from referee.service.jobs.quota import QuotaRules, UploadLimit, admit
from referee.service.jobs.redis_store import CANCELLED_LINE
from referee.service.jobs.status import JobState, JobStatus
from referee.service.jobs.summary import JobSummary, group_of
from referee.verifiers.types import Result, Status

BATCH = 512
CHECKPOINT_S = 0.5
"""Results are fsynced and their progress committed at most this often (and at a job's
end): one fsync per batch cost a third of the job path's throughput."""
RETRY_S = 30.0
"""How often a job whose results could not be written tries again."""
FOLLOW_S = 2.0
"""How often a running job's summary is folded (`LocalJobs._follow`)."""

log = logging.getLogger(__name__)
JOB_TICKET = Ticket(priority=Priority.BATCH)


class ResultsUnwritable(Exception):
    """A job's results file cannot be written (a full or failing disk)."""


class LocalJobs:
    """Jobs scored in this process, kept in ``directory``. Safe for concurrent requests
    on one event loop; call `start` once the dispatcher can score (it resumes jobs)."""

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
        self._catalog = JobCatalog(directory / "jobs.sqlite3")
        self._lines = LineIndexes()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._summary_locks: dict[str, asyncio.Lock] = {}
        self._followers: dict[str, asyncio.Task[None]] = {}
        self.retry_s = RETRY_S

    async def start(self) -> None:
        """Resume every job a stopped server left unfinished, oldest first."""
        for record in await asyncio.to_thread(self._catalog.unfinished):
            log.info("resuming job %s at line %d", record.status.id, record.progress.done)
            self._launch(record.status, record.progress)

    async def submit(
        self, body: AsyncIterator[bytes], ticket: Ticket = JOB_TICKET
    ) -> tuple[str, int]:
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        await self._forget_expired()
        limit = await asyncio.to_thread(self._limit, ticket.tenant)
        job_id = uuid.uuid4().hex
        items, results = self._paths(job_id)
        total = 0
        try:
            with items.open("wb") as sink:
                async for batch in split_lines(body, limit):
                    if batch:
                        await asyncio.to_thread(sink.write, b"\n".join(batch) + b"\n")
                        total += len(batch)
                await asyncio.to_thread(_sync, sink)
            results.touch()
            created = time.time()
            await asyncio.to_thread(self._catalog.create, job_id, ticket.tenant, total, created)
        except BaseException:
            items.unlink(missing_ok=True)  # a failed upload leaves nothing behind
            results.unlink(missing_ok=True)
            raise
        status = JobStatus(job_id, JobState.RUNNING, total, 0, {}, created, None, ticket.tenant)
        self._launch(status, Progress())
        return job_id, total

    async def status(self, job_id: str) -> JobStatus | None:
        record = await asyncio.to_thread(self._catalog.get, job_id)
        return None if record is None else record.status

    async def of_tenant(self, tenant: str) -> list[JobStatus]:
        records = await asyncio.to_thread(self._catalog.of_tenant, tenant)
        return [record.status for record in records]

    async def results(self, job_id: str, total: int) -> AsyncIterator[bytes]:
        """The committed results (never a torn or uncommitted tail), then a ``cancelled``
        placeholder for each line a cancelled job never scored."""
        record = await asyncio.to_thread(self._catalog.get, job_id)
        if record is None:
            return
        left = record.progress.results_offset
        _, path = self._paths(job_id)
        with path.open("rb") as source:
            while left > 0 and (chunk := await asyncio.to_thread(source.read, min(left, 1 << 20))):
                left -= len(chunk)
                yield chunk
        if record.progress.done < total:
            yield (CANCELLED_LINE + b"\n") * (total - record.progress.done)

    async def summary(self, job_id: str) -> JobSummary | None:
        """The job's summary up to its committed results, folded on from where the stored
        one stopped (`JobSummary`), and stored again beside the job."""
        record = await asyncio.to_thread(self._catalog.get, job_id)
        if record is None:
            return None
        async with self._summary_locks.setdefault(job_id, asyncio.Lock()):
            return await asyncio.to_thread(self._fold, job_id, record.progress.results_offset)

    async def _follow(self, job_id: str) -> None:
        """Fold the running job's summary every `FOLLOW_S` (its runner folds the end), so
        a look at a big job never has the whole job to fold."""
        while job_id in self._tasks:
            await asyncio.sleep(FOLLOW_S)
            try:
                await self.summary(job_id)
            except (OSError, ValueError) as exc:  # a view: never the job's fault
                log.warning("job %s: summary not folded: %s", job_id, exc)

    def _fold(self, job_id: str, committed: int) -> JobSummary:
        items_path, results_path = self._paths(job_id)
        stored = self._dir / f"{job_id}.summary.json"
        summary, offsets = JobSummary(), (0, 0)
        with contextlib.suppress(FileNotFoundError):
            data = orjson.loads(stored.read_bytes())
            summary, offsets = JobSummary.from_json(data["summary"]), tuple(data["offsets"])
        before = summary.folded
        with items_path.open("rb") as items, results_path.open("rb") as results:
            items.seek(offsets[0])
            results.seek(offsets[1])
            while results.tell() < committed:
                line = results.readline()
                summary.add(orjson.loads(line), group_of(_next_item(items)))
            offsets = (items.tell(), results.tell())
        if summary.folded != before:
            scratch = stored.with_suffix(".tmp")
            scratch.write_bytes(orjson.dumps({"summary": summary.to_json(), "offsets": offsets}))
            scratch.replace(stored)
        return summary

    async def line(self, job_id: str, index: int) -> tuple[bytes | None, bytes | None]:
        """Line ``index`` of the upload and its committed result, found through each
        file's line index (`line_index`): one look reads at most a stride of lines."""
        record = await asyncio.to_thread(self._catalog.get, job_id)
        if record is None:
            return None, None
        items_path, results_path = self._paths(job_id)
        item = await asyncio.to_thread(self._lines.line, items_path, index)
        committed = record.progress.results_offset
        result = await asyncio.to_thread(self._lines.line, results_path, index, committed)
        return item, result

    async def cancel(self, job_id: str) -> bool:
        record = await asyncio.to_thread(self._catalog.get, job_id)
        if record is None:
            return False
        if not record.status.state.finished:
            await self._stop(job_id)
            await asyncio.to_thread(
                self._catalog.set_state, job_id, JobState.CANCELLED, time.time()
            )
        return True

    async def delete(self, job_id: str) -> None:
        record = await asyncio.to_thread(self._catalog.get, job_id)
        if record is not None and record.status.state is not JobState.RUNNING:
            await self._forget(job_id)

    async def close(self) -> None:
        for job_id in list(self._tasks):
            await self._stop(job_id)
        for follower in list(self._followers.values()):
            follower.cancel()
        self._catalog.close()

    def _limit(self, tenant: str) -> UploadLimit:
        """What ``tenant`` may upload now (raises `QuotaExceeded` when nothing)."""
        held = self._catalog.of_tenant(tenant)
        used = sum(_size(path) for r in held for path in self._paths(r.status.id))
        left = admit(self._quota, len(held), used)
        return UploadLimit(self._max_bytes, left, self._dir, self._quota.reserve_bytes)

    def _paths(self, job_id: str) -> tuple[Path, Path]:
        return self._dir / f"{job_id}.items.jsonl", self._dir / f"{job_id}.results.jsonl"

    def _launch(self, status: JobStatus, progress: Progress) -> None:
        ticket = Ticket(tenant=status.tenant, priority=Priority.BATCH)
        task = asyncio.create_task(self._run(status.id, status.total, progress, ticket))
        self._tasks[status.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(status.id, None))
        follower = asyncio.create_task(self._follow(status.id))
        self._followers[status.id] = follower
        follower.add_done_callback(lambda _: self._followers.pop(status.id, None))

    async def _stop(self, job_id: str) -> None:
        task = self._tasks.pop(job_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _forget_expired(self) -> None:
        """Drop finished jobs older than the TTL, with their files."""
        expired = await asyncio.to_thread(self._catalog.expired, time.time() - self._ttl_s)
        for job_id in expired:
            await self._forget(job_id)

    async def _forget(self, job_id: str) -> None:
        for path in (*self._paths(job_id), self._dir / f"{job_id}.summary.json"):
            path.unlink(missing_ok=True)
        self._summary_locks.pop(job_id, None)
        await asyncio.to_thread(self._catalog.delete, job_id)

    async def _run(self, job_id: str, total: int, progress: Progress, ticket: Ticket) -> None:
        """Score the job to its end. A results file that cannot be written makes the job
        ``failed`` with the reason, and it is tried again every `RETRY_S` from its last
        committed line (space may come back); any other failure becomes ``error`` results
        for the rest of its lines, so the job still ends with every line."""
        while True:
            try:
                await asyncio.to_thread(self._catalog.set_state, job_id, JobState.RUNNING, None)
                await self._score_all(job_id, progress, ticket)
                break
            except asyncio.CancelledError:
                raise
            except ResultsUnwritable as exc:
                log.error("job %s cannot write its results: %s", job_id, exc)
                reason = f"results cannot be written: {exc}; retried every {self.retry_s:g} s"
                when = time.time()
                await asyncio.to_thread(
                    self._catalog.set_state, job_id, JobState.FAILED, when, reason
                )
                await asyncio.sleep(self.retry_s)
                record = await asyncio.to_thread(self._catalog.get, job_id)
                if record is None:
                    return
                progress = record.progress  # what is on disk, not what was being tried
            except Exception as exc:
                log.exception("job %s failed", job_id)
                await self._fail_rest(job_id, total, progress, f"{type(exc).__name__}: {exc}")
                break
        await asyncio.to_thread(self._catalog.set_state, job_id, JobState.DONE, time.time())
        try:  # folded now, so the first look after the end is instant
            await self.summary(job_id)
        except (OSError, ValueError) as exc:  # the summary is a view; the job is done
            log.error("job %s: its summary could not be folded: %s", job_id, exc)

    async def _score_all(self, job_id: str, progress: Progress, ticket: Ticket) -> None:
        items_path, results_path = self._paths(job_id)
        entries = read_items_from(items_path, progress.items_offset, progress.items_line)
        with results_path.open("r+b") as sink:
            # past the committed offset lies a torn or uncommitted batch: rewrite it
            await asyncio.to_thread(sink.truncate, progress.results_offset)
            sink.seek(progress.results_offset)
            last = time.monotonic()
            while batch := await asyncio.to_thread(lambda: list(islice(entries, BATCH))):
                results = await self._score(ticket, [entry for entry, _, _ in batch])
                _, progress.items_offset, progress.items_line = batch[-1]
                await self._write(sink, results, progress)
                if time.monotonic() - last >= CHECKPOINT_S:
                    await self._checkpoint(job_id, sink, progress)
                    last = time.monotonic()
            await self._checkpoint(job_id, sink, progress)

    async def _write(self, sink: BinaryIO, results: list[Result], progress: Progress) -> None:
        """Append ``results`` and count them in ``progress`` (not yet durable)."""
        lines = b"".join(orjson.dumps(r.model_dump(mode="json")) + b"\n" for r in results)
        try:
            await asyncio.to_thread(_append, sink, lines)
        except OSError as exc:
            raise ResultsUnwritable(str(exc)) from exc
        progress.results_offset += len(lines)
        progress.done += len(results)
        for result in results:
            key = result.status.value
            progress.counts[key] = progress.counts.get(key, 0) + 1

    async def _checkpoint(self, job_id: str, sink: BinaryIO, progress: Progress) -> None:
        """Results on disk first (fsync), then the progress that counts them (SQLite)."""
        try:
            await asyncio.to_thread(_sync, sink)
        except OSError as exc:
            raise ResultsUnwritable(str(exc)) from exc
        await asyncio.to_thread(self._catalog.advance, job_id, replace(progress))

    async def _score(self, ticket: Ticket, batch: list[Entry]) -> list[Result]:
        items = items_of(batch)
        while True:
            try:
                budget = self._dispatcher.budget(None, None, ticket)
                scored = await self._dispatcher.score(items, budget)
                break
            except Overloaded:
                await asyncio.sleep(0.5)  # interactive requests first; the job waits its turn
        return merged(batch, scored)

    async def _fail_rest(self, job_id: str, total: int, progress: Progress, reason: str) -> None:
        failed = Result.failed(Status.ERROR, "job_failed", f"the job runner failed: {reason}")
        _, results_path = self._paths(job_id)
        with results_path.open("r+b") as sink:
            sink.truncate(progress.results_offset)
            sink.seek(progress.results_offset)
            left = total - progress.done
            for start in range(0, left, BATCH):
                await self._write(sink, [failed] * min(BATCH, left - start), progress)
            await self._checkpoint(job_id, sink, progress)


def _next_item(items: BinaryIO) -> bytes:
    """The next non-blank line of an uploaded items file (blank lines were dropped on
    upload, so this is the item of the next result)."""
    while (line := items.readline()) and not line.strip():
        pass
    return line


def _append(sink: BinaryIO, lines: bytes) -> None:
    sink.write(lines)


def _sync(handle: BinaryIO) -> None:
    handle.flush()
    os.fsync(handle.fileno())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
