"""Sessions in distributed mode: each lives on one sandbox worker, the gateway routes its
requests there through Redis, and a worker that dies takes its sessions with it — said
as ``410 session_lost``, never answered by a fresh session elsewhere."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import require
from tests.sandbox.conftest import descendants

from .conftest import Cluster, make_cluster

CHECK = "import sys\nsys.exit(0 if open('out.txt').read() == 'ok' else 1)"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the module (starting one takes tens of seconds here); each test
    leaves it as it found it: no session open, two live session hosts."""
    require(Path("/usr/bin/bwrap").exists(), "bubblewrap is not installed")
    sessions = json.dumps({"max_open": 3, "max_per_key": 4})
    c = make_cluster(tmp_path_factory.mktemp("sessions"), REFEREE_SESSIONS=sessions)
    try:
        c.start_gateway()
        c.start_worker("sandbox", concurrency=1)
        c.start_worker("sandbox", concurrency=1)
        c.wait_consumers("sandbox", 2, timeout_s=90)  # 30 s ran out in a loaded full run
        wait_hosts(c, 2)
        yield c
    finally:
        c.stop_all()


def wait_hosts(cluster: Cluster, count: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        beats = [
            k
            for k in cluster.redis().scan_iter("referee:sessionhost:*")
            if not k.endswith(b":requests")
        ]
        if len(beats) >= count:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{count} session hosts did not show up")


def host_of(cluster: Cluster, session_id: str) -> str:
    route = cluster.redis().get(f"referee:session:{session_id}")
    assert route is not None
    host: str = json.loads(route)["host"]
    return host


def test_a_session_keeps_its_state_on_its_worker(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=60) as http:
        created = http.post("/v1/sessions", json={"kind": "python"})
        assert created.status_code == 201, created.text
        session_id = created.json()["id"]
        for turn in range(20):
            assert (
                http.post(
                    f"/v1/sessions/{session_id}/exec", json={"code": f"x = {turn}"}
                ).status_code
                == 200
            )
        shown = http.post(f"/v1/sessions/{session_id}/exec", json={"code": "x * 2"}).json()
        assert shown["display"] == [{"text/plain": "38"}]
        http.put(f"/v1/sessions/{session_id}/files/out.txt", content=b"ok")
        assert http.get(f"/v1/sessions/{session_id}/files/out.txt").content == b"ok"
        assert [
            e["path"] for e in http.get(f"/v1/sessions/{session_id}/files").json()["entries"]
        ] == ["out.txt"]
        assert [s["id"] for s in http.get("/v1/sessions").json()["sessions"]] == [session_id]
        params = {"session": session_id, "close_session": True}
        item = {"verifier": "state", "response": "", "reference": CHECK, "params": params}
        [result] = http.post("/v1/score", json={"items": [item]}).json()["results"]
        assert (result["status"], result["reward"]) == ("ok", 1.0), result
        gone = http.post(f"/v1/sessions/{session_id}/exec", json={"code": "x"})
        assert gone.status_code == 410 and "deleted" in gone.json()["error"]["message"]


def test_sessions_spread_over_workers_and_the_key_cap_is_global(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=60) as http:
        made = [http.post("/v1/sessions", json={"kind": "bash"}).json() for _ in range(4)]
        assert all("id" in m for m in made), made
        ids = [m["id"] for m in made]
        assert len({host_of(cluster, i) for i in ids}) == 2
        refused = http.post("/v1/sessions", json={"kind": "bash"})
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_sessions"
        http.delete(f"/v1/sessions/{ids[0]}")
        again = http.post("/v1/sessions", json={"kind": "bash"})
        assert again.status_code == 201
        for session_id in [*ids[1:], again.json()["id"]]:
            http.delete(f"/v1/sessions/{session_id}")


def test_a_dead_worker_loses_its_sessions_explicitly(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=60) as http:
        ids = [http.post("/v1/sessions", json={"kind": "python"}).json()["id"] for _ in range(2)]
        for session_id in ids:
            http.post(f"/v1/sessions/{session_id}/exec", json={"code": "kept = 1"})
        victim_host = host_of(cluster, ids[0])
        survivor = next(i for i in ids if host_of(cluster, i) != victim_host)
        # the host's name carries its worker's pid (`consumer.run_worker`)
        victim = next(w for w in cluster.workers if f"-{w.pid}-" in victim_host)
        sandboxes = _sandboxed_children(victim.pid)
        assert sandboxes, "the session's sandbox was not found under its worker"
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        lost = http.post(f"/v1/sessions/{ids[0]}/exec", json={"code": "kept"}, timeout=60)
        assert lost.status_code == 410, lost.text
        assert "worker holding the session stopped" in lost.json()["error"]["message"]
        again = http.post(f"/v1/sessions/{ids[0]}/exec", json={"code": "kept"})
        assert again.status_code == 410
        assert http.post(f"/v1/sessions/{survivor}/exec", json={"code": "kept"}).json()[
            "display"
        ] == [{"text/plain": "1"}]
        deadline = time.monotonic() + 5
        while (
            any(Path(f"/proc/{pid}").exists() for pid in sandboxes) and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert not [p for p in sandboxes if Path(f"/proc/{p}").exists()], (
            "a sandbox outlived its worker"
        )
        http.delete(f"/v1/sessions/{survivor}")
    cluster.workers.remove(victim)  # a replacement, for the tests after this one
    cluster.start_worker("sandbox", concurrency=1)
    wait_hosts(cluster, 2)


def _sandboxed_children(pid: int) -> list[int]:
    """bwrap processes under ``pid`` (the sessions' sandboxes)."""
    found = []
    for child in descendants(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == "bwrap":
                found.append(child)
        except OSError:
            continue
    return found
