"""``referee worker --pool P``: a Celery worker that scores with the embedded executor.

Each worker process owns one private event loop (in a thread) and one `EmbeddedExecutor`,
so distributed mode reuses exactly the embedded machinery: cpu and sandbox items run in
killable worker processes with per-item deadlines, io verifiers are awaited on the loop.
Celery's thread pool hands tasks to that loop; tasks stay thin (see `service.tasks`).
A heartbeat key in Redis says which pools have a live consumer, for ``/readyz``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from prometheus_client import start_http_server

from service.executor import EmbeddedExecutor
from service.job_store import retrying
from service.metrics import Metrics
from service.settings import Settings
from verifiers.registry import Registry, default_registry
from verifiers.types import Item, Pool, Result

HEARTBEAT_PREFIX = "referee:worker:"
HEARTBEAT_S = 3
HEARTBEAT_TTL_S = 10

T = TypeVar("T")


class WorkerEngine:
    """A private event loop plus the embedded executor, callable from any thread."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        self.settings = settings
        self.registry = registry or default_registry()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._executor = EmbeddedExecutor(settings, self.registry)
        self._call(self._executor.start())

    def run(
        self, pool: Pool, items: list[Item], item_timeout: float, deadline_ts: float
    ) -> list[Result]:
        """Score ``items`` on this worker; ``deadline_ts`` is wall-clock (tasks cross hosts)."""
        deadline = time.monotonic() + (deadline_ts - time.time())
        return self._call(self._executor.run(pool, items, item_timeout, deadline))

    def readiness(self) -> dict[str, dict[str, Any]]:
        """The executor's pool report (for this worker's metrics)."""
        return self._executor.readiness()

    def close(self) -> None:
        self._call(self._executor.close())
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()


def heartbeat_key(pool: Pool, name: str) -> str:
    return f"{HEARTBEAT_PREFIX}{pool.value}:{name}"


def start_heartbeat(settings: Settings, pool: Pool, name: str) -> threading.Event:
    """Refresh this worker's key until the returned event is set."""
    assert settings.broker_url
    client = retrying(settings.broker_url)
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            # Redis down: try again next beat.
            with contextlib.suppress(Exception):
                client.set(heartbeat_key(pool, name), time.time(), ex=HEARTBEAT_TTL_S)
            stop.wait(HEARTBEAT_S)
        client.delete(heartbeat_key(pool, name))

    threading.Thread(target=beat, daemon=True, name="heartbeat").start()
    return stop


def run_worker(settings: Settings, pool: Pool, concurrency: int) -> None:
    """Consume ``pool``'s queue until stopped. Blocks."""
    from service.celery_app import make_celery
    from service.tasks import register_tasks

    sized = settings.model_copy(update={"cpu_workers": concurrency, "sandbox_workers": concurrency})
    engine = WorkerEngine(sized)
    metrics = Metrics(engine.readiness, engine.registry.all())
    if settings.worker_metrics_port is not None:
        start_http_server(settings.worker_metrics_port, registry=metrics.registry)
    app = make_celery(settings)
    register_tasks(app, engine, retrying(settings.broker_url or ""), settings, metrics)
    name = f"{pool.value}-{socket.gethostname()}-{id(engine):x}"
    stop = start_heartbeat(settings, pool, name)
    try:
        app.worker_main(
            [
                "worker",
                "--queues",
                pool.value,
                "--pool",
                "threads",
                "--concurrency",
                str(concurrency),
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
        engine.close()
