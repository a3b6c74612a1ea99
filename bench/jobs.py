"""Embedded jobs benchmark: what durability costs, and what a resume costs.

Side by side in one run, in this process (the embedded executor's real worker pool):
- ``durable``: `LocalJobs` as shipped (results fsynced, then progress committed to
  SQLite, every `CHECKPOINT_S`);
- ``volatile``: the same job path with the fsync and the commit switched off (what the
  path cost before jobs were durable);
and, separately, the cost of resuming a job of ``--resume-lines`` lines stopped at 90%:
the time from `LocalJobs.start` until its first new results are written (scoring has
continued).

    python bench/jobs.py [--lines 100000] [--rounds 3] [--resume-lines 1000000]

Prints medians and writes ``bench/results/jobs.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.service.execution.dispatch import Dispatcher  # noqa: E402
from referee.service.execution.executor import EmbeddedExecutor  # noqa: E402
from referee.service.jobs import local as local_jobs  # noqa: E402
from referee.service.jobs.catalog import JobCatalog, Progress  # noqa: E402
from referee.service.jobs.local import LocalJobs  # noqa: E402
from referee.service.jobs.quota import QuotaRules  # noqa: E402
from referee.service.metrics import Metrics  # noqa: E402
from referee.service.settings import Settings  # noqa: E402
from referee.verifiers.builtin import default_registry  # noqa: E402


def line(i: int) -> bytes:
    item = {"id": f"i{i}", "verifier": "string", "response": str(i % 7), "reference": "3"}
    return orjson.dumps(item) + b"\n"


async def upload(count: int) -> AsyncIterator[bytes]:
    for start in range(0, count, 10_000):
        yield b"".join(line(i) for i in range(start, min(count, start + 10_000)))


@contextmanager
def volatile() -> Iterator[None]:
    """Switch off the fsync and the progress commits: the job path without durability."""
    sync, advance = local_jobs._sync, JobCatalog.advance
    local_jobs._sync = lambda handle: handle.flush()  # type: ignore[assignment]
    JobCatalog.advance = lambda self, job_id, progress: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        local_jobs._sync, JobCatalog.advance = sync, advance  # type: ignore[method-assign]


async def run_job(jobs: LocalJobs, count: int) -> float:
    """Seconds from upload to the job's end."""
    start = time.perf_counter()
    job_id, _ = await jobs.submit(upload(count))
    while (status := await jobs.status(job_id)) is not None and status.state != "done":
        await asyncio.sleep(0.01)
    return time.perf_counter() - start


async def resume_cost(jobs_dir: Path, dispatcher: Dispatcher, count: int) -> float:
    """Seconds from `LocalJobs.start` to the first new results written, resuming a job of
    ``count`` lines whose first 90% are done (files and catalog written directly)."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    job_id, done = "f" * 32, count * 9 // 10
    items_path = jobs_dir / f"{job_id}.items.jsonl"
    offset = 0
    with items_path.open("wb") as sink:
        for i in range(count):
            raw = line(i)
            sink.write(raw)
            offset += len(raw) if i < done else 0
    result = orjson.dumps({"id": "x", "status": "ok", "reward": 1.0}) + b"\n"
    (jobs_dir / f"{job_id}.results.jsonl").write_bytes(result * done)
    catalog = JobCatalog(jobs_dir / "jobs.sqlite3")
    catalog.create(job_id, "", count, time.time())
    catalog.advance(job_id, Progress(done, {"ok": done}, len(result) * done, offset, done))
    catalog.close()
    jobs = LocalJobs(dispatcher, jobs_dir, 1 << 40, 3600, QuotaRules(10, 1 << 40))
    results_path = jobs_dir / f"{job_id}.results.jsonl"
    committed = results_path.stat().st_size
    start = time.perf_counter()
    await jobs.start()
    while results_path.stat().st_size == committed:  # scoring has not continued yet
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - start
    await jobs.close()
    return elapsed


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings(cpu_workers=2)
    registry = default_registry(settings.engines)
    executor = EmbeddedExecutor(settings, registry)
    await executor.start()
    dispatcher = Dispatcher(settings, registry, executor, Metrics(executor.readiness))
    rates: dict[str, list[float]] = {"durable": [], "volatile": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            jobs = LocalJobs(dispatcher, Path(tmp) / "jobs", 1 << 40, 3600, QuotaRules(99, 1 << 40))
            await run_job(jobs, 2000)  # warm-up
            for _ in range(args.rounds):
                for mode in ("durable", "volatile"):
                    if mode == "volatile":
                        with volatile():
                            seconds = await run_job(jobs, args.lines)
                    else:
                        seconds = await run_job(jobs, args.lines)
                    rates[mode].append(args.lines / seconds)
            await jobs.close()
            resume_s = await resume_cost(Path(tmp) / "resume", dispatcher, args.resume_lines)
    finally:
        await executor.close()
    medians = {mode: statistics.median(values) for mode, values in rates.items()}
    return {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
        "lines": args.lines,
        "rounds": args.rounds,
        "items_per_s": medians,
        "durable_over_volatile": medians["durable"] / medians["volatile"],
        "resume_lines": args.resume_lines,
        "resume_to_first_results_s": resume_s,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--resume-lines", type=int, default=1_000_000)
    report = asyncio.run(main(parser.parse_args()))
    out = ROOT / "bench" / "results" / "jobs.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
