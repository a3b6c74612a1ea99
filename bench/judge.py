"""Judge benchmark: rubric items/s against a loopback endpoint that answers after 200 ms.

A Starlette app under uvicorn (its own process) plays the judge: every chat completion is
answered after a fixed ``--latency`` (0.2 s) with a valid rubric verdict. With a
concurrency limit C the best possible throughput is C / latency items/s (one call per
item); the table reports measured items/s against that ideal for:

- cold: every item distinct (every item pays one call);
- half duplicated: each distinct item appears twice (identical ones share one call or hit
  the cache), ideal counted on the distinct calls;
- warm: the cold items again (every item a cache hit; no ideal, no HTTP).

Then the outage checks: the judge unreachable (a closed port) and the judge hung (accepts,
never answers): every item must come back ``error`` within its deadline, none hung.

    python bench/judge.py [--items 2000] [--concurrency 64] [--latency 0.2]

Prints a table and writes ``bench/results/judge.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import free_port, wait_http  # noqa: E402
from verifiers import Item, Status  # noqa: E402
from verifiers.judge import JudgeProfile, JudgeVerifier  # noqa: E402

RUBRIC = [
    {"id": "correct", "text": "The final answer is correct.", "weight": 3, "critical": True},
    {"id": "explains", "text": "The reasoning is explained step by step.", "weight": 1},
    {"id": "concise", "text": "Tone", "kind": "likert", "min": 1, "max": 5},
    {"id": "hedges", "text": "It hedges without committing to an answer.", "weight": -1},
]
VERDICT = json.dumps(
    {
        "criteria": [
            {"id": "correct", "reason": "matches", "score": 1},
            {"id": "explains", "reason": "some steps", "score": 1},
            {"id": "concise", "reason": "a bit long", "score": 4},
            {"id": "hedges", "reason": "commits", "score": 0},
        ]
    }
)


def judge_app(latency: float) -> Any:
    """The fake judge: ``/v1`` answers after ``latency``; ``/hang/v1`` never answers."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def complete(request: Request) -> JSONResponse:
        await request.body()
        await asyncio.sleep(latency)
        usage = {"prompt_tokens": 350, "completion_tokens": 60}
        choice = {"index": 0, "message": {"role": "assistant", "content": VERDICT}}
        return JSONResponse({"choices": [choice], "usage": usage})

    async def hang(request: Request) -> JSONResponse:
        await asyncio.sleep(3600)
        return JSONResponse({})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", complete, methods=["POST"]),
            Route("/hang/v1/chat/completions", hang, methods=["POST"]),
            Route("/", lambda _: JSONResponse({"ok": True})),
        ]
    )


def items(count: int, distinct: int) -> list[Item]:
    return [
        Item(
            id=str(i),
            verifier="judge",
            prompt=f"Problem {i % distinct}: what is {i % distinct} + 1?",
            response=f"It is {i % distinct + 1}, because adding one to {i % distinct} gives that.",
            reference={"rubric": RUBRIC, "answer": str(i % distinct + 1)},
            params={"profile": "bench"},
        )
        for i in range(count)
    ]


def profile(url: str, args: argparse.Namespace, **overrides: Any) -> JudgeProfile:
    base = {"base_url": url, "model": "bench", "concurrency": args.concurrency, "timeout_s": 10}
    return JudgeProfile.model_validate({**base, **overrides})


async def run(judge: JudgeVerifier, batch: list[Item]) -> tuple[float, Counter[str]]:
    start = time.perf_counter()
    results = await judge.ascore(batch)
    elapsed = time.perf_counter() - start
    assert [r.id for r in results] == [i.id for i in batch], "lost or reordered items"
    return elapsed, Counter(r.status.value for r in results)


async def throughput(url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    ideal = args.concurrency / args.latency
    judge = JudgeVerifier(profiles={"bench": profile(url, args)}, item_deadline_s=120)
    cold = items(args.items, args.items)
    rows = []
    for name, batch, calls in (
        ("cold (all distinct)", cold, args.items),
        ("warm (all cached)", cold, 0),
    ):
        elapsed, statuses = await run(judge, batch)
        rows.append(row(name, batch, calls, elapsed, statuses, ideal))
    fresh = JudgeVerifier(profiles={"bench": profile(url, args)}, item_deadline_s=120)
    half = items(args.items, args.items // 2)
    elapsed, statuses = await run(fresh, half)
    rows.insert(1, row("half duplicated", half, args.items // 2, elapsed, statuses, ideal))
    await judge.aclose()
    await fresh.aclose()
    return rows


def row(
    name: str, batch: list[Item], calls: int, elapsed: float, statuses: Counter[str], ideal: float
) -> dict[str, Any]:
    rate = len(batch) / elapsed
    ideal_rate = ideal * len(batch) / calls if calls else None
    return {
        "run": name,
        "items": len(batch),
        "http_calls": calls,
        "seconds": round(elapsed, 3),
        "items_per_s": round(rate, 1),
        "ideal_items_per_s": round(ideal_rate, 1) if ideal_rate else None,
        "of_ideal": round(rate / ideal_rate, 3) if ideal_rate else None,
        "statuses": dict(statuses),
    }


async def outages(url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    hung = url.replace("/v1", "/hang/v1")
    rows = []
    for name, target in (("unreachable", closed), ("hung", hung)):
        judge_profile = profile(target, args, timeout_s=0.5, retries=3, backoff_s=0.1)
        judge = JudgeVerifier(profiles={"bench": judge_profile}, item_deadline_s=args.deadline)
        batch = items(200, 200)
        elapsed, statuses = await run(judge, batch)
        await judge.aclose()
        rows.append(
            {
                "outage": name,
                "items": len(batch),
                "deadline_s": args.deadline,
                "seconds": round(elapsed, 3),
                "statuses": dict(statuses),
                "all_error_within_deadline": statuses[Status.ERROR.value] == len(batch)
                and elapsed < args.deadline,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2, help="judge reply delay, s")
    parser.add_argument("--deadline", type=float, default=3.0, help="item deadline, outages")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        import uvicorn

        app = judge_app(args.latency)
        uvicorn.run(
            app,
            host="127.0.0.1",
            port=args.serve,
            access_log=False,
            log_level="error",
            timeout_graceful_shutdown=1,
        )
        return
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--latency", str(args.latency)]
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/")
        url = f"http://127.0.0.1:{port}/v1"
        rows = asyncio.run(throughput(url, args))
        outage_rows = asyncio.run(outages(url, args))
    finally:
        server.kill()  # the hung route never finishes, so no graceful shutdown
        server.wait(timeout=15)
    print_table(rows, outage_rows, args)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    meta = {"cores": os.cpu_count(), **{k: v for k, v in vars(args).items() if k != "serve"}}
    payload = {"meta": meta, "rows": rows, "outages": outage_rows}
    (out / "judge.json").write_text(json.dumps(payload, indent=2))


def print_table(
    rows: list[dict[str, Any]], outage_rows: list[dict[str, Any]], args: argparse.Namespace
) -> None:
    print(
        f"machine: {platform.node()} {os.cpu_count()} cores; concurrency={args.concurrency}, "
        f"judge latency={args.latency} s, ideal={args.concurrency / args.latency:.0f} calls/s"
    )
    print(
        f"{'run':<22} {'items':>6} {'calls':>6} {'s':>7} {'items/s':>9} {'ideal':>8} "
        f"{'of ideal':>8}"
    )
    for r in rows:
        ideal = f"{r['ideal_items_per_s']:.0f}" if r["ideal_items_per_s"] else "-"
        share = f"{r['of_ideal']:.1%}" if r["of_ideal"] else "-"
        print(
            f"{r['run']:<22} {r['items']:>6} {r['http_calls']:>6} {r['seconds']:>7.2f} "
            f"{r['items_per_s']:>9.1f} {ideal:>8} {share:>8}  {r['statuses']}"
        )
    for o in outage_rows:
        print(
            f"outage {o['outage']:<12} {o['items']} items, deadline {o['deadline_s']} s: "
            f"{o['statuses']} in {o['seconds']:.2f} s; all error in time: "
            f"{o['all_error_within_deadline']}"
        )


if __name__ == "__main__":
    main()
