"""The embedded executor contains every misbehaving verifier and keeps serving.

The misbehaving verifiers come from the test plugin (tests/plugins/referee_testplugin),
installed by the test command and loaded through entry points in the worker processes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.execution.process_pool import ProcessPool
from referee.verifiers import Item, Result, Status
from tests.service.conftest import wait_alive

SLACK_S = 0.5


def item(verifier: str, **extra: Any) -> dict[str, Any]:
    return {"verifier": verifier, "response": "a", "reference": "a", **extra}


def score(client: TestClient, items: list[dict[str, Any]], **body: Any) -> list[dict[str, Any]]:
    response = client.post("/v1/score", json={"items": items, **body})
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


@pytest.mark.parametrize("verifier", ["hang", "spin"])
def test_hanging_verifier_is_killed_and_batch_mates_score(
    client: TestClient, verifier: str
) -> None:
    items = [item("string", id="before"), item(verifier, id="bad"), item("string", id="after")]
    start = time.monotonic()
    results = score(client, items, item_timeout_s=0.5)
    elapsed = time.monotonic() - start
    assert [r["status"] for r in results] == ["ok", "timeout", "ok"]
    assert results[1]["error"]["code"] == "item_timeout"
    assert results[1]["reward"] is None
    assert results[1]["id"] == "bad"
    assert elapsed < 0.5 + SLACK_S + 0.5
    # The pool replaced the killed worker and keeps serving.
    assert score(client, [item("string")])[0]["reward"] == 1.0
    assert wait_alive(client, 2)["pools"]["cpu"]["alive"] == 2  # type: ignore[index]


def test_many_hangs_in_one_request_are_each_timed_out(client: TestClient) -> None:
    items = [item("hang" if i % 4 == 0 else "string", id=str(i)) for i in range(12)]
    results = score(client, items, item_timeout_s=0.3)
    expected = ["timeout" if i % 4 == 0 else "ok" for i in range(12)]
    assert [r["status"] for r in results] == expected


def test_a_batch_verifier_gets_its_items_as_one_batch(client: TestClient) -> None:
    """A request's items are split across the pool's two workers (parallelism first);
    within a worker's share, consecutive items of a verifier that scores batches itself
    reach it together, and an item verifier between them splits the run."""
    items = [item("batchsize")] * 6
    results = score(client, items)
    assert [r["details"]["batch"] for r in results] == [3] * 6
    assert len({r["details"]["pid"] for r in results[:3]}) == 1
    mixed = [item("batchsize")] * 3 + [item("string")] + [item("batchsize")] * 4
    results = score(client, mixed)  # shares of 4: [b b b s] and [b b b b]
    assert [r["details"].get("batch") for r in results] == [3, 3, 3, None, 4, 4, 4, 4]


def test_pool_workers_freeze_their_start_up_heap(client: TestClient) -> None:
    """What a worker built at start-up is out of the collector's sight (gc.freeze), so
    full collections do not rescan it for every batch."""
    [result] = score(client, [item("batchsize")])
    assert result["details"]["frozen"] > 10_000


def test_a_hanging_batch_times_out_as_a_whole_after_its_items_time(client: TestClient) -> None:
    items = [item("hang", id=f"h{i}") for i in range(4)]  # two workers: two batches of two
    start = time.monotonic()
    results = score(client, items, item_timeout_s=0.3)
    elapsed = time.monotonic() - start
    assert [r["status"] for r in results] == ["timeout"] * 4
    assert "longer than 0.6 s" in results[1]["error"]["message"]  # two items, two timeouts
    assert elapsed < 0.6 + SLACK_S + 0.5


def test_crashing_worker_is_error_never_zero(client: TestClient) -> None:
    results = score(client, [item("string"), item("crash"), item("string")])
    assert [r["status"] for r in results] == ["ok", "error", "ok"]
    assert results[1]["error"]["code"] == "worker_died"
    assert results[1]["reward"] is None


@pytest.mark.parametrize(
    ("verifier", "message"),
    [("raises", "RuntimeError: boom"), ("short", "returned 0 results for 1 items")],
)
def test_verifier_bugs_are_error(client: TestClient, verifier: str, message: str) -> None:
    [result] = score(client, [item(verifier)])
    assert result["status"] == "error"
    assert result["error"]["code"] == "verifier_failed"
    assert message in result["error"]["message"]
    assert "Traceback" not in result["error"]["message"]


def test_request_deadline_marks_unfinished_items_timeout(client: TestClient) -> None:
    # string items between the slow ones: each slow item is a run of its own (`runs`)
    slow = item("slow", params={"seconds": 0.4})
    items = [slow if i % 2 == 0 else item("string") for i in range(12)]
    start = time.monotonic()
    results = score(client, items, deadline_s=0.6)
    elapsed = time.monotonic() - start
    statuses = [r["status"] for r in results]
    assert "ok" in statuses and "timeout" in statuses
    assert all(r["reward"] is None for r in results if r["status"] == "timeout")
    assert elapsed < 0.6 + SLACK_S


def test_item_timeout_cannot_be_raised_above_the_server_limit(client: TestClient) -> None:
    [result] = score(client, [item("hang")], item_timeout_s=1000)
    assert result["status"] == "timeout"


@pytest.fixture
def pool() -> Iterator[ProcessPool]:
    p = ProcessPool("test", 1, 2048)
    p.start()
    yield p
    p.close()


def test_cancelled_request_frees_the_worker(pool: ProcessPool) -> None:
    async def scenario() -> list[Status]:
        hung = asyncio.ensure_future(
            pool.run([Item(verifier="hang", response="x")], 30.0, time.monotonic() + 30)
        )
        await asyncio.sleep(0.3)
        hung.cancel()
        start = time.monotonic()
        results = await pool.run(
            [Item(verifier="string", response="a", reference="a")], 5.0, time.monotonic() + 10
        )
        assert time.monotonic() - start < 2.0
        return [r.status for r in results]

    assert asyncio.run(scenario()) == [Status.OK]


def test_worker_memory_is_limited(pool: ProcessPool) -> None:
    # 4 GiB inside a worker capped at 2 GiB fails in the worker (error), not on the host;
    # 0.25 GiB fits, which shows the cap is not simply "no allocation works".
    async def scenario() -> list[Result]:
        items = [
            Item(verifier="hog", response="x", params={"seconds": 4.0}),
            Item(verifier="string", response="x", reference="x"),  # two runs, not one batch
            Item(verifier="hog", response="x", params={"seconds": 0.25}),
        ]
        return await pool.run(items, 10.0, time.monotonic() + 20)

    too_big, _, fits = asyncio.run(scenario())
    assert too_big.status == Status.ERROR and too_big.error is not None
    assert "MemoryError" in too_big.error.message
    assert fits.status == Status.OK


def test_io_verifiers_are_awaited_concurrently_on_the_event_loop(client: TestClient) -> None:
    items = [item("asleep", params={"seconds": 0.3}) for _ in range(50)]
    start = time.monotonic()
    results = score(client, items)
    assert [r["status"] for r in results] == ["ok"] * 50
    assert {r["verifier"] for r in results} == {"asleep@1"}
    assert time.monotonic() - start < 0.3 * 50 / 5  # far below sequential


def test_io_items_past_the_deadline_are_timeout(client: TestClient) -> None:
    items = [item("asleep", params={"seconds": 5}), item("string")]
    start = time.monotonic()
    results = score(client, items, deadline_s=0.5)
    assert [r["status"] for r in results] == ["timeout", "ok"]
    assert time.monotonic() - start < 0.5 + SLACK_S


def test_saturated_verifier_gets_429_and_health_shows_in_readyz(client: TestClient) -> None:
    from referee_testplugin.verifiers import OBSERVED

    body = {"items": [item("observed"), item("string")]}
    assert client.post("/v1/score", json=body).status_code == 200
    assert client.get("/readyz").json()["verifiers"]["observed@1"] == {"fine": True}
    OBSERVED.update(saturated=True, problem="model x failed to load: no such file")
    try:
        refused = client.post("/v1/score", json=body)
        assert refused.status_code == 429 and "observed" in refused.json()["error"]["message"]
        assert client.post("/v1/score", json={"items": [item("string")]}).status_code == 200
        ready = client.get("/readyz").json()
        assert ready["ready"] is True  # one degraded verifier does not take the rest offline
        assert {
            "component": "verifier:observed@1",
            "message": "model x failed to load: no such file",
            "blocking": False,
            "pool": None,
            "verifier": None,
        } in ready["problems"]
    finally:
        OBSERVED.update(saturated=False, problem=None)


def test_queued_chunks_answer_at_their_own_deadline(pool: ProcessPool) -> None:
    # One worker busy with a long request; a short request queued behind it must get its
    # timeout at its own deadline, not when the worker frees up.
    async def scenario() -> tuple[list[Status], float]:
        busy = asyncio.ensure_future(
            pool.run([Item(verifier="hang", response="x")], 20.0, time.monotonic() + 20)
        )
        await asyncio.sleep(0.2)
        start = time.monotonic()
        item = Item(verifier="string", response="a", reference="a")
        results = await pool.run([item], 5.0, time.monotonic() + 0.5)
        elapsed = time.monotonic() - start
        busy.cancel()
        return [r.status for r in results], elapsed

    statuses, elapsed = asyncio.run(scenario())
    assert statuses == [Status.TIMEOUT]
    assert elapsed < 0.5 + 0.5


def test_a_pool_that_cannot_start_leaves_no_workers_and_answers_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from referee.service.execution import process_pool, worker_slot
    from referee.service.execution.executor import EmbeddedExecutor
    from referee.verifiers import Pool
    from referee.verifiers.builtin import default_registry
    from tests.service.conftest import small_settings

    real_spawn = worker_slot.WorkerSlot.spawn
    started: list[worker_slot.WorkerSlot] = []

    def spawn_then_fail(slot: worker_slot.WorkerSlot) -> None:
        if started:
            raise process_pool.WorkerStartError("a sandbox worker process failed to start")
        real_spawn(slot)
        started.append(slot)

    monkeypatch.setattr(worker_slot.WorkerSlot, "spawn", spawn_then_fail)
    executor = EmbeddedExecutor(small_settings(sandbox_workers=2), default_registry())
    items = [Item(id="a", verifier="python_grader", response="x", reference={"source": "x"})]
    results = asyncio.run(executor.run(Pool.SANDBOX, items, 5.0, time.monotonic() + 10))
    assert [(r.id, r.status, r.error.code) for r in results] == [  # type: ignore[union-attr]
        ("a", Status.ERROR, "worker_start_failed")
    ]
    assert started and not started[0].is_alive()  # the one that did start was stopped
    assert executor.readiness()["sandbox"]["started"] is False
