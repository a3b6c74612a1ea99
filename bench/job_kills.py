"""Kill it ten times: an embedded job and a `referee score --resume` run, each SIGKILLed
at random points, must end with exactly one result per input line, in input order, the
same as an uninterrupted run (the expected results are computed, not scored: every line
is a ``string`` item whose reward is known, plus one malformed line).

    python bench/job_kills.py [--lines 1000000] [--kills 10] [--seed 7]

Prints what happened and writes ``bench/results/job_kills.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import start_server, stop_server  # noqa: E402

BAD_AT = 3


def write_items(path: Path, count: int) -> None:
    with path.open("wb") as sink:
        for i in range(count):
            if i == BAD_AT:
                sink.write(b"{not json\n")
            item = {"id": f"i{i}", "verifier": "string", "response": str(i % 7), "reference": "3"}
            sink.write(orjson.dumps(item) + b"\n")


def check(raw: bytes, count: int) -> int:
    """Lines that differ from the expected results (0: exactly once, in order)."""
    expected: list[tuple[Any, ...]] = [
        (f"i{i}", "ok", 1.0 if i % 7 == 3 else 0.0) for i in range(count)
    ]
    expected.insert(BAD_AT, (None, "invalid", None))
    got = [orjson.loads(line) for line in raw.splitlines()]
    seen = [(r["id"], r["status"], r["reward"]) for r in got]
    wrong = sum(1 for a, b in zip(seen, expected, strict=False) if a != b)
    return wrong + abs(len(seen) - len(expected))


def kill_the_server(
    items: Path, tmp: Path, count: int, kills: int, rng: random.Random
) -> dict[str, Any]:
    env = {"REFEREE_DATA_DIR": str(tmp / "data")}
    start = time.monotonic()
    proc, url = start_server(env)
    try:
        with items.open("rb") as body:
            answer = httpx.post(
                f"{url}/v1/jobs", content=body, headers={"Content-Type": "application/x-ndjson"},
                timeout=600,
            )  # fmt: skip
        job_id = answer.json()["id"]
        at: list[int] = []
        for _ in range(kills):
            time.sleep(rng.uniform(0.5, 6.0))
            status = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=30).json()
            if status["state"] == "done":
                break
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            at.append(status["done"])
            proc, url = start_server(env)
        while (status := httpx.get(f"{url}/v1/jobs/{job_id}", timeout=30).json())[
            "state"
        ] != "done":
            time.sleep(0.5)
        raw = httpx.get(f"{url}/v1/jobs/{job_id}/results", timeout=600).content
    finally:
        stop_server(proc)
    return {
        "killed_at_done": at,
        "wrong_lines": check(raw, count),
        "seconds": time.monotonic() - start,
    }


def kill_the_cli(
    items: Path, tmp: Path, count: int, kills: int, rng: random.Random
) -> dict[str, Any]:
    out = tmp / "out.jsonl"
    command = [sys.executable, "-m", "referee.service", "score", str(items), "-o", str(out)]
    env = {**os.environ, "REFEREE_CPU_WORKERS": "2"}
    start = time.monotonic()
    at: list[int] = []
    for attempt in range(kills + 1):
        extra = ["--resume"] if attempt else []
        proc = subprocess.Popen(
            [*command, *extra], cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if attempt == kills:
            assert proc.wait(timeout=3600) == 0, "the last --resume run failed"
            break
        time.sleep(rng.uniform(2.0, 8.0))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        at.append(out.stat().st_size if out.exists() else 0)
    return {
        "killed_at_bytes": at,
        "wrong_lines": check(out.read_bytes(), count),
        "seconds": time.monotonic() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        items = tmp / "items.jsonl"
        write_items(items, args.lines)
        report = {
            "lines": args.lines,
            "kills": args.kills,
            "server_job": kill_the_server(items, tmp, args.lines, args.kills, rng),
            "cli_resume": kill_the_cli(items, tmp, args.lines, args.kills, rng),
        }
    out = ROOT / "bench" / "results" / "job_kills.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
