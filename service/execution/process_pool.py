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
import contextlib
import logging
import math
import multiprocessing as mp
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any

from referee.service.execution import pool_worker
from referee.service.execution.fair_queue import ANONYMOUS, FairQueue, Ticket
from referee.service.execution.pipe_codec import pack_items, unpack_results
from referee.verifiers.base import echo
from referee.verifiers.types import Item, Result, Status

log = logging.getLogger(__name__)

POLL_S = 0.05
GRACE_S = 0.2
MAX_CHUNK = 256
SUB_BATCH = 32
"""Items sent to a worker at once: the fair queue can reassign a slot between them."""
BOOT_TIMEOUT_S = 60.0


class WorkerStartError(RuntimeError):
    """A worker process did not come up; its items fail as ``error``, never a respawn loop."""


@dataclass
class _Task:
    items: list[Item]
    item_timeout: float
    deadline: float
    future: Future[list[Result]] = field(default_factory=Future)
    results: list[Result | None] = field(init=False)
    cancelled: bool = False

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)

    def pending(self) -> list[int]:
        return [i for i, r in enumerate(self.results) if r is None]

    def fail(self, index: int, status: Status, code: str, message: str) -> None:
        if self.results[index] is None:
            failed = Result.failed(status, code, message)  # type: ignore[arg-type]
            self.results[index] = echo(failed, self.items[index])


class ProcessPool:
    """``size`` worker processes fed from one queue of chunks. Start before use."""

    def __init__(self, name: str, size: int, memory_mb: int) -> None:
        self.name = name
        self.size = size
        self.memory_mb = memory_mb
        self._fair: FairQueue[_Task] = FairQueue(size)
        self._slots: list[_Slot] = []
        self.closing = False
        self._ctx: ForkServerContext = mp.get_context("forkserver")
        self._ctx.set_forkserver_preload(
            ["referee.verifiers.builtin", "referee.service.execution.pool_worker"]
        )

    def start(self) -> None:
        """Start the worker processes and their driver threads; blocks until spawned.

        All or nothing: if one worker cannot start, the ones already started are stopped
        and the error is raised, so a retry never stacks up orphaned workers.
        """
        try:
            for index in range(self.size):
                slot = _Slot(self, index)
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
        self.closing = True
        for task in self._fair.close():
            _finish(task, Status.ERROR, "shutting_down", "the server is shutting down")
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
            _Task(items[start : start + size], item_timeout, deadline)
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
                chunks.append(_expired(task))
        return [result for chunk in chunks for result in chunk]


def _expired(task: _Task) -> list[Result]:
    """A chunk's results at the deadline: what finished, ``timeout`` for the rest."""
    message = "the request deadline passed before a worker was free"
    return [
        result
        if result is not None
        else echo(Result.failed(Status.TIMEOUT, "deadline", message), task.items[index])
        for index, result in enumerate(list(task.results))
    ]


def _finish(task: _Task, status: Status, code: str, message: str) -> None:
    for index in task.pending():
        task.fail(index, status, code, message)
    if not task.future.done():
        task.future.set_result([r for r in task.results if r is not None])


class _Slot:
    """One worker process and the thread that drives it."""

    def __init__(self, pool: ProcessPool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.progress: Any = pool._ctx.Array("d", [pool_worker.IDLE, 0.0, 0.0], lock=False)
        self.sent: list[int] = []
        """Task indices of the message the worker is on, by position (see `_running`)."""
        self.thread = threading.Thread(
            target=self._loop, name=f"pool-{pool.name}-{index}", daemon=True
        )

    def is_alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def spawn(self) -> None:
        parent, child = self.pool._ctx.Pipe()
        self.progress[0] = pool_worker.IDLE
        self.process = self.pool._ctx.Process(
            target=pool_worker.serve,
            args=(child, self.progress, self.pool.memory_mb),
            name=f"referee-{self.pool.name}-worker",
            daemon=True,
        )
        self.process.start()
        child.close()
        self.conn = parent
        try:
            ready = parent.poll(BOOT_TIMEOUT_S) and parent.recv() == pool_worker.READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise WorkerStartError(f"a {self.pool.name} worker process failed to start{_hint()}")

    def stop(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send(None)
        if self.process is not None:
            self.process.join(timeout=1)
        self.kill()

    def kill(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None

    def _loop(self) -> None:
        fair = self.pool._fair
        while (got := fair.get(self.index)) is not None:
            ticket, task = got
            try:
                self._execute(ticket, task)
            except WorkerStartError as exc:
                log.error("pool %s: %s", self.pool.name, exc)
                _finish(task, Status.ERROR, "worker_start_failed", str(exc))
            except Exception as exc:
                log.exception("pool %s: driver failed", self.pool.name)
                self.kill()  # the next task starts a fresh worker
                _finish(task, Status.ERROR, "pool_failed", f"worker pool failed: {exc}")
            finally:
                fair.done(self.index)

    def _execute(self, ticket: Ticket, task: _Task) -> None:
        while pending := task.pending():
            if task.cancelled:
                _finish(task, Status.TIMEOUT, "cancelled", "the request was cancelled")
                break
            if time.monotonic() >= task.deadline:
                _finish(task, Status.TIMEOUT, "deadline", "the request deadline passed")
                break
            if self.pool._fair.must_yield(self.index):
                self.pool._fair.put(ticket, task, front=True)  # another tenant's turn
                break
            if self.conn is None:
                self.spawn()
            assert self.conn is not None
            self.progress[0] = pool_worker.IDLE
            batch = self.sent = pending[:SUB_BATCH]
            self.conn.send((batch, pack_items([task.items[i] for i in batch])))
            self._collect(task, batch)
        if not task.pending() and not task.future.done():
            task.future.set_result([r for r in task.results if r is not None])
        if self.conn is None and not self.pool.closing:
            # Replace a killed worker only after answering, so the client never waits on it.
            self.spawn()

    def _collect(self, task: _Task, batch: list[int]) -> None:
        """Receive results until the sent items are done or the worker had to go."""
        assert self.conn is not None
        while any(task.results[i] is None for i in batch):
            try:
                ready = self.conn.poll(POLL_S)
                if ready:
                    indices, packed = self.conn.recv()
                    results = unpack_results(packed)
            except (EOFError, OSError):
                self._on_death(task)
                return
            if ready:
                for index, result in zip(indices, results, strict=True):
                    task.results[index] = result
            elif self._overdue(task):
                return

    def _overdue(self, task: _Task) -> bool:
        """Kill the worker if the item it runs, or the request, is out of time, or if the
        fair queue takes this slot back (the item then stays pending, to run again)."""
        now = time.monotonic()
        if task.cancelled or now >= task.deadline or self.pool._fair.must_yield(self.index):
            self.kill()
            return True
        running, started = self._running(), self.progress[2]
        if running and now - started > task.item_timeout * len(running):
            self.kill()
            limit = task.item_timeout * len(running)
            for index in running:
                task.fail(
                    index,
                    Status.TIMEOUT,
                    "item_timeout",
                    f"scoring took longer than {limit:g} s; the worker was killed",
                )
            return True
        if self.process is not None and not self.process.is_alive():
            self._on_death(task)
            return True
        return False

    def _running(self) -> list[int]:
        """Task indices of the run the worker is scoring now (empty between runs)."""
        position = int(self.progress[0])
        if position < 0:
            return []
        return self.sent[position : position + int(self.progress[1])]

    def _on_death(self, task: _Task) -> None:
        running = self._running()
        code = None
        if self.process is not None:
            self.process.join(timeout=1)
            code = self.process.exitcode
        log.warning("pool %s: worker died (exit code %s)", self.pool.name, code)
        # Died between runs: nothing to blame, but fail one so a poison pill cannot loop.
        for index in running or task.pending()[:1]:
            task.fail(index, Status.ERROR, "worker_died", f"the worker died (exit code {code})")
        self.kill()


def _hint() -> str:
    """When the main module is a script: the likely cause of a worker failing to start."""
    main = sys.modules.get("__main__")
    if main is None or not getattr(main, "__file__", None):
        return ""
    return (
        "; workers import the main module again, so a script must keep the code that "
        'scores under if __name__ == "__main__":'
    )
