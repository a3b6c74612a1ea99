"""Profiles from settings, read lazily; usage exported as Prometheus counters."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from pydantic import ValidationError

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeProfile, JudgeSettings, JudgeVerifier, UsageCollector
from referee.verifiers.judge.profiles import profile_for_model
from tests.verifiers.judge.endpoint import JudgeEndpoint, completion

IMPLICIT = {"mode": "implicit", "profile": "local"}


def item(**params: object) -> Item:
    return Item(verifier="judge", response="r", params={**IMPLICIT, **params})


def profile_json(url: str) -> dict[str, object]:
    return {"local": {"base_url": url, "model": "m", "retries": 0, "timeout_s": 2}}


async def test_profiles_are_read_from_the_environment_on_first_use(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = JudgeVerifier()  # nothing read yet: a bad environment cannot break import/construction
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", json.dumps(profile_json(endpoint.url)))
    monkeypatch.setenv("REFEREE_JUDGE_ITEM_DEADLINE_S", "4")
    endpoint.script = lambda _: completion('{"score": 10}')
    [result] = await judge.ascore([item()])
    await judge.aclose()
    assert result.status == Status.OK, result.error
    assert result.details["profile"] == "local"


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_profiles_file(tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if suffix == ".yaml" and importlib.util.find_spec("yaml") is None:
        pytest.skip("PyYAML is not installed; YAML profile files need it")
    path = tmp_path / f"profiles{suffix}"
    path.write_text(json.dumps(profile_json("http://127.0.0.1:9/v1")))  # JSON is valid YAML
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES_FILE", str(path))
    profiles = JudgeSettings().all_profiles()
    assert profiles["local"].base_url == "http://127.0.0.1:9/v1"
    assert profiles["local"].concurrency == 32


async def test_broken_settings_are_errors_not_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", '{"local": {"model": "m"}}')  # no base_url
    [result] = await JudgeVerifier().ascore([item()])
    assert result.status == Status.ERROR
    assert result.error is not None and result.error.code == "not_configured"
    assert "base_url" in result.error.message and not result.error.retryable


async def test_usage_is_exported_as_metrics(endpoint: JudgeEndpoint) -> None:
    from tests.verifiers.judge.conftest import fast_profile

    judge = JudgeVerifier(profiles={"local": fast_profile(endpoint.url)}, item_deadline_s=5)
    endpoint.script = lambda _: completion('{"score": 4}', usage=(120, 7))
    await judge.ascore([item(), item()])  # the second is a cache hit
    await judge.aclose()
    registry = CollectorRegistry()
    registry.register(UsageCollector(judge.meter))
    text = generate_latest(registry).decode()
    assert 'referee_judge_prompt_tokens_total{profile="local"} 120.0' in text
    assert 'referee_judge_completion_tokens_total{profile="local"} 7.0' in text
    assert 'referee_judge_calls_total{profile="local"} 1.0' in text
    assert 'referee_judge_cache_hits_total{profile="local"} 1.0' in text


def _served(model: str) -> JudgeProfile:
    return JudgeProfile(base_url="http://127.0.0.1:1/v1", model=model)


SERVED = {
    "default": _served("local-judge"),
    "gpt-4o-mini": _served("mini-on-vllm"),
    "z-big": _served("gpt-4o"),
    "a-big": _served("gpt-4o"),
}


@pytest.mark.parametrize(
    ("profiles", "model", "chosen"),
    [
        (SERVED, "gpt-4o-mini", "gpt-4o-mini"),  # a profile's name first
        (SERVED, "gpt-4o", "a-big"),  # then its model id; ties go to the first name
        (SERVED, "local-judge", "default"),
        (SERVED, "o3", "default"),  # then the default profile
        ({"x": _served("gpt-4o")}, "o3", None),  # and nothing else
        ({}, "gpt-4o", None),
    ],
)
def test_profile_for_model(
    profiles: dict[str, JudgeProfile], model: str, chosen: str | None
) -> None:
    assert profile_for_model(profiles, model) == chosen


def test_a_trailing_newline_in_the_key_is_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY", "sk-abc\n")
    profile = JudgeProfile(base_url="http://judge/v1", model="m", api_key_env="JUDGE_KEY")
    assert profile.api_key() == "sk-abc"


def test_a_base_url_with_a_query_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="base_url"):
        JudgeProfile(base_url="http://judge/v1?api-version=1", model="m")
