"""Judge benchmark: rubric items/s against a loopback endpoint that answers after 200 ms.

A stand-in judge in its own process answers every chat completion a fixed ``--latency``
(0.2 s) after reading it, with a valid rubric verdict. With a concurrency limit C the best
possible throughput is C / latency items/s (one call per item); the table reports measured
items/s against that ideal for:

- cold: every item distinct (every item pays one call);
- half duplicated: each distinct item appears twice (identical ones share one call or hit
  the cache), ideal counted on the distinct calls;
- warm: the cold items again (every item a cache hit; no ideal, no HTTP).

The stand-in is a few dozen lines of asyncio (a `StandInJudge` protocol per keep-alive
HTTP/1.1 connection), not a web framework, because a real judge model runs on another
machine: whatever CPU the stand-in burns here is taken from the client under test on the
same two cores (uvicorn + Starlette spent 0.68 ms of CPU per call at concurrency 64, this
stand-in 0.47 ms). It still reads every request in full (head and ``Content-Length``
body), rejects a body that is not a chat-completions request, and answers a complete chat
completion. Each row also reports the client's CPU per HTTP call and per item
(``getrusage`` of this process around the run), the stand-in's CPU per call, and its
measured reply delay (request read to reply written; mean/p99), so the 200 ms behind the
ideal can be checked.

Then the outage checks: the judge unreachable (a closed port) and the judge hung (accepts,
never answers): every item must come back ``error`` within its deadline, none hung. Every
run asserts that each item comes back exactly once, in order.

    python bench/judge.py [--items 2000] [--concurrency 64] [--latency 0.2]

Prints a table and writes ``bench/results/judge.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.verifiers import Item, Status  # noqa: E402
from referee.verifiers.judge import JudgeProfile, JudgeVerifier  # noqa: E402
from tests.conftest import free_port, wait_http  # noqa: E402

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
MAX_HEAD = 64 * 1024
"""Largest request head the stand-in reads before answering 431."""


class BadRequest(Exception):
    """A request the stand-in cannot read; answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Request:
    """One fully read HTTP/1.1 request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


def take_request(buffer: bytearray) -> Request | None:
    """Remove one complete request (head and ``Content-Length`` body) from the front of
    ``buffer``; None while it is incomplete. Raises `BadRequest` for what it cannot read."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > MAX_HEAD:
            raise BadRequest(431, "request head too large")
        return None
    lines = buffer[:end].decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ")
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:])
        }
        length = int(headers.get("content-length", "0"))
        if length < 0:
            raise ValueError(length)
    except ValueError:
        raise BadRequest(400, f"malformed request head: {lines[0]!r}") from None
    if "chunked" in headers.get("transfer-encoding", ""):
        # The judge client sends JSON bodies with Content-Length; chunked ones never come.
        raise BadRequest(501, "chunked request bodies are not supported")
    if len(buffer) < end + 4 + length:
        return None
    body = bytes(buffer[end + 4 : end + 4 + length])
    del buffer[: end + 4 + length]
    return Request(method, target.split("?", 1)[0], headers, body)


def http_response(status: int, payload: Any, close: bool = False) -> bytes:
    """A complete HTTP/1.1 response with ``payload`` as its JSON body."""
    body = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        + ("connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode("latin-1") + body


def chat_completion(body: bytes) -> dict[str, Any]:
    """The verdict as a chat completion for a request ``body``; `BadRequest` (400) when the
    body is not a chat-completions request (the stand-in reads every request in full)."""
    try:
        request = json.loads(body)
        model, messages = request["model"], request["messages"]
        valid = isinstance(model, str) and isinstance(messages, list) and bool(messages)
        valid = valid and all(isinstance(m["role"], str) for m in messages)
        valid = valid and all(isinstance(m["content"], str) for m in messages)
    except (ValueError, KeyError, TypeError):
        valid = False
    if not valid:
        raise BadRequest(400, "not a chat-completions request")
    message = {"role": "assistant", "content": VERDICT}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 350, "completion_tokens": 60, "total_tokens": 410},
    }


class Replies:
    """What the stand-in has answered since the last ``GET /stats``: the delay of each
    chat completion, from its request read in full to its reply written."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def stats(self) -> dict[str, Any]:
        """This process's CPU seconds so far and the delays since the last call (then reset)."""
        delays, self.delays = sorted(self.delays), []
        summary: dict[str, Any] = {"cpu_s": time.process_time(), "replies": len(delays)}
        if delays:
            summary["delay_mean_s"] = sum(delays) / len(delays)
            summary["delay_p50_s"] = delays[len(delays) // 2]
            summary["delay_p99_s"] = delays[int(len(delays) * 0.99)]
        return summary


class StandInJudge(asyncio.Protocol):
    """One keep-alive connection to the stand-in judge.

    Requests are read and answered one at a time, in order (HTTP/1.1 without pipelined
    replies): a chat completion ``latency`` seconds after it was read, the ``/hang`` route
    never (the connection stays open until the client gives up on it), ``GET /`` at once
    (readiness) and ``GET /stats`` with `Replies.stats`.
    """

    def __init__(self, latency: float, replies: Replies) -> None:
        self._latency = latency
        self._replies = replies
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._busy = False  # a request is being answered; the next waits in the buffer
        self._timer: asyncio.TimerHandle | None = None
        self._close = False  # the client asked to close after this reply

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._serve_next()

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if self._timer is not None:
            self._timer.cancel()

    def _serve_next(self) -> None:
        if self._busy or self._transport is None:
            return
        try:
            request = take_request(self._buffer)
            if request is not None:
                self._route(request)
        except BadRequest as exc:
            self._transport.write(http_response(exc.status, {"error": str(exc)}, close=True))
            self._transport.close()

    def _route(self, request: Request) -> None:
        self._busy = True
        self._close = request.headers.get("connection", "").lower() == "close"
        route = (request.method, request.path)
        if route == ("POST", "/v1/chat/completions"):
            read_at = time.perf_counter()
            reply = http_response(200, chat_completion(request.body))
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._latency, self._reply, reply, read_at)
        elif route == ("POST", "/hang/v1/chat/completions"):
            chat_completion(request.body)  # read in full, then never answered
        elif route == ("GET", "/"):
            self._send(http_response(200, {"ok": True}))
        elif route == ("GET", "/stats"):
            self._send(http_response(200, self._replies.stats()))
        else:
            self._send(http_response(404, {"error": f"no route {request.method} {request.path}"}))

    def _reply(self, reply: bytes, read_at: float) -> None:
        self._replies.delays.append(time.perf_counter() - read_at)
        self._send(reply)

    def _send(self, reply: bytes) -> None:
        self._timer = None
        self._busy = False
        if self._transport is None:
            return
        self._transport.write(reply)
        if self._close:
            self._transport.close()
        else:
            self._serve_next()


async def serve(port: int, latency: float) -> None:
    """Run the stand-in judge on 127.0.0.1:``port`` until the process is killed."""
    loop = asyncio.get_running_loop()
    replies = Replies()
    server = await loop.create_server(
        lambda: StandInJudge(latency, replies), "127.0.0.1", port, backlog=1024
    )
    async with server:
        await server.serve_forever()


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


@dataclass(frozen=True)
class Measured:
    """One timed ``ascore``: wall seconds, statuses, the client's CPU seconds and what the
    stand-in judge reported for the run (`Replies.stats`, its CPU as a difference)."""

    elapsed: float
    statuses: Counter[str]
    client_cpu_s: float
    judge: dict[str, Any]


def own_cpu_s() -> float:
    """User + system CPU seconds of this (the client's) process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def judge_stats(health: str | None) -> dict[str, Any]:
    """`Replies.stats` of the stand-in judge (empty when there is no judge to ask)."""
    if health is None:
        return {}
    stats: dict[str, Any] = httpx.get(f"{health}stats", timeout=5).json()
    return stats


async def run(judge: JudgeVerifier, batch: list[Item], health: str | None = None) -> Measured:
    """Score ``batch`` once; asserts every item came back once, in order."""
    judge_before, client_before = judge_stats(health), own_cpu_s()
    start = time.perf_counter()
    results = await judge.ascore(batch)
    elapsed = time.perf_counter() - start
    client = own_cpu_s() - client_before
    assert [r.id for r in results] == [i.id for i in batch], "lost, duplicated or reordered"
    statuses = Counter(r.status.value for r in results)
    judge_after = judge_stats(health)
    if judge_after:
        judge_after["cpu_s"] -= judge_before["cpu_s"]
    return Measured(elapsed, statuses, client, judge_after)


async def throughput(url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Rows for the cold, half-duplicated and warm runs against the judge at ``url``."""
    ideal = args.concurrency / args.latency
    health = url.removesuffix("v1")
    judge = JudgeVerifier(profiles={"bench": profile(url, args)}, item_deadline_s=120)
    cold = items(args.items, args.items)
    rows = []
    for name, batch, calls in (
        ("cold (all distinct)", cold, args.items),
        ("warm (all cached)", cold, 0),
    ):
        rows.append(row(name, batch, calls, await run(judge, batch, health), ideal))
    fresh = JudgeVerifier(profiles={"bench": profile(url, args)}, item_deadline_s=120)
    half = items(args.items, args.items // 2)
    measured = await run(fresh, half, health)
    rows.insert(1, row("half duplicated", half, args.items // 2, measured, ideal))
    await judge.aclose()
    await fresh.aclose()
    return rows


def row(
    name: str, batch: list[Item], calls: int, measured: Measured, ideal: float
) -> dict[str, Any]:
    """One table row; CPU per call counts every item's work (cache hits too) per HTTP call."""
    rate = len(batch) / measured.elapsed
    ideal_rate = ideal * len(batch) / calls if calls else None
    return {
        "run": name,
        "items": len(batch),
        "http_calls": calls,
        "seconds": round(measured.elapsed, 3),
        "items_per_s": round(rate, 1),
        "ideal_items_per_s": round(ideal_rate, 1) if ideal_rate else None,
        "of_ideal": round(rate / ideal_rate, 3) if ideal_rate else None,
        "statuses": dict(measured.statuses),
        "client_cpu_s": round(measured.client_cpu_s, 3),
        "client_cpu_busy": round(measured.client_cpu_s / measured.elapsed, 3),
        "client_cpu_ms_per_item": round(1000 * measured.client_cpu_s / len(batch), 3),
        "client_cpu_ms_per_call": round(1000 * measured.client_cpu_s / calls, 3) if calls else None,
        "judge_cpu_ms_per_call": round(1000 * measured.judge["cpu_s"] / calls, 3)
        if calls
        else None,
        "judge_reply_delay_s": {
            key.removeprefix("delay_").removesuffix("_s"): round(value, 4)
            for key, value in measured.judge.items()
            if key.startswith("delay_")
        },
    }


async def outages(url: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    hung = url.replace("/v1", "/hang/v1")
    rows = []
    for name, target in (("unreachable", closed), ("hung", hung)):
        judge_profile = profile(target, args, timeout_s=0.5, retries=3, backoff_s=0.1)
        judge = JudgeVerifier(profiles={"bench": judge_profile}, item_deadline_s=args.deadline)
        batch = items(200, 200)
        measured = await run(judge, batch)
        await judge.aclose()
        rows.append(
            {
                "outage": name,
                "items": len(batch),
                "deadline_s": args.deadline,
                "seconds": round(measured.elapsed, 3),
                "statuses": dict(measured.statuses),
                "all_error_within_deadline": measured.statuses[Status.ERROR.value] == len(batch)
                and measured.elapsed < args.deadline,
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
        asyncio.run(serve(args.serve, args.latency))
        return
    load = os.getloadavg()
    rows, outage_rows = measure(args)
    print_table(rows, outage_rows, args, load)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "cores": os.cpu_count(),
        "load_average_before": load,
        **{k: v for k, v in vars(args).items() if k != "serve"},
    }
    payload = {"meta": meta, "rows": rows, "outages": outage_rows}
    (out / "judge.json").write_text(json.dumps(payload, indent=2))


def measure(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Throughput and outage rows against a stand-in judge started in its own process."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--latency", str(args.latency)]
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/")
        url = f"http://127.0.0.1:{port}/v1"
        rows = asyncio.run(throughput(url, args))
        return rows, asyncio.run(outages(url, args))
    finally:
        server.kill()  # the hung route never finishes, so no graceful shutdown
        server.wait(timeout=15)


def print_table(
    rows: list[dict[str, Any]],
    outage_rows: list[dict[str, Any]],
    args: argparse.Namespace,
    load: tuple[float, float, float],
) -> None:
    print(
        f"machine: {platform.node()} {os.cpu_count()} cores; concurrency={args.concurrency}, "
        f"judge latency={args.latency} s, ideal={args.concurrency / args.latency:.0f} calls/s; "
        f"load average before the run {' '.join(f'{x:.2f}' for x in load)}"
    )
    print(
        f"{'run':<22} {'items':>6} {'calls':>6} {'s':>7} {'items/s':>9} {'ideal':>8} "
        f"{'of ideal':>8} {'client CPU ms/call':>18} {'/item':>6} {'judge CPU ms/call':>17} "
        f"{'judge delay ms':>14}"
    )
    for r in rows:
        ideal = f"{r['ideal_items_per_s']:.0f}" if r["ideal_items_per_s"] else "-"
        share = f"{r['of_ideal']:.1%}" if r["of_ideal"] else "-"
        per_call, judge_cpu = r["client_cpu_ms_per_call"], r["judge_cpu_ms_per_call"]
        print(
            f"{r['run']:<22} {r['items']:>6} {r['http_calls']:>6} {r['seconds']:>7.2f} "
            f"{r['items_per_s']:>9.1f} {ideal:>8} {share:>8} "
            f"{'-' if per_call is None else f'{per_call:.3f}':>18} "
            f"{r['client_cpu_ms_per_item']:>6.3f} "
            f"{'-' if judge_cpu is None else f'{judge_cpu:.3f}':>17} "
            f"{delay(r['judge_reply_delay_s']):>14}  {r['statuses']}"
        )
    for o in outage_rows:
        print(
            f"outage {o['outage']:<12} {o['items']} items, deadline {o['deadline_s']} s: "
            f"{o['statuses']} in {o['seconds']:.2f} s; all error in time: "
            f"{o['all_error_within_deadline']}"
        )


def delay(summary: dict[str, float]) -> str:
    """``mean/p99`` reply delay in ms, or ``-`` when the stand-in answered nothing."""
    if not summary:
        return "-"
    return f"{1000 * summary['mean']:.1f}/{1000 * summary['p99']:.1f}"


if __name__ == "__main__":
    main()
