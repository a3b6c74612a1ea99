"""Stateful sessions: exec round trip over HTTP, and many sessions open at once.

In one run, against a real ``referee serve`` (embedded, bwrap) over loopback HTTP, one
keep-alive connection:

- session: ``POST /v1/sessions/{id}/exec`` of a trivial Python expression in a kept
  interpreter (p50/p90/p99 of ``--calls`` sequential calls);
- baseline: the same expression through ``POST /v1/run`` (stateless: every call starts
  from nothing, i.e. what a multi-turn agent pays per turn without sessions; it runs on
  the pre-forked Python fast path, the cheapest one-shot path we have);
- library: ``Session.execute`` in this process, no HTTP (the floor under both).

Then ``--open`` Python sessions are started (concurrently, 16 at a time), each runs one
command, and the memory they hold is read: the proportional set size (PSS, shared pages
counted once across processes) of every process of every session's sandbox, plus the
gateway's own growth. A 50-turn session checks its state on the way.

    python bench/sessions.py [--calls 500] [--open 200]

Prints a table and writes ``bench/results/sessions.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.sandbox import SandboxSettings  # noqa: E402
from referee.sandbox.sessions import Launcher, SessionKind, SessionSpec  # noqa: E402
from tests.conftest import start_server, stop_server  # noqa: E402
from tests.sandbox.conftest import descendants  # noqa: E402


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"p50_ms": at(0.5), "p90_ms": at(0.9), "p99_ms": at(0.99)}


def timed(call: Any, calls: int) -> list[float]:
    for _ in range(20):  # warm: connection, caches, the fast path's spares
        call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def latency(url: str, calls: int) -> dict[str, Any]:
    with httpx.Client(base_url=url, timeout=60) as http:
        session_id = http.post("/v1/sessions", json={"kind": "python"}).json()["id"]

        def exec_once() -> None:
            body = http.post(f"/v1/sessions/{session_id}/exec", json={"code": "1 + 1"}).json()
            assert body["display"] == [{"text/plain": "2"}], body

        run = {"language": "python", "source": "print(1 + 1)"}

        def run_once() -> None:
            body = http.post("/v1/run", json=run).json()
            assert body["cases"][0]["stdout"] == "2\n", body

        session = percentiles(timed(exec_once, calls))
        baseline = percentiles(timed(run_once, max(calls // 5, 50)))
        http.delete(f"/v1/sessions/{session_id}")
    launcher = Launcher(SandboxSettings())
    local = launcher.start(SessionSpec(kind=SessionKind.PYTHON))
    library = percentiles(timed(lambda: local.execute("1 + 1"), calls))
    local.close()
    launcher.close()
    return {"session_http": session, "run_http_baseline": baseline, "session_library": library}


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def many(url: str, gateway_pid: int, count: int) -> dict[str, Any]:
    gateway_before = pss_kb(gateway_pid)
    before = set([gateway_pid, *descendants(gateway_pid)])
    with httpx.Client(base_url=url, timeout=120) as http:

        def open_one(_: int) -> str:
            response = http.post("/v1/sessions", json={"kind": "python"})
            assert response.status_code == 201, response.text
            session_id: str = response.json()["id"]
            ran = http.post(
                f"/v1/sessions/{session_id}/exec", json={"code": "x = list(range(100))"}
            )
            assert ran.status_code == 200, ran.text
            return session_id

        started = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            ids = list(pool.map(open_one, range(count)))
        opened_s = time.perf_counter() - started
        for turn in range(50):
            http.post(f"/v1/sessions/{ids[0]}/exec", json={"code": f"x.append({turn})"})
        kept = http.post(f"/v1/sessions/{ids[0]}/exec", json={"code": "len(x)"}).json()
        assert kept["display"] == [{"text/plain": "150"}], kept
        sandboxes = [pid for pid in [gateway_pid, *descendants(gateway_pid)] if pid not in before]
        sessions_kb = sum(pss_kb(pid) for pid in sandboxes)
        gateway_growth_kb = pss_kb(gateway_pid) - gateway_before
        for session_id in ids:
            http.delete(f"/v1/sessions/{session_id}")
    total_mb = (sessions_kb + max(gateway_growth_kb, 0)) / 1024
    return {
        "sessions": count,
        "open_s": round(opened_s, 2),
        "sessions_pss_mb": round(sessions_kb / 1024, 1),
        "gateway_growth_mb": round(gateway_growth_kb / 1024, 1),
        "total_mb": round(total_mb, 1),
        "per_session_mb": round(total_mb / count, 2),
        "fifty_turns_kept_state": True,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--open", type=int, default=200)
    args = parser.parse_args()
    env = {
        "REFEREE_SESSIONS": json.dumps({"max_open": args.open + 8, "max_per_key": args.open + 8})
    }
    proc, url = start_server(env)
    try:
        result = {"latency": latency(url, args.calls), "many": many(url, proc.pid, args.open)}
    finally:
        stop_server(proc)
    result["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform()}
    for name, n in result["latency"].items():
        print(
            f"{name:20} p50 {n['p50_ms']:7.3f} ms  p90 {n['p90_ms']:7.3f}  p99 {n['p99_ms']:7.3f}"
        )
    m = result["many"]
    print(
        f"{m['sessions']} sessions opened in {m['open_s']} s: {m['total_mb']} MB in all "
        f"({m['per_session_mb']} MB each; gateway +{m['gateway_growth_mb']} MB)"
    )
    out = ROOT / "bench" / "results" / "sessions.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
