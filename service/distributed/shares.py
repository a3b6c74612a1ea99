"""Each key's share of a distributed pool: how many of its chunks may be out at once.

The broker's queues are first come, first served. If the gateway published every chunk
as it came, one key's flood would stand in front of everyone else's work. So a chunk is
published only while its key has fewer than its share out (published, not yet
answered): the pool's capacity (its workers' processes) split evenly among the keys
with work out or waiting, at least one each. Workers take twice as many tasks as they
have processes (`service.distributed.worker`), so whatever one key fills, a newcomer's chunk finds
a free thread at once, and the worker's fair queue takes a process back for it.

One gateway's view: replicas of the gateway each apply the shares to what they publish.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter


class Shares:
    """Outstanding chunks per key of one pool. One event loop; not thread-safe."""

    def __init__(self) -> None:
        self._out: Counter[str] = Counter()
        self._waiting: Counter[str] = Counter()
        self._changed = asyncio.Condition()

    def share(self, tenant: str, capacity: int) -> int:
        """How many chunks ``tenant`` may have out now."""
        active = {key for key, n in (self._out + self._waiting).items() if n > 0} | {tenant}
        return max(1, capacity // len(active))

    async def acquire(self, tenant: str, capacity: int | None, deadline: float) -> bool:
        """Wait until ``tenant`` may publish one more chunk; False when ``deadline``
        (monotonic) passes first. ``capacity`` None: unknown, so no limit."""
        async with self._changed:
            self._waiting[tenant] += 1
            try:
                while capacity is not None and self._out[tenant] >= self.share(tenant, capacity):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    try:
                        await asyncio.wait_for(self._changed.wait(), remaining)
                    except TimeoutError:
                        return False
                self._out[tenant] += 1
                return True
            finally:
                self._waiting[tenant] -= 1
                self._changed.notify_all()

    async def release(self, tenant: str) -> None:
        """One of ``tenant``'s chunks was answered (or given up on)."""
        async with self._changed:
            self._out[tenant] -= 1
            self._changed.notify_all()

    def out(self, tenant: str) -> int:
        """Chunks of ``tenant`` out now."""
        return self._out[tenant]
