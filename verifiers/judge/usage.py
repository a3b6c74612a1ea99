"""Token usage: per item (in details) and running totals per profile (for metrics).

`UsageMeter` is thread-safe: the sync ``score`` path runs on private loops in other
threads. `UsageCollector` exposes the totals to Prometheus; the service registers it in
its own registry (``registry.register(UsageCollector(meter))``), this package never
touches a global one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector


@dataclass
class Usage:
    """What one item cost: tokens as reported by the endpoint, HTTP calls, cache hits."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        self.cache_hits += other.cache_hits

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
        }


@dataclass
class UsageMeter:
    """Totals by profile name since the verifier was built."""

    totals: dict[str, Usage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, profile: str, usage: Usage) -> None:
        with self._lock:
            self.totals.setdefault(profile, Usage()).add(usage)

    def snapshot(self) -> dict[str, Usage]:
        with self._lock:
            return {name: Usage(**u.as_dict()) for name, u in self.totals.items()}


class UsageCollector(Collector):
    """Prometheus counters ``referee_judge_{prompt_tokens,completion_tokens,calls,
    cache_hits}_total`` labelled by profile."""

    def __init__(self, meter: UsageMeter) -> None:
        self._meter = meter

    def collect(self) -> Iterator[CounterMetricFamily]:
        snapshot = self._meter.snapshot()
        for name in ("prompt_tokens", "completion_tokens", "calls", "cache_hits"):
            family = CounterMetricFamily(
                f"referee_judge_{name}", f"Judge {name.replace('_', ' ')}", labels=["profile"]
            )
            for profile, usage in sorted(snapshot.items()):
                family.add_metric([profile], float(getattr(usage, name)))
            yield family
