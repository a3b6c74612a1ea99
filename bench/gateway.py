"""Gateway benchmark: items/s and latency of ``POST /v1/score`` with the ``string`` verifier.

Runs, in one invocation and over loopback HTTP:
- referee: ``referee serve`` (embedded executor, worker processes with per-item deadlines);
- baseline: a plain FastAPI endpoint that compares strings inline in the request handler
  (what a trainer typically glues together: no isolation, no deadlines, no statuses).

For each batch size it sends requests sequentially from one keep-alive connection
(latency p50/p99) and then from ``--clients`` concurrent connections (throughput).

    python bench/gateway.py [--quick] [--workers 2] [--clients 4]

Prints a table and writes ``bench/results/gateway.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
from fastapi import FastAPI
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import free_port, wait_http  # noqa: E402


class BaselineItem(BaseModel):
    response: str
    reference: str


class BaselineRequest(BaseModel):
    items: list[BaselineItem]


def baseline_app() -> FastAPI:
    """The naive server: one pydantic model, inline comparison, nothing else."""
    app = FastAPI()

    @app.post("/v1/score")
    def score(request: BaselineRequest) -> dict[str, Any]:
        return {
            "results": [
                {"reward": float(i.response.strip() == i.reference.strip())} for i in request.items
            ]
        }

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


def start(kind: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    if kind == "referee":
        argv = [sys.executable, "-m", "referee.service", "serve", "--port", str(port)]
        argv += ["--workers", str(workers)]
    else:
        argv = [sys.executable, __file__, "--serve-baseline", str(port)]
    env = {**os.environ, "REFEREE_MAX_ITEMS_PER_REQUEST": "10000"}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/healthz")
    return proc, url


def body(batch: int) -> bytes:
    items = [
        {"verifier": "string", "response": f" answer {i % 7} ", "reference": f"answer {i % 5}"}
        for i in range(batch)
    ]
    return orjson.dumps({"items": items, "details": False})


def sequential(url: str, payload: bytes, requests: int) -> list[float]:
    """Latency of each request, in seconds, one connection, one after another."""
    latencies = []
    headers = {"Content-Type": "application/json"}
    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(3):
            client.post("/v1/score", content=payload, headers=headers).raise_for_status()
        for _ in range(requests):
            start = time.perf_counter()
            client.post("/v1/score", content=payload, headers=headers).raise_for_status()
            latencies.append(time.perf_counter() - start)
    return latencies


def concurrent(url: str, payload: bytes, clients: int, per_client: int) -> float:
    """Wall seconds for ``clients`` connections each sending ``per_client`` requests."""
    barrier = threading.Barrier(clients + 1)

    def run() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            client.post("/v1/score", content=payload, headers={"Content-Type": "application/json"})
            barrier.wait()
            for _ in range(per_client):
                client.post(
                    "/v1/score", content=payload, headers={"Content-Type": "application/json"}
                ).raise_for_status()

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def measure(url: str, batch: int, args: argparse.Namespace) -> dict[str, float]:
    payload = body(batch)
    requests = max(20, int((200 if args.quick else 1000) / max(1, batch**0.5)))
    latencies = sequential(url, payload, requests)
    per_client = max(5, requests // args.clients)
    wall = concurrent(url, payload, args.clients, per_client)
    return {
        "batch": batch,
        "requests": requests,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": statistics.quantiles(latencies, n=100)[98] * 1000,
        "seq_items_per_s": batch * len(latencies) / sum(latencies),
        "conc_items_per_s": batch * per_client * args.clients / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--workers", type=int, default=2, help="referee CPU workers")
    parser.add_argument("--clients", type=int, default=4, help="concurrent connections")
    parser.add_argument("--batches", default="1,64,1024")
    parser.add_argument("--serve-baseline", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        import uvicorn

        uvicorn.run(baseline_app(), port=args.serve_baseline, access_log=False, log_level="error")
        return
    batches = [int(b) for b in args.batches.split(",")]
    rows = []
    for kind in ("referee", "baseline"):
        proc, url = start(kind, args.workers)
        try:
            rows += [{"server": kind, **measure(url, b, args)} for b in batches]
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    print_table(rows, args)
    write(rows, args)


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"machine: {platform.node()} {os.cpu_count()} cores; referee workers={args.workers}")
    header = f"{'server':<9} {'batch':>5} {'p50 ms':>8} {'p99 ms':>8} {'items/s seq':>12}"
    print(f"{header} {'items/s ' + str(args.clients) + ' conns':>16}")
    for r in rows:
        print(
            f"{r['server']:<9} {r['batch']:>5} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
            f"{r['seq_items_per_s']:>12,.0f} {r['conc_items_per_s']:>16,.0f}"
        )


def write(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    meta = {"cores": os.cpu_count(), "workers": args.workers, "clients": args.clients}
    (out / "gateway.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
