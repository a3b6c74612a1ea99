"""The Celery tasks: decode, call the worker engine, encode. Nothing else lives here.

Two payload shapes share one task name:
- ``{"reply": KEY, "chunk": N, "items": [...], ...}`` from ``/v1/score``: the results
  are pushed to the reply list the gateway is waiting on;
- ``{"job": ID, "start": I, "stop": J, ...}`` from a batch job: the lines are read from
  Redis and the results written once per item.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
import redis
from celery import Celery

from service.celery_app import TASK_NAME
from service.job_store import JobWriter
from service.jsonl import parse_line
from service.metrics import Metrics
from service.settings import Settings
from service.worker import WorkerEngine
from verifiers.base import echo
from verifiers.types import Item, Pool, Result, Status

REPLY_TTL_S = 600

log = logging.getLogger(__name__)


def register_tasks(
    app: Celery, engine: WorkerEngine, client: redis.Redis, settings: Settings, metrics: Metrics
) -> None:
    """Bind the scoring task to ``app`` for this worker process; ``metrics`` counts what
    this worker scored (the gateway never sees items of distributed jobs)."""
    writer = JobWriter(client)

    @app.task(name=TASK_NAME, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
    def score_chunk(payload: dict[str, Any]) -> None:
        if "job" in payload:
            results = score_job_chunk(payload, engine, writer, settings)
        else:
            results = score_reply_chunk(payload, engine, client)
        metrics.observe_results(results)


def score_reply_chunk(
    payload: dict[str, Any], engine: WorkerEngine, client: redis.Redis
) -> list[Result]:
    items = [Item.model_validate(raw) for raw in payload["items"]]
    results = run_or_fail(
        engine, Pool(payload["pool"]), items, payload["item_timeout"], payload["deadline"]
    )
    reply = {"chunk": payload["chunk"], "results": [r.model_dump(mode="json") for r in results]}
    pipe = client.pipeline()
    pipe.rpush(payload["reply"], orjson.dumps(reply))
    pipe.expire(payload["reply"], REPLY_TTL_S)
    pipe.execute()
    return results


def score_job_chunk(
    payload: dict[str, Any], engine: WorkerEngine, writer: JobWriter, settings: Settings
) -> list[Result]:
    job, start, stop = payload["job"], payload["start"], payload["stop"]
    if writer.state(job) != "running":
        return []  # cancelled or expired: nothing to do, and nothing to redo
    # Jobs wait in the queue for as long as it takes, so their budget starts here, kept
    # below the visibility timeout so the chunk is never redelivered while it runs.
    deadline = time.time() + settings.task_time_limit_s
    lines = writer.lines(job, start, stop)
    entries = [parse_line(raw, start + offset + 1) for offset, raw in enumerate(lines)]
    items = [entry for entry in entries if isinstance(entry, Item)]
    pool = Pool(payload["pool"])
    scored = iter(run_or_fail(engine, pool, items, payload["item_timeout"], deadline))
    results: list[Result] = [next(scored) if isinstance(e, Item) else e for e in entries]
    writer.write(job, start, results, settings.job_ttl_s)
    return results


def run_or_fail(
    engine: WorkerEngine, pool: Pool, items: list[Item], item_timeout: float, deadline: float
) -> list[Result]:
    """The engine's results, or ``error`` for every item if it broke: an answer is always
    written, so neither a waiting request nor a job is left hanging on this chunk."""
    try:
        return engine.run(pool, items, item_timeout, deadline)
    except Exception as exc:
        log.exception("scoring a %s chunk failed", pool.value)
        message = f"the worker failed: {type(exc).__name__}: {exc}"
        return [echo(Result.failed(Status.ERROR, "worker_failed", message), i) for i in items]
