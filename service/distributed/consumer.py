"""``referee worker --pool P``: a Celery consumer of one pool's queues, scoring with a
`WorkerEngine` (`service.distributed.worker`) through the tasks of
`service.distributed.tasks`, a heartbeat saying it is there, and a share of the sweep for
job chunks the broker lost (`service.distributed.ledger`). A sandbox worker also holds
stateful sessions for the gateway (`service.distributed.session_host`)."""

from __future__ import annotations

import os
import secrets
import socket

from prometheus_client import start_http_server

from referee.service.distributed.celery_app import batch_queue, make_celery
from referee.service.distributed.ledger import Sweeper
from referee.service.distributed.session_host import SessionHost
from referee.service.distributed.tasks import register_tasks
from referee.service.distributed.worker import THREADS_PER_PROCESS, WorkerEngine, start_heartbeat
from referee.service.jobs.redis_store import retrying
from referee.service.metrics import Metrics
from referee.service.settings import Settings
from referee.verifiers.types import Pool


def run_worker(settings: Settings, pool: Pool, concurrency: int) -> None:
    """Consume ``pool``'s queue until stopped. Blocks."""
    sized = settings.model_copy(update={"cpu_workers": concurrency, "sandbox_workers": concurrency})
    engine = WorkerEngine(sized)
    metrics = Metrics(engine.readiness, engine.registry.all())
    if settings.worker_metrics_port is not None:
        start_http_server(settings.worker_metrics_port, registry=metrics.registry)
    app = make_celery(settings)
    register_tasks(app, engine, retrying(settings.broker_url or ""), settings, metrics)
    name = f"{pool.value}-{socket.gethostname()}-{id(engine):x}"
    stop = start_heartbeat(settings, pool, name, concurrency)
    stop_sweeping = Sweeper(retrying(settings.broker_url or ""), app, settings).start()
    host = None
    if pool == Pool.SANDBOX and settings.sessions.max_open > 0:
        # its own incarnation: a restarted worker is a new host, its sessions new ones
        host = SessionHost(settings, f"{name}-{os.getpid()}-{secrets.token_hex(4)}")
        metrics.count_sessions(lambda: host.sessions.count if host else 0)
        host.start()
    try:
        app.worker_main(
            [
                "worker",
                "--queues",
                f"{pool.value},{batch_queue(pool)}",
                "--pool",
                "threads",
                "--concurrency",
                str(concurrency * THREADS_PER_PROCESS),
                "--hostname",
                f"{name}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
            ]
        )
    finally:
        stop.set()
        stop_sweeping.set()
        if host is not None:
            host.stop()
        engine.close()
