"""Job chunks the broker lost are published again, and only those (real Redis).

The broker's loss is made by hand: a chunk written to the ledger and never published is
what a worker killed between kombu's BRPOP and its unacked record leaves behind.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import redis.asyncio as aioredis

from referee.service.client import Client
from referee.service.distributed.celery_app import (
    batch_queue,
    job_task_id,
    make_celery,
    send_job_chunk,
)
from referee.service.distributed.ledger import LIVE_JOBS, Sweeper, job_chunks, record, watch
from referee.service.distributed.payloads import JobChunk
from referee.service.execution.fair_queue import ANONYMOUS
from referee.service.jobs.redis_store import JobWriter, job_keys, ledger_keys
from referee.service.settings import Settings
from referee.verifiers import Pool, Result, Status
from tests.service.distributed.conftest import Cluster, make_cluster

pytestmark = pytest.mark.integration

JOB = "f" * 32
SIZE = 256


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Cluster]:
    """Our own redis-server, nothing else."""
    cluster = make_cluster(tmp_path)
    try:
        yield cluster
    finally:
        cluster.stop_all()


def make_job(cluster: Cluster, chunks: int, live: bool = True) -> tuple[Sweeper, list[JobChunk]]:
    """A running job of ``chunks`` cpu chunks in the ledger, none published yet; ``live``:
    watched by the sweep (its publishing is over)."""
    settings = Settings(broker_url=cluster.broker, visibility_timeout_s=8)
    ranges = [(Pool.CPU, i * SIZE, (i + 1) * SIZE) for i in range(chunks)]
    chunked = job_chunks(JOB, ranges, 1.0, ANONYMOUS)
    client = cluster.redis()
    meta, *_ = job_keys(JOB)
    client.hset(meta, mapping={"state": "running", "total": chunks * SIZE, "created": 0})
    asyncio.run(record_with(cluster, chunked, live))
    return Sweeper(client, make_celery(settings), settings), chunked


async def record_with(cluster: Cluster, chunks: list[JobChunk], live: bool) -> None:
    client = aioredis.Redis.from_url(cluster.broker)
    try:
        await record(client, JOB, chunks, ttl_s=600)
        if live:
            await watch(client, JOB)
    finally:
        await client.aclose()


def queued(cluster: Cluster) -> list[bytes]:
    """The cpu batch queue's messages, raw."""
    raw = cluster.redis().lrange(batch_queue(Pool.CPU), 0, -1)
    return [m for m in raw if isinstance(m, bytes)]


def queued_ids(cluster: Cluster) -> list[str]:
    return [orjson.loads(m)["headers"]["id"] for m in queued(cluster) if m.startswith(b"{")]


def take(cluster: Cluster, sweeper: Sweeper, chunk: JobChunk) -> None:
    """Publish ``chunk`` and move it to the unacknowledged tasks, as a worker's take does."""
    send_job_chunk(sweeper._app, chunk)
    client = cluster.redis()
    message = client.rpop(batch_queue(Pool.CPU))
    assert isinstance(message, bytes)
    envelope = [orjson.loads(message), "", batch_queue(Pool.CPU)]
    client.hset("unacked", "tag-1", orjson.dumps(envelope))


def score(cluster: Cluster, chunk: JobChunk) -> None:
    results = [Result(status=Status.OK, reward=1.0)] * (chunk.stop - chunk.start)
    JobWriter(cluster.redis()).write(JOB, chunk.start, results, ttl_s=600)


def test_only_a_chunk_missing_from_every_queue_is_published_again(broker: Cluster) -> None:
    sweeper, chunks = make_job(broker, 5)
    queued, taken, lost, scored, _ = chunks
    take(broker, sweeper, taken)
    send_job_chunk(sweeper._app, queued)
    broker.redis().lpush(batch_queue(Pool.CPU), b"not a message")  # read past, not choked on
    score(broker, scored)
    # chunks[4] is lost too, until it turns up late (a requeue in flight)
    assert sweeper.sweep() == []  # the first look: the job's progress noted
    assert sweeper.sweep() == []  # no progress: two chunks suspected
    send_job_chunk(sweeper._app, chunks[4])
    assert sweeper.sweep() == [lost]  # still missing: published again; the late one is not
    assert sorted(queued_ids(broker)) == sorted(job_task_id(c) for c in (queued, chunks[4], lost))
    assert sweeper.sweep() == []  # now queued: never twice
    assert sweeper.sweep() == []


def test_progress_or_an_ended_job_stops_the_suspicion(broker: Cluster) -> None:
    sweeper, chunks = make_job(broker, 3)
    assert sweeper.sweep() == []
    assert sweeper.sweep() == []  # all three suspected
    score(broker, chunks[0])
    assert sweeper.sweep() == []  # the job moved: suspicions dropped, looked at afresh
    assert sweeper.sweep() == []
    client = broker.redis()
    client.hset(job_keys(JOB)[0], "state", "cancelled")
    assert sweeper.sweep() == []  # a cancelled job's chunks are nobody's loss
    assert not client.sismember(LIVE_JOBS, JOB)
    assert not any(client.exists(key) for key in ledger_keys(JOB))
    assert queued_ids(broker) == []


def test_a_job_still_being_published_is_not_swept(broker: Cluster) -> None:
    sweeper, _ = make_job(broker, 2, live=False)
    for _ in range(4):
        assert sweeper.sweep() == []
    assert queued_ids(broker) == []


def test_one_sweeper_at_a_time(broker: Cluster) -> None:
    sweeper, chunks = make_job(broker, 1)
    other = Sweeper(broker.redis(), sweeper._app, Settings(broker_url=broker.broker))
    broker.redis().set("referee:sweep:lock", "another worker's")
    for _ in range(3):
        assert sweeper.sweep() == [] and other.sweep() == []
    broker.redis().delete("referee:sweep:lock")
    assert [sweeper.sweep(), other.sweep(), sweeper.sweep()] == [[], [], chunks]


@pytest.mark.slow
def test_a_job_whose_chunk_the_broker_lost_still_finishes(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, REFEREE_VISIBILITY_TIMEOUT_S="5")  # a sweep each 2 s
    try:
        cluster.start_gateway()  # no worker yet: the job's chunks wait in the queue
        path = tmp_path / "items.jsonl"
        lines = [
            orjson.dumps({"id": str(i), "verifier": "string", "response": "a", "reference": "a"})
            for i in range(4 * SIZE)
        ]
        path.write_bytes(b"\n".join(lines) + b"\n")
        with Client(cluster.url) as client:
            job_id = client.submit_job(path)
            queue = cluster.redis()
            messages = queued(cluster)
            lost = next(m for m in messages if orjson.loads(m)["headers"]["id"].endswith(":512"))
            assert queue.lrem(batch_queue(Pool.CPU), 1, lost.decode()) == 1
            started = time.monotonic()
            cluster.start_worker()
            final = client.wait_job(job_id, poll_s=0.25, timeout_s=90)
            assert final["state"] == "done" and final["counts"] == {"ok": 4 * SIZE}, final
            assert time.monotonic() - started < 60
            assert queue.hlen(f"referee:job:{job_id}:results") == 4 * SIZE
        worker_log = (tmp_path / "worker-0.log").read_text()
        assert f"job {job_id}: chunk 512 was lost" in worker_log
    finally:
        cluster.stop_all()
