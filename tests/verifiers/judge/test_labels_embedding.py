"""Labels mode (OpenAI's ``label_model``) and embedding mode (``cosine`` similarity),
against the real loopback endpoint."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from tests.verifiers.judge.endpoint import JudgeEndpoint, Reply, completion, embeddings

MakeJudge = Callable[..., JudgeVerifier]
MESSAGES = [{"role": "user", "content": "Is 'I loved it' positive, neutral or negative?"}]
LABELS = {"labels": ["positive", "neutral", "negative"], "passing_labels": ["positive"]}


def label_item(**params: Any) -> Item:
    return Item(
        verifier="judge",
        response="I loved it",
        reference={"messages": MESSAGES},
        params={"mode": "labels", **LABELS, **params},
    )


@pytest.mark.parametrize(
    ("reply", "label", "reward"),
    [
        ('{"result": "positive"}', "positive", 1.0),
        ("Negative", "negative", 0.0),
        ('{"label": "NEUTRAL", "reason": "flat"}', "neutral", 0.0),
    ],
)
async def test_the_label_decides(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, reply: str, label: str, reward: float
) -> None:
    endpoint.script = lambda _: completion(reply)
    [result] = await make_judge(allow_messages_mode=True).ascore([label_item()])
    assert result.status == Status.OK, result.error
    assert (result.reward, result.details["label"]) == (reward, label)
    assert endpoint.requests[0]["messages"] == MESSAGES


async def test_an_answer_outside_the_labels_is_reasked_then_an_error(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"result": "great"}')
    [result] = await make_judge(allow_messages_mode=True).ascore([label_item(max_reasks=1)])
    assert result.status == Status.ERROR and result.reward is None
    assert result.error is not None and result.error.code == "judge_unparsable"
    assert len(endpoint.requests) == 2


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"labels": None}, "params.labels"),
        ({"passing_labels": ["great"]}, "params.passing_labels"),
        ({"labels": ["a", "A"], "passing_labels": ["a"]}, "params.labels"),
        ({"samples": 2}, "params.samples"),
    ],
)
async def test_bad_label_params_are_invalid(
    make_judge: MakeJudge, params: dict[str, Any], field: str
) -> None:
    [result] = await make_judge(allow_messages_mode=True).ascore([label_item(**params)])
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message


async def test_labels_mode_needs_the_operators_consent(make_judge: MakeJudge) -> None:
    [result] = await make_judge().ascore([label_item()])
    assert result.status == Status.INVALID
    assert result.error is not None and "allow_messages_mode" in result.error.message


def embedding_item(reference: Any = "a kitten", **params: Any) -> Item:
    return Item(
        verifier="judge",
        response="a small cat",
        reference=reference,
        params={"mode": "embedding", **params},
    )


async def test_cosine_of_the_embeddings(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = lambda _: embeddings([1.0, 0.0], [1.0, 1.0], [0.0, -1.0])
    judge = make_judge()
    [result] = await judge.ascore([embedding_item(["a kitten", "a truck"])])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(1 / math.sqrt(2))  # the best reference
    assert result.details["scores"] == pytest.approx([1 / math.sqrt(2), 0.0])
    [request] = endpoint.requests
    assert endpoint.headers[0][":path"] == "/v1/embeddings"
    assert request == {"model": "judge-test", "input": ["a small cat", "a kitten", "a truck"]}


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (embeddings([0.0, 0.0], [1.0, 0.0]), "judge_bad_response"),
        (embeddings([1.0, 0.0]), "judge_bad_response"),
        (embeddings([1.0], [1.0, 0.0]), "judge_bad_response"),
        (Reply(status=400, body={"error": "no such model"}), "judge_http_4xx"),
    ],
)
async def test_a_broken_embeddings_answer_is_an_error_never_a_score(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, reply: Reply, code: str
) -> None:
    endpoint.script = lambda _: reply
    [result] = await make_judge(retries=0).ascore([embedding_item()])
    assert result.status == Status.ERROR and result.reward is None
    assert result.error is not None and result.error.code == code


async def test_embedding_reference_must_be_text(make_judge: MakeJudge) -> None:
    [result] = await make_judge().ascore([embedding_item({"not": "text"})])
    assert result.status == Status.INVALID
    assert result.error is not None and "reference" in result.error.message


IMAGE_MESSAGES = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Is this a cat? Answer 0 or 1."},
            {"type": "image_url", "image_url": {"url": "http://10.0.0.1/internal/admin.png"}},
        ],
    }
]


async def test_an_image_by_url_needs_the_operators_consent(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    """An endpoint that fetches image URLs (vLLM, OpenAI) would fetch whatever a client
    names, the operator's own network included: URLs only when the profile allows them."""
    endpoint.script = lambda _: completion("1")
    item = Item(
        verifier="judge",
        response="x",
        reference={"messages": IMAGE_MESSAGES},
        params={"mode": "messages", "score_range": [0, 1]},
    )
    [refused] = await make_judge(allow_messages_mode=True).ascore([item])
    assert refused.status == Status.INVALID
    assert refused.error is not None and "allow_remote_images" in refused.error.message
    assert endpoint.requests == []
    allowed = make_judge(allow_messages_mode=True, allow_remote_images=True)
    [result] = await allowed.ascore([item])
    assert result.status == Status.OK and result.reward == 1.0
    inline = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    data_item = item.model_copy(
        update={"reference": {"messages": [{"role": "user", "content": [inline]}]}}
    )
    [by_data] = await make_judge(allow_messages_mode=True).ascore([data_item])
    assert by_data.status == Status.OK
