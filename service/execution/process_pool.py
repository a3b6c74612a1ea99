"""A pool of killable worker processes with a hard deadline per item.

Why not `concurrent.futures` or pebble: both time out whole tasks. Here one task carries
hundreds of cheap items for throughput, yet a single hanging item must be killed on its
own deadline while its batch-mates keep their results. Each worker slot is driven by one
thread of this process that owns the worker's pipe; the asyncio side only queues chunks
and awaits futures, so the event loop never blocks.

Work goes through a `FairQueue` (per API key and priority): interactive requests before
batch jobs, and a key flooding the pool gives a slot back to one that waits (between
sub-batches of `SUB_BATCH` items, or, past a short wait, by stopping the worker: the
item it ran goes back to the queue, not to a failure).

Failure semantics, per item:
- runs past ``item_timeout`` -> worker killed and replaced, item ``timeout``;
- request deadline passes -> worker killed if busy, unfinished items ``timeout``;
- worker dies (segfault, OOM kill) -> item ``error`` (``worker_died``), worker replaced;
- request cancelled -> queued chunks dropped, running chunk's worker killed.
Items that were done but whose results died with a killed worker are re-run: verifiers
are deterministic and side-effect free, so re-running is safe.
"""

from __future__ import annotations

import asyncio
import math
import time

from referee.service.execution import forkserver
from referee.service.execution.fair_queue import ANONYMOUS, FairQueue, Ticket
from referee.service.execution.pool_task import PoolTask, WorkerStartError, expired, finish
from referee.service.execution.worker_slot import PoolSpec, WorkerSlot
from referee.verifiers.engines import EngineSettings
from referee.verifiers.types import Item, Result, Status

GRACE_S = 0.2
MAX_CHUNK = 256

__all__ = ["ProcessPool", "WorkerStartError"]


class ProcessPool:
    """``size`` worker processes fed from one queue of chunks. Start before use."""

    def __init__(
        self, name: str, size: int, memory_mb: int, engines: EngineSettings | None = None
    ) -> None:
        self.name = name
        self.size = size
        ctx = forkserver.context()
        engines = engines or EngineSettings.from_env()
        self._spec = PoolSpec(ctx, FairQueue(size), name, memory_mb, engines)
        self._fair = self._spec.fair
        self._slots: list[WorkerSlot] = []

    def start(self) -> None:
        """Start the worker processes and their driver threads; blocks until spawned.

        All or nothing: if one worker cannot start, the ones already started are stopped
        and the error is raised, so a retry never stacks up orphaned workers.
        """
        try:
            for index in range(self.size):
                slot = WorkerSlot(self._spec, index)
                slot.spawn()
                self._slots.append(slot)
        except BaseException:
            for slot in self._slots:
                slot.kill()
            self._slots.clear()
            raise
        for slot in self._slots:
            slot.thread.start()

    def close(self) -> None:
        """Fail queued work as ``error``, then stop the driver threads and the workers."""
        self._spec.closing = True
        for task in self._fair.close():
            finish(task, Status.ERROR, "shutting_down", "the server is shutting down")
        for slot in self._slots:
            slot.thread.join(timeout=5)
            slot.stop()

    def queue_depth(self) -> int:
        """Chunks waiting for a worker (an approximate, thread-safe reading)."""
        return self._fair.depth()

    def alive(self) -> int:
        """Worker processes currently running."""
        return sum(
            1 for slot in self._slots if slot.process is not None and slot.process.is_alive()
        )

    async def run(
        self,
        items: list[Item],
        item_timeout: float,
        deadline: float,
        ticket: Ticket = ANONYMOUS,
    ) -> list[Result]:
        """Score ``items`` across the workers; one result per item, in order.

        ``deadline`` is a `time.monotonic` instant for the whole batch; ``ticket`` says
        whose work it is (`FairQueue`). Cancelling the awaiting coroutine drops this
        batch's queued chunks and kills its running ones.
        """
        size = max(1, min(MAX_CHUNK, math.ceil(len(items) / self.size)))
        tasks = [
            PoolTask(items[start : start + size], item_timeout, deadline)
            for start in range(0, len(items), size)
        ]
        for task in tasks:
            self._fair.put(ticket, task)
        futures = [asyncio.wrap_future(t.future) for t in tasks]
        try:
            # Chunks still queued at the deadline never reach a worker: answer for them
            # now. (Running chunks are killed at the deadline by their driver thread; the
            # grace lets that answer arrive.)
            await asyncio.wait(futures, timeout=max(0.0, deadline - time.monotonic()) + GRACE_S)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancelled = True
            raise
        chunks = []
        for task, future in zip(tasks, futures, strict=True):
            if future.done():
                chunks.append(future.result())
            else:
                task.cancelled = True
                chunks.append(expired(task))
        return [result for chunk in chunks for result in chunk]
