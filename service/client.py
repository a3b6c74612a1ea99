"""Clients for a referee server: sync and async, pooled, retrying, and batching.

- `Client` (sync) and `AsyncClient` send one ``/v1/score`` request per call, retrying
  connection errors, 429 and 5xx with exponential backoff and jitter (``Retry-After`` is
  honoured); other 4xx are raised at once as `RefereeError`.
- `AsyncClient.score_one` merges concurrent single-item calls into one request: the
  first call opens a short linger window, calls arriving inside it join the batch, and
  each caller gets its own result back by position, checked against the item's id.
- `BatchingClient` gives threads (verl, OpenRLHF workers) the same batching through an
  event loop of its own.

Results are never misaligned: every item sent carries an id (a private one when the
caller gave none), and a response whose ids do not match the request is an error.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

from referee.verifiers.base import echo
from referee.verifiers.types import Item, Result, Status

PRIVATE_ID = "\x00referee-client:"


class RefereeError(RuntimeError):
    """The server answered with an error body; ``code`` is its stable error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits up to base * 2^n, capped."""

    attempts: int = 6
    base_s: float = 0.1
    cap_s: float = 5.0

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None and retry_after.isdigit():
            return min(float(retry_after), self.cap_s * 4)
        return random.uniform(0, min(self.cap_s, self.base_s * 2**attempt))


def retryable(response: httpx.Response) -> bool:
    return response.status_code == 429 or response.status_code >= 500


def request_body(items: Sequence[Item], deadline_s: float | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "items": [item.model_dump(mode="json", exclude_none=True) for item in items]
    }
    if deadline_s is not None:
        body["deadline_s"] = max(deadline_s, 0.001)
    return body


def decode_results(items: Sequence[Item], data: dict[str, Any]) -> list[Result]:
    """Results for ``items``, in order; raises if the server's answer does not line up."""
    raw = data.get("results")
    if not isinstance(raw, list) or len(raw) != len(items):
        raise RefereeError(502, "misaligned", "the server returned a different number of results")
    results = [Result.model_validate(r) for r in raw]
    for item, result in zip(items, results, strict=True):
        if result.id != item.id:
            raise RefereeError(502, "misaligned", f"result id {result.id!r} != item id {item.id!r}")
    return results


def tag(item: Item, serial: str) -> Item:
    """The item with a private id when it has none, so alignment can be checked."""
    if item.id is not None:
        return item
    return item.model_copy(update={"id": f"{PRIVATE_ID}{serial}"})


def untag(result: Result, original: Item) -> Result:
    """Undo `tag` on the result: the caller's item had no id, so neither has its result."""
    if original.id is None and (result.id or "").startswith(PRIVATE_ID):
        result.id = None
    return result


def error_of(response: httpx.Response) -> RefereeError:
    try:
        error = response.json()["error"]
        return RefereeError(response.status_code, str(error["code"]), str(error["message"]))
    except (ValueError, KeyError, TypeError):
        return RefereeError(response.status_code, "http_error", response.text[:500])


class Client:
    """One pooled HTTP connection to a referee server. Not thread-safe; one per thread."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 600,
        retry: RetryPolicy | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)
        self._retry = retry or RetryPolicy()

    def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        """Results for ``items``, in order; raises `RefereeError` on a request-level error."""
        tagged = [tag(item, f"{index}") for index, item in enumerate(items)]
        data = self._send("POST", "/v1/score", json=request_body(tagged, deadline_s))
        results = decode_results(tagged, data)
        return [untag(result, item) for result, item in zip(results, items, strict=True)]

    def submit_job(self, path: Path) -> str:
        """Upload a JSONL file of items as a batch job (streamed); returns the job id."""
        with path.open("rb") as handle:
            response = self._http.post(
                "/v1/jobs",
                content=_chunks(handle),
                headers={"Content-Type": "application/x-ndjson"},
            )
        return str(_ok(response)["id"])

    def job(self, job_id: str) -> dict[str, Any]:
        """The job's state, counts by status and progress."""
        return self._send("GET", f"/v1/jobs/{job_id}")

    def job_results(self, job_id: str, sink: IO[bytes]) -> None:
        """Write the finished job's results (JSONL, input order) to ``sink``."""
        with self._http.stream("GET", f"/v1/jobs/{job_id}/results") as response:
            if response.status_code != 200:
                response.read()
                raise error_of(response)
            for chunk in response.iter_bytes():
                sink.write(chunk)

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        return self._send("DELETE", f"/v1/jobs/{job_id}")

    def wait_job(self, job_id: str, poll_s: float = 0.5, timeout_s: float = 3600) -> dict[str, Any]:
        """Poll until the job is done or cancelled; returns its final status."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.job(job_id)
            if status["state"] in ("done", "cancelled") or time.monotonic() > deadline:
                return status
            time.sleep(poll_s)

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        for attempt in range(self._retry.attempts):
            last = attempt == self._retry.attempts - 1
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if last:
                    raise
                time.sleep(self._retry.delay(attempt, None))
                continue
            if not retryable(response) or last:
                return _ok(response)
            time.sleep(self._retry.delay(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _ok(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 300:
        raise error_of(response)
    data: dict[str, Any] = response.json()
    return data


def _chunks(handle: IO[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := handle.read(size):
        yield chunk


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
                return decode_results(items, _ok(response))
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
