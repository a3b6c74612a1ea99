"""Batch jobs in Redis: the items as uploaded, one result per item written once, counters.

Layout, for job ``J`` (every key expires ``job_ttl_s`` after the job is created):
- ``referee:job:J`` hash: ``state`` (running | done | cancelled), ``total``, ``created``,
  ``finished``, ``tenant`` (the owner's key digest), ``bytes`` (the upload's size);
- ``referee:job:J:items`` list: the raw JSONL lines, in upload order;
- ``referee:job:J:results`` hash: line index -> result JSON, written with HSETNX so a
  redelivered chunk can never overwrite or double-count a result;
- ``referee:job:J:counts`` hash: status -> count, plus ``done``;
- ``referee:job:J:summary``: the summary folded so far (`JobStore.summary`);
- ``referee:job:J:chunks`` hash and ``referee:job:J:sweep`` hash: the ledger of its
  chunks and the sweep's notes (`ledger_keys`, `service.distributed.ledger`).

Per owner, ``referee:tenant:T:jobs`` is a set of its job ids, for quotas; an id whose
job hash has expired is dropped from it when the owner's usage is next read.

The Lua script below writes results and bumps counters atomically, so "scored exactly
once" holds across worker kills, redeliveries and Redis restarts (with AOF persistence).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import orjson
import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from referee.service.jobs.status import JobState, JobStatus
from referee.service.jobs.summary import JobSummary, group_of
from referee.verifiers.types import ErrorInfo, Result, Status

PREFIX = "referee:job:"
TENANT_PREFIX = "referee:tenant:"
READ_BATCH = 1000

_WRITE_ONCE = """
local written = 0
for i = 1, #ARGV - 1, 3 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HINCRBY', KEYS[2], ARGV[i + 2], 1)
    written = written + 1
  end
end
local done = redis.call('HINCRBY', KEYS[2], 'done', written)
local total = tonumber(redis.call('HGET', KEYS[3], 'total') or '-1')
if done >= total and redis.call('HGET', KEYS[3], 'state') == 'running' then
  redis.call('HSET', KEYS[3], 'state', 'done', 'finished', ARGV[#ARGV])
end
return written
"""


def job_keys(job_id: str) -> tuple[str, str, str, str]:
    """(meta, items, results, counts) keys of a job."""
    base = PREFIX + job_id
    return base, f"{base}:items", f"{base}:results", f"{base}:counts"


def ledger_keys(job_id: str) -> tuple[str, str]:
    """(chunks, sweep notes) keys of a distributed job."""
    base = PREFIX + job_id
    return f"{base}:chunks", f"{base}:sweep"


def retrying(url: str, **kwargs: Any) -> redis.Redis:
    """A sync client that rides out a Redis restart (reconnects with backoff for ~1 min)."""
    retry = Retry(ExponentialBackoff(cap=2.0, base=0.05), retries=40)
    return redis.Redis.from_url(
        url,
        retry=retry,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
        socket_timeout=30,
        socket_connect_timeout=5,
        **kwargs,
    )


def aretrying(url: str, retries: int = 40, **kwargs: Any) -> aioredis.Redis:
    """The asyncio twin of `retrying`; ``retries`` bounds how long a call rides out an
    outage (the gateway keeps it short and answers 503 rather than hang a request)."""

    retry = AsyncRetry(ExponentialBackoff(cap=2.0, base=0.05), retries=retries)
    return aioredis.Redis.from_url(
        url,
        retry=retry,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
        socket_timeout=30,
        socket_connect_timeout=5,
        **kwargs,
    )


def tenant_key(tenant: str) -> str:
    """The set of ``tenant``'s job ids."""
    return f"{TENANT_PREFIX}{tenant}:jobs"


class JobStore:
    """Gateway side: create jobs from a stream of lines, report progress, read results."""

    def __init__(self, client: aioredis.Redis, ttl_s: int) -> None:
        self._redis = client
        self._ttl = ttl_s

    async def create(self, lines: AsyncIterator[list[bytes]], tenant: str = "") -> tuple[str, int]:
        """Store every line of the upload (in batches as they arrive); return (id, count).

        The job is not visible as ``running`` until the upload is complete, so workers
        never see a partial total.
        """
        job_id = uuid.uuid4().hex
        meta, items, _, _ = job_keys(job_id)
        await self._redis.hset(
            meta, mapping={"state": "uploading", "created": time.time(), "tenant": tenant}
        )
        await self._redis.expire(meta, self._ttl)
        total = 0
        try:
            async for batch in lines:
                if batch:
                    await self._redis.rpush(items, *batch)
                    await self._redis.expire(items, self._ttl)
                    total += len(batch)
        except BaseException:
            await self._redis.delete(meta, items)  # a failed upload leaves nothing behind
            raise
        await self._redis.hset(meta, mapping={"state": "running", "total": total})
        return job_id, total

    async def usage(self, tenant: str) -> tuple[int, int]:
        """(bytes uploaded, jobs held) by ``tenant``'s unexpired jobs."""
        members = [_bytes(m).decode() for m in await self._redis.smembers(tenant_key(tenant))]
        if not members:
            return 0, 0
        pipe = self._redis.pipeline()
        for job_id in members:
            pipe.hget(job_keys(job_id)[0], "bytes")
            pipe.exists(job_keys(job_id)[0])
        found = await pipe.execute()
        used, held, gone = 0, 0, []
        for job_id, size, exists in zip(members, found[::2], found[1::2], strict=True):
            if not exists:
                gone.append(job_id)
            else:
                held += 1
                used += int(size or 0)
        if gone:
            await self._redis.srem(tenant_key(tenant), *gone)
        return used, held

    async def record_size(self, job_id: str, tenant: str, size: int) -> None:
        """Count a stored upload of ``size`` bytes against ``tenant``."""
        meta, *_ = job_keys(job_id)
        await self._redis.hset(meta, "bytes", size)
        await self._redis.sadd(tenant_key(tenant), job_id)
        await self._redis.expire(tenant_key(tenant), self._ttl)

    async def delete(self, job_id: str) -> None:
        """Remove the job's keys and its place in its owner's set."""
        meta, *_ = job_keys(job_id)
        tenant = await self._redis.hget(meta, "tenant")
        await self._redis.delete(*job_keys(job_id), *ledger_keys(job_id), f"{meta}:summary")
        if tenant is not None:
            await self._redis.srem(tenant_key(_bytes(tenant).decode()), job_id)

    async def status(self, job_id: str) -> JobStatus | None:
        meta, _, _, counts_key = job_keys(job_id)
        raw = {
            _bytes(k).decode(): _bytes(v).decode()
            for k, v in (await self._redis.hgetall(meta)).items()
        }
        if not raw:
            return None
        counted = await self._redis.hgetall(counts_key)
        counts = {_bytes(k).decode(): int(v) for k, v in counted.items()}
        done = counts.pop("done", 0)
        return JobStatus(
            id=job_id,
            state=JobState(raw["state"]),
            total=int(raw.get("total", 0)),
            done=done,
            counts=counts,
            created=float(raw["created"]),
            finished=float(raw["finished"]) if "finished" in raw else None,
            tenant=raw.get("tenant", ""),
        )

    async def of_tenant(self, tenant: str) -> list[JobStatus]:
        """``tenant``'s unexpired jobs, newest first."""
        members = [_bytes(m).decode() for m in await self._redis.smembers(tenant_key(tenant))]
        found = [await self.status(job_id) for job_id in members]
        jobs = [job for job in found if job is not None and job.tenant == tenant]
        return sorted(jobs, key=lambda job: job.created, reverse=True)

    async def finish_empty(self, job_id: str) -> None:
        """A job with no lines is done as soon as it exists."""
        meta, *_ = job_keys(job_id)
        await self._redis.hset(meta, mapping={"state": "done", "finished": time.time()})

    async def cancel(self, job_id: str) -> bool:
        """Mark a running job cancelled; workers skip its remaining chunks."""
        meta, *_ = job_keys(job_id)
        state = await self._redis.hget(meta, "state")
        if state is None:
            return False
        if state in (b"running", b"uploading"):
            await self._redis.hset(meta, mapping={"state": "cancelled", "finished": time.time()})
        return True

    async def summary(self, job_id: str, total: int) -> JobSummary:
        """The job's summary over its results in input order up to the first line not
        scored yet (a cancelled job's unscored lines are not results: they are left out,
        as in the embedded store), folded on from the stored one and stored again."""
        base, items_key, results_key, _ = job_keys(job_id)
        stored = await self._redis.get(f"{base}:summary")
        summary = JobSummary.from_json(orjson.loads(stored)) if stored else JobSummary()
        before = summary.folded
        while summary.folded < total:
            start = summary.folded
            stop = min(total, start + READ_BATCH)
            values = await self._redis.hmget(results_key, [str(i) for i in range(start, stop)])
            lines = await self._redis.lrange(items_key, start, stop - 1)
            for value, line in zip(values, lines, strict=False):
                if value is None:
                    break
                summary.add(orjson.loads(value), group_of(_bytes(line)))
            if summary.folded < stop:  # a line not scored yet (or no longer stored)
                break
        if summary.folded != before:
            await self._redis.set(f"{base}:summary", orjson.dumps(summary.to_json()), ex=self._ttl)
        return summary

    async def line(self, job_id: str, index: int) -> tuple[bytes | None, bytes | None]:
        """Line ``index`` of the job's upload and its result, when stored."""
        _, items_key, results_key, _ = job_keys(job_id)
        item = await self._redis.lindex(items_key, index)
        result = await self._redis.hget(results_key, str(index))
        return _maybe_bytes(item), _maybe_bytes(result)

    async def results(self, job_id: str, total: int) -> AsyncIterator[bytes]:
        """Result lines in input order; items never scored (cancelled) get a placeholder."""
        _, _, results_key, _ = job_keys(job_id)
        for start in range(0, total, READ_BATCH):
            fields = [str(i) for i in range(start, min(total, start + READ_BATCH))]
            values = await self._redis.hmget(results_key, fields)
            yield b"".join((_bytes(v) if v is not None else CANCELLED_LINE) + b"\n" for v in values)


def _maybe_bytes(value: bytes | str | None) -> bytes | None:
    return None if value is None else _bytes(value)


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


CANCELLED_LINE = orjson.dumps(
    Result(
        status=Status.TIMEOUT,
        error=ErrorInfo(code="cancelled", message="the job was cancelled before this item"),
    ).model_dump(mode="json")
)


class JobWriter:
    """Worker side: read a chunk's lines, write its results exactly once."""

    def __init__(self, client: redis.Redis) -> None:
        self._redis = client
        self._write_once = client.register_script(_WRITE_ONCE)

    def state(self, job_id: str) -> str | None:
        meta, *_ = job_keys(job_id)
        state = self._redis.hget(meta, "state")
        return state.decode() if isinstance(state, bytes) else None

    def lines(self, job_id: str, start: int, stop: int) -> list[bytes]:
        _, items, _, _ = job_keys(job_id)
        found: list[bytes] = self._redis.lrange(items, start, stop - 1)  # type: ignore[assignment]
        return found

    def write(self, job_id: str, start: int, results: list[Result], ttl_s: int) -> int:
        """Store results for lines ``start..``; returns how many were new."""
        meta, _, results_key, counts_key = job_keys(job_id)
        args: list[Any] = []
        for offset, result in enumerate(results):
            args += [start + offset, orjson.dumps(result.model_dump(mode="json")), result.status]
        args.append(time.time())
        written = int(self._write_once(keys=[results_key, counts_key, meta], args=args))
        pipe = self._redis.pipeline()
        pipe.expire(results_key, ttl_s)
        pipe.expire(counts_key, ttl_s)
        pipe.execute()
        return written
