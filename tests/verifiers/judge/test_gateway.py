"""Judge items through the real gateway: POST /v1/score with a loopback judge."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.settings import Settings
from referee.verifiers.builtin import default_registry
from referee.verifiers.judge import JudgeVerifier
from tests.verifiers.judge.endpoint import JudgeEndpoint, Reply
from tests.verifiers.judge.scripts import rubric_judge

RUBRIC = [{"id": "right", "text": "Says Paris.", "weight": 2}, {"id": "short", "text": "Brief."}]


def judge_item(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch, name: str, **profile: object
) -> dict[str, object]:
    """Configure the gateway's judge profile ``name`` (through the environment, as an
    operator would) on ``endpoint``; return a rubric item that uses it."""
    profiles = {name: {"base_url": endpoint.url, "model": "m", **profile}}
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", json.dumps(profiles))
    return {
        "verifier": "judge",
        "prompt": "Capital?",
        "response": "Paris",
        "reference": {"rubric": RUBRIC},
        "params": {"profile": name},
    }


def test_score_route_runs_judge_items(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles = {
        "local": {
            "base_url": endpoint.url,
            "model": "m",
            "retries": 1,
            "backoff_s": 0.01,
            "timeout_s": 2,
        }
    }
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", json.dumps(profiles))
    endpoint.script = rubric_judge({"right": 1, "short": 0})
    endpoint.queue(Reply(status=503, body={}))  # one transient failure on the way
    item = {
        "verifier": "judge",
        "prompt": "Capital of France?",
        "response": "Paris",
        "reference": {"rubric": RUBRIC},
        "params": {"profile": "local"},
        "group": "q",
    }
    items = [
        {**item, "id": "a"},
        {**item, "id": "b", "response": "Lyon"},
        {**item, "id": "c", "params": {"profile": "missing"}},
        {"id": "d", "verifier": "string", "response": "x", "reference": "x"},
    ]
    settings = Settings(cpu_workers=1, default_deadline_s=10.0)
    with TestClient(create_app(settings)) as client:
        response = client.post("/v1/score", json={"items": items})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["id"] for r in results] == ["a", "b", "c", "d"]
    assert [r["status"] for r in results] == ["ok", "ok", "invalid", "ok"]
    assert results[0]["reward"] == pytest.approx(2 / 3)
    assert results[0]["verifier"] == "judge@1"
    assert results[0]["details"]["template"].startswith("rubric_explicit.v2@")
    assert "params.profile" in results[2]["error"]["message"]
    assert response.json()["groups"]["q"]["n_ok"] == 2


def test_gateway_item_timeout_caps_the_judge_deadline(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    item = judge_item(endpoint, monkeypatch, "slow", retries=0, timeout_s=30)
    endpoint.script = rubric_judge({"right": 1, "short": 1}, delay=5.0)
    settings = Settings(cpu_workers=1, default_deadline_s=20.0)
    with TestClient(create_app(settings)) as client:
        start = time.monotonic()
        response = client.post("/v1/score", json={"items": [item], "item_timeout_s": 0.5})
        elapsed = time.monotonic() - start
    [result] = response.json()["results"]
    assert result["status"] == "timeout" and result["reward"] is None
    assert result["error"]["code"] == "deadline"
    assert elapsed < 2.5  # the item limit applied, not the judge's 30 s default


def test_judge_token_usage_is_exported_on_metrics(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = judge_item(endpoint, monkeypatch, "local", retries=0)
    endpoint.script = rubric_judge({"right": 1, "short": 1})
    with TestClient(create_app(Settings(cpu_workers=1))) as client:
        assert client.post("/v1/score", json={"items": [item]}).status_code == 200
        text = client.get("/metrics").text
    assert 'referee_judge_calls_total{profile="local"} 1.0' in text
    assert 'referee_judge_prompt_tokens_total{profile="local"} 100.0' in text


def test_gateway_shutdown_closes_the_judge_connections(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = judge_item(endpoint, monkeypatch, "local", timeout_s=2)
    endpoint.script = rubric_judge({"right": 1, "short": 1})
    registry = default_registry()
    judge = registry.get("judge")
    assert isinstance(judge, JudgeVerifier)
    with TestClient(create_app(Settings(cpu_workers=1), registry=registry)) as client:
        assert client.post("/v1/score", json={"items": [item]}).status_code == 200
        [session] = judge._sessions.values()  # the gateway loop's, with its open client
        [profile_client] = session.clients.values()
        assert not profile_client.closed
    assert not judge._sessions, "the gateway loop's judge session outlived shutdown"
    assert profile_client.closed
