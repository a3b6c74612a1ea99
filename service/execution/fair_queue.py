"""A fair queue in front of a pool of workers: who runs next, and who must give a slot back.

Work is queued per *tenant* (an API key) and per *priority*: interactive requests
(`/v1/score` and the other synchronous routes) always come before batch jobs. Within a
priority, the next task goes to the tenant with the fewest slots running, so a tenant
that floods the pool gets its share while others wait, and the whole pool when nobody
else has work. Because one item can run for a long time (up to the item timeout), a
task that has waited `PREEMPT_AFTER_S` while it is owed a slot takes one back: the slot
running the most over-served tenant's work (batch work first) is chosen as a *victim*;
its driver stops that worker and puts the task's unfinished items back at the head of
their queue. Items are deterministic and side-effect free, so re-running them is safe.

Thread-safe: driver threads block in `get`, the event loop thread calls `put`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Generic, TypeVar

T = TypeVar("T")

PREEMPT_AFTER_S = 0.25


class Priority(IntEnum):
    """Lower runs first."""

    INTERACTIVE = 0
    BATCH = 1


@dataclass(frozen=True)
class Ticket:
    """Whose work this is: the tenant (an API key, or ``""``) and its priority."""

    tenant: str = ""
    priority: Priority = Priority.INTERACTIVE


ANONYMOUS = Ticket()


@dataclass
class _Entry(Generic[T]):
    ticket: Ticket
    task: T
    queued_at: float = field(default_factory=time.monotonic)


class FairQueue(Generic[T]):
    """See the module docstring. ``slots`` is how many drivers consume the queue."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self._cond = threading.Condition()
        self._queues: dict[tuple[Priority, str], deque[_Entry[T]]] = {}
        self._running: dict[int, Ticket] = {}  # slot id -> whose task it runs
        self._served: Counter[str] = Counter()  # tasks handed out, for round robin
        self._victims: set[int] = set()
        self._closed = False

    def put(self, ticket: Ticket, task: T, *, front: bool = False) -> None:
        """Queue ``task``; ``front`` puts it first in its tenant's queue (a requeue)."""
        with self._cond:
            queue = self._queues.setdefault((ticket.priority, ticket.tenant), deque())
            entry = _Entry(ticket, task)
            if front:
                queue.appendleft(entry)
            else:
                queue.append(entry)
            self._cond.notify()

    def get(self, slot: int) -> tuple[Ticket, T] | None:
        """The next task for ``slot`` (blocks); None once closed and drained of waiters."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                entry = self._pick()
                if entry is not None:
                    self._running[slot] = entry.ticket
                    self._served[entry.ticket.tenant] += 1
                    return entry.ticket, entry.task
                self._cond.wait()

    def done(self, slot: int) -> None:
        """``slot`` finished (or gave back) its task."""
        with self._cond:
            self._running.pop(slot, None)
            self._victims.discard(slot)
            self._cond.notify()

    def must_yield(self, slot: int) -> bool:
        """Whether ``slot`` was chosen to give its worker back to a waiting tenant. Cheap;
        drivers call it while they wait on their worker."""
        with self._cond:
            if slot in self._victims:
                return True
            victim = self._choose_victim()
            if victim is None:
                return False
            self._victims.add(victim)
            return victim == slot

    def close(self) -> list[T]:
        """Stop handing out tasks; returns the tasks still queued."""
        with self._cond:
            self._closed = True
            left = [entry.task for queue in self._queues.values() for entry in queue]
            self._queues.clear()
            self._cond.notify_all()
            return left

    def depth(self) -> int:
        """Tasks waiting (approximate)."""
        with self._cond:
            return sum(len(queue) for queue in self._queues.values())

    # -- under the lock --------------------------------------------------------------------

    def _running_of(self, tenant: str) -> int:
        return sum(1 for ticket in self._running.values() if ticket.tenant == tenant)

    def _pick(self) -> _Entry[T] | None:
        waiting = [(key, queue) for key, queue in self._queues.items() if queue]
        if not waiting:
            return None
        top = min(key[0] for key, _ in waiting)
        candidates = [(key, queue) for key, queue in waiting if key[0] == top]
        key, queue = min(
            candidates,
            key=lambda kq: (self._running_of(kq[0][1]), self._served[kq[0][1]]),
        )
        entry = queue.popleft()
        if not queue:
            del self._queues[key]
        return entry

    def _owed(self, entry: _Entry[T]) -> bool:
        """Whether a waiting task is owed a slot someone else holds beyond their share."""
        busy = [ticket for slot, ticket in self._running.items() if slot not in self._victims]
        if len(busy) < self.slots:
            return False  # a slot is free or being freed: no need to take one
        if any(ticket.priority > entry.ticket.priority for ticket in busy):
            return True
        mine = sum(1 for ticket in busy if ticket.tenant == entry.ticket.tenant)
        counts = Counter(ticket.tenant for ticket in busy)
        return any(count > mine + 1 for count in counts.values())

    def _choose_victim(self) -> int | None:
        now = time.monotonic()
        starving = [
            entry
            for queue in self._queues.values()
            for entry in list(queue)[:1]
            if now - entry.queued_at >= PREEMPT_AFTER_S and self._owed(entry)
        ]
        if not starving:
            return None
        busy = {slot: t for slot, t in self._running.items() if slot not in self._victims}
        counts = Counter(ticket.tenant for ticket in busy.values())
        return max(busy, key=lambda s: (busy[s].priority, counts[busy[s].tenant]), default=None)
