"""How long ``referee serve`` and ``referee score`` take to be ready, with the pools' fork
server started first (the ``referee`` entry point, `referee.service.launcher`) and
without (the command line called directly, as the entry point did before).

    python bench/startup.py [--runs 5]

One run, both ways alternated: ``serve`` until ``/healthz`` answers, and ``score`` of a
one-item file until the process exits (2 CPU workers). Prints medians and their ratio;
writes ``bench/results/startup.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "referee.service"]
DIRECT = [sys.executable, "-c", "from referee.service.cli import app; app()"]
WAYS = {"fork server first": ENTRY, "direct (before)": DIRECT}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def time_serve(command: list[str]) -> float:
    port = free_port()
    start = time.monotonic()
    args = [*command, "serve", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        args, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return time.monotonic() - start
            except httpx.TransportError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("the server exited")
            time.sleep(0.02)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def time_score(command: list[str], items: Path) -> float:
    start = time.monotonic()
    args = [*command, "score", str(items), "-o", os.devnull]
    subprocess.run(args, cwd=ROOT, env=_env(), capture_output=True, check=True)
    return time.monotonic() - start


def _env() -> dict[str, str]:
    return {**os.environ, "REFEREE_CPU_WORKERS": "2"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, dict[str, list[float]]] = {way: {"serve": [], "score": []} for way in WAYS}
    with tempfile.TemporaryDirectory() as scratch:
        items = Path(scratch) / "one.jsonl"
        item = {"id": "a", "verifier": "string", "response": "1", "reference": "1"}
        items.write_text(json.dumps(item) + "\n")
        for _ in range(args.runs):
            for way, command in WAYS.items():
                times[way]["serve"].append(time_serve(command))
                times[way]["score"].append(time_score(command, items))
    medians = {way: {k: statistics.median(v) for k, v in t.items()} for way, t in times.items()}
    for way, found in medians.items():
        print(f"{way:>18}: serve ready {found['serve']:.2f} s, score 1 item {found['score']:.2f} s")
    new, old = medians["fork server first"], medians["direct (before)"]
    ratios = {k: old[k] / new[k] for k in ("serve", "score")}
    print(f"{'ratio':>18}: serve {ratios['serve']:.2f}x, score {ratios['score']:.2f}x")
    out = ROOT / "bench" / "results" / "startup.json"
    out.parent.mkdir(exist_ok=True)
    report = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "runs": times,
        "medians": medians,
    }
    out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
