"""Distributed benchmark: items/s through a gateway and 2 Celery workers on this machine.

One run starts its own redis-server (loopback, free port), a gateway and two
``referee worker --pool cpu`` processes, then measures ``POST /v1/score`` end to end for
the ``string`` and ``math`` verifiers with chunked tasks (the default: 256 items per
cpu task) and with one task per item (``REFEREE_CHUNK_SIZE=1``), side by side.

    python bench/distributed.py [--quick]

Prints a table and writes ``bench/results/distributed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.math_answers import rl_mix  # noqa: E402
from tests.conftest import free_port, wait_http  # noqa: E402


def string_items(count: int) -> list[dict[str, Any]]:
    return [
        {"verifier": "string", "response": f" answer {i % 7} ", "reference": f"answer {i % 5}"}
        for i in range(count)
    ]


def math_items(count: int) -> list[dict[str, Any]]:
    return [
        {"verifier": "math", "response": response, "reference": gold, "group": str(i // 8)}
        for i, (gold, response, _) in enumerate(rl_mix(count, seed=7))
    ]


class Cluster:
    """redis-server + 2 cpu workers + a gateway, all on loopback; stopped by `close`."""

    def __init__(self, workdir: Path, chunk_size: int | None, worker_procs: int) -> None:
        redis_port, self.port = free_port(), free_port()
        self.env = {
            **os.environ,
            "REFEREE_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "REFEREE_MAX_QUEUE_DEPTH": "1000000",
            "REFEREE_CHUNK_SIZE": str(chunk_size or ""),
        }
        if chunk_size is None:
            del self.env["REFEREE_CHUNK_SIZE"]
        redis_bin = shutil.which("redis-server") or "redis-server"
        self.procs = [
            subprocess.Popen(
                [
                    redis_bin,
                    "--port",
                    str(redis_port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(workdir),
                ],
                stdout=subprocess.DEVNULL,
            )
        ]
        for _ in range(2):
            self._spawn(["worker", "--pool", "cpu", "--concurrency", str(worker_procs)])
        self._spawn(["serve", "--port", str(self.port)])
        self.url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{self.url}/healthz")
        self._wait_workers(2)

    def _spawn(self, args: list[str]) -> None:
        self.procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "referee.service", *args],
                cwd=ROOT,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )

    def _wait_workers(self, count: int) -> None:
        deadline = time.monotonic() + 60
        while httpx.get(f"{self.url}/readyz").json()["pools"]["cpu"]["consumers"] < count:
            if time.monotonic() > deadline:
                raise TimeoutError("workers did not register")
            time.sleep(0.2)

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def throughput(url: str, items: list[dict[str, Any]], batch: int, clients: int) -> dict[str, float]:
    """Send ``items`` in batches from ``clients`` connections; items/s and statuses."""
    bodies = [
        orjson.dumps({"items": items[i : i + batch], "details": False, "deadline_s": 300})
        for i in range(0, len(items), batch)
    ]
    statuses: dict[str, int] = {}
    lock = threading.Lock()

    def run(mine: list[bytes]) -> None:
        with httpx.Client(base_url=url, timeout=600) as client:
            for body in mine:
                response = client.post(
                    "/v1/score", content=body, headers={"Content-Type": "application/json"}
                )
                response.raise_for_status()
                with lock:
                    for result in response.json()["results"]:
                        statuses[result["status"]] = statuses.get(result["status"], 0) + 1

    threads = [threading.Thread(target=run, args=(bodies[i::clients],)) for i in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    return {
        "items": len(items),
        "seconds": wall,
        "items_per_s": len(items) / wall,
        "ok_share": statuses.get("ok", 0) / len(items),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--worker-procs", type=int, default=1, help="scoring processes per worker (2 workers)"
    )
    args = parser.parse_args()
    scale = 1 if args.quick else 4
    workloads = {
        "string": (string_items(20_000 * scale), string_items(2_000 * scale)),
        "math": (math_items(4_000 * scale), math_items(1_000 * scale)),
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode, chunk in (("chunked", None), ("task per item", 1)):
            cluster = Cluster(Path(tmp), chunk, args.worker_procs)
            try:
                for name, (chunked_items, per_item_items) in workloads.items():
                    items = chunked_items if chunk is None else per_item_items
                    throughput(cluster.url, items[:512], 512, 2)  # warm caches and pools
                    rows.append(
                        {
                            "verifier": name,
                            "dispatch": mode,
                            **throughput(cluster.url, items, 2048, 4),
                        }
                    )
            finally:
                cluster.close()
    report(rows)


def report(rows: list[dict[str, Any]]) -> None:
    print(
        f"machine: {platform.node()}, {os.cpu_count()} cores; gateway + 2 cpu workers + "
        "redis on the same machine; 4 client connections, 2,048 items per request"
    )
    print(f"{'verifier':<8} {'dispatch':<14} {'items':>7} {'seconds':>8} {'items/s':>9} {'ok':>6}")
    for r in rows:
        print(
            f"{r['verifier']:<8} {r['dispatch']:<14} {r['items']:>7} {r['seconds']:>8.2f} "
            f"{r['items_per_s']:>9,.0f} {r['ok_share']:>6.0%}"
        )
    for name in ("string", "math"):
        chunked, single = (
            next(r for r in rows if r["verifier"] == name and r["dispatch"] == d)
            for d in ("chunked", "task per item")
        )
        ratio = chunked["items_per_s"] / single["items_per_s"]
        print(f"{name}: chunked / task-per-item = {ratio:.1f}x")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "distributed.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
