"""``/v1/sessions`` on an embedded server: the life of a session, who may touch it, the
caps, its end (deleted, expired, lost: always said, never a fresh session in its place),
and a clear 4xx for every bad request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from tests.conftest import require
from tests.service.conftest import small_settings

BWRAP = Path("/usr/bin/bwrap").exists()
KEYS = {"first": {"Authorization": "Bearer first"}, "second": {"Authorization": "Bearer second"}}


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    require(BWRAP, "bubblewrap is not installed")
    sessions = {
        "max_per_key": 3,
        "max_open": 5,
        "max_exec_s": 20,
        "max_ttl_s": 600,
        "max_file_bytes": 1 << 20,
    }
    settings = small_settings(api_keys="first,second", sessions=sessions, cpu_workers=1)
    with TestClient(create_app(settings)) as client:
        yield client


def open_session(api: TestClient, key: str = "first", **body: Any) -> str:
    response = api.post("/v1/sessions", json={"kind": "python", **body}, headers=KEYS[key])
    assert response.status_code == 201, response.text
    session_id: str = response.json()["id"]
    return session_id


def run(api: TestClient, session_id: str, code: str, key: str = "first", **body: Any) -> Any:
    return api.post(
        f"/v1/sessions/{session_id}/exec", json={"code": code, **body}, headers=KEYS[key]
    )


def close(api: TestClient, *session_ids: str) -> None:
    for session_id in session_ids:
        api.delete(f"/v1/sessions/{session_id}", headers=KEYS["first"])


def error_of(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_a_session_lives_from_create_to_delete(api: TestClient) -> None:
    session_id = open_session(api, files={"data/in.txt": "7"})
    assert run(api, session_id, "n = int(open('data/in.txt').read())").json()["exit_code"] == 0
    assert run(api, session_id, "n * 6").json()["display"] == [{"text/plain": "42"}]
    put = api.put(
        f"/v1/sessions/{session_id}/files/out/x.bin", content=b"\x00\xff", headers=KEYS["first"]
    )
    assert put.json() == {"path": "out/x.bin", "size": 2}
    got = api.get(f"/v1/sessions/{session_id}/files/out/x.bin", headers=KEYS["first"])
    assert got.content == b"\x00\xff"
    listed = api.get(f"/v1/sessions/{session_id}/files", headers=KEYS["first"]).json()
    assert {e["path"] for e in listed["entries"]} == {"data", "data/in.txt", "out", "out/x.bin"}
    info = api.get(f"/v1/sessions/{session_id}", headers=KEYS["first"]).json()
    assert info["kind"] == "python" and info["id"] == session_id
    mine = api.get("/v1/sessions", headers=KEYS["first"]).json()["sessions"]
    assert session_id in {s["id"] for s in mine}
    assert api.delete(f"/v1/sessions/{session_id}", headers=KEYS["first"]).status_code == 204
    gone = run(api, session_id, "n")
    assert error_of(gone) == (410, "session_lost") and "deleted" in gone.json()["error"]["message"]


def test_open_sessions_are_a_metric(api: TestClient) -> None:
    def open_now() -> float:
        text = api.get("/metrics", headers=KEYS["first"]).text
        [line] = [x for x in text.splitlines() if x.startswith("referee_sessions_open ")]
        return float(line.split()[1])

    before = open_now()
    session_id = open_session(api)
    assert open_now() == before + 1
    close(api, session_id)
    assert open_now() == before


def test_another_key_cannot_see_or_touch_a_session(api: TestClient) -> None:
    session_id = open_session(api, "first")
    try:
        base = f"/v1/sessions/{session_id}"
        calls: list[tuple[str, str, dict[str, Any]]] = [
            ("post", f"{base}/exec", {"json": {"code": "1"}}),
            ("get", base, {}),
            ("get", f"{base}/files", {}),
            ("get", f"{base}/files/x", {}),
            ("put", f"{base}/files/x", {"content": b"x"}),
            ("delete", base, {}),
        ]
        for method, path, kwargs in calls:
            response = getattr(api, method)(path, headers=KEYS["second"], **kwargs)
            assert error_of(response) == (404, "not_found"), (method, path)
        assert api.get("/v1/sessions", headers=KEYS["second"]).json()["sessions"] == []
        assert run(api, session_id, "'still mine'").json()["display"] == [
            {"text/plain": "'still mine'"}
        ]
    finally:
        close(api, session_id)


def test_caps_per_key_and_per_server(api: TestClient) -> None:
    opened = [open_session(api, "first") for _ in range(3)]
    try:
        refused = api.post("/v1/sessions", json={"kind": "bash"}, headers=KEYS["first"])
        assert error_of(refused) == (429, "too_many_sessions") and "delete one" in refused.text
        others = [open_session(api, "second") for _ in range(2)]  # the server's 5
        opened += others
        full = api.post("/v1/sessions", json={"kind": "bash"}, headers=KEYS["second"])
        assert error_of(full) == (429, "too_many_sessions")
    finally:
        for session_id in opened:
            for key in KEYS.values():
                api.delete(f"/v1/sessions/{session_id}", headers=key)
    open_session(api, "first")  # room again


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/sessions", {"kind": "python", "limits": {"memory_mb": 70000}}, "limits.memory_mb"),
        ("/v1/sessions", {"kind": "ruby"}, "kind"),
        ("/v1/sessions", {"kind": "python", "ttl_s": 10_000}, "ttl_s"),
        ("/v1/sessions", {"kind": "python", "files": {"../x": ""}}, "files"),
        ("/v1/sessions", {"kind": "sqlite", "database": "a/b.db"}, "database"),
        ("/v1/sessions", {"kind": "python", "surprise": 1}, "surprise"),
        ("exec", {"code": "1", "command": "1"}, "exactly one"),
        ("exec", {}, "exactly one"),
        ("exec", {"code": "1", "timeout_s": 999}, "timeout_s"),
        ("exec", {"code": "1", "timeout_s": -1}, "timeout_s"),
    ],
)
def test_bad_requests_name_the_field(api: TestClient, path: str, body: Any, field: str) -> None:
    session_id = open_session(api) if path == "exec" else None
    try:
        url = f"/v1/sessions/{session_id}/exec" if session_id else path
        response = api.post(url, json=body, headers=KEYS["first"])
        assert error_of(response) == (422, "invalid_request"), response.text
        assert field in response.json()["error"]["message"]
    finally:
        close(api, *filter(None, [session_id]))


def test_file_requests_answer_clearly(api: TestClient) -> None:
    session_id = open_session(api)
    try:
        base = f"/v1/sessions/{session_id}/files"
        headers = KEYS["first"]
        assert error_of(api.get(f"{base}/nothing", headers=headers)) == (404, "not_found")
        run(api, session_id, "import os\nos.mkdir('d')\nos.symlink('/etc/passwd', 'link')")
        assert error_of(api.get(f"{base}/d", headers=headers)) == (422, "invalid_request")
        assert error_of(api.get(f"{base}/link", headers=headers)) == (422, "invalid_request")
        big = api.put(f"{base}/big", content=b"x" * (2 << 20), headers=headers)
        assert big.status_code == 413
        assert error_of(api.get(f"{base}/a%2F..%2F..%2Fetc", headers=headers))[0] in (404, 422)
        bad_id = api.get("/v1/sessions/not-an-id/files", headers=headers)
        assert error_of(bad_id) == (422, "invalid_request")
    finally:
        close(api, session_id)


def test_a_lost_session_says_so_every_time(api: TestClient) -> None:
    session_id = open_session(api)
    lost = run(api, session_id, "import os\nos._exit(3)")
    assert error_of(lost) == (410, "session_lost")
    again = run(api, session_id, "1")
    assert error_of(again) == (410, "session_lost")
    assert again.json()["error"]["message"] == lost.json()["error"]["message"]
    assert session_id not in {
        s["id"] for s in api.get("/v1/sessions", headers=KEYS["first"]).json()["sessions"]
    }


def test_one_command_at_a_time(api: TestClient) -> None:
    session_id = open_session(api)
    try:
        slow = threading.Thread(target=run, args=(api, session_id, "import time\ntime.sleep(1.5)"))
        slow.start()
        time.sleep(0.5)
        assert error_of(run(api, session_id, "1")) == (409, "session_busy")
        slow.join()
        assert run(api, session_id, "1").status_code == 200
    finally:
        close(api, session_id)


@pytest.mark.parametrize(
    ("body", "reason"),
    [({"idle_ttl_s": 1}, "idle"), ({"ttl_s": 1.5}, "ttl_s")],
    ids=["idle", "absolute"],
)
def test_sessions_expire(api: TestClient, body: dict[str, Any], reason: str) -> None:
    session_id = open_session(api, **body)
    pids = api.app.state.sessions._open[session_id].session.pids()  # type: ignore[attr-defined]
    assert pids
    if reason == "ttl_s":  # in use all along: only the absolute limit ends it
        for _ in range(4):
            run(api, session_id, "1")
            time.sleep(0.5)
    else:
        time.sleep(3)
    expired = run(api, session_id, "1")
    assert error_of(expired) == (410, "session_lost")
    assert reason in expired.json()["error"]["message"]
    deadline = time.monotonic() + 3  # a killed tree is reaped asynchronously
    while any(map(running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(running, pids)), "a session outlived its ttl"


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_sessions_are_unavailable_without_bwrap() -> None:
    settings = small_settings(cpu_workers=1)
    settings.engines.sandbox.backend = "process"
    with TestClient(create_app(settings)) as client:
        response = client.post("/v1/sessions", json={"kind": "python"})
        assert error_of(response) == (503, "not_configured")
        assert "bwrap" in response.json()["error"]["message"]
