"""The Celery app: one explicitly declared queue per pool, tuned for idempotent scoring.

Queues are declared, never created on demand (``task_create_missing_queues`` off): a
typo in a pool name is an error, not a queue nobody consumes. Each pool has two: ``P``
for interactive requests and ``P.batch`` for batch jobs; workers read ``P`` first
(``queue_order_strategy: priority``), so a job's thousands of queued chunks never stand
in front of a request. Tasks are acknowledged
late and rejected when their worker is lost, so a killed worker's tasks are redelivered;
scoring is idempotent (results are written once per item), so redelivery is safe.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu import Queue

from referee.service.distributed.payloads import JobChunk
from referee.service.settings import Settings
from referee.verifiers.types import Pool

TASK_NAME = "referee.score_chunk"

CHUNK_SIZE = {Pool.CPU: 256, Pool.SANDBOX: 8, Pool.GPU: 64, Pool.IO: 64}
"""Items per task: many cheap items for cpu, one GPU batch's worth for gpu."""


PUBLISH_RETRY = {"max_retries": 40, "interval_start": 0.1, "interval_step": 0.5, "interval_max": 2}
"""Rides out a broker restart of about a minute."""


def batch_queue(pool: Pool) -> str:
    """The queue of ``pool``'s batch-job chunks."""
    return f"{pool.value}.batch"


def job_task_id(chunk: JobChunk) -> str:
    """The task id of a job's chunk, the same every time it is published: the one name
    the chunk has in the queues (`service.distributed.ledger` looks for it there)."""
    return f"job:{chunk.job}:{chunk.start}"


def send_job_chunk(app: Celery, chunk: JobChunk, producer: Any = None) -> None:
    """Publish ``chunk`` at the back of its pool's batch queue, retrying through a broker
    restart (`PUBLISH_RETRY`); raises when the broker stays away."""
    app.send_task(
        TASK_NAME,
        args=[chunk.model_dump(mode="json")],
        queue=batch_queue(chunk.pool),
        task_id=job_task_id(chunk),
        producer=producer,
        retry=True,
        retry_policy=PUBLISH_RETRY,
    )


def restore_interval(settings: Settings) -> int:
    """Seconds between the workers' scans for abandoned tasks, and the longest one scan
    may hold the scanners' mutex."""
    return max(1, min(10, settings.visibility_timeout_s // 2))


def make_celery(settings: Settings) -> Celery:
    """A Celery app bound to ``settings.broker_url``; tasks are registered by the worker."""
    if not settings.broker_url:
        raise ValueError("broker_url is required for the distributed executor")
    app = Celery("referee", broker=settings.broker_url, set_as_current=False)
    # No Celery time limits: they apply to prefork workers only, and ours use threads.
    # The engine enforces per-item and per-chunk deadlines itself, below the visibility
    # timeout (`Settings.task_time_limit_s`), so a running task is never redelivered.
    app.conf.update(
        task_queues=[
            *(Queue(pool.value, routing_key=pool.value) for pool in Pool),
            *(Queue(batch_queue(pool), routing_key=batch_queue(pool)) for pool in Pool),
        ],
        task_create_missing_queues=False,
        task_default_queue=Pool.CPU.value,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        # kombu scans for abandoned (unacked, past visibility) tasks every interval x
        # throttle seconds; its default throttle of 10 left a dead worker's tasks stranded
        # for 40 s in our fault tests. One cheap scan per interval brings them back within
        # about one visibility timeout. A worker holds the scan's mutex while it scans, and
        # one that hangs there (stopped, swapped out) kept it for kombu's default 5
        # minutes, stranding every abandoned task: the mutex lives one interval.
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": restore_interval(settings),
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": restore_interval(settings),
            "queue_order_strategy": "priority",
        },
    )
    return app
