"""The per-item metrics a response's results feed: counted per (verifier, status), each
latency in its verifier's histogram, the traffic view and the flags, exactly."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from referee.service.metrics import Metrics
from referee.verifiers.types import ErrorInfo, Result, Status


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


def result(verifier: str | None, status: Status, ms: float, flags: list[str] = []) -> Result:  # noqa: B006
    error = None if status is Status.OK else ErrorInfo(code="x", message="x", retryable=False)
    return Result(
        status=status,
        reward=1.0 if status is Status.OK else None,
        verifier=verifier,
        elapsed_ms=ms,
        error=error,
        details={"flags": flags} if flags else {},
    )


def test_a_responses_results_are_counted_exactly() -> None:
    metrics = Metrics(lambda: {})
    batch = [
        *(result("string@1", Status.OK, 0.5) for _ in range(5)),
        *(result("string@1", Status.INVALID, 2.0) for _ in range(2)),
        result("math@1", Status.OK, 40.0, flags=["truncated"]),
        result(None, Status.ERROR, 1.0),
    ]
    metrics.observe_results(batch)
    metrics.observe_results(batch[:1])
    found = samples(metrics)
    items = "referee_items_total"
    assert found[items, (("status", "ok"), ("verifier", "string@1"))] == 6
    assert found[items, (("status", "invalid"), ("verifier", "string@1"))] == 2
    assert found[items, (("status", "ok"), ("verifier", "math@1"))] == 1
    assert found[items, (("status", "error"), ("verifier", "unresolved"))] == 1
    latency = "referee_item_seconds_count"
    assert found[latency, (("verifier", "string@1"),)] == 8
    assert found["referee_item_seconds_sum", (("verifier", "math@1"),)] == 0.04
    assert found["referee_flags_total", (("flag", "truncated"), ("verifier", "math@1"))] == 1
    view = metrics.traffic.view()
    assert view["items"] == 10
    assert view["by_status"] == {"ok": 7, "invalid": 2, "error": 1}
