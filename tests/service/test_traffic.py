"""The live traffic window: counts, percentiles read from the latency histogram, steps
dropped as they leave the window, a bounded set of verifiers; and ``/v1/traffic``."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from referee.service.metrics import LATENCY_BUCKETS
from referee.service.traffic import MAX_VERIFIERS, STEP_S, WINDOW_S, Traffic


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


def test_counts_rates_and_percentiles() -> None:
    clock = Clock()
    traffic = Traffic(LATENCY_BUCKETS, clock)
    for i in range(100):  # 1 ms .. 100 ms, evenly
        traffic.observe("math@1", "ok", (i + 1) / 1000)
    clock.now += STEP_S
    traffic.observe("math@1", "timeout", 30.0)
    view = traffic.view()
    math = view["verifiers"]["math@1"]
    assert view["items"] == 101 and math["by_status"] == {"ok": 100, "timeout": 1}
    assert math["p50_ms"] == pytest.approx(50, rel=0.05)
    assert math["p90_ms"] == pytest.approx(90, rel=0.05)
    assert view["items_per_s"] == pytest.approx(101 / (2 * STEP_S))
    assert view["series"][-2:] == [100, 1] and len(view["series"]) == WINDOW_S // STEP_S


def test_steps_leave_the_window() -> None:
    clock = Clock()
    traffic = Traffic(LATENCY_BUCKETS, clock)
    traffic.observe("string@1", "ok", 0.001)
    clock.now += WINDOW_S - STEP_S
    assert traffic.view()["items"] == 1
    clock.now += STEP_S
    assert traffic.view()["items"] == 0 and traffic.view()["verifiers"] == {}


def test_verifiers_past_the_cap_are_other() -> None:
    traffic = Traffic(LATENCY_BUCKETS, Clock())
    for i in range(MAX_VERIFIERS + 10):
        traffic.observe(f"v{i}", "ok", 0.001)
    verifiers = traffic.view()["verifiers"]
    assert len(verifiers) == MAX_VERIFIERS and verifiers["other"]["items"] == 11


def test_the_route_counts_what_was_scored(client: TestClient) -> None:
    before = client.get("/v1/traffic").json()["verifiers"].get("string@1", {"items": 0})
    items = [{"verifier": "string", "response": "a", "reference": r} for r in "aab"]
    assert client.post("/v1/score", json={"items": items}).status_code == 200
    after = client.get("/v1/traffic").json()
    assert after["verifiers"]["string@1"]["items"] == before["items"] + 3
    assert after["verifiers"]["string@1"]["by_status"]["ok"] >= 3
