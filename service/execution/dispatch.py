"""Hand a request's items to the executor, pool by pool, and put the results back in order.

The one code path for both executors and for every entry point (HTTP, CLI, jobs): items
are checked here for what can be checked cheaply (known verifier, field sizes), grouped
by the pool of their verifier, run concurrently per pool under one deadline, and
reassembled in input order with group statistics.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from referee.service.execution.executor import Executor
from referee.service.execution.fair_queue import ANONYMOUS, Ticket
from referee.service.http.errors import Overloaded
from referee.service.metrics import Metrics
from referee.service.preflight import Problem
from referee.service.settings import Settings
from referee.verifiers.base import Observable, Verifier, echo
from referee.verifiers.groups import summarize_groups
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import NOT_CONFIGURED, GroupStats, Item, Pool, Result, Status


@dataclass(frozen=True)
class Budget:
    """Time limits of one request: a monotonic ``deadline`` and a per-item hard limit,
    and whose work it is (``ticket``: tenant and priority, for the pools' fair queues)."""

    deadline: float
    item_timeout: float
    ticket: Ticket = ANONYMOUS


class Dispatcher:
    """Owns the route from items to results. Safe to share across concurrent requests."""

    def __init__(
        self, settings: Settings, registry: Registry, executor: Executor, metrics: Metrics
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.executor = executor
        self.metrics = metrics
        self._in_flight = 0
        self.problems: list[Problem] = []
        """What the start-up check found (`service.preflight`); see `disable`."""
        self._disabled: dict[Pool | str, Problem] = {}

    def disable(self, problems: list[Problem]) -> None:
        """Record the start-up check's findings: from now on, items of a pool or verifier
        a problem names are answered at once with ``not_configured``."""
        self.problems = list(problems)
        self._disabled = {}
        for problem in problems:
            if problem.pool is not None:
                self._disabled[problem.pool] = problem
            if problem.verifier is not None:
                self._disabled[problem.verifier] = problem

    def budget(
        self,
        deadline_s: float | None,
        item_timeout_s: float | None,
        ticket: Ticket = ANONYMOUS,
    ) -> Budget:
        """Clamp a client's requested limits to the server's."""
        s = self.settings
        total = min(deadline_s or s.default_deadline_s, s.max_deadline_s)
        per_item = min(item_timeout_s or s.item_timeout_s, s.item_timeout_s)
        return Budget(deadline=time.monotonic() + total, item_timeout=per_item, ticket=ticket)

    async def score(
        self, items: list[Item], budget: Budget, *, internal: bool = False
    ) -> list[Result]:
        """One result per item, in input order. Raises `Overloaded` when the server is full.
        ``internal``: the service's own items, which may name internal verifiers (a
        client's never may: to them such a verifier is unknown)."""
        self._admit(len(items))
        try:
            results = await self._score(items, budget, internal)
        finally:
            self._in_flight -= len(items)
        self.metrics.observe_results(results)
        return results

    def groups(
        self, items: list[Item], results: list[Result], pass_threshold: float
    ) -> dict[str, GroupStats]:
        return summarize_groups(items, results, pass_threshold)

    def _admit(self, count: int) -> None:
        limit = self.settings.max_pending_items
        if self._in_flight and self._in_flight + count > limit:
            raise Overloaded(
                f"{self._in_flight} items are already being scored (limit {limit}); retry later"
            )
        self._in_flight += count

    async def _score(self, items: list[Item], budget: Budget, internal: bool) -> list[Result]:
        results: list[Result | None] = [None] * len(items)
        by_pool: dict[Pool, list[int]] = defaultdict(list)
        used: dict[int, Verifier] = {}
        for index, item in enumerate(items):
            checked = self._precheck(index, item, internal)
            if isinstance(checked, Result):
                results[index] = checked
            else:
                by_pool[checked.pool].append(index)
                used[id(checked)] = checked
        self._refuse_if_saturated(used.values())
        await self.executor.check_capacity(set(by_pool))
        runs = [
            self.executor.run(
                pool,
                [items[i] for i in indices],
                budget.item_timeout,
                budget.deadline,
                budget.ticket,
            )
            for pool, indices in by_pool.items()
        ]
        for indices, pool_results in zip(
            by_pool.values(), await asyncio.gather(*runs), strict=True
        ):
            for index, result in zip(indices, pool_results, strict=True):
                results[index] = result
        return [r for r in results if r is not None]

    @staticmethod
    def _refuse_if_saturated(verifiers: Iterable[Verifier]) -> None:
        """429 now rather than accepting items a full verifier queue would fail."""
        for verifier in verifiers:
            if isinstance(verifier, Observable) and verifier.saturated():
                raise Overloaded(f"the {verifier.name} verifier's queue is full; retry later")

    def _precheck(self, index: int, item: Item, internal: bool) -> Verifier | Result:
        """The item's verifier, or a result for what is wrong without running anything:
        ``invalid`` (unknown verifier, an oversized field) or ``not_configured``."""
        try:
            verifier = self.registry.get(item.verifier, internal=internal)
        except UnknownVerifier as exc:
            return echo(Result.failed(Status.INVALID, "unknown_verifier", str(exc)), item)
        problem = self._disabled.get(verifier.pool) or self._disabled.get(verifier.name)
        if problem is not None:
            return echo(Result.failed(Status.ERROR, NOT_CONFIGURED, problem.message), item)
        limit = self.settings.max_field_chars
        for name, size in _field_sizes(item):
            if size > limit:
                message = f"items[{index}].{name}: {size} characters exceeds the limit of {limit}"
                return echo(Result.failed(Status.INVALID, "too_large", message), item)
        return verifier


def _field_sizes(item: Item) -> list[tuple[str, int]]:
    sizes = []
    for name in ("prompt", "response"):
        value = getattr(item, name)
        if isinstance(value, str):
            sizes.append((name, len(value)))
        elif value is not None:
            sizes.append((name, sum(len(m.content or "") for m in value)))
    if isinstance(item.reference, str):
        sizes.append(("reference", len(item.reference)))
    return sizes
