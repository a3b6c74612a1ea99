"""The dynamic batcher: per model, a collector thread forms and prepares batches while a
runner thread runs the forward of the one before.

Callers (any thread, any event loop) `submit` encoded items and get a
`concurrent.futures.Future` each; async callers wrap it with `asyncio.wrap_future`, so
items from many concurrent requests land in the same batch.

1. The collector waits for a first item, then up to ``max_wait_s`` more for others, unless
   the batch is already full (``max_items`` items or ``token_budget`` tokens, a shared
   prompt counted once); takes items first in, first out, skipping cancelled ones; sorts
   the batch by length, packs it (`gpu_rm.packing`) and lets the scorer prepare it (host
   tensors, copies to the device) while the runner is still busy: host work stays off the
   critical path. At most one prepared batch waits for the runner.
2. The runner marks the items running; an item cancelled (its request went away) or past
   its deadline since it was taken is dropped here, before the forward (the batch is
   packed again without it). Then one forward.
3. A forward that runs out of device memory is split in halves and retried, down to one
   item, which then fails alone (``rm_oom``); any other failure is retried item by item,
   so one poisonous item fails only itself.

Back-pressure: at most ``max_queue`` items wait; `submit` raises `Overloaded` beyond that.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from referee.gpu_rm.encoding import Encoded
from referee.gpu_rm.errors import BatchFailed, OutOfMemory, Overloaded
from referee.gpu_rm.packing import PackedLayout, common_prefix_length, pack


class Scorer(Protocol):
    """What the batcher drives: a row of raw scores for every scored position of a packed
    row (`PackedLayout.scored_rows` order: sequence by sequence)."""

    def score_layout(self, layout: PackedLayout) -> list[list[float]]: ...


@runtime_checkable
class PreparingScorer(Scorer, Protocol):
    """A scorer that can do a batch's host work (tensors, device copies) ahead of its
    forward, on another thread than the forward of the batch before."""

    def prepare(self, layout: PackedLayout) -> Any:
        """Whatever `score_prepared` needs for ``layout``; never touches the forward."""
        ...

    def score_prepared(self, prepared: Any) -> list[list[float]]:
        """`score_layout` for what `prepare` returned."""
        ...


class DeadlineExpired(Exception):
    """The item waited in the queue past its deadline; it was never computed."""


@dataclass
class Scored:
    """One item's raw scores, a row per scored position, and how its batch went (reported
    in the item's details)."""

    rows: list[list[float]]
    batch_items: int
    shared_prefix_tokens: int

    @property
    def scores(self) -> list[float]:
        """The row of the last scored position (an item scored once: its only row)."""
        return self.rows[-1]


@dataclass
class _Pending:
    encoded: Encoded
    deadline: float | None
    future: Future[Scored] = field(default_factory=Future)


@dataclass
class BatcherStats:
    """Counters since start; ``computed_tokens`` is what the forward passes processed,
    ``forward_s`` the time the runner spent in them (host work overlapped is not in it)."""

    batches: int = 0
    items: int = 0
    dropped: int = 0
    computed_tokens: int = 0
    logical_tokens: int = 0
    forward_s: float = 0.0
    splits: int = 0


@dataclass
class _Prepared:
    batch: list[_Pending]
    layout: PackedLayout
    prepared: Any


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
        self._handoff: queue.Queue[_Prepared | None] = queue.Queue(maxsize=1)
        self._runner: threading.Thread | None = None

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
                self._runner = threading.Thread(
                    target=self._run_all, name="rm-forward", daemon=True
                )
                self._thread.start()
                self._runner.start()
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
        if self._runner is not None:
            self._runner.join(timeout=timeout_s)

    def _own(self) -> None:
        """The collector: form, pack and prepare batches; hand them to the runner."""
        try:
            while (batch := self._next_batch()) is not None:
                if batch:
                    self._handoff.put(self._prepare(batch))
        finally:
            self._handoff.put(None)

    def _prepare(self, batch: list[_Pending]) -> _Prepared:
        batch.sort(key=lambda p: len(p.encoded.ids), reverse=True)
        layout = pack([p.encoded.sequence() for p in batch])
        scorer = self._scorer
        try:
            ready = scorer.prepare(layout) if isinstance(scorer, PreparingScorer) else layout
        except Exception:  # noqa: BLE001 - the runner retries it and reports per item
            ready = None
        return _Prepared(batch, layout, ready)

    def _run_all(self) -> None:
        """The runner: forward each prepared batch, in order, until the collector ends."""
        while (job := self._handoff.get()) is not None:
            batch = self._start(job.batch)
            if len(batch) < len(job.batch):  # some left while it waited: pack without them
                job = self._prepare(batch) if batch else None
            if job is not None:
                self._run(job)

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
        """Pop items FIFO up to the caps, skipping cancelled ones. Lock held."""
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
            if head.future.cancelled():
                self.stats.dropped += 1  # the request went away: never compute it
                continue
            first_of_key.setdefault(head.encoded.share_key, list(ids))
            tokens += cost
            batch.append(head)
        return batch

    def _start(self, batch: list[_Pending]) -> list[_Pending]:
        """Mark the items running; those cancelled or past their deadline meanwhile are
        dropped (never computed) and the others returned."""
        now = time.monotonic()
        kept = []
        for pending in batch:
            if not pending.future.set_running_or_notify_cancel():
                self.stats.dropped += 1
            elif pending.deadline is not None and pending.deadline <= now:
                self.stats.dropped += 1
                pending.future.set_exception(DeadlineExpired("deadline passed while queued"))
            else:
                kept.append(pending)
        return kept

    def _run(self, job: _Prepared) -> None:
        """Forward ``job``; on failure split it (out of memory) or isolate its items."""
        try:
            self._forward(job)
        except Exception as exc:  # noqa: BLE001 - find the item that fails; spare the rest
            if len(job.batch) == 1:
                failure = OutOfMemory if out_of_memory(exc) else BatchFailed
                message = f"forward failed: {type(exc).__name__}: {exc}"
                job.batch[0].future.set_exception(failure(message))
                return
            if out_of_memory(exc):
                self.stats.splits += 1
                half = len(job.batch) // 2
                parts = [job.batch[:half], job.batch[half:]]
            else:
                parts = [[pending] for pending in job.batch]
            for part in parts:
                self._run(self._prepare(part))

    def _forward(self, job: _Prepared) -> None:
        batch, layout = job.batch, job.layout
        started = time.perf_counter()
        scorer = self._scorer
        if job.prepared is not None and isinstance(scorer, PreparingScorer):
            rows = scorer.score_prepared(job.prepared)
        else:  # nothing to prepare, or preparing failed: the scorer says why if it fails
            rows = scorer.score_layout(layout)
        self.stats.forward_s += time.perf_counter() - started
        self.stats.batches += 1
        self.stats.items += len(batch)
        self.stats.computed_tokens += layout.computed_tokens
        self.stats.logical_tokens += layout.logical_tokens
        shared = {end: unit.prefix[1] - unit.prefix[0] for unit in layout.units
                  for _, end in unit.suffixes}  # fmt: skip
        if len(rows) != sum(map(len, layout.rows)):
            raise BatchFailed(f"the scorer returned {len(rows)} rows for {layout.rows}")
        taken = 0
        for pending, scored, end in zip(batch, layout.rows, layout.ends, strict=True):
            mine = rows[taken : taken + len(scored)]
            taken += len(scored)
            pending.future.set_result(Scored(mine, len(batch), shared[end]))


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the device running out of memory (checked by name, so this module
    does not import torch: ``torch.OutOfMemoryError`` and its CUDA alias)."""
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()
