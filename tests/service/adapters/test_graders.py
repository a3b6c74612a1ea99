"""OpenAI-style graders through the real app, including python graders in the sandbox
and score_model graders against a real loopback chat-completions endpoint."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.adapters.graders import Expansion, TemplateError, render
from tests.service.adapters.judged_app import PROFILES, judged_app
from tests.verifiers.judge.endpoint import Reply, completion, embeddings

SAMPLE = {"output_text": '{"answer": "Paris"}', "output_json": {"answer": "Paris"}}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{sample.output_text}}", '{"answer": "Paris"}'),
        ("{{ sample.output_json.answer }}!", "Paris!"),
        ("{{item.reference}}", "Paris"),
        ("{{item.nested.n}} and {{item.nested.list}}", "3 and [1, 2]"),
        ("no variables", "no variables"),
        ("{{item.answers[0]}} or {{ item.answers[1] }}", "Paris or Lutetia"),
        ("{{item.nested.list[1]}}", "2"),
        ("{{item.rows[0].name}}", "x"),
    ],
)
def test_render(template: str, expected: str) -> None:
    item = {
        "reference": "Paris",
        "nested": {"n": 3, "list": [1, 2]},
        "answers": ["Paris", "Lutetia"],
        "rows": [{"name": "x"}],
    }
    assert render(template, SAMPLE, item, Expansion(10, 10_000)) == expected


@pytest.mark.parametrize(
    "template",
    ["{{item.missing}}", "{{sample.output_json.x}}", "{{item.answers[5]}}", "{{item.x[0]}}"],
)
def test_render_names_missing_variables(template: str) -> None:
    with pytest.raises(TemplateError, match="not in the request"):
        render(template, SAMPLE, {}, Expansion(10, 10_000))


def run(
    client: TestClient, grader: dict[str, Any], sample: str, item: dict[str, Any]
) -> dict[str, Any]:
    response = client.post(
        "/v1/graders/run", json={"grader": grader, "model_sample": sample, "item": item}
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


STRING = {
    "type": "string_check",
    "name": "exact",
    "input": "{{sample.output_text}}",
    "reference": "{{item.answer}}",
    "operation": "eq",
}


@pytest.mark.parametrize(
    ("operation", "sample", "reward"),
    [
        ("eq", "Paris", 1.0),
        ("eq", "paris", 0.0),
        ("ne", "Lyon", 1.0),
        ("like", "in Paris!", 1.0),
        ("like", "in paris", 0.0),
        ("ilike", "in PARIS", 1.0),
    ],
)
def test_string_check(client: TestClient, operation: str, sample: str, reward: float) -> None:
    data = run(client, {**STRING, "operation": operation}, sample, {"answer": "Paris"})
    assert data["reward"] == reward
    assert data["metadata"]["type"] == "string_check"
    assert not any(v for k, v in data["metadata"]["errors"].items() if k.endswith("error"))


def test_text_similarity(client: TestClient) -> None:
    grader = {
        "type": "text_similarity",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "evaluation_metric": "fuzzy_match",
    }
    assert run(client, grader, "Paris", {"answer": "Paris"})["reward"] == 1.0
    assert 0 < run(client, grader, "Pariss", {"answer": "Paris"})["reward"] < 1


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{{item.answers[first]}}", "not a variable"),
        ("{{ item.answers | upper }}", "not a variable"),
    ],
)
def test_render_refuses_what_looks_like_a_variable_but_is_not(template: str, problem: str) -> None:
    """Left in the text it would be compared literally: a silent reward of 0."""
    with pytest.raises(TemplateError, match=problem):
        render(template, SAMPLE, {"answers": ["a"]}, Expansion(10, 10_000))


# Every documented metric but cosine (an embedding model: see test_cosine_similarity).
@pytest.mark.parametrize(
    ("metric", "reward"),
    [
        ("fuzzy_match", 1.0),
        ("bleu", 1.0),
        ("gleu", 1 / 3),
        ("meteor", None),
        ("rouge_1", 2 / 3),
        ("rouge_2", 2 * 0.4 / 1.4),
        ("rouge_3", 0.4),
        ("rouge_4", 0.0),
        ("rouge_5", 0.0),
        ("rouge_l", 2 / 3),
    ],
)
def test_every_text_similarity_metric(
    client: TestClient, metric: str, reward: float | None
) -> None:
    grader = {
        "type": "text_similarity",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answers[0]}}",
        "evaluation_metric": metric,
    }
    same = run(client, grader, "the cat sat on the mat", {"answers": ["the cat sat on the mat"]})
    assert same["reward"] == 1.0
    data = run(client, grader, "the cat sat", {"answers": ["the cat sat on the mat"]})
    assert not any(v for k, v in data["metadata"]["errors"].items() if k.endswith("error"))
    if metric in ("fuzzy_match", "bleu", "meteor"):
        assert 0 < data["reward"] < 1
    else:
        assert data["reward"] == pytest.approx(reward)


def test_python_grader_runs_in_the_sandbox(client: TestClient) -> None:
    grader = {
        "type": "python",
        "source": (
            "def grade(sample, item):\n"
            "    return 1.0 if sample['output_json']['answer'] == item['answer'] else 0.5\n"
        ),
    }
    assert run(client, grader, '{"answer": "Paris"}', {"answer": "Paris"})["reward"] == 1.0
    assert run(client, grader, '{"answer": "Lyon"}', {"answer": "Paris"})["reward"] == 0.5


def test_python_grader_failure_is_a_flag_and_a_null_reward(client: TestClient) -> None:
    grader = {"type": "python", "source": "def grade(sample, item):\n    return 1 / 0\n"}
    data = run(client, grader, "x", {})
    assert data["reward"] is None
    errors = data["metadata"]["errors"]
    assert errors["python_grader_runtime_error"] is True
    assert "ZeroDivisionError" in errors["python_grader_runtime_error_details"]


def test_python_grader_a_sample_breaks_scores_zero_with_the_flag(client: TestClient) -> None:
    """The grader grades the item's own answer: failing on this sample is the sample's."""
    source = (
        "def grade(sample, item):\n"
        "    return 1.0 if float(sample['output_text']) == float(item['a']) else 0.0\n"
    )
    grader = {"type": "python", "source": source}
    data = run(client, grader, "not a number", {"a": "4"})
    assert data["reward"] == 0.0
    errors = data["metadata"]["errors"]
    assert errors["python_grader_runtime_error"] is True
    assert "ValueError" in errors["python_grader_runtime_error_details"]
    assert run(client, grader, "4", {"a": "4"})["reward"] == 1.0


def test_multi_combines_sub_graders_with_the_formula(client: TestClient) -> None:
    grader = {
        "type": "multi",
        "name": "mix",
        "graders": {
            "exact": STRING,
            "similar": {
                "type": "text_similarity",
                "input": "{{sample.output_text}}",
                "reference": "{{item.answer}}",
                "evaluation_metric": "fuzzy_match",
            },
        },
        "calculate_output": "0.5 * exact + 0.5 * similar",
    }
    data = run(client, grader, "Paris", {"answer": "Paris"})
    assert data["reward"] == 1.0 and data["sub_rewards"] == {"exact": 1.0, "similar": 1.0}
    partial = run(client, grader, "Pari", {"answer": "Paris"})
    assert partial["sub_rewards"]["exact"] == 0.0
    assert partial["reward"] == pytest.approx(0.5 * partial["sub_rewards"]["similar"])


def test_missing_template_variable_is_flagged(client: TestClient) -> None:
    data = run(client, STRING, "Paris", {})
    assert data["reward"] is None
    assert data["metadata"]["errors"]["invalid_variable_error"] is True


@pytest.mark.parametrize(
    ("grader", "names"),
    [
        ({**STRING, "operation": "regex"}, "operation"),
        (
            {
                "type": "text_similarity",
                "input": "a",
                "reference": "b",
                "evaluation_metric": "word_error_rate",
            },
            "evaluation_metric",
        ),
        (
            {"type": "multi", "graders": {"a": STRING}, "calculate_output": "a + b"},
            "calculate_output",
        ),
        (
            {"type": "multi", "graders": {"a": STRING}, "calculate_output": "a +"},
            "calculate_output",
        ),
        ({"type": "score_model", "model": "x", "input": []}, "input"),
        ({"type": "python"}, "source"),
    ],
)
def test_validate_refuses_what_cannot_run(
    client: TestClient, grader: dict[str, Any], names: str
) -> None:
    response = client.post("/v1/graders/validate", json={"grader": grader})
    assert response.status_code == 422
    assert names in response.json()["error"]["message"]


def test_validate_returns_the_grader(client: TestClient) -> None:
    response = client.post("/v1/graders/validate", json={"grader": STRING})
    assert response.status_code == 200 and response.json()["grader"]["operation"] == "eq"


# --- score_model -------------------------------------------------------------------------

SCORE_MODEL: dict[str, Any] = {
    "type": "score_model",
    "name": "judge",
    "model": "gpt-4o-2024-08-06",
    "input": [
        {"role": "system", "content": "Grade the answer. Reply with a number from 0 to 10."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Answer: {{sample.output_text}}"},
                {
                    "type": "input_text",
                    "text": "City: {{sample.output_json.answer}}; "
                    "reference: {{item.reference_answer}} ({{item.meta.n}})",
                },
            ],
        },
    ],
    "range": [0, 10],
    "pass_threshold": 5,
    "sampling_params": {
        "temperature": 0.2,
        "top_p": 0.9,
        "seed": 7,
        "max_completions_tokens": 64,
        "reasoning_effort": "low",
    },
}
SAMPLE_TEXT = '{"answer": "Paris"}'
ITEM = {"reference_answer": "Paris", "meta": {"n": 3}}
RENDERED = [
    {"role": "system", "content": "Grade the answer. Reply with a number from 0 to 10."},
    {
        "role": "user",
        "content": 'Answer: {"answer": "Paris"}\nCity: Paris; reference: Paris (3)',
    },
]


def errors_set(data: dict[str, Any]) -> set[str]:
    return {k for k, v in data["metadata"]["errors"].items() if k.endswith("error") and v}


def test_score_model_sends_the_rendered_messages_and_returns_the_raw_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion('{"result": 7}', usage=(120, 8))
        data = run(client, SCORE_MODEL, SAMPLE_TEXT, ITEM)
    assert data["reward"] == 7.0  # on the grader's range, not normalised
    assert data["sub_rewards"] == {}
    assert data["metadata"]["type"] == "score_model"
    assert errors_set(data) == set()
    [request] = endpoint.requests
    assert request["messages"] == RENDERED
    assert request["model"] == "gpt-4o-2024-08-06"  # the profile serving that model id
    assert (request["temperature"], request["top_p"], request["seed"]) == (0.2, 0.9, 7)
    assert request["max_tokens"] == 64
    assert "reasoning_effort" not in request
    assert data["model_grader_token_usage_per_model"] == {
        "gpt-4o-2024-08-06": {
            "prompt_tokens": 120,
            "completion_tokens": 8,
            "total_tokens": 128,
            "cached_tokens": 0,
        }
    }


@pytest.mark.parametrize(
    ("model", "served"),
    [
        ("o3-mini", "small-judge"),  # a profile named like the model
        ("gpt-4o-2024-08-06", "gpt-4o-2024-08-06"),  # a profile serving the model id
        ("gpt-5", "local-judge"),  # else the default profile
    ],
)
def test_score_model_model_picks_the_profile(
    monkeypatch: pytest.MonkeyPatch, model: str, served: str
) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion("0.5")
        grader = {
            "type": "score_model",
            "model": model,
            "input": [{"role": "user", "content": "?"}],
        }
        data = run(client, grader, "x", {})
    assert data["reward"] == 0.5
    assert [r["model"] for r in endpoint.requests] == [served]
    assert list(data["model_grader_token_usage_per_model"]) == [model]


def test_score_model_without_a_profile_is_invalid_not_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with judged_app(monkeypatch, {"hosted": "gpt-4o-2024-08-06"}) as (client, endpoint):
        data = run(client, {**SCORE_MODEL, "model": "gpt-5"}, SAMPLE_TEXT, ITEM)
    assert data["reward"] is None
    assert errors_set(data) == {"other_error"}
    details = data["metadata"]["errors"]["other_error_details"]
    assert details.startswith("grader.model: ") and "'gpt-5'" in details
    assert endpoint.requests == []


@pytest.mark.parametrize("reply", ['{"result": 11}', "-1", "I'd rather not say."])
def test_score_model_out_of_range_or_unparsable_is_a_parse_error(
    monkeypatch: pytest.MonkeyPatch, reply: str
) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion(reply)
        data = run(client, SCORE_MODEL, SAMPLE_TEXT, ITEM)
    assert data["reward"] is None  # never clamped, never 0
    assert errors_set(data) == {"model_grader_parse_error"}
    assert len(endpoint.requests) == 2  # asked, re-asked once, then given up
    assert endpoint.requests[1]["messages"][: len(RENDERED)] == RENDERED
    assert data["model_grader_token_usage_per_model"] == {}


def test_score_model_unparsable_reply_is_reasked_then_scored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.queue(completion("Let me think. Quite good overall."))
        endpoint.script = lambda _: completion('{"score": 8.5}')
        data = run(client, SCORE_MODEL, SAMPLE_TEXT, ITEM)
    assert data["reward"] == 8.5
    assert len(endpoint.requests) == 2
    usage = data["model_grader_token_usage_per_model"]["gpt-4o-2024-08-06"]
    assert usage["prompt_tokens"] == 200  # both calls are paid for


def test_score_model_server_errors_are_flags_not_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: Reply(status=500, body={"error": "overloaded"})
        data = run(client, SCORE_MODEL, SAMPLE_TEXT, ITEM)
    assert data["reward"] is None
    assert errors_set(data) == {"model_grader_server_error"}
    assert "HTTP 500" in data["metadata"]["errors"]["model_grader_server_error_details"]
    assert len(endpoint.requests) == 2  # the profile's one retry


def test_score_model_inside_multi(monkeypatch: pytest.MonkeyPatch) -> None:
    grader = {
        "type": "multi",
        "name": "mix",
        "graders": {
            "judge": SCORE_MODEL,
            "exact": {**STRING, "input": "{{item.reference_answer}}"},
        },
        "calculate_output": "0.5 * judge / 10 + 0.5 * exact",
    }
    item = {**ITEM, "answer": "Paris"}
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion("8")
        data = run(client, grader, SAMPLE_TEXT, item)
        assert data["sub_rewards"] == {"judge": 8.0, "exact": 1.0}
        assert data["reward"] == pytest.approx(0.9)
        assert data["metadata"]["scores"] == {"judge": 8.0, "exact": 1.0}
        assert list(data["model_grader_token_usage_per_model"]) == ["gpt-4o-2024-08-06"]
        endpoint.script = lambda _: completion("eleven")
        failed = run(client, grader, '{"answer": "Lyon"}', item)
    assert failed["reward"] is None
    assert failed["sub_rewards"] == {"judge": None, "exact": 1.0}
    assert errors_set(failed) == {"model_grader_parse_error"}


def test_validate_accepts_a_score_model(client: TestClient) -> None:
    response = client.post("/v1/graders/validate", json={"grader": SCORE_MODEL})
    assert response.status_code == 200, response.text
    grader = response.json()["grader"]
    assert grader["range"] == [0, 10] and grader["model"] == "gpt-4o-2024-08-06"
    minimal = {"type": "score_model", "model": "m", "input": [{"role": "user", "content": "?"}]}
    response = client.post("/v1/graders/validate", json={"grader": minimal})
    assert response.status_code == 200 and response.json()["grader"]["range"] == [0, 1]


def _with_input(**message: Any) -> dict[str, Any]:
    return {**SCORE_MODEL, "input": [{"role": "user", "content": "?", **message}]}


@pytest.mark.parametrize(
    ("grader", "names"),
    [
        ({**SCORE_MODEL, "range": [1, 1]}, "grader.score_model.range"),
        ({**SCORE_MODEL, "range": [1, 0]}, "range[0] must be below range[1]"),
        ({**SCORE_MODEL, "input": []}, "grader.score_model.input"),
        (_with_input(role="tool"), "grader.score_model.input.0.role"),
        (_with_input(content=[]), "grader.score_model.input.0.content"),
        ({**SCORE_MODEL, "pass_threshold": 11}, "grader.score_model.pass_threshold"),
        ({**SCORE_MODEL, "model": ""}, "grader.score_model.model"),
        (
            {**SCORE_MODEL, "sampling_params": {"temperature": 3}},
            "grader.score_model.sampling_params.temperature",
        ),
        (
            {
                "type": "multi",
                "graders": {"j": {**SCORE_MODEL, "range": [2, 1]}},
                "calculate_output": "j",
            },
            "grader.multi.graders.j.score_model.range",
        ),
    ],
)
def test_validate_refuses_bad_score_models(
    client: TestClient, grader: dict[str, Any], names: str
) -> None:
    response = client.post("/v1/graders/validate", json={"grader": grader})
    assert response.status_code == 422
    assert names in response.json()["error"]["message"]


def test_score_model_accepts_every_content_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string, one content object, a list mixing strings and objects, and image parts
    (sent on as chat ``image_url`` parts, templates filled)."""
    grader = {
        **SCORE_MODEL,
        "input": [
            {"role": "developer", "content": {"type": "input_text", "text": "Grade 0 to 10."}},
            {
                "role": "user",
                "content": ["Answer:", {"type": "input_text", "text": "{{sample.output_text}}"}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "Does this picture show {{item.reference_answer}}?",
                    },
                    {"type": "input_image", "image_url": "{{item.image}}", "detail": "low"},
                ],
            },
        ],
    }
    item = {**ITEM, "image": "data:image/png;base64,iVBORw0KGgo="}
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion("6")
        data = run(client, grader, SAMPLE_TEXT, item)
    assert data["reward"] == 6.0, data
    [request] = endpoint.requests
    assert request["messages"] == [
        {"role": "system", "content": "Grade 0 to 10."},
        {"role": "user", "content": 'Answer:\n{"answer": "Paris"}'},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Does this picture show Paris?"},
                {"type": "image_url", "image_url": {"url": item["image"], "detail": "low"}},
            ],
        },
    ]


LABEL_MODEL: dict[str, Any] = {
    "type": "label_model",
    "name": "sentiment",
    "model": "gpt-4o-2024-08-06",
    "input": [
        {"role": "developer", "content": "Classify the sentiment: positive, neutral or negative."},
        {"role": "user", "content": "{{sample.output_text}}"},
    ],
    "labels": ["positive", "neutral", "negative"],
    "passing_labels": ["positive", "neutral"],
}


@pytest.mark.parametrize(("reply", "reward"), [('{"result": "neutral"}', 1.0), ("negative", 0.0)])
def test_label_model(monkeypatch: pytest.MonkeyPatch, reply: str, reward: float) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion(reply)
        data = run(client, LABEL_MODEL, "It was fine, I guess.", {})
    assert data["reward"] == reward, data
    assert data["metadata"]["type"] == "label_model" and errors_set(data) == set()
    assert endpoint.requests[0]["messages"][1] == {
        "role": "user",
        "content": "It was fine, I guess.",
    }


def test_label_model_answer_outside_the_labels_is_a_parse_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        endpoint.script = lambda _: completion("ecstatic")
        data = run(client, LABEL_MODEL, "Wow", {})
    assert data["reward"] is None
    assert errors_set(data) == {"model_grader_parse_error"}


@pytest.mark.parametrize(
    ("change", "names"),
    [({"passing_labels": ["happy"]}, "passing_labels"), ({"labels": []}, "labels")],
)
def test_validate_refuses_bad_label_models(
    client: TestClient, change: dict[str, Any], names: str
) -> None:
    response = client.post("/v1/graders/validate", json={"grader": {**LABEL_MODEL, **change}})
    assert response.status_code == 422
    assert names in response.json()["error"]["message"]


def test_cosine_similarity_through_the_embeddings_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    grader = {
        "type": "text_similarity",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "evaluation_metric": "cosine",
    }
    with judged_app(monkeypatch, {**PROFILES, "embeddings": "text-embedding-3-small"}) as (
        client,
        endpoint,
    ):
        endpoint.script = lambda _: embeddings([3.0, 4.0], [4.0, 3.0])
        data = run(client, grader, "a kitten", {"answer": "a small cat"})
    assert data["reward"] == pytest.approx(24 / 25)
    [request] = endpoint.requests
    assert request == {"model": "text-embedding-3-small", "input": ["a kitten", "a small cat"]}
    assert endpoint.headers[0][":path"] == "/v1/embeddings"


def test_cosine_without_an_embeddings_profile_is_flagged_not_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grader = {
        "type": "text_similarity",
        "input": "a",
        "reference": "b",
        "evaluation_metric": "cosine",
    }
    with judged_app(monkeypatch, PROFILES) as (client, endpoint):
        data = run(client, grader, "a", {})
    assert data["reward"] is None
    assert "embeddings" in data["metadata"]["errors"]["other_error_details"]
    assert endpoint.requests == []


@pytest.mark.parametrize("prefix", ["/v1/graders", "/v1/fine_tuning/alpha/graders"])
def test_the_sdk_paths_answer_too(client: TestClient, prefix: str) -> None:
    """The OpenAI SDK calls /v1/fine_tuning/alpha/graders/{run,validate}."""
    body = {"grader": STRING, "model_sample": "Paris", "item": {"answer": "Paris"}}
    assert client.post(f"{prefix}/run", json=body).json()["reward"] == 1.0
    assert client.post(f"{prefix}/validate", json={"grader": STRING}).status_code == 200
