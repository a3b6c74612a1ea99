"""``referee worker --pool P``: a Celery worker that scores with the embedded executor.

Each worker process owns one private event loop (in a thread) and one `EmbeddedExecutor`,
so distributed mode reuses exactly the embedded machinery: cpu and sandbox items run in
killable worker processes with per-item deadlines, io verifiers are awaited on the loop.
Celery's thread pool hands tasks to that loop; tasks stay thin (see `service.distributed.tasks`).
A heartbeat key in Redis says which pools have a live consumer and how many processes
it scores with, for ``/readyz`` and the gateway's per-key shares.

Fairness: Celery takes tasks first come, first served, so the worker takes twice as many
tasks as it has processes (`THREADS_PER_PROCESS`): the gateway lets one key fill at most
the processes (`service.distributed.executor`), which leaves threads free to take another
key's task at once. Inside, the embedded pool's fair queue orders the tasks it holds by
the ticket each carries, and preempts a flooding key's item for a waiting one. Batch
chunks may hold at most one thread per process (`WorkerEngine.batch_slot`); the others
stay free for interactive requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from referee.service.execution.executor import EmbeddedExecutor
from referee.service.execution.fair_queue import ANONYMOUS, Ticket
from referee.service.jobs.redis_store import retrying
from referee.service.settings import Settings
from referee.verifiers.base import echo
from referee.verifiers.builtin import default_registry
from referee.verifiers.registry import Registry
from referee.verifiers.types import Item, Pool, Result, Status

HEARTBEAT_PREFIX = "referee:worker:"
HEARTBEAT_S = 3
HEARTBEAT_TTL_S = 10
THREADS_PER_PROCESS = 2
CANCEL_POLL_S = 0.5

T = TypeVar("T")


class WorkerEngine:
    """A private event loop plus the embedded executor, callable from any thread."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        self.settings = settings
        self.registry = registry or default_registry(settings.engines)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._executor = EmbeddedExecutor(settings, self.registry)
        self._call(self._executor.start())
        self.batch_slot = threading.BoundedSemaphore(max(settings.cpu_workers, 1))
        """Held by a batch chunk while it runs: at most one per process."""

    def run(
        self,
        pool: Pool,
        items: list[Item],
        item_timeout: float,
        deadline_ts: float,
        ticket: Ticket = ANONYMOUS,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[Result]:
        """Score ``items`` on this worker; ``deadline_ts`` is wall-clock (tasks cross hosts).
        ``cancelled`` (blocking, polled every `CANCEL_POLL_S` from a thread) true: the
        caller gave up, so the work stops and the items come back ``timeout``."""
        deadline = time.monotonic() + (deadline_ts - time.time())
        work = self._executor.run(pool, items, item_timeout, deadline, ticket)
        return self._call(_watched(work, items, cancelled))

    def readiness(self) -> dict[str, dict[str, Any]]:
        """The executor's pool report (for this worker's metrics)."""
        return self._executor.readiness()

    def close(self) -> None:
        self._call(self._executor.close())
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()


async def _watched(
    work: Coroutine[Any, Any, list[Result]],
    items: list[Item],
    cancelled: Callable[[], bool] | None,
) -> list[Result]:
    """``work``'s results, unless ``cancelled`` turns true first (then it is cancelled:
    the pool kills what runs, and every item is ``timeout``/``cancelled``)."""
    task = asyncio.ensure_future(work)
    while cancelled is not None:
        done, _ = await asyncio.wait({task}, timeout=CANCEL_POLL_S)
        if done:
            break
        if await asyncio.to_thread(cancelled):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            message = "the request was abandoned before this item was scored"
            return [echo(Result.failed(Status.TIMEOUT, "cancelled", message), i) for i in items]
    return await task


def heartbeat_key(pool: Pool, name: str) -> str:
    return f"{HEARTBEAT_PREFIX}{pool.value}:{name}"


def start_heartbeat(settings: Settings, pool: Pool, name: str, processes: int) -> threading.Event:
    """Refresh this worker's key (its value: how many processes score) until the
    returned event is set."""
    assert settings.broker_url
    client = retrying(settings.broker_url)
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            # Redis down: try again next beat.
            with contextlib.suppress(Exception):
                client.set(heartbeat_key(pool, name), processes, ex=HEARTBEAT_TTL_S)
            stop.wait(HEARTBEAT_S)
        client.delete(heartbeat_key(pool, name))

    threading.Thread(target=beat, daemon=True, name="heartbeat").start()
    return stop
