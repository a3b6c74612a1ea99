"""``/v1/score``, jobs, readiness and overload on the Celery executor, end to end."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from referee.service.client import Client, RefereeError
from tests.conftest import REPO
from tests.service.distributed.conftest import Cluster, make_cluster, running_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster shared by this module's tests that leave it as they found it (each
    works on its own items and jobs; a cluster's start costs seconds of CPU). Tests that
    stop a part or need other settings make their own with `make_cluster`."""
    with running_cluster(tmp_path_factory.mktemp("cluster")) as c:
        yield c


def score(url: str, items: list[dict[str, Any]], **body: Any) -> httpx.Response:
    return httpx.post(f"{url}/v1/score", json={"items": items, **body}, timeout=60)


def write_items(path: Path, count: int, **extra: Any) -> Path:
    lines = [
        orjson.dumps(
            {
                "id": str(i),
                "verifier": "string",
                "response": "a" if i % 2 else "b",
                "reference": "a",
                **extra,
            }
        )
        for i in range(count)
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_score_on_workers_keeps_order_statuses_and_kills_hangs(cluster: Cluster) -> None:
    items = [
        {"id": str(i), "verifier": "string", "response": "a", "reference": "a"} for i in range(600)
    ]
    items[10] = {"id": "10", "verifier": "hang", "response": "x"}
    items[20] = {"id": "20", "verifier": "nope", "response": "x"}
    response = score(cluster.url, items, item_timeout_s=1)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [str(i) for i in range(600)]
    assert results[10]["status"] == "timeout" and results[10]["error"]["code"] == "item_timeout"
    assert results[20]["status"] == "invalid"
    assert sum(r["status"] == "ok" for r in results) == 598


def test_readyz_reports_broker_and_consumers_per_pool(cluster: Cluster) -> None:
    body = httpx.get(f"{cluster.url}/readyz").json()
    assert body["ready"] is True and body["executor"] == "celery"
    assert body["pools"]["cpu"]["consumers"] == 1
    assert body["pools"]["io"]["consumers"] == 0


def test_without_workers_items_time_out_at_the_deadline_and_readyz_says_why(
    tmp_path: Path,
) -> None:
    cluster = make_cluster(tmp_path)
    try:
        cluster.start_gateway()
        ready = httpx.get(f"{cluster.url}/readyz")
        assert ready.status_code == 503
        assert {
            "component": "pool:cpu",
            "message": "no worker consumes the cpu queue",
            "blocking": True,
            "pool": None,
            "verifier": None,
        } in ready.json()["problems"]
        assert ready.json()["pools"]["cpu"]["ready"] is False
        start = time.monotonic()
        response = score(cluster.url, [{"verifier": "string", "response": "a"}], deadline_s=1)
        assert time.monotonic() - start < 3
        assert response.json()["results"][0]["status"] == "timeout"
    finally:
        cluster.stop_all()


def test_deep_queue_gets_429_with_retry_after(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, REFEREE_MAX_QUEUE_DEPTH="3")
    try:
        cluster.start_gateway()  # no workers: tasks pile up
        items = [{"verifier": "string", "response": "a", "reference": "a"}] * (256 * 5)
        first = score(cluster.url, items, deadline_s=0.5)
        assert first.status_code == 200
        refused = score(cluster.url, items[:1], deadline_s=0.5)
        assert refused.status_code == 429
        assert refused.headers["Retry-After"].isdigit()
        assert refused.json()["error"]["code"] == "overloaded"
    finally:
        cluster.stop_all()


def test_job_lifecycle(cluster: Cluster, tmp_path: Path) -> None:
    source = write_items(tmp_path / "items.jsonl", 3000)
    with source.open("ab") as handle:
        handle.write(b"not json\n\n" + orjson.dumps({"verifier": "string"}) + b"\n")
    with Client(cluster.url) as client:
        job_id = client.submit_job(source)
        final = client.wait_job(job_id, poll_s=0.2, timeout_s=60)
        assert final["state"] == "done" and final["total"] == 3002 and final["done"] == 3002
        assert final["counts"] == {"ok": 3000, "invalid": 2}
        # the accepting gateway folds the summary as results arrive, not when first asked
        deadline = time.monotonic() + 10
        while not cluster.redis().exists(f"referee:job:{job_id}:summary"):
            assert time.monotonic() < deadline, "the summary was not folded in the background"
            time.sleep(0.2)
        summary = client.job_summary(job_id)
        assert summary["items"] == 3002 and summary["by_status"] == final["counts"]
        assert summary["by_error"] == {"malformed_line": 2}
        assert sum(summary["rewards"]["string@1"]["histogram"]) == 3000
        assert client.job_summary(job_id) == summary  # read again: nothing counted twice
        bad = client.job_line(job_id, 3000)
        assert bad["item"] == "not json" and bad["result"]["error"]["code"] == "malformed_line"
        out = tmp_path / "out.jsonl"
        with out.open("wb") as sink:
            client.job_results(job_id, sink)
    results = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["id"] for r in results[:3000]] == [str(i) for i in range(3000)]
    assert [r["reward"] for r in results[:4]] == [0.0, 1.0, 0.0, 1.0]
    assert [r["error"]["code"] for r in results[3000:]] == ["malformed_line"] * 2


def test_job_errors_use_the_error_shape(cluster: Cluster) -> None:
    with Client(cluster.url) as client:
        with pytest.raises(RefereeError) as missing:
            client.job("0" * 32)
        assert missing.value.status == 404
        with pytest.raises(RefereeError) as malformed:
            client.job("not-a-job-id")
        assert malformed.value.status == 422


def test_cancel_stops_a_job_and_keeps_alignment(cluster: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "slow.jsonl"
    lines = [
        orjson.dumps(
            {"id": str(i), "verifier": "slow", "response": "x", "params": {"seconds": 0.05}}
        )
        for i in range(400)
    ]
    source.write_bytes(b"\n".join(lines))
    with Client(cluster.url) as client:
        job_id = client.submit_job(source)
        with pytest.raises(RefereeError) as running:
            client.job_results(job_id, (tmp_path / "early.jsonl").open("wb"))
        assert running.value.status == 409
        cancelled = client.cancel_job(job_id)
        assert cancelled["state"] == "cancelled"
        out = tmp_path / "out.jsonl"
        with out.open("wb") as sink:
            client.job_results(job_id, sink)
    results = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(results) == 400
    codes = {r["error"]["code"] for r in results if r["status"] != "ok"}
    assert codes == {"cancelled"}


def test_cli_uses_a_job_for_large_files(cluster: Cluster, tmp_path: Path) -> None:
    source = write_items(tmp_path / "items.jsonl", 1200)
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.service",
            "score",
            str(source),
            "-o",
            str(out),
            "--server",
            cluster.url,
            "--job-threshold",
            "1000",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "job " in done.stderr
    results = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["id"] for r in results] == [str(i) for i in range(1200)]


def test_rate_limit_per_api_key_is_shared_through_redis(tmp_path: Path) -> None:
    cluster = make_cluster(
        tmp_path,
        REFEREE_API_KEYS="alpha,beta",
        REFEREE_RATE_LIMIT_ITEMS_PER_S="1",
        REFEREE_RATE_LIMIT_BURST="10",
    )
    try:
        cluster.start_gateway()
        cluster.start_worker()
        cluster.wait_consumers("cpu", 1)
        items = [{"verifier": "string", "response": "a", "reference": "a"}] * 6

        def post(key: str) -> httpx.Response:
            return httpx.post(
                f"{cluster.url}/v1/score",
                json={"items": items},
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            )

        assert post("alpha").status_code == 200
        refused = post("alpha")  # 6 + 6 > burst 10 at 1 item/s
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert "rate limit" in refused.json()["error"]["message"]
        assert post("beta").status_code == 200  # another key, another bucket
        stored = [k for k in cluster.redis().scan_iter("referee:rate:*")]
        assert len(stored) == 2 and b"alpha" not in b"".join(stored)  # keys are hashed
    finally:
        cluster.stop_all()


def test_workers_export_what_they_scored(tmp_path: Path) -> None:
    from tests.conftest import free_port

    port = free_port()
    cluster = make_cluster(tmp_path, REFEREE_WORKER_METRICS_PORT=str(port))
    try:
        cluster.start_gateway()
        cluster.start_worker()
        cluster.wait_consumers("cpu", 1)
        items = [{"verifier": "string", "response": "a", "reference": "a"}] * 7
        assert score(cluster.url, items).status_code == 200
        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert 'referee_items_total{status="ok",verifier="string@1"} 7.0' in text
        gateway = httpx.get(f"{cluster.url}/metrics").text
        assert 'referee_pool_consumers{pool="cpu"} 1.0' in gateway
    finally:
        cluster.stop_all()


def test_redis_down_is_a_quick_503_not_a_500(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path)
    try:
        cluster.start_gateway()
        cluster.stop_redis()
        start = time.monotonic()
        response = score(cluster.url, [{"verifier": "string", "response": "a"}])
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "broker_unavailable"
        assert response.headers["Retry-After"] == "5"
        assert time.monotonic() - start < 10
        ready = httpx.get(f"{cluster.url}/readyz")
        assert ready.status_code == 503
    finally:
        cluster.stop_all()


def test_jobs_belong_to_their_key_and_count_against_its_quota(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, REFEREE_API_KEYS="alpha,beta", REFEREE_MAX_JOBS_PER_KEY="1")
    try:
        cluster.start_gateway()
        cluster.start_worker()
        cluster.wait_consumers("cpu", 1)
        source = write_items(tmp_path / "items.jsonl", 5)
        with (
            Client(cluster.url, api_key="alpha") as alpha,
            Client(cluster.url, api_key="beta") as beta,
        ):
            job_id = alpha.submit_job(source)
            assert alpha.wait_job(job_id, poll_s=0.1, timeout_s=30)["state"] == "done"
            with pytest.raises(RefereeError) as hidden:
                beta.job(job_id)
            assert hidden.value.status == 404
            with pytest.raises(RefereeError) as full:
                alpha.submit_job(source)
            assert full.value.status == 429
            beta.submit_job(source)  # another key, another quota
            deleted = httpx.delete(
                f"{cluster.url}/v1/jobs/{job_id}", headers={"Authorization": "Bearer alpha"}
            )
            assert deleted.status_code == 200
            assert cluster.redis().exists(f"referee:job:{job_id}:items") == 0
            alpha.submit_job(source)  # the deleted job freed its place
    finally:
        cluster.stop_all()
