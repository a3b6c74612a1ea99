"""The asynchronous client, which merges concurrent single-item calls into batches, and
`BatchingClient`, the same batching for threads on an event loop of its own."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from referee.sandbox.sessions import SessionKind
from referee.service.client.sessions import AsyncSession
from referee.service.client.wire import (
    RetryPolicy,
    checked,
    decode_results,
    request_body,
    retryable,
    tag,
    untag,
)
from referee.verifiers.base import echo
from referee.verifiers.types import Item, Result, Status


@dataclass
class _Waiter:
    item: Item
    future: asyncio.Future[Result]
    deadline: float | None


@dataclass
class _Batch:
    waiters: list[_Waiter] = field(default_factory=list)
    sent: bool = False


class AsyncClient:
    """Async twin of `Client`, plus `score_one` batching. Use from one event loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 600,
        retry: RetryPolicy | None = None,
        linger_s: float = 0.005,
        max_batch: int = 1024,
        max_connections: int = 64,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout_s, limits=limits
        )
        self._retry = retry or RetryPolicy()
        self._linger = linger_s
        self._max_batch = max_batch
        self._open: _Batch | None = None
        self._counter = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        """Results for ``items``, in order, from one request (retried as needed)."""
        deadline = None if deadline_s is None else time.monotonic() + deadline_s
        tagged = [self._tag(item) for item in items]
        results = await self._send(tagged, deadline)
        return [self._untag(result, item) for result, item in zip(results, items, strict=True)]

    async def score_one(self, item: Item, deadline_s: float | None = None) -> Result:
        """One item's result; concurrent calls share requests. Past ``deadline_s`` the
        result is ``timeout`` (the batch it rode in may still finish for the others)."""
        deadline = None if deadline_s is None else time.monotonic() + deadline_s
        waiter = _Waiter(self._tag(item), asyncio.get_running_loop().create_future(), deadline)
        self._join(waiter)
        try:
            result = await asyncio.wait_for(asyncio.shield(waiter.future), deadline_s)
        except TimeoutError:
            message = "no answer before the call's deadline"
            result = echo(Result.failed(Status.TIMEOUT, "deadline", message), waiter.item)
        return self._untag(result, item)

    def session(self, kind: SessionKind | str, **options: Any) -> AsyncSession:
        """A stateful session (``async with client.session("bash") as s: await s.run(...)``);
        ``options`` as ``POST /v1/sessions`` takes them."""
        return AsyncSession(self._http, kind, **options)

    async def aclose(self) -> None:
        if self._open is not None:
            self._flush(self._open)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def _join(self, waiter: _Waiter) -> None:
        if self._open is None:
            batch = self._open = _Batch()
            asyncio.get_running_loop().call_later(self._linger, self._flush, batch)
        self._open.waiters.append(waiter)
        if len(self._open.waiters) >= self._max_batch:
            self._flush(self._open)

    def _flush(self, batch: _Batch) -> None:
        if self._open is batch:
            self._open = None
        if batch.waiters and not batch.sent:
            batch.sent = True
            task = asyncio.get_running_loop().create_task(self._deliver(batch.waiters))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _deliver(self, waiters: list[_Waiter]) -> None:
        deadlines = [w.deadline for w in waiters]
        deadline = None if None in deadlines else max(d for d in deadlines if d is not None)
        try:
            results = await self._send([w.item for w in waiters], deadline)
        except Exception as exc:  # noqa: BLE001 - every waiter must hear about it
            for waiter in waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(exc)
            return
        for waiter, result in zip(waiters, results, strict=True):
            if not waiter.future.done():
                waiter.future.set_result(result)

    async def _send(self, items: list[Item], deadline: float | None) -> list[Result]:
        for attempt in range(self._retry.attempts):
            remaining = None if deadline is None else deadline - time.monotonic()
            last = attempt == self._retry.attempts - 1 or (remaining is not None and remaining <= 0)
            try:
                response = await self._http.post("/v1/score", json=request_body(items, remaining))
            except httpx.TransportError:
                if last:
                    raise
                await asyncio.sleep(self._retry.delay(attempt, None))
                continue
            if not retryable(response) or last:
                return decode_results(items, checked(response))
            await asyncio.sleep(self._retry.delay(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable")

    def _tag(self, item: Item) -> Item:
        self._counter += 1
        return tag(item, str(self._counter))

    @staticmethod
    def _untag(result: Result, original: Item) -> Result:
        return untag(result, original)


_LOOP_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str | None], AsyncClient]
] = weakref.WeakKeyDictionary()


def loop_client(base_url: str, api_key: str | None = None) -> AsyncClient:
    """The shared `AsyncClient` for ``base_url`` on the running event loop.

    Clients are bound to the loop they were made on, and trainer hooks may be called from
    loops of their own (TRL's reward loop, verl's async manager), so there is one per
    loop; keyed by the loop object itself, so a closed loop's client goes with it.
    """
    clients = _LOOP_CLIENTS.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key)
    if key not in clients:
        clients[key] = AsyncClient(base_url, api_key)
    return clients[key]


class BatchingClient:
    """A thread-safe, synchronous face on `AsyncClient.score_one` (its own event loop).

    Many threads calling `score_one` at once share HTTP requests, which is what per-sample
    trainer hooks (verl's ``compute_score``, OpenRLHF's remote reward) need.
    """

    def __init__(self, base_url: str, api_key: str | None = None, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

        async def build() -> AsyncClient:
            return AsyncClient(base_url, api_key, **kwargs)

        self._client = asyncio.run_coroutine_threadsafe(build(), self._loop).result()

    def score_one(self, item: Item, deadline_s: float | None = None) -> Result:
        coroutine = self._client.score_one(item, deadline_s)
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        coroutine = self._client.score(items, deadline_s)
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._client.aclose(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
