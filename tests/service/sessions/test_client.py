"""``client.session(...)``, sync and async, against a real ``referee serve`` over loopback,
and the multi-turn example in ``examples/`` run as a user would run it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from referee.service.client import AsyncClient, Client, RefereeError
from tests.conftest import REPO, require

from .test_routes import BWRAP


@pytest.fixture
def server(live_server: str) -> str:
    require(BWRAP, "bubblewrap is not installed")
    return live_server


def test_a_sync_session_keeps_state_and_ends_with_the_block(server: str) -> None:
    with Client(server) as client, client.session("bash", files={"in.txt": "3\n"}) as session:
        session.run("n=$(cat in.txt); cd /tmp")
        outcome = session.run("echo $((n * 7)) > /work/out.txt; pwd")
        assert outcome.stdout == "/tmp\n"
        assert session.read("out.txt") == b"21\n"
        session.write("more/data.bin", b"\x01\x02")
        listed = {entry.path for entry in session.files()}
        assert listed >= {"in.txt", "out.txt", "more/data.bin"}
        session_id = session.id
    ended = httpx.get(f"{server}/v1/sessions/{session_id}")
    assert (ended.status_code, ended.json()["error"]["code"]) == (410, "session_lost")


def test_server_errors_are_raised_with_their_code(server: str) -> None:
    with Client(server) as client, client.session("python") as session:
        with pytest.raises(RefereeError) as lost:
            session.run("import os\nos._exit(1)")
        assert (lost.value.status, lost.value.code) == (410, "session_lost")
        with pytest.raises(RefereeError) as refused:
            session.read("anything")  # the session is gone: said again
        assert refused.value.code == "session_lost"
    with Client(server) as client:
        with pytest.raises(ValueError, match="memory_mb"):  # checked before it is sent
            client.session("python", limits={"memory_mb": 10**6})
        with pytest.raises(RefereeError) as bad:  # the server's own maximum
            client.session("python", ttl_s=10**7).open()
        assert (bad.value.status, bad.value.code) == (422, "invalid_request")


def test_an_async_session_runs_concurrently_with_others(server: str) -> None:
    async def one(client: AsyncClient, value: int) -> str:
        async with client.session("python") as session:
            await session.run(f"v = {value}")
            await session.write("note.txt", f"{value}")
            outcome = await session.run("v * 2 + int(open('note.txt').read())")
            return str(outcome.display[0]["text/plain"])

    async def main() -> list[str]:
        async with AsyncClient(server) as client:
            return list(await asyncio.gather(*(one(client, v) for v in range(5))))

    assert asyncio.run(main()) == [str(3 * v) for v in range(5)]


def test_the_multi_turn_example_earns_its_reward(server: str) -> None:
    done = subprocess.run(
        [sys.executable, "examples/agent_loop.py", "--server", server],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["status"] for line in lines[:-1]] == ["ok", "ok", "ok"]
    assert lines[-1] == {"status": "ok", "reward": 1.0}
