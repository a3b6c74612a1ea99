"""One worker process of a `ProcessPool` and the thread that drives it: sends it
sub-batches, collects results, and kills it when the run it is on is out of time."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any

from referee.service.execution import pool_worker
from referee.service.execution.cpu_clock import cpu_s
from referee.service.execution.fair_queue import FairQueue, Ticket
from referee.service.execution.pipe_codec import (
    ItemsMessage,
    ResultsMessage,
    pack_items,
    unpack_results,
)
from referee.service.execution.pool_task import PoolTask, WorkerStartError, finish
from referee.verifiers.engines import EngineSettings
from referee.verifiers.types import Status

log = logging.getLogger(__name__)

POLL_S = 0.05
SUB_BATCH = 32
"""Items sent to a worker at once: the fair queue can reassign a slot between them."""
BOOT_TIMEOUT_S = 60.0


@dataclass
class PoolSpec:
    """What a slot needs of its pool: the process context, the queue it serves, the
    pool's name and memory cap, the engines' settings its workers get, and whether the
    pool is closing."""

    ctx: ForkServerContext
    fair: FairQueue[PoolTask]
    name: str
    memory_mb: int
    engines: EngineSettings
    closing: bool = False


class WorkerSlot:
    """One worker process and the thread that drives it."""

    def __init__(self, pool: PoolSpec, index: int) -> None:
        self.pool = pool
        self.index = index
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.progress: Any = pool.ctx.Array("d", pool_worker.PROGRESS, lock=False)
        self.sent: list[int] = []
        """Task indices of the message the worker is on, by position (see `_running`)."""
        self.thread = threading.Thread(
            target=self._loop, name=f"pool-{pool.name}-{index}", daemon=True
        )

    def is_alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def spawn(self) -> None:
        parent, child = self.pool.ctx.Pipe()
        self.progress[:] = pool_worker.PROGRESS
        self.process = self.pool.ctx.Process(
            target=pool_worker.serve,
            args=(child, self.progress, self.pool.memory_mb, self.pool.engines),
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
        fair = self.pool.fair
        while (got := fair.get(self.index)) is not None:
            ticket, task = got
            try:
                self._execute(ticket, task)
            except WorkerStartError as exc:
                log.error("pool %s: %s", self.pool.name, exc)
                finish(task, Status.ERROR, "worker_start_failed", str(exc))
            except Exception as exc:
                log.exception("pool %s: driver failed", self.pool.name)
                self.kill()  # the next task starts a fresh worker
                finish(task, Status.ERROR, "pool_failed", f"worker pool failed: {exc}")
            finally:
                fair.done(self.index)

    def _execute(self, ticket: Ticket, task: PoolTask) -> None:
        while pending := task.pending():
            if task.cancelled:
                finish(task, Status.TIMEOUT, "cancelled", "the request was cancelled")
                break
            if time.monotonic() >= task.deadline:
                finish(task, Status.TIMEOUT, "deadline", "the request deadline passed")
                break
            if self.pool.fair.must_yield(self.index):
                self.pool.fair.put(ticket, task, front=True)  # another tenant's turn
                break
            if self.conn is None:
                self.spawn()
            assert self.conn is not None
            self.progress[pool_worker.POSITION] = pool_worker.IDLE
            batch = self.sent = pending[:SUB_BATCH]
            items = pack_items([task.items[i] for i in batch])
            spent = [i for i in batch if i in task.spent]
            self.conn.send(ItemsMessage(batch, items, spent, task.item_timeout))
            self._collect(task, batch)
        if not task.pending() and not task.future.done():
            task.future.set_result([r for r in task.results if r is not None])
        if self.conn is None and not self.pool.closing:
            # Replace a killed worker only after answering, so the client never waits on it.
            self.spawn()

    def _collect(self, task: PoolTask, batch: list[int]) -> None:
        """Receive results until the sent items are done or the worker had to go."""
        assert self.conn is not None
        while any(task.results[i] is None for i in batch):
            try:
                ready = self.conn.poll(POLL_S)
                if ready:
                    indices, packed = ResultsMessage(*self.conn.recv())
                    results = unpack_results(packed)
            except (EOFError, OSError):
                self._on_death(task)
                return
            if ready:
                for index, result in zip(indices, results, strict=True):
                    task.results[index] = result
            elif self._overdue(task):
                return

    def _overdue(self, task: PoolTask) -> bool:
        """Kill the worker if the item it runs, or the request, is out of time, or if the
        fair queue takes this slot back (the item then stays pending, to run again)."""
        now = time.monotonic()
        if task.cancelled or now >= task.deadline or self.pool.fair.must_yield(self.index):
            self.kill()
            return True
        running, started = self._running(), self.progress[pool_worker.STARTED]
        if self._over_budget(running):
            self.kill()
            task.spent.update(running)  # scored again, told that its budget ran out
            return True
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

    def _over_budget(self, running: list[int]) -> bool:
        """Whether the one item the worker runs has used more CPU than the budget its
        verifier began (`referee.verifiers.budget`)."""
        budget = self.progress[pool_worker.BUDGET]
        if len(running) != 1 or budget <= 0.0 or self.process is None:
            return False
        since = self.progress[pool_worker.BUDGET_FROM]
        now = cpu_s(self.process.pid) if self.process.pid is not None else None
        return now is not None and now - since > budget

    def _running(self) -> list[int]:
        """Task indices of the run the worker is scoring now (empty between runs)."""
        position = int(self.progress[pool_worker.POSITION])
        if position < 0:
            return []
        return self.sent[position : position + int(self.progress[pool_worker.LENGTH])]

    def _on_death(self, task: PoolTask) -> None:
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
