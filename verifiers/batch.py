"""Score a mixed batch of items in this process: resolve, call, and guard each verifier.

This is the one function every executor ends up calling, in a worker process, a Celery
task or a test. It guarantees one result per item in input order, whatever the
verifiers do: an unknown verifier is ``invalid``, a verifier that raises or returns the
wrong number of results makes its items ``error``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from itertools import groupby

from referee.verifiers.base import AsyncVerifier, Verifier, echo
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import Item, Result, Status


def score_items(items: Sequence[Item], registry: Registry) -> list[Result]:
    """Score ``items`` with the verifiers they name; one result per item, in order.

    Consecutive items naming the same verifier go to it as one batch, so callers that
    want batching (a GRPO group, a GPU batch) should keep such items together.
    """
    results: list[Result] = []
    for ref, run in groupby(items, key=lambda item: item.verifier):
        batch = list(run)
        try:
            verifier = registry.get(ref, internal=True)
        except UnknownVerifier as exc:
            results.extend(
                echo(Result.failed(Status.INVALID, "unknown_verifier", str(exc)), item)
                for item in batch
            )
            continue
        results.extend(score_with(verifier, batch))
    return results


async def ascore_items(items: Sequence[Item], registry: Registry) -> list[Result]:
    """`score_items` for an event loop: `AsyncVerifier`s are awaited on the caller's loop
    (they share its HTTP clients); the others run in a thread so the loop never blocks."""
    results: list[Result] = []
    for ref, run in groupby(items, key=lambda item: item.verifier):
        batch = list(run)
        try:
            verifier = registry.get(ref, internal=True)
        except UnknownVerifier:
            results.extend(score_items(batch, registry))
            continue
        if isinstance(verifier, AsyncVerifier):
            results.extend(await ascore_with(verifier, batch))
        else:
            results.extend(await asyncio.to_thread(score_with, verifier, batch))
    return results


async def ascore_with(verifier: AsyncVerifier, batch: Sequence[Item]) -> list[Result]:
    """Await ``verifier.ascore`` with the same guarantees as `score_with`."""
    start = time.perf_counter()
    try:
        results = await verifier.ascore(batch)
        if len(results) != len(batch):
            raise RuntimeError(f"returned {len(results)} results for {len(batch)} items")
    except Exception as exc:  # noqa: BLE001 - third-party verifiers may fail any way
        return _crashed(verifier, batch, exc, start)
    return _stamp(verifier, batch, results)


def score_with(verifier: Verifier, batch: Sequence[Item]) -> list[Result]:
    """Call ``verifier.score`` on ``batch``, turning a crash or a short answer into errors."""
    start = time.perf_counter()
    try:
        results = verifier.score(batch)
        if len(results) != len(batch):
            raise RuntimeError(f"returned {len(results)} results for {len(batch)} items")
    except Exception as exc:  # noqa: BLE001 - third-party verifiers may fail any way
        return _crashed(verifier, batch, exc, start)
    return _stamp(verifier, batch, results)


def _stamp(verifier: Verifier, batch: Sequence[Item], results: list[Result]) -> list[Result]:
    ref = f"{verifier.name}@{verifier.version}"
    for item, result in zip(batch, results, strict=True):
        if result.verifier is None:
            result.verifier = ref
        if result.id != item.id or result.metadata is not item.metadata:
            echo(result, item)
    return results


def _crashed(
    verifier: Verifier, batch: Sequence[Item], exc: Exception, start: float
) -> list[Result]:
    ref = f"{verifier.name}@{verifier.version}"
    elapsed = (time.perf_counter() - start) * 1000.0 / max(len(batch), 1)
    failed = []
    for item in batch:
        message = f"{ref}: {type(exc).__name__}: {exc}"
        result = Result.failed(Status.ERROR, "verifier_failed", message)
        result.verifier, result.elapsed_ms = ref, elapsed
        failed.append(echo(result, item))
    return failed
