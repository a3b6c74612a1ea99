"""An app whose model graders' judge profiles point at a loopback chat endpoint (for the
graders' tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.settings import Settings
from tests.verifiers.judge.endpoint import JudgeEndpoint


def judge_profile(url: str, model: str) -> dict[str, Any]:
    return {
        "base_url": url,
        "model": model,
        "retries": 1,
        "backoff_s": 0.01,
        "timeout_s": 2,
        "allow_messages_mode": True,  # model graders send the client's own messages
    }


@contextmanager
def judged_app(
    monkeypatch: pytest.MonkeyPatch, models: dict[str, str]
) -> Iterator[tuple[TestClient, JudgeEndpoint]]:
    """An app whose judge profiles (name -> served model id) all point at one endpoint."""
    endpoint = JudgeEndpoint().start()
    profiles = {name: judge_profile(endpoint.url, model) for name, model in models.items()}
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", json.dumps(profiles))
    try:
        with TestClient(create_app(Settings(cpu_workers=1, default_deadline_s=10.0))) as client:
            yield client, endpoint
    finally:
        endpoint.stop()


PROFILES = {"default": "local-judge", "hosted": "gpt-4o-2024-08-06", "o3-mini": "small-judge"}
