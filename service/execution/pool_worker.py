"""The loop that runs inside each worker process of a `ProcessPool`.

Protocol over the pipe: the worker first sends `READY` once it has booted; then
- parent -> worker: ``(indices, items)`` to score in order, or ``None`` to exit;
- worker -> parent: ``(indices, results)`` for a prefix of what remains, flushed every
  few milliseconds so the parent sees progress without one message per item.

Items are scored run by run (`runs`): one item at a time for item verifiers, consecutive
items of a batch verifier together, so a verifier that gains from batching gets a
batch. Before each run the worker writes the run's start time, its length, then its
first position in the message into a shared array; after it, the position goes back to
-1. The parent reads that array to know which items are running and for how long, and
kills exactly the run that is over its time (a run of n items gets n item timeouts).

A run of one item is scored under a budget meter (`referee.verifiers.budget`): when its
verifier begins budgeted work, the worker writes the budget's seconds and its own CPU
time then, and the parent stops the worker once the item's CPU time passes the budget.
An item sent in ``spent`` is such an item's second attempt: its verifier is told so.
"""

from __future__ import annotations

import gc
import resource
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import SynchronizedArray
from typing import Any

from referee.service.execution.cpu_clock import own_cpu_s
from referee.service.execution.pipe_codec import (
    ItemsMessage,
    ResultsMessage,
    pack_results,
    unpack_items,
)
from referee.verifiers.base import ItemVerifier, item_timeout_s
from referee.verifiers.batch import score_items
from referee.verifiers.budget import Meter, metered
from referee.verifiers.builtin import default_registry
from referee.verifiers.code.runtime import sweep_leftovers
from referee.verifiers.engines import EngineSettings
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import Item, Result

FLUSH_S = 0.002
IDLE = -1.0
READY = "ready"
POSITION, LENGTH, STARTED, BUDGET, BUDGET_FROM = range(5)
"""Slots of the progress array: the run's first position (or `IDLE`), its length, its
wall-clock start, its CPU budget in seconds (0: none) and the worker's CPU time when the
budget began."""
PROGRESS = (IDLE, 0.0, 0.0, 0.0, 0.0)


def serve(
    conn: Connection, progress: SynchronizedArray[Any], memory_mb: int, engines: EngineSettings
) -> None:
    """Score batches from ``conn`` until told to stop or the pipe closes."""
    _limit_memory(memory_mb)
    registry = default_registry(engines)
    sweep_leftovers(engines.sandbox)  # this worker may replace one that was killed mid-run
    # What start-up built (modules, the registry) lives as long as the worker: moved out
    # of the collector's sight, full collections no longer rescan it for every batch
    # whose results outlive a collection (a third of a cheap verifier's time otherwise).
    gc.collect()
    gc.freeze()
    conn.send(READY)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        indices, packed, spent, item_timeout = ItemsMessage(*message)
        token = item_timeout_s.set(item_timeout)  # verifiers that pace themselves read it
        try:
            _score(conn, progress, registry, indices, unpack_items(packed), set(spent))
        finally:
            item_timeout_s.reset(token)


def _score(
    conn: Connection,
    progress: SynchronizedArray[Any],
    registry: Registry,
    indices: list[int],
    items: list[Item],
    spent: set[int],
) -> None:
    """Score ``items`` run by run (`runs`), flushing results every `FLUSH_S`. Before a
    run: its start time, its length, then its first position (a reader that sees the
    position sees the rest); after it, the position goes back to `IDLE` and the budget
    to none."""
    done_idx: list[int] = []
    done: list[Result] = []
    last_flush = time.monotonic()
    starter = _budget_starter(progress)
    meters = {False: Meter(starter, spent=False), True: Meter(starter, spent=True)}
    for start, stop in runs(items, registry):
        progress[STARTED] = time.monotonic()
        progress[LENGTH] = float(stop - start)
        progress[POSITION] = float(start)
        if stop - start == 1:
            with metered(meters[indices[start] in spent]):
                results = score_items(items[start:stop], registry)
        else:
            results = score_items(items[start:stop], registry)
        progress[BUDGET] = 0.0
        progress[POSITION] = IDLE
        done_idx += indices[start:stop]
        done += results
        now = time.monotonic()
        if now - last_flush >= FLUSH_S or stop == len(items):
            conn.send(ResultsMessage(done_idx, pack_results(done)))
            done_idx, done, last_flush = [], [], now


def _budget_starter(progress: SynchronizedArray[Any]) -> Callable[[float], None]:
    """The meters' ``start`` for the runs of one message (the run's end resets the budget
    to none): the CPU time it counts from, then the budget (a reader that sees the
    budget sees where it counts from)."""

    def start(seconds: float) -> None:
        if progress[BUDGET] == 0.0:
            progress[BUDGET_FROM] = own_cpu_s()
        progress[BUDGET] = max(progress[BUDGET], seconds)

    return start


def runs(items: list[Item], registry: Registry) -> list[tuple[int, int]]:
    """``[start, stop)`` spans of ``items`` to score in one call each: consecutive items of
    one batch verifier (any verifier that scores a batch itself, not item by item) go
    together, every other item alone, so the parent can time, and kill, each item."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(items):
        stop = start + 1
        if _batches(items[start].verifier, registry):
            while stop < len(items) and items[stop].verifier == items[start].verifier:
                stop += 1
        spans.append((start, stop))
        start = stop
    return spans


def _batches(ref: str, registry: Registry) -> bool:
    try:
        return not isinstance(registry.get(ref), ItemVerifier)
    except UnknownVerifier:
        return False


def _limit_memory(memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
