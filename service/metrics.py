"""Prometheus metrics of one app instance, in a registry of its own (tests build many apps)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from referee.service.traffic import Traffic
from referee.verifiers.base import Measured
from referee.verifiers.types import Result

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    30,
)


MAX_FLAG_NAMES = 32
_FLAG = re.compile(r"[a-z][a-z0-9_]{0,47}")


def _flags(result: Result) -> list[str]:
    raw = result.details.get("flags") if isinstance(result.details, dict) else None
    if not isinstance(raw, list):
        return []
    return [f if isinstance(f, str) and _FLAG.fullmatch(f) else "other" for f in raw[:16]]


class Metrics:
    """Request, item and pool metrics. ``pool_report`` is read at scrape time."""

    def __init__(
        self,
        pool_report: Callable[[], dict[str, dict[str, Any]]],
        verifiers: Iterable[object] = (),
    ) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "referee_http_requests",
            "HTTP requests by route and status code",
            ["route", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "referee_http_request_seconds",
            "HTTP request latency by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.items = Counter(
            "referee_items",
            "Scored items by verifier and status",
            ["verifier", "status"],
            registry=self.registry,
        )
        self.flags = Counter(
            "referee_flags",
            "Results flagged as suspected reward hacking (details.flags), by verifier and flag",
            ["verifier", "flag"],
            registry=self.registry,
        )
        self._flag_names: dict[str, set[str]] = {}
        self.item_latency = Histogram(
            "referee_item_seconds",
            "Time spent scoring one item, by verifier",
            ["verifier"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.traffic = Traffic(LATENCY_BUCKETS)
        """The last minutes of the same results, for ``/v1/traffic``."""
        self.registry.register(_PoolCollector(pool_report))
        for verifier in verifiers:
            if isinstance(verifier, Measured):
                for collector in verifier.collectors():
                    self.registry.register(collector)

    def count_sessions(self, count: Callable[[], int]) -> None:
        """Export ``count()`` (the sessions this process holds) as ``referee_sessions_open``."""
        self.registry.register(_SessionCollector(count))

    def observe_results(self, results: Iterable[Result]) -> None:
        """Count a response's results: per (verifier, status) once, and each latency into
        its verifier's histogram child, looked up once per verifier (a label lookup takes
        a lock: three per item were most of this call's cost on the event loop)."""
        counts: dict[tuple[str, str], int] = {}
        latencies: dict[str, list[float]] = {}
        seen: list[tuple[str, str, float]] = []
        for result in results:
            verifier, status = result.verifier or "unresolved", result.status.value
            seconds = result.elapsed_ms / 1000.0
            counts[verifier, status] = counts.get((verifier, status), 0) + 1
            latencies.setdefault(verifier, []).append(seconds)
            seen.append((verifier, status, seconds))
            for flag in _flags(result):
                self.flags.labels(verifier, self._flag_label(verifier, flag)).inc()
        for (verifier, status), count in counts.items():
            self.items.labels(verifier, status).inc(count)
        for verifier, values in latencies.items():
            child = self.item_latency.labels(verifier)
            for value in values:
                child.observe(value)
        self.traffic.observe_many(seen)

    def _flag_label(self, verifier: str, flag: str) -> str:
        """The flag itself, or ``other`` past `MAX_FLAG_NAMES` names for a verifier (a
        plugin's flags must not grow the label set without bound)."""
        names = self._flag_names.setdefault(verifier, set())
        if flag in names or len(names) < MAX_FLAG_NAMES:
            names.add(flag)
            return flag
        return "other"

    def observe_request(self, route: str, code: int, seconds: float) -> None:
        self.requests.labels(route, str(code)).inc()
        self.latency.labels(route).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _PoolCollector(Collector):
    def __init__(self, report: Callable[[], dict[str, dict[str, Any]]]) -> None:
        self._report = report

    def collect(self) -> Iterable[Metric]:
        alive = GaugeMetricFamily(
            "referee_pool_workers_alive", "Live worker processes", labels=["pool"]
        )
        queued = GaugeMetricFamily(
            "referee_pool_queued_chunks", "Chunks waiting for a worker", labels=["pool"]
        )
        tasks = GaugeMetricFamily(
            "referee_pool_queued_tasks", "Tasks waiting in a pool's broker queue", labels=["pool"]
        )
        consumers = GaugeMetricFamily(
            "referee_pool_consumers", "Live workers consuming a pool's queue", labels=["pool"]
        )
        for pool, info in self._report().items():
            if "alive" in info:
                alive.add_metric([pool], info["alive"])
                queued.add_metric([pool], info["queued_chunks"])
            if "queued_tasks" in info:
                tasks.add_metric([pool], info["queued_tasks"])
                consumers.add_metric([pool], info["consumers"])
        yield from (alive, queued, tasks, consumers)


class _SessionCollector(Collector):
    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count

    def collect(self) -> Iterable[Metric]:
        yield GaugeMetricFamily(
            "referee_sessions_open", "Stateful sessions this process holds", value=self._count()
        )
