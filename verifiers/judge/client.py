"""The HTTP side of a judge profile: one pooled async client, a concurrency limit, retries.
It posts chat completions (`ProfileClient.complete`) and embeddings (`ProfileClient.embed`).

One `ProfileClient` per profile and event loop (its connection pool and its concurrency
slots belong to the loop that first uses them). Every call runs under the
item's deadline: waiting for a free slot, each attempt (cut to ``min(profile.timeout_s,
time left)``) and each backoff sleep. Retried: connection errors, a call that exceeded
``profile.timeout_s``, 429 (waiting at least ``Retry-After``) and 5xx, with exponential
backoff and full jitter; never other 4xx. A wait that would pass the deadline is not
started: the call fails at once with the last error, so an outage becomes ``error``
within the deadline instead of a hung request. The deadline itself is ``timeout``.
A circuit breaker does the same for items still queued when the endpoint is down: after
``breaker_failures`` consecutive retryable failures other than 429, calls fail at once
for ``breaker_cooldown_s``.

The HTTP itself is `verifiers.judge.transport`: a small keep-alive HTTP/1.1 client, or
httpx when the environment routes the endpoint through a proxy.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from referee.verifiers.base import ItemError, ItemTimeout
from referee.verifiers.judge.logprobs import TokenLogprob, parse_tokens
from referee.verifiers.judge.profiles import JudgeProfile
from referee.verifiers.judge.prompts import utf8
from referee.verifiers.judge.transport import Response, TransportError, UnsendableRequest, open_pool

RETRYABLE_STATUS = frozenset({408, 429})
T = TypeVar("T")


@dataclass(frozen=True)
class Choice:
    """One sampled reply: its text and, when asked for, its tokens with alternatives."""

    content: str
    tokens: list[TokenLogprob] | None
    finish_reason: str | None = None
    """``stop`` when the judge ended its reply itself; ``length`` when ``max_tokens`` cut it."""


@dataclass(frozen=True)
class Completion:
    """A successful chat completion; token counts as reported by the endpoint."""

    choices: tuple[Choice, ...]
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Embeddings:
    """A successful embeddings answer: one vector per input, in input order."""

    vectors: tuple[tuple[float, ...], ...]
    prompt_tokens: int


class _Retryable(Exception):
    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class ProfileClient:
    """Calls ``POST {base_url}/chat/completions`` for one profile. Use on one event loop."""

    def __init__(self, name: str, profile: JudgeProfile, rng: random.Random | None = None):
        self.name = name
        self.profile = profile
        self._rng = rng or random.Random()
        self._pool = open_pool(profile.base_url, profile.connect_timeout_s, profile.concurrency)
        self._slots = asyncio.Semaphore(profile.concurrency)
        self.closed = False
        self.verdicts = 0
        """Replies of this profile that parsed as verdicts: a judge that gave some works."""
        self.cut = 0
        """Questions of this profile left without a verdict with a reply ``max_tokens`` cut."""
        self._failures = 0
        self._open_until = 0.0
        self._last_failure = ("judge_unreachable", "")

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._pool.aclose()
        self.closed = True

    async def complete(self, body: dict[str, Any], deadline: float) -> Completion:
        """Post ``body`` to ``chat/completions``; retry what is retryable while
        ``deadline`` (``time.monotonic``) allows. Raises `ItemError` (code
        ``judge_unreachable``, ``judge_timeout``, ``judge_rate_limited``, ``judge_http_5xx``,
        ``judge_http_4xx``, ``judge_bad_request``, ``judge_bad_response``) or `ItemTimeout`."""
        return await self._call("chat/completions", body, deadline, _completion)

    async def embed(self, texts: list[str], deadline: float) -> Embeddings:
        """The profile model's embedding of each of ``texts`` (``POST embeddings``), with
        the same retries, circuit and errors as `complete`."""
        body = {"model": self.profile.model, "input": texts}
        embeddings = await self._call("embeddings", body, deadline, _embeddings)
        if len(embeddings.vectors) != len(texts):
            message = f"{len(embeddings.vectors)} embeddings for {len(texts)} texts"
            raise ItemError("judge_bad_response", f"{self.name}: {message}")
        return embeddings

    async def _call(
        self, path: str, body: dict[str, Any], deadline: float, decode: Callable[[Response], T]
    ) -> T:
        attempt = 0
        while True:
            try:
                completion = await self._attempt(path, body, deadline, decode)
            except _Retryable as exc:
                self._trip(exc)
                if attempt >= self.profile.retries:
                    raise ItemError(exc.code, f"{self.name}: {exc.message}") from None
                wait = self._backoff(attempt, exc.retry_after)
                if wait >= deadline - time.monotonic():
                    message = f"{self.name}: {exc.message} (no time left to retry)"
                    raise ItemError(exc.code, message) from None
                await asyncio.sleep(wait)
                attempt += 1
            else:
                self._failures, self._open_until = 0, 0.0
                return completion

    def _trip(self, exc: _Retryable) -> None:
        if exc.code == "judge_rate_limited":
            return  # a 429 says "slower", not "down": Retry-After paces it instead
        self._failures += 1
        self._last_failure = (exc.code, exc.message)
        if self._failures >= self.profile.breaker_failures:
            self._open_until = time.monotonic() + self.profile.breaker_cooldown_s

    def _check_circuit(self) -> None:
        if time.monotonic() < self._open_until:
            code, message = self._last_failure
            raise ItemError(
                code, f"{self.name}: circuit open after {self._failures} failures: {message}"
            )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cap = min(self.profile.backoff_max_s, self.profile.backoff_s * 2**attempt)
        jittered = self._rng.uniform(0, cap)
        return max(jittered, retry_after) if retry_after is not None else jittered

    async def _attempt(
        self, path: str, body: dict[str, Any], deadline: float, decode: Callable[[Response], T]
    ) -> T:
        self._check_circuit()
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
                await self._slots.acquire()
        except TimeoutError:
            raise ItemTimeout(f"{self.name}: deadline passed waiting for a judge slot") from None
        try:
            self._check_circuit()  # it may have opened while this call queued
            left = deadline - time.monotonic()
            limit = min(self.profile.timeout_s, left)
            if limit <= 0:
                raise ItemTimeout(f"{self.name}: deadline passed before the judge call")
            try:
                async with asyncio.timeout(limit):
                    response = await self._pool.post(path, _encode(body), self._headers())
            except TimeoutError:
                if limit < self.profile.timeout_s:
                    raise ItemTimeout(
                        f"{self.name}: deadline passed waiting for the judge"
                    ) from None
                raise _Retryable("judge_timeout", f"no reply within {limit:g} s") from None
            except TransportError as exc:
                raise _Retryable("judge_unreachable", str(exc)) from None
            except UnsendableRequest as exc:
                raise ItemError("judge_bad_request", f"{self.name}: {exc}") from None
        finally:
            self._slots.release()
        return decode(response)

    def _headers(self) -> dict[str, str]:
        key = self.profile.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}


def _encode(body: dict[str, Any]) -> bytes:
    return utf8(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def _completion(response: Response) -> Completion:
    _raise_for_status(response)
    try:
        data = json.loads(response.body)
        choices = tuple(
            Choice(
                content=choice["message"].get("content") or "",
                tokens=parse_tokens(choice.get("logprobs")),
                finish_reason=choice.get("finish_reason"),
            )
            for choice in data["choices"]
        )
        usage = data.get("usage") or {}
        return Completion(
            choices=choices,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Retryable("judge_bad_response", f"not a chat completion: {exc!r}") from None


def _embeddings(response: Response) -> Embeddings:
    _raise_for_status(response)
    try:
        data = json.loads(response.body)
        ordered = sorted(data["data"], key=lambda entry: int(entry["index"]))
        vectors = tuple(tuple(float(x) for x in entry["embedding"]) for entry in ordered)
        usage = data.get("usage") or {}
        return Embeddings(vectors, prompt_tokens=int(usage.get("prompt_tokens") or 0))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Retryable("judge_bad_response", f"not an embeddings answer: {exc!r}") from None


def _raise_for_status(response: Response) -> None:
    status = response.status
    if status == 429 or status in RETRYABLE_STATUS:
        raise _Retryable(
            "judge_rate_limited", f"HTTP {status}", retry_after(response.headers.get("retry-after"))
        )
    if status >= 500:
        raise _Retryable(
            "judge_http_5xx", f"HTTP {status}", retry_after(response.headers.get("retry-after"))
        )
    if status >= 400:
        text = response.body[:300].decode(errors="replace")
        error = ItemError("judge_http_4xx", f"HTTP {status}: {text}")
        # The same request gets the same answer (a prompt past the judge's context, a
        # model or key the endpoint does not know): a trainer that retried it would
        # loop; the message says what the endpoint objected to.
        error.retryable = False
        raise error


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
