"""Paying for an identical judge question once: a reply cache and in-flight coalescing.

The key (`cache_key`) covers the profile, the template version and the exact request
(rendered messages, hence rubric, prompt, response and reference, plus sampling), so a
hit is the answer that request would have been given. Only successful answers are
cached; failures are retried by the next request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from referee.verifiers.judge.prompts import utf8

T = TypeVar("T")


def cache_key(profile: str, template: str, body: dict[str, Any]) -> str:
    """A digest of everything that determines the judge's answer."""
    canonical = json.dumps([profile, template, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(utf8(canonical)).hexdigest()


class ReplyCache(Generic[T]):
    """A thread-safe LRU map of ``cache_key`` -> answer, at most ``size`` entries."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> T | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: str, value: T) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


class Flights(Generic[T]):
    """Identical questions asked at the same time on one event loop share one call.

    The shared call runs as its own task; each asker awaits it shielded, so one asker's
    cancellation (its request deadline) does not cancel the others' answer. When the last
    asker leaves before the answer, the call is cancelled. The call runs under the first
    asker's deadline.
    """

    def __init__(self) -> None:
        self._running: dict[str, _Flight[T]] = {}

    def running(self, key: str) -> bool:
        """Whether a call for ``key`` is in flight (a new asker would join it)."""
        return key in self._running

    async def share(self, key: str, start: Callable[[], Awaitable[T]]) -> T:
        flight = self._running.get(key)
        if flight is None:
            flight = _Flight(asyncio.ensure_future(start()))
            self._running[key] = flight
            flight.task.add_done_callback(lambda _: self._forget(key, flight))
        flight.waiters += 1
        try:
            return await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                flight.task.cancel()
                self._forget(key, flight)

    def _forget(self, key: str, flight: _Flight[T]) -> None:
        if self._running.get(key) is flight:
            del self._running[key]


class _Flight(Generic[T]):
    def __init__(self, task: asyncio.Future[T]) -> None:
        self.task = task
        self.waiters = 0
