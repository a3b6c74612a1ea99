from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from referee.verifiers.judge import JudgeProfile, JudgeVerifier
from tests.verifiers.judge.endpoint import JudgeEndpoint


@pytest.fixture
def endpoint() -> Iterator[JudgeEndpoint]:
    """A scripted chat-completions server on 127.0.0.1 (a free port), one per test."""
    server = JudgeEndpoint().start()
    yield server
    server.stop()


def fast_profile(url: str, **overrides: Any) -> JudgeProfile:
    """Fast settings for tests: tiny backoffs and short per-call timeouts."""
    base: dict[str, Any] = {
        "base_url": url,
        "model": "judge-test",
        "concurrency": 8,
        "timeout_s": 2.0,
        "connect_timeout_s": 1.0,
        "retries": 2,
        "backoff_s": 0.01,
        "backoff_max_s": 0.05,
    }
    return JudgeProfile.model_validate({**base, **overrides})


@pytest.fixture
async def make_judge(endpoint: JudgeEndpoint) -> AsyncIterator[Callable[..., JudgeVerifier]]:
    """Build a verifier whose ``default`` profile points at ``endpoint``; closed (on the
    test's loop) after the test."""
    built: list[JudgeVerifier] = []

    def build(deadline_s: float = 5.0, **overrides: Any) -> JudgeVerifier:
        profile = fast_profile(endpoint.url, **overrides)
        built.append(JudgeVerifier(profiles={"default": profile}, item_deadline_s=deadline_s))
        return built[-1]

    yield build
    for judge in built:
        await judge.aclose()
