"""Executors run batches of items for one pool. The embedded one needs no other process.

Embedded layout (DESIGN.md section 4): ``cpu`` and ``sandbox`` verifiers run in killable
worker processes (one `ProcessPool` each, the sandbox one started on first use); ``io``
and ``gpu`` verifiers run in this process under the request deadline: an `AsyncVerifier`
is awaited on the event loop, any other runs in a thread.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from referee.service.execution.fair_queue import ANONYMOUS, Ticket
from referee.service.execution.process_pool import ProcessPool, WorkerStartError
from referee.service.settings import Settings
from referee.verifiers.base import echo, item_timeout_s
from referee.verifiers.batch import ascore_items
from referee.verifiers.code.runtime import sweep_leftovers
from referee.verifiers.registry import Registry
from referee.verifiers.types import Item, Pool, Result, Status


class Executor(Protocol):
    """Runs items of one pool and returns one result per item, in order. Never raises
    for a per-item problem; the deadline is a `time.monotonic` instant."""

    name: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(
        self,
        pool: Pool,
        items: list[Item],
        item_timeout: float,
        deadline: float,
        ticket: Ticket = ANONYMOUS,
    ) -> list[Result]: ...

    async def check_capacity(self, pools: set[Pool]) -> None:
        """Raise `Overloaded` when new work for ``pools`` should be refused."""
        ...

    async def refresh(self) -> None:
        """Update what `readiness` reports (it must stay cheap and synchronous)."""
        ...

    def readiness(self) -> dict[str, dict[str, Any]]: ...


class EmbeddedExecutor:
    """Everything in this process and its worker processes."""

    name = "embedded"

    def __init__(self, settings: Settings, registry: Registry) -> None:
        self._registry = registry
        self._sandbox_settings = settings.engines.sandbox
        self._pools = {
            Pool.CPU: ProcessPool(
                "cpu", settings.cpu_workers, settings.worker_memory_mb, settings.engines
            ),
            Pool.SANDBOX: ProcessPool(
                "sandbox", settings.sandbox_workers, settings.worker_memory_mb, settings.engines
            ),
        }
        self._started: set[Pool] = set()
        self._starting: dict[Pool, asyncio.Task[None]] = {}

    async def start(self) -> None:
        await self._ensure(Pool.CPU)

    async def close(self) -> None:
        # A start still running would finish after this and leave its workers behind.
        await asyncio.gather(*self._starting.values(), return_exceptions=True)
        self._starting.clear()
        for pool in list(self._started):
            await asyncio.to_thread(self._pools[pool].close)
        self._started.clear()
        await asyncio.to_thread(
            sweep_leftovers, self._sandbox_settings
        )  # workers that had to be killed to stop

    async def run(
        self,
        pool: Pool,
        items: list[Item],
        item_timeout: float,
        deadline: float,
        ticket: Ticket = ANONYMOUS,
    ) -> list[Result]:
        if pool in self._pools:
            try:
                await self._ensure(pool)
            except (WorkerStartError, OSError) as exc:
                message = f"the {pool.value} worker pool could not start: {exc}"
                return [
                    echo(Result.failed(Status.ERROR, "worker_start_failed", message), i)
                    for i in items
                ]
            return await self._pools[pool].run(items, item_timeout, deadline, ticket)
        return await self._run_inline(items, item_timeout, deadline)

    async def check_capacity(self, pools: set[Pool]) -> None:
        return None  # the dispatcher's in-flight limit covers this process

    async def refresh(self) -> None:
        return None  # readiness is read live from the pools

    def readiness(self) -> dict[str, dict[str, Any]]:
        report: dict[str, dict[str, Any]] = {}
        for pool, workers in self._pools.items():
            report[pool.value] = {
                "started": pool in self._started,
                "workers": workers.size,
                "alive": workers.alive(),
                "queued_chunks": workers.queue_depth(),
            }
        report[Pool.IO.value] = {"started": True, "mode": "in-process"}
        report[Pool.GPU.value] = {"started": True, "mode": "in-process"}
        return report

    async def _ensure(self, pool: Pool) -> None:
        """Start ``pool`` once. The start runs as a task of its own, shielded: a request
        cancelled while it waits (its client hung up) must not leave a pool started but
        unrecorded, which the next request started again (every one then failed). A
        start that failed is tried again by the next request."""
        if pool in self._started:
            return
        task = self._starting.get(pool)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self._start(pool))
            self._starting[pool] = task
        await asyncio.shield(task)

    async def _start(self, pool: Pool) -> None:
        await asyncio.to_thread(self._pools[pool].start)
        self._started.add(pool)

    async def _run_inline(
        self, items: list[Item], item_timeout: float, deadline: float
    ) -> list[Result]:
        budget = deadline - time.monotonic()
        item_timeout_s.set(item_timeout)  # this coroutine's context only
        try:
            return await asyncio.wait_for(
                ascore_items(items, self._registry), timeout=max(budget, 0)
            )
        except TimeoutError:
            return [
                echo(Result.failed(Status.TIMEOUT, "deadline", "the request deadline passed"), i)
                for i in items
            ]
