"""What a real ``referee serve`` does when it is stopped, and under steady load: SIGKILL
leaves no process behind, SIGTERM lets an in-flight request finish, and a mixed load
keeps the server's open files and memory flat."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import start_server, stop_server

CODE = {
    "verifier": "code",
    "response": "```python\nprint(int(input()) * 2)\n```",
    "reference": {"inputs": ["2\n"], "outputs": ["4\n"]},
}
MATH = {"verifier": "math", "response": "\\boxed{4}", "reference": "4"}
SLOW = {"verifier": "slow", "response": "x", "params": {"seconds": 2.0}}


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc's children lists)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie holds nothing; this container's init may not reap it


def test_sigkill_leaves_no_process_behind(tmp_path: Path) -> None:
    proc, url = start_server({"REFEREE_DATA_DIR": str(tmp_path)})
    try:
        body = {"items": [CODE, MATH] * 4}
        results = httpx.post(f"{url}/v1/score", json=body, timeout=60).json()["results"]
        assert [r["status"] for r in results] == ["ok"] * 8
        children = descendants(proc.pid)
        assert len(children) >= 4  # cpu and sandbox workers, the fast path, bwrap
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while (left := [pid for pid in children if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


def test_sigterm_lets_an_in_flight_request_finish(tmp_path: Path) -> None:
    proc, url = start_server({"REFEREE_DATA_DIR": str(tmp_path)})
    answer: dict[str, Any] = {}
    started = tmp_path / "started"
    item = {**SLOW, "params": {"seconds": 2.0, "started": str(started)}}

    def call() -> None:
        response = httpx.post(f"{url}/v1/score", json={"items": [item]}, timeout=60)
        answer["status"], answer["body"] = response.status_code, response.json()

    caller = threading.Thread(target=call)
    try:
        caller.start()
        # the request is being scored (a fixed 0.7 s wait once signalled a loaded
        # machine's server before the request had reached it)
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        caller.join(timeout=30)
    finally:
        stop_server(proc)
    assert answer["status"] == 200
    assert answer["body"]["results"][0]["status"] == "ok"


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_mixed_load_keeps_files_and_memory_flat(tmp_path: Path) -> None:
    proc, url = start_server({"REFEREE_DATA_DIR": str(tmp_path)})
    bad = {"items": [{"verifier": "nope"}, {"verifier": "math", "reference": "1"}]}
    try:
        with httpx.Client(base_url=url, timeout=60) as client:

            def round_of_load() -> None:
                client.post("/v1/score", json={"items": [CODE, MATH, MATH]})
                client.post("/v1/score", json=bad)
                client.post("/v1/score", content=b"{not json")
                client.get("/readyz")

            for _ in range(30):  # warm: pools started, caches filled
                round_of_load()
            files, rss = open_files(proc.pid), rss_kb(proc.pid)
            for _ in range(300):
                round_of_load()
            assert open_files(proc.pid) <= files + 2
            assert rss_kb(proc.pid) < rss + 30_000, (rss, rss_kb(proc.pid))
    finally:
        stop_server(proc)
