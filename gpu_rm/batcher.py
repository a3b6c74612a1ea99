"""The dynamic batcher: one owner thread per model drains a queue into packed batches.

Callers (any thread, any event loop) `submit` encoded items and get a
`concurrent.futures.Future` each; async callers wrap it with `asyncio.wrap_future`, so
items from many concurrent requests land in the same batch. The owner thread is the only
one that touches the queue's head and the model:

1. wait for a first item, then up to ``max_wait_s`` more for others, unless the batch is
   already full (``max_items`` items or ``token_budget`` tokens, a shared prompt counted once);
2. take items first in, first out; an item whose future was cancelled (its request went
   away) or whose deadline passed is dropped here, before the forward;
3. sort the batch by length, pack it (`gpu_rm.packing`) and run one forward;
4. if the forward raises, score each item alone, so one poisonous item fails only itself.

Back-pressure: at most ``max_queue`` items wait; `submit` raises `Overloaded` beyond that.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from gpu_rm.encoding import Encoded
from gpu_rm.errors import BatchFailed, Overloaded
from gpu_rm.packing import PackedLayout, TokenSequence, common_prefix_length, pack


class Scorer(Protocol):
    """What the batcher drives: S rows of K raw scores for a packed row."""

    def score_layout(self, layout: PackedLayout) -> list[list[float]]: ...


class DeadlineExpired(Exception):
    """The item waited in the queue past its deadline; it was never computed."""


@dataclass
class Scored:
    """One item's raw scores and how its batch went (reported in the item's details)."""

    scores: list[float]
    batch_items: int
    shared_prefix_tokens: int


@dataclass
class _Pending:
    encoded: Encoded
    deadline: float | None
    future: Future[Scored] = field(default_factory=Future)


@dataclass
class BatcherStats:
    """Counters since start; ``computed_tokens`` is what the forward passes processed."""

    batches: int = 0
    items: int = 0
    dropped: int = 0
    computed_tokens: int = 0
    logical_tokens: int = 0


class Batcher:
    """Thread-safe `submit`; the forward runs on the owner thread, started on first use."""

    def __init__(
        self,
        scorer: Scorer,
        token_budget: int = 16384,
        max_items: int = 256,
        max_wait_s: float = 0.005,
        max_queue: int = 8192,
    ) -> None:
        self._scorer = scorer
        self.token_budget = token_budget
        self.max_items = max_items
        self.max_wait_s = max_wait_s
        self.max_queue = max_queue
        self.stats = BatcherStats()
        self._queue: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(
        self, items: Sequence[Encoded], deadline: float | None = None
    ) -> list[Future[Scored]]:
        """Queue ``items`` (all or none); ``deadline`` is a `time.monotonic` instant.

        Raises `Overloaded` when they do not fit in the queue, RuntimeError after `close`.
        """
        pending = [_Pending(item, deadline) for item in items]
        with self._cond:
            if self._closed:
                raise RuntimeError("batcher is closed")
            if len(self._queue) + len(pending) > self.max_queue:
                raise Overloaded(
                    f"reward-model queue is full ({len(self._queue)} of {self.max_queue} items)"
                )
            self._queue.extend(pending)
            if self._thread is None:
                self._thread = threading.Thread(target=self._own, name="rm-batcher", daemon=True)
                self._thread.start()
            self._cond.notify()
        return [p.future for p in pending]

    def queue_depth(self) -> int:
        """Items waiting now (cheap; no lock: a snapshot for readiness and metrics)."""
        return len(self._queue)

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop after the current batch; items still queued fail with RuntimeError."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def _own(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            if batch:
                self._run(batch)

    def _next_batch(self) -> list[_Pending] | None:
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                for p in self._queue:
                    if p.future.set_running_or_notify_cancel():
                        p.future.set_exception(RuntimeError("batcher closed"))
                self._queue.clear()
                return None
            until = time.monotonic() + self.max_wait_s
            while len(self._queue) < self.max_items and not self._closed:
                left = until - time.monotonic()
                if left <= 0 or self._queued_tokens() >= self.token_budget:
                    break
                self._cond.wait(left)
            return self._take()

    def _queued_tokens(self) -> int:
        return sum(len(p.encoded.ids) for p in self._queue)

    def _take(self) -> list[_Pending]:
        """Pop items FIFO up to the caps; drop cancelled and expired ones. Lock held."""
        now = time.monotonic()
        batch: list[_Pending] = []
        first_of_key: dict[str, list[int]] = {}
        tokens = 0
        while self._queue and len(batch) < self.max_items:
            head = self._queue[0]
            ids = head.encoded.ids
            shared = first_of_key.get(head.encoded.share_key)
            cost = len(ids) - (common_prefix_length([shared, ids]) if shared else 0)
            if batch and tokens + cost > self.token_budget:
                break
            self._queue.popleft()
            if not head.future.set_running_or_notify_cancel():
                self.stats.dropped += 1  # the request went away: never compute it
                continue
            if head.deadline is not None and head.deadline <= now:
                self.stats.dropped += 1
                head.future.set_exception(DeadlineExpired("deadline passed while queued"))
                continue
            first_of_key.setdefault(head.encoded.share_key, list(ids))
            tokens += cost
            batch.append(head)
        return batch

    def _run(self, batch: list[_Pending]) -> None:
        batch.sort(key=lambda p: len(p.encoded.ids), reverse=True)
        try:
            self._forward(batch)
        except Exception as exc:  # noqa: BLE001 - find the item that fails; spare the rest
            if len(batch) == 1:
                message = f"forward failed: {type(exc).__name__}: {exc}"
                batch[0].future.set_exception(BatchFailed(message))
                return
            for pending in batch:
                self._run([pending])

    def _forward(self, batch: list[_Pending]) -> None:
        layout = pack([TokenSequence(p.encoded.ids, p.encoded.share_key) for p in batch])
        rows = self._scorer.score_layout(layout)
        self.stats.batches += 1
        self.stats.items += len(batch)
        self.stats.computed_tokens += layout.computed_tokens
        self.stats.logical_tokens += layout.logical_tokens
        shared = {end: unit.prefix[1] - unit.prefix[0] for unit in layout.units
                  for _, end in unit.suffixes}  # fmt: skip
        for pending, row, end in zip(batch, rows, layout.ends, strict=True):
            pending.future.set_result(Scored(row, len(batch), shared[end]))
