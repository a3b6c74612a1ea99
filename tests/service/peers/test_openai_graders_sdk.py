"""The OpenAI SDK's graders client (``client.fine_tuning.alpha.graders``) against
referee, with the API key as the SDK sends it (a bearer header)."""

from __future__ import annotations

import openai
import pytest

from tests.service.peers.conftest import KEY


@pytest.fixture
def sdk(keyed_server: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=f"{keyed_server}/v1", max_retries=0)


MULTI = {
    "type": "multi",
    "graders": {
        "exact": {
            "type": "string_check",
            "name": "exact",
            "input": "{{sample.output_text}}",
            "reference": "{{item.answers[0]}}",
            "operation": "eq",
        },
        "close": {
            "type": "text_similarity",
            "name": "close",
            "input": "{{sample.output_text}}",
            "reference": "{{item.answers[1]}}",
            "evaluation_metric": "rouge_1",
        },
    },
    "calculate_output": "floor(exact) * 0.5 + sqrt(close) * 0.5",
}


def test_run_through_the_sdk(sdk: openai.OpenAI) -> None:
    answer = sdk.fine_tuning.alpha.graders.run(
        grader=MULTI,  # type: ignore[arg-type]
        model_sample="Paris",
        item={"answers": ["Paris", "Paris France"]},
    )
    assert answer.reward == pytest.approx(0.5 + 0.5 * (2 / 3) ** 0.5)
    assert answer.sub_rewards == {"exact": 1.0, "close": pytest.approx(2 / 3)}
    assert answer.metadata.type == "multi"
    assert not answer.metadata.errors.formula_parse_error


def test_validate_through_the_sdk(sdk: openai.OpenAI) -> None:
    answer = sdk.fine_tuning.alpha.graders.validate(grader=MULTI)  # type: ignore[arg-type]
    assert answer.grader is not None


def test_an_invalid_grader_is_a_422_the_sdk_raises(sdk: openai.OpenAI) -> None:
    broken = {**MULTI, "calculate_output": "exact +"}
    with pytest.raises(openai.UnprocessableEntityError, match="calculate_output"):
        sdk.fine_tuning.alpha.graders.validate(grader=broken)  # type: ignore[arg-type]
