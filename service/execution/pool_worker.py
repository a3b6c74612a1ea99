"""The loop that runs inside each worker process of a `ProcessPool`.

Protocol over the pipe: the worker first sends `READY` once it has booted; then
- parent -> worker: ``(indices, items)`` to score in order, or ``None`` to exit;
- worker -> parent: ``(indices, results)`` for a prefix of what remains, flushed every
  few milliseconds so the parent sees progress without one message per item.

Before each item the worker writes the item's start time and then its index into a
shared array; after it, the index goes back to -1. The parent reads that array to know
which item is running and for how long, so it can kill exactly the one that hangs.
"""

from __future__ import annotations

import resource
import time
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import SynchronizedArray
from typing import Any

from referee.service.execution.pipe_codec import pack_results, unpack_items
from referee.verifiers.batch import score_items
from referee.verifiers.builtin import default_registry
from referee.verifiers.code.runtime import sweep_leftovers
from referee.verifiers.types import Item, Result

FLUSH_S = 0.002
IDLE = -1.0
READY = "ready"


def serve(conn: Connection, progress: SynchronizedArray[Any], memory_mb: int) -> None:
    """Score batches from ``conn`` until told to stop or the pipe closes."""
    _limit_memory(memory_mb)
    registry = default_registry()
    sweep_leftovers()  # this worker may replace one that was killed mid-run
    conn.send(READY)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        indices, packed = message
        _score(conn, progress, registry, indices, unpack_items(packed))


def _score(
    conn: Connection,
    progress: SynchronizedArray[Any],
    registry: Any,
    indices: list[int],
    items: list[Item],
) -> None:
    done_idx: list[int] = []
    done: list[Result] = []
    last_flush = time.monotonic()
    for position, (index, item) in enumerate(zip(indices, items, strict=True)):
        # Start time first, then index: a reader that sees the new index sees its time.
        progress[1] = time.monotonic()
        progress[0] = float(index)
        result = score_items([item], registry)[0]
        progress[0] = IDLE
        done_idx.append(index)
        done.append(result)
        now = time.monotonic()
        if now - last_flush >= FLUSH_S or position == len(items) - 1:
            conn.send((done_idx, pack_results(done)))
            done_idx, done, last_flush = [], [], now


def _limit_memory(memory_mb: int) -> None:
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
