"""What both clients share: the error, the retry policy, request bodies, and the id
tagging that keeps results aligned with their items."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import httpx

from referee.verifiers.types import Item, Result

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


def checked(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 300:
        raise error_of(response)
    data: dict[str, Any] = response.json()
    return data


def chunks(handle: IO[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := handle.read(size):
        yield chunk
