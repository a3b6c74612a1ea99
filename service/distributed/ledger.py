"""A distributed job's chunks, written down before they are published, and the sweep that
publishes again any chunk the broker lost.

Kombu's Redis transport takes a task off its queue (BRPOP) and only then records it as
unacknowledged; a worker killed between the two, or a Redis restart while the popped
task is on the wire, loses the task: no queue holds it, no visibility timeout brings it
back, and its job stays ``running`` for ever (seen: a 256-item chunk of a 5,000-item job,
after a worker's SIGKILL). So the gateway writes every chunk of a job to its ledger
(``referee:job:J:chunks``, start line -> `JobChunk`) before publishing it, and one worker
at a time sweeps the live jobs every `restore_interval`:

- a job whose ``done`` count moved since the last sweep is making progress: nothing to do;
- in a stalled one, a chunk is *missing* when none of its lines has a result (a chunk's
  results are written in one atomic step) and its task id is in no batch queue and not
  among the unacknowledged tasks (which hold what the workers have taken);
- a chunk missing in two sweeps in a row is published again. One sweep could catch a
  chunk in a legitimate gap of a few milliseconds (taken but not yet recorded, requeued
  but not yet acknowledged); two sweeps seconds apart cannot.

A chunk published twice is scored twice at worst: results are written once per item
(`service.jobs.redis_store`).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
import redis
import redis.asyncio as aioredis
from celery import Celery
from pydantic import ValidationError

from referee.service.distributed.celery_app import (
    batch_queue,
    job_task_id,
    restore_interval,
    send_job_chunk,
)
from referee.service.distributed.payloads import JobChunk, WireTicket
from referee.service.execution.fair_queue import Ticket
from referee.service.jobs.redis_store import job_keys, ledger_keys
from referee.service.jobs.status import JobState
from referee.service.settings import Settings
from referee.verifiers.types import Pool

LIVE_JOBS = "referee:jobs:live"
"""The set of distributed jobs that may still have chunks to sweep."""
SWEEP_LOCK = "referee:sweep:lock"
LOCK_S = 60
"""How long a sweeper that died mid-sweep keeps the others from sweeping."""
SCAN_BATCH = 1000
PRIORITY_SEP = "\x06\x16"
"""How kombu names the lists of a queue's non-zero priorities (we publish at 0)."""
PRIORITY_STEPS = (3, 6, 9)

log = logging.getLogger(__name__)


def job_chunks(
    job: str, ranges: list[tuple[Pool, int, int]], item_timeout: float, ticket: Ticket
) -> list[JobChunk]:
    """The chunks of ``job``, one per (pool, start, stop) range of its lines."""
    wire = WireTicket.of(ticket)
    return [
        JobChunk(job=job, start=start, stop=stop, pool=pool, item_timeout=item_timeout, ticket=wire)
        for pool, start, stop in ranges
    ]


async def record(client: aioredis.Redis, job: str, chunks: list[JobChunk], ttl_s: int) -> None:
    """Write ``job``'s chunks to its ledger (before they are published)."""
    ledger, _ = ledger_keys(job)
    pipe = client.pipeline()
    for start in range(0, len(chunks), SCAN_BATCH):
        batch = chunks[start : start + SCAN_BATCH]
        pipe.hset(ledger, mapping={str(c.start): c.model_dump_json() for c in batch})
    pipe.expire(ledger, ttl_s)
    await pipe.execute()


async def watch(client: aioredis.Redis, job: str) -> None:
    """Make ``job`` live for the sweep, once all its chunks are published (a chunk not
    published yet is in no queue either: it would look lost)."""
    await client.sadd(LIVE_JOBS, job)


class Sweeper:
    """Finds and republishes the lost chunks of live jobs (see the module's docstring)."""

    def __init__(self, client: redis.Redis, app: Celery, settings: Settings) -> None:
        self._redis = client
        self._app = app
        self.interval_s = restore_interval(settings)
        self._ttl_s = settings.job_ttl_s
        options = app.conf.broker_transport_options
        self._unacked = str(options.get("unacked_key", "unacked"))

    def sweep(self) -> list[JobChunk]:
        """One sweep, if no other worker's is under way; returns what it republished."""
        token = secrets.token_hex(8)
        if not self._redis.set(SWEEP_LOCK, token, nx=True, ex=LOCK_S):
            return []
        try:
            return self._sweep()
        finally:
            if _text(self._redis.get(SWEEP_LOCK) or b"") == token:
                self._redis.delete(SWEEP_LOCK)

    def _sweep(self) -> list[JobChunk]:
        members: Iterable[Any] = self._redis.smembers(LIVE_JOBS)
        stalled = {}
        for job in sorted(_text(m) for m in members):
            suspects = self._stalled(job)
            if suspects is not None:
                stalled[job] = suspects
        if not stalled:
            return []
        located = self._located(stalled)
        republished: list[JobChunk] = []
        for job, suspects in stalled.items():
            missing = [c for c in self._unscored(job) if job_task_id(c) not in located]
            again = [c for c in missing if c.start in suspects]
            for chunk in again:
                log.warning(
                    "job %s: chunk %d was lost by the broker: published again", job, chunk.start
                )
                send_job_chunk(self._app, chunk)
            self._note(job, suspects=[c.start for c in missing if c.start not in suspects])
            republished += again
        return republished

    def _stalled(self, job: str) -> set[int] | None:
        """The chunks suspected at the last sweep if ``job`` has not moved since; None
        when it moved, or is no longer running (then it leaves the live set)."""
        meta, _, _, counts = job_keys(job)
        _, notes = ledger_keys(job)
        pipe = self._redis.pipeline()
        pipe.hget(meta, "state")
        pipe.hget(counts, "done")
        pipe.hgetall(notes)
        state, done, noted = pipe.execute()
        if state is None or _text(state) != JobState.RUNNING:
            self._redis.srem(LIVE_JOBS, job)
            self._redis.delete(*ledger_keys(job))  # nothing of it will be swept again
            return None
        note = {_text(k): _text(v) for k, v in noted.items()}
        done_now = _text(done or b"0")
        if note.get("done") != done_now:
            self._note(job, done=done_now, suspects=[])
            return None
        return {int(s) for s in note.get("suspects", "").split(",") if s}

    def _note(self, job: str, suspects: list[int], done: str | None = None) -> None:
        _, notes = ledger_keys(job)
        pipe = self._redis.pipeline()
        pipe.hset(notes, "suspects", ",".join(str(s) for s in suspects))
        if done is not None:
            pipe.hset(notes, "done", done)
        pipe.expire(notes, self._ttl_s)
        pipe.execute()

    def _unscored(self, job: str) -> list[JobChunk]:
        """``job``'s chunks of which no line has a result yet."""
        ledger, _ = ledger_keys(job)
        _, _, results, _ = job_keys(job)
        raw: dict[bytes, bytes] = self._redis.hgetall(ledger)  # type: ignore[assignment]
        chunks = []
        for value in raw.values():
            try:
                chunks.append(JobChunk.model_validate_json(value))
            except ValidationError as exc:  # not ours to repair: say so, go on
                log.error("job %s: unreadable ledger entry: %s", job, exc)
        starts = [str(c.start) for c in chunks]
        found = self._redis.hmget(results, starts) if starts else []
        return [c for c, value in zip(chunks, found, strict=True) if value is None]

    def _located(self, jobs: Iterable[str]) -> set[str]:
        """Task ids of ``jobs``' chunks waiting in a batch queue or taken by a worker."""
        names = [job.encode() for job in jobs]
        located = set()
        for raw in self._messages():
            if any(name in raw for name in names):
                task_id = _task_id(raw)
                if task_id is not None:
                    located.add(task_id)
        return located

    def _messages(self) -> Iterator[bytes]:
        """Every message in the batch queues and the unacknowledged ones, raw."""
        for pool in Pool:
            queue = batch_queue(pool)
            for name in [queue, *(f"{queue}{PRIORITY_SEP}{p}" for p in PRIORITY_STEPS)]:
                start = 0
                while True:
                    page: list[bytes] = self._redis.lrange(name, start, start + SCAN_BATCH - 1)  # type: ignore[assignment]
                    yield from page
                    if len(page) < SCAN_BATCH:
                        break
                    start += SCAN_BATCH
        for _, value in self._redis.hscan_iter(self._unacked, count=SCAN_BATCH):
            yield value

    def start(self) -> threading.Event:
        """Sweep every `interval_s` in a thread until the returned event is set; a sweep
        that fails (Redis away) is tried again at the next one."""
        stop = threading.Event()

        def run() -> None:
            while not stop.wait(self.interval_s):
                try:
                    self.sweep()
                except Exception:
                    log.exception("the sweep for lost job chunks failed")

        threading.Thread(target=run, daemon=True, name="sweeper").start()
        return stop


def _task_id(raw: bytes) -> str | None:
    """The task id in a queued message (kombu's envelope) or an unacknowledged one (a
    list: envelope, exchange, routing key); None for anything else."""
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if isinstance(message, list) and message:
        message = message[0]
    headers = message.get("headers") if isinstance(message, dict) else None
    task_id = headers.get("id") if isinstance(headers, dict) else None
    return task_id if isinstance(task_id, str) else None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
