"""OpenRLHF: ``POST /get_reward`` speaks its wire format; failures are never a 0."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.adapters.mapping import ItemMapping
from referee.service.adapters.openrlhf import reward_func
from referee.service.http.app import create_app
from tests.service.conftest import small_settings

PROMPT = "<|user|>What is 6 * 7?<|assistant|>"


def test_rewards_scores_and_extra_logs(client: TestClient) -> None:
    body = {
        "query": [PROMPT + "It is \\boxed{42}.", PROMPT + "It is \\boxed{41}.", "no prompt 42"],
        "prompts": [PROMPT, PROMPT, ""],
        "labels": ["42", "42", "42"],
    }
    response = client.post("/get_reward", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["rewards"] == [1.0, 0.0, 1.0]
    assert data["scores"] == data["rewards"]
    assert isinstance(data["extra_logs"], dict)


def test_a_prompt_cut_from_the_left_is_not_scored(client: TestClient) -> None:
    """OpenRLHF keeps a long prompt's last tokens: the few-shot answer must not count."""
    few_shot = "Q: 1+3? A: \\boxed{4}\n" * 30 + PROMPT
    body = {
        "query": [few_shot[200:] + "I don't know", few_shot[350:] + "\\boxed{42}"],
        "prompts": [few_shot, few_shot],
        "labels": ["4", "42"],
    }
    response = client.post("/get_reward", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["rewards"] == [0.0, 1.0]


def test_old_format_with_query_only_uses_the_fixed_reference() -> None:
    mapping = ItemMapping(
        verifier="string", params={"op": "contains"}, reference_column=None, reference="ok"
    )
    with TestClient(create_app(small_settings(cpu_workers=1, openrlhf_mapping=mapping))) as c:
        response = c.post("/get_reward", json={"query": ["all ok", "all bad"]})
        assert response.json()["rewards"] == [1.0, 0.0]


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"query": []}, "query"),
        ({"query": ["a", "b"], "labels": ["1"]}, "labels"),
        ({"query": ["a"], "prompts": ["x", "y"]}, "prompts"),
        ({"query": ["\\boxed{1}"], "labels": ["\\frac{"]}, "query[0]"),
        ({"query": ["a", "\\boxed{4} no"], "prompts": ["a", "the prompt"]}, "query[1]"),
    ],
)
def test_client_errors_are_422_naming_the_field(
    client: TestClient, body: dict[str, object], names: str
) -> None:
    response = client.post("/get_reward", json=body)
    assert response.status_code == 422, response.text
    assert names in response.json()["error"]["message"]


@pytest.fixture(scope="module")
def crashing() -> Iterator[TestClient]:
    mapping = ItemMapping(verifier="crash", reference_column=None)
    with TestClient(create_app(small_settings(cpu_workers=1, openrlhf_mapping=mapping))) as c:
        yield c


def test_infrastructure_failure_is_503_to_retry_not_a_zero(crashing: TestClient) -> None:
    response = crashing.post("/get_reward", json={"query": ["a", "b"]})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    assert "failed to score" in response.json()["error"]["message"]


def test_reward_func_file_against_a_live_server(
    live_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_URL", live_server)
    monkeypatch.setenv(
        "REFEREE_OPENRLHF_MAPPING", '{"verifier": "math", "reference_column": "answer"}'
    )
    out = reward_func([PROMPT + "\\boxed{42}", PROMPT + "7"], [PROMPT, PROMPT], ["42", "42"])
    assert [float(r) for r in out["rewards"]] == [1.0, 0.0]


def test_reward_func_raises_instead_of_zeroing_failures(
    live_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_URL", live_server)
    monkeypatch.setenv(
        "REFEREE_OPENRLHF_MAPPING", '{"verifier": "crash", "reference_column": null}'
    )
    with pytest.raises(RuntimeError, match="not scored"):
        reward_func(["a"], ["a"], ["x"])


def test_the_stop_token_openrlhf_decodes_is_not_scored(client: TestClient) -> None:
    """OpenRLHF's queries keep the policy's stop token as text: an exact answer still
    matches, and a query sent without its prompt is read from its assistant turn, never
    from the prompt's few-shot answer."""
    prompt = "<|im_start|>user\nQ: 2+2? A: \\boxed{4}. Q: 6*7?<|im_end|>\n<|im_start|>assistant\n"
    body = {
        "query": [prompt + "\\boxed{42}<|im_end|>", prompt + "I don't know<|im_end|>"],
        "labels": ["42", "4"],
    }
    response = client.post("/get_reward", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["rewards"] == [1.0, 0.0]


def test_an_exact_answer_matches_despite_the_stop_token() -> None:
    mapping = ItemMapping(verifier="string")
    with TestClient(create_app(small_settings(cpu_workers=1, openrlhf_mapping=mapping))) as c:
        body = {
            "query": [PROMPT + "Paris<|im_end|>", PROMPT + "Paris</s>", PROMPT + "Lyon<|eot_id|>"],
            "prompts": [PROMPT] * 3,
            "labels": ["Paris"] * 3,
        }
        response = c.post("/get_reward", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["rewards"] == [1.0, 1.0, 0.0]
