"""Nothing lost, nothing duplicated: a 5,000-item job survives each failure.

Every job here uses the ``slow`` test verifier (a few ms per item) so the failure lands
mid-job. "Exactly once" is checked on what the store holds: ``done`` equals the total,
the counts add up to it, and every input id appears once, in order, with reward 1.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import orjson
import pytest

from referee.service.client import Client
from referee.service.distributed.celery_app import make_celery
from referee.service.settings import Settings
from tests.service.distributed.conftest import Cluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOTAL = 5000


def slow_job(path: Path, seconds: float = 0.002) -> Path:
    lines = [
        orjson.dumps(
            {"id": str(i), "verifier": "slow", "response": "x", "params": {"seconds": seconds}}
        )
        for i in range(TOTAL)
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def wait_progress(client: Client, job_id: str, at_least: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while client.job(job_id)["done"] < at_least:
        assert time.monotonic() < deadline, "the job made no progress"
        time.sleep(0.1)


def assert_exactly_once(cluster: Cluster, client: Client, job_id: str, tmp_path: Path) -> None:
    final = client.wait_job(job_id, poll_s=0.25, timeout_s=120)
    assert final["state"] == "done", final
    assert final["done"] == TOTAL and sum(final["counts"].values()) == TOTAL
    assert final["counts"] == {"ok": TOTAL}
    out = tmp_path / "results.jsonl"
    with out.open("wb") as sink:
        client.job_results(job_id, sink)
    results = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["id"] for r in results] == [str(i) for i in range(TOTAL)]
    assert all(r["status"] == "ok" and r["reward"] == 1.0 for r in results)
    stored = cluster.redis().hlen(f"referee:job:{job_id}:results")
    assert stored == TOTAL


def test_worker_killed_mid_job(cluster: Cluster, tmp_path: Path) -> None:
    survivor = cluster.start_worker()
    cluster.wait_consumers("cpu", 2)
    victim = cluster.workers[0]
    with Client(cluster.url) as client:
        job_id = client.submit_job(slow_job(tmp_path / "items.jsonl"))
        wait_progress(client, job_id, 500)
        victim.kill()  # SIGKILL: no chance to ack, requeue or say goodbye
        victim.wait(timeout=10)
        assert survivor.poll() is None
        assert_exactly_once(cluster, client, job_id, tmp_path)


def test_hung_worker_tasks_are_redelivered(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_worker()
    cluster.wait_consumers("cpu", 2)
    hung = cluster.workers[0]
    with Client(cluster.url) as client:
        job_id = client.submit_job(slow_job(tmp_path / "items.jsonl"))
        wait_progress(client, job_id, 500)
        hung.send_signal(signal.SIGSTOP)  # alive but silent: its tasks stay unacked
        # Stopped in the middle of a scan for abandoned tasks, it would hold the scanners'
        # mutex as long as its workers set it to live (kombu's default: 5 minutes).
        cluster.redis().set("unacked_mutex", b"held by the hung worker", ex=mutex_expire(cluster))
        try:
            assert_exactly_once(cluster, client, job_id, tmp_path)
        finally:
            hung.send_signal(signal.SIGCONT)


def mutex_expire(cluster: Cluster) -> int:
    """How long a worker of the cluster holds the mutex of kombu's restore scan."""
    visibility = int(cluster.env["REFEREE_VISIBILITY_TIMEOUT_S"])
    settings = Settings(broker_url=cluster.broker, visibility_timeout_s=visibility)
    options = make_celery(settings).conf.broker_transport_options
    expire: int = options.get("unacked_mutex_expire", 300)  # kombu's default
    return expire


def test_redis_restarted_mid_job(cluster: Cluster, tmp_path: Path) -> None:
    with Client(cluster.url) as client:
        job_id = client.submit_job(slow_job(tmp_path / "items.jsonl"))
        wait_progress(client, job_id, 500)
        cluster.stop_redis()
        time.sleep(1.0)
        cluster.start_redis()  # same port, same AOF directory
        assert_exactly_once(cluster, client, job_id, tmp_path)


def test_gateway_restarted_mid_job(cluster: Cluster, tmp_path: Path) -> None:
    with Client(cluster.url) as client:
        job_id = client.submit_job(slow_job(tmp_path / "items.jsonl"))
        wait_progress(client, job_id, 500)
    cluster.stop_gateway()
    time.sleep(0.5)
    cluster.start_gateway()
    with Client(cluster.url) as client:
        assert client.job(job_id)["state"] in ("running", "done")
        assert_exactly_once(cluster, client, job_id, tmp_path)
