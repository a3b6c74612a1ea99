"""``/v1/score`` items that name a session: its end state judged by a checker, one of its
files scored as the response, the session closed after scoring, and every way the
session can be unusable answered per item, never as a reward."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from tests.conftest import require
from tests.service.conftest import small_settings

from .test_routes import BWRAP, error_of

CHECK = "import sys\nsys.exit(0 if open('result.txt').read().strip() == 'done' else 1)"


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    require(BWRAP, "bubblewrap is not installed")
    settings = small_settings(cpu_workers=1, sessions={"max_file_bytes": 1 << 20})
    with TestClient(create_app(settings)) as client:
        yield client


def session_with(api: TestClient, kind: str, *commands: str) -> str:
    session_id: str = api.post("/v1/sessions", json={"kind": kind}).json()["id"]
    for command in commands:
        assert (
            api.post(f"/v1/sessions/{session_id}/exec", json={"code": command}).status_code == 200
        )
    return session_id


def score(api: TestClient, *items: dict[str, Any]) -> list[dict[str, Any]]:
    response = api.post("/v1/score", json={"items": list(items)})
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def test_a_checker_judges_the_end_state(api: TestClient) -> None:
    done = session_with(api, "bash", "echo done > result.txt")
    undone = session_with(api, "bash", "echo nope > result.txt")
    results = score(
        api,
        {"verifier": "state", "response": "", "reference": CHECK, "params": {"session": done}},
        {"verifier": "state", "response": "", "reference": CHECK, "params": {"session": undone}},
    )
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("ok", 0.0)]
    # the sessions go on: scoring only read them
    assert api.get(f"/v1/sessions/{done}").status_code == 200


def test_a_session_database_is_judged_in_a_fresh_sandbox(api: TestClient) -> None:
    session_id = session_with(
        api, "sqlite", "create table todo(t text, done int); insert into todo values ('a', 1)"
    )
    check = (
        "import sqlite3\n"
        "db = sqlite3.connect('session.db')\n"
        "rows = db.execute('select count(*) from todo where done').fetchone()\n"
        "raise SystemExit(0 if rows[0] == 1 else 1)"
    )
    item = {
        "verifier": "state",
        "response": "",
        "reference": check,
        "params": {"session": session_id},
    }
    assert score(api, item)[0]["reward"] == 1.0


def test_a_session_file_is_scored_as_the_response(api: TestClient) -> None:
    session_id = session_with(
        api, "python", "open('solution.py', 'w').write('def add(a, b):\\n    return a + b\\n')"
    )
    reference = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]}
    params = {"session": session_id, "session_response": "solution.py", "extract": False}
    [result] = score(
        api, {"verifier": "code", "response": "", "reference": reference, "params": params}
    )
    assert (result["status"], result["reward"]) == ("ok", 1.0), result


def test_closing_after_scoring_is_one_flag(api: TestClient) -> None:
    session_id = session_with(api, "bash", "echo done > result.txt")
    params = {"session": session_id, "close_session": True}
    item = {"verifier": "state", "response": "", "reference": CHECK, "params": params}
    # two items of one request read the same state; the session closes after both
    results = score(api, item, item)
    assert [r["reward"] for r in results] == [1.0, 1.0]
    assert error_of(api.get(f"/v1/sessions/{session_id}")) == (410, "session_lost")


def test_unusable_sessions_are_per_item_statuses(api: TestClient) -> None:
    lost = session_with(api, "python")
    api.post(f"/v1/sessions/{lost}/exec", json={"code": "import os\nos._exit(1)"})
    live = session_with(api, "python")
    items: list[dict[str, Any]] = [
        {"params": {"session": "0" * 32}},
        {"params": {"session": "not an id"}},
        {"params": {"session": lost}},
        {"params": {"session": live, "session_response": "missing.txt"}, "verifier": "string"},
        {"params": {"session": live}, "verifier": "string", "reference": "x"},
        {"params": {"session": live, "close_session": "yes"}},
    ]
    base = {"verifier": "state", "response": "", "reference": CHECK}
    results = score(api, *({**base, **item} for item in items))
    seen = [(r["status"], r["error"]["code"]) for r in results]
    assert seen == [
        ("invalid", "not_found"),
        ("invalid", "invalid_params"),
        ("error", "session_lost"),
        ("invalid", "not_found"),
        ("invalid", "invalid_params"),
        ("invalid", "invalid_params"),
    ], results
    assert results[2]["error"]["retryable"] is False
    assert "takes no files" in results[4]["error"]["message"]


def test_another_key_cannot_score_a_session() -> None:
    require(BWRAP, "bubblewrap is not installed")
    settings = small_settings(api_keys="first,second", cpu_workers=1)
    with TestClient(create_app(settings)) as keyed:
        first, second = ({"Authorization": f"Bearer {k}"} for k in ("first", "second"))
        session_id = keyed.post("/v1/sessions", json={"kind": "bash"}, headers=first).json()["id"]
        item = {
            "verifier": "state",
            "response": "",
            "reference": CHECK,
            "params": {"session": session_id},
        }
        [result] = keyed.post("/v1/score", json={"items": [item]}, headers=second).json()["results"]
        assert (result["status"], result["error"]["code"]) == ("invalid", "not_found")


def test_one_request_carries_a_bounded_amount_of_state(api: TestClient) -> None:
    """Items that name a session take its state to the workers: a request may carry four
    times the largest file (here 4 MiB); past it, items are invalid, never a memory bomb."""
    session_id = session_with(api, "python", "open('big.bin', 'wb').write(b'x' * 900_000)")
    item = {"verifier": "state", "response": "", "reference": "print(1)"}
    items = [{**item, "params": {"session": session_id}} for _ in range(6)]
    results = score(api, *items)
    statuses = [(r["status"], (r["error"] or {}).get("code")) for r in results]
    assert statuses == [("ok", None)] * 4 + [("invalid", "too_much_state")] * 2, statuses
