"""The gateway's peak memory for one request stays within 4x the body limit, for the
worst body of each route (a real ``referee serve``; its peak RSS read from /proc and
reset before each request)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import start_server, stop_server

LIMIT = 16 * 1024 * 1024
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, str]]:
    env = {
        "REFEREE_MAX_BODY_BYTES": str(LIMIT),
        "REFEREE_CPU_WORKERS": "1",
        "REFEREE_LOG_LEVEL": "WARNING",
    }
    proc, url = start_server(env)
    yield proc.pid, url
    stop_server(proc)


def _memory(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


def _item(response: str) -> dict[str, Any]:
    return {"verifier": "string", "response": response, "reference": "a"}


def _worst_bodies() -> list[tuple[str, str, dict[str, Any]]]:
    small = [{"verifier": "string", "response": "x" * 1500, "reference": "x" * 1500,
              "id": str(i), "metadata": {"k": i}} for i in range(5000)]  # fmt: skip
    containers = (
        b'{"items":[{"verifier":"string","response":"a","metadata":['
        + b",".join([b"[]"] * 499_000)
        + b"]}]}"
    )
    template = {"type": "string_check", "input": "{{item.big}}" * 1000, "reference": "x",
                "operation": "eq"}  # fmt: skip
    return [
        ("2-byte text", "/v1/score", {"json": {"items": [_item("é" * (LIMIT // 2 - 100))]}}),
        ("4-byte text", "/v1/score", {"json": {"items": [_item("😀" * (LIMIT // 4 - 100))]}}),
        ("500k containers", "/v1/score", {"content": containers, "headers": JSON}),
        ("refused containers", "/v1/score",
         {"content": b"[" + b",".join([b"[]"] * 5_000_000) + b"]", "headers": JSON}),
        ("5k items", "/v1/score", {"json": {"items": small}}),
        ("over the item cap", "/v1/score", {"json": {"items": [_item("a")] * 12_000}}),
        ("get_reward", "/get_reward", {"json": {"query": ["q" * 1500] * 10_000}}),
        ("grader templates", "/v1/graders/run",
         {"json": {"grader": template, "model_sample": "x", "item": {"big": "y" * 10**7}}}),
        ("run source", "/v1/run",
         {"json": {"language": "python3", "source": "#" + "x" * (LIMIT - 100)}}),
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("name", "path", "body"), _worst_bodies(), ids=lambda v: str(v)[:20])
def test_peak_memory_stays_within_four_times_the_body_limit(
    server: tuple[int, str], name: str, path: str, body: dict[str, Any]
) -> None:
    pid, url = server
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    before = _memory(pid)["VmRSS"]
    response = httpx.post(url + path, timeout=120, **body)
    assert response.status_code < 500, response.text[:300]
    grown = _memory(pid)["VmHWM"] - before
    assert grown <= 4 * LIMIT, f"{name}: +{grown / 2**20:.0f} MiB"
