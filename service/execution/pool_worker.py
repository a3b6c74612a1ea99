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
"""

from __future__ import annotations

import gc
import resource
import time
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import SynchronizedArray
from typing import Any

from referee.service.execution.pipe_codec import (
    ItemsMessage,
    ResultsMessage,
    pack_results,
    unpack_items,
)
from referee.verifiers.base import ItemVerifier
from referee.verifiers.batch import score_items
from referee.verifiers.builtin import default_registry
from referee.verifiers.code.runtime import sweep_leftovers
from referee.verifiers.engines import EngineSettings
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import Item, Result

FLUSH_S = 0.002
IDLE = -1.0
READY = "ready"


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
        indices, packed = ItemsMessage(*message)
        _score(conn, progress, registry, indices, unpack_items(packed))


def _score(
    conn: Connection,
    progress: SynchronizedArray[Any],
    registry: Registry,
    indices: list[int],
    items: list[Item],
) -> None:
    """Score ``items`` run by run (`runs`), flushing results every `FLUSH_S`. Before a
    run: its start time, its length, then its first position (a reader that sees the
    position sees the rest); after it, the position goes back to `IDLE`."""
    done_idx: list[int] = []
    done: list[Result] = []
    last_flush = time.monotonic()
    for start, stop in runs(items, registry):
        progress[2] = time.monotonic()
        progress[1] = float(stop - start)
        progress[0] = float(start)
        results = score_items(items[start:stop], registry)
        progress[0] = IDLE
        done_idx += indices[start:stop]
        done += results
        now = time.monotonic()
        if now - last_flush >= FLUSH_S or stop == len(items):
            conn.send(ResultsMessage(done_idx, pack_results(done)))
            done_idx, done, last_flush = [], [], now


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
