"""Client benchmark: 1,000 concurrent single-sample calls (the OpenRLHF pattern).

Side by side against the same ``referee serve`` on loopback:
- one HTTP request per sample (``AsyncClient.score([item])`` for each, 64 connections);
- client-side batching (``AsyncClient.score_one``: concurrent calls share requests).

    python bench/client.py [--calls 1000] [--rounds 3]

Prints a table (median of the rounds) and writes ``bench/results/client.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.service.client import AsyncClient  # noqa: E402
from referee.verifiers.types import Item, Result  # noqa: E402
from tests.conftest import start_server, stop_server  # noqa: E402


def items(count: int) -> list[Item]:
    return [
        Item(
            id=str(i),
            verifier="math",
            response=f"so the answer is \\boxed{{{i % 50}}}",
            reference=str(i % 40),
        )
        for i in range(count)
    ]


async def per_request(url: str, batch: list[Item]) -> float:
    # In-flight requests are bounded by the connections, so the baseline measures the
    # server's per-request cost rather than an HTTP pool thrashing under 1,000 waiters.
    gate = asyncio.Semaphore(64)

    async with AsyncClient(url, max_connections=64) as client:

        async def one(item: Item) -> list[Result]:
            async with gate:
                return await client.score([item])

        start = time.perf_counter()
        results = await asyncio.gather(*(one(item) for item in batch))
        wall = time.perf_counter() - start
    assert [r[0].id for r in results] == [i.id for i in batch]
    return wall


async def batched(url: str, batch: list[Item]) -> float:
    async with AsyncClient(url, max_connections=64, linger_s=0.005) as client:
        start = time.perf_counter()
        results = await asyncio.gather(*(client.score_one(item) for item in batch))
        wall = time.perf_counter() - start
    assert [r.id for r in results] == [i.id for i in batch]
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    proc, url = start_server()
    batch = items(args.calls)
    walls: dict[str, list[float]] = {"one request per sample": [], "client batching": []}
    try:
        asyncio.run(batched(url, batch))  # warm caches and connections
        for _ in range(args.rounds):
            walls["one request per sample"].append(asyncio.run(per_request(url, batch)))
            walls["client batching"].append(asyncio.run(batched(url, batch)))
    finally:
        stop_server(proc)
    rows = {name: args.calls / statistics.median(w) for name, w in walls.items()}
    print(
        f"machine: {platform.node()}, {os.cpu_count()} cores; server and client on loopback; "
        f"{args.calls} concurrent single-sample math calls, median of {args.rounds} rounds"
    )
    for name, rate in rows.items():
        print(f"{name:<24} {rate:>10,.0f} items/s")
    ratio = rows["client batching"] / rows["one request per sample"]
    print(f"client batching / one request per sample = {ratio:.1f}x")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "client.json").write_text(json.dumps({"items_per_s": rows, "ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
