"""OpenAI-style graders through the real app, including python graders in the sandbox."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.adapters.graders import TemplateError, render

SAMPLE = {"output_text": '{"answer": "Paris"}', "output_json": {"answer": "Paris"}}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{sample.output_text}}", '{"answer": "Paris"}'),
        ("{{ sample.output_json.answer }}!", "Paris!"),
        ("{{item.reference}}", "Paris"),
        ("{{item.nested.n}} and {{item.nested.list}}", "3 and [1, 2]"),
        ("no variables", "no variables"),
    ],
)
def test_render(template: str, expected: str) -> None:
    item = {"reference": "Paris", "nested": {"n": 3, "list": [1, 2]}}
    assert render(template, SAMPLE, item) == expected


@pytest.mark.parametrize("template", ["{{item.missing}}", "{{sample.output_json.x}}"])
def test_render_names_missing_variables(template: str) -> None:
    with pytest.raises(TemplateError, match="not in the request"):
        render(template, SAMPLE, {})


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
                "evaluation_metric": "meteor",
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
        ({"type": "score_model", "model": "x", "input": []}, "grader"),
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
