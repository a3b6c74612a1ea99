"""The Celery tasks: decode, call the worker engine, encode. Nothing else lives here.

Two kinds of chunk share one task name (`service.distributed.payloads`, told apart by
``kind``):
- a `ReplyChunk` from ``/v1/score``: the results are pushed to the reply list the
  gateway is waiting on;
- a `JobChunk` from a batch job: the lines are read from Redis and the results written
  once per item.

Both carry a ``ticket`` (whose work, which priority) for the worker's fair queue. A
batch chunk that finds every batch slot of its worker taken for `BATCH_WAIT_S` is
published again at the back of its queue (a plain copy: no ETA, which Redis would hold
for a visibility timeout after a hung worker) and its thread is free for an interactive
task. Published before this message is acknowledged, so a crash in between duplicates
the chunk at worst, and results are written once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import redis
from celery import Celery
from celery.exceptions import Reject
from pydantic import ValidationError

from referee.service.distributed.celery_app import TASK_NAME, send_job_chunk
from referee.service.distributed.executor import cancel_key
from referee.service.distributed.payloads import CHUNK, ChunkReply, JobChunk, ReplyChunk
from referee.service.distributed.worker import WorkerEngine
from referee.service.execution.fair_queue import ANONYMOUS, Ticket
from referee.service.jobs.jsonl import items_of, merged, parse_line
from referee.service.jobs.redis_store import JobWriter
from referee.service.jobs.status import JobState
from referee.service.metrics import Metrics
from referee.service.settings import Settings
from referee.verifiers.base import echo
from referee.verifiers.types import Item, Pool, Result, Status

REPLY_TTL_S = 600
BATCH_WAIT_S = 0.2

log = logging.getLogger(__name__)


def register_tasks(
    app: Celery, engine: WorkerEngine, client: redis.Redis, settings: Settings, metrics: Metrics
) -> None:
    """Bind the scoring task to ``app`` for this worker process; ``metrics`` counts what
    this worker scored (the gateway never sees items of distributed jobs)."""
    writer = JobWriter(client)

    @app.task(  # type: ignore[untyped-decorator]
        name=TASK_NAME, bind=True, acks_late=True, reject_on_worker_lost=True
    )
    def score_chunk(task: Any, payload: dict[str, Any]) -> None:
        try:
            chunk = CHUNK.validate_python(payload)
        except ValidationError as exc:  # nothing to answer to: say so, drop it
            log.error("dropping a malformed chunk %s: %s", task.request.id, exc)
            return
        if isinstance(chunk, ReplyChunk):
            metrics.observe_results(score_reply_chunk(chunk, engine, client))
            return
        if not engine.batch_slot.acquire(timeout=BATCH_WAIT_S):
            requeue(app, chunk)
            return
        try:
            metrics.observe_results(score_job_chunk(chunk, engine, writer, settings))
        finally:
            engine.batch_slot.release()


def requeue(app: Celery, chunk: JobChunk) -> None:
    """Publish ``chunk`` again at the back of its batch queue, riding out a broker
    restart; if that fails the message is rejected unacknowledged (Redis restores it
    after the visibility timeout), never acknowledged and lost."""
    try:
        send_job_chunk(app, chunk)
    except Exception as exc:
        raise Reject(f"could not requeue the chunk: {exc}", requeue=True) from exc


def score_reply_chunk(chunk: ReplyChunk, engine: WorkerEngine, client: redis.Redis) -> list[Result]:
    gave_up = cancel_key(chunk.reply)
    if client.exists(gave_up):
        return []  # nobody waits for this chunk any more
    items = [Item.model_validate(raw) for raw in chunk.items]
    results = run_or_fail(
        engine,
        chunk.pool,
        items,
        chunk.item_timeout,
        chunk.deadline,
        chunk.ticket.ticket(),
        lambda: bool(client.exists(gave_up)),
    )
    reply = ChunkReply(chunk=chunk.chunk, results=[r.model_dump(mode="json") for r in results])
    pipe = client.pipeline()
    pipe.rpush(chunk.reply, reply.model_dump_json())
    pipe.expire(chunk.reply, REPLY_TTL_S)
    pipe.execute()
    return results


def score_job_chunk(
    chunk: JobChunk, engine: WorkerEngine, writer: JobWriter, settings: Settings
) -> list[Result]:
    job, start, stop = chunk.job, chunk.start, chunk.stop
    if writer.state(job) != JobState.RUNNING:
        return []  # cancelled or expired: nothing to do, and nothing to redo
    # Jobs wait in the queue for as long as it takes, so their budget starts here, kept
    # below the visibility timeout so the chunk is never redelivered while it runs.
    deadline = time.time() + settings.task_time_limit_s
    lines = writer.lines(job, start, stop)
    entries = [parse_line(raw, start + offset + 1) for offset, raw in enumerate(lines)]
    items = items_of(entries)
    stopped = lambda: writer.state(job) != JobState.RUNNING  # noqa: E731 - cancelled or expired
    scored = run_or_fail(
        engine, chunk.pool, items, chunk.item_timeout, deadline, chunk.ticket.ticket(), stopped
    )
    results = merged(entries, scored)
    writer.write(job, start, results, settings.job_ttl_s)
    return results


def run_or_fail(
    engine: WorkerEngine,
    pool: Pool,
    items: list[Item],
    item_timeout: float,
    deadline: float,
    ticket: Ticket = ANONYMOUS,
    cancelled: Callable[[], bool] | None = None,
) -> list[Result]:
    """The engine's results, or ``error`` for every item if it broke: an answer is always
    written, so neither a waiting request nor a job is left hanging on this chunk."""
    try:
        return engine.run(pool, items, item_timeout, deadline, ticket, cancelled)
    except Exception as exc:
        log.exception("scoring a %s chunk failed", pool.value)
        message = f"the worker failed: {type(exc).__name__}: {exc}"
        return [echo(Result.failed(Status.ERROR, "worker_failed", message), i) for i in items]
