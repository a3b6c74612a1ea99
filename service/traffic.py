"""The last few minutes of ``/v1/score`` traffic this gateway served, for ``/v1/traffic``
and the live view of ``/ui``.

Fed by `Metrics.observe_results` (the same results the Prometheus counters count): per
`STEP_S` bucket and verifier, items by status and a latency histogram over the metrics'
own `LATENCY_BUCKETS`. Buckets older than `WINDOW_S` are dropped, and at most
`MAX_VERIFIERS` verifiers are kept per bucket (31 by name, the rest as ``other``), so the
memory is fixed. Latency percentiles are read from the histogram, interpolated within a
bucket (as Prometheus' ``histogram_quantile``). One gateway's view: replicas each keep
their own.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

WINDOW_S = 300.0
STEP_S = 5.0
MAX_VERIFIERS = 32


@dataclass
class _Cell:
    statuses: Counter[str] = field(default_factory=Counter)
    latency: list[int] = field(default_factory=list)


class Traffic:
    """Thread-safe; see the module docstring."""

    def __init__(
        self, buckets: tuple[float, ...], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._bounds = buckets
        self._clock = clock
        self._lock = threading.Lock()
        self._steps: deque[tuple[int, dict[str, _Cell]]] = deque()

    def observe(self, verifier: str, status: str, seconds: float) -> None:
        """Count one scored item."""
        self.observe_many([(verifier, status, seconds)])

    def observe_many(self, items: Iterable[tuple[str, str, float]]) -> None:
        """Count scored items, (verifier, status, seconds) each: one lock and one clock
        reading for a whole response's results."""
        step = int(self._clock() // STEP_S)
        with self._lock:
            if not self._steps or self._steps[-1][0] != step:
                self._steps.append((step, {}))
                self._expire(step)
            cells = self._steps[-1][1]
            for name, status, seconds in items:
                kept = name if name in cells or len(cells) < MAX_VERIFIERS - 1 else "other"
                cell = cells.get(kept)
                if cell is None:
                    cell = cells[kept] = _Cell(latency=[0] * (len(self._bounds) + 1))
                cell.statuses[status] += 1
                cell.latency[bisect.bisect_left(self._bounds, seconds)] += 1

    def view(self) -> dict[str, Any]:
        """Items per second, statuses and latency percentiles by verifier over the window,
        and items per step (oldest first) for a sparkline."""
        now = int(self._clock() // STEP_S)
        with self._lock:
            self._expire(now)
            steps = list(self._steps)
        totals: dict[str, _Cell] = {}
        series = [0] * int(WINDOW_S // STEP_S)
        for step, cells in steps:
            for name, cell in cells.items():
                into = totals.setdefault(name, _Cell(latency=[0] * (len(self._bounds) + 1)))
                into.statuses.update(cell.statuses)
                into.latency = [a + b for a, b in zip(into.latency, cell.latency, strict=True)]
                series[len(series) - 1 - (now - step)] += sum(cell.statuses.values())
        span = WINDOW_S if not steps else min(WINDOW_S, (now - steps[0][0] + 1) * STEP_S)
        verifiers = {name: self._describe(cell, span) for name, cell in sorted(totals.items())}
        statuses: Counter[str] = Counter()
        for cell in totals.values():
            statuses.update(cell.statuses)
        return {"window_s": WINDOW_S, "step_s": STEP_S, "items": sum(statuses.values()),
                "items_per_s": sum(statuses.values()) / span, "by_status": dict(statuses),
                "verifiers": verifiers, "series": series}  # fmt: skip

    def _describe(self, cell: _Cell, span: float) -> dict[str, Any]:
        count = sum(cell.statuses.values())
        return {
            "items": count,
            "items_per_s": count / span,
            "by_status": dict(cell.statuses),
            **{f"p{q}_ms": self._quantile(cell.latency, q / 100) * 1000 for q in (50, 90, 99)},
        }

    def _quantile(self, counts: list[int], q: float) -> float:
        """The ``q`` quantile in seconds, linear within the bucket that holds it (the
        last bucket, open above, answers its lower bound)."""
        target = q * sum(counts)
        seen = 0
        for index, count in enumerate(counts):
            if count and seen + count >= target:
                low = self._bounds[index - 1] if index else 0.0
                if index == len(self._bounds):
                    return low
                return low + (self._bounds[index] - low) * (target - seen) / count
            seen += count
        return 0.0

    def _expire(self, now: int) -> None:
        """Drop steps older than the window. Lock held."""
        while self._steps and now - self._steps[0][0] >= WINDOW_S // STEP_S:
            self._steps.popleft()
