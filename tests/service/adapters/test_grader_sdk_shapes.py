"""Every grader shape the OpenAI SDK's own types allow is accepted and runs.

The shapes are not written by hand: they are derived from the SDK's ``TypedDict`` params
(``openai.types.graders``), so a metric, an operation, a role, a content variant or a
sampling setting the SDK (and so OpenAI's API reference, which it is generated from)
allows cannot be missed. Each choice point is varied one at a time from a base example;
strings are filled per field name so that each example is meaningful (templates, a label
among the labels, a formula naming the grader). Each example goes through the SDK's route
path for ``validate`` and ``run``, and a run's answer must parse as the SDK's own
``GraderRunResponse`` with full validation.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from openai.types.fine_tuning.alpha import GraderRunResponse
from openai.types.graders import (
    LabelModelGraderParam,
    MultiGraderParam,
    PythonGraderParam,
    ScoreModelGraderParam,
    StringCheckGraderParam,
    TextSimilarityGraderParam,
)
from typing_extensions import is_typeddict

from tests.service.adapters.judged_app import PROFILES, judged_app
from tests.verifiers.judge.endpoint import Reply, completion, embeddings

PNG = "data:image/png;base64,iVBORw0KGgo="
STRINGS: dict[str, str | list[str]] = {
    "name": "g",
    "input": "{{sample.output_text}}",
    "reference": "{{item.answer}}",
    "model": "gpt-4o-2024-08-06",
    "text": "Rate {{sample.output_text}} against {{item.answer}}.",
    "image_url": PNG,
    "detail": "low",
    "data": "UklGRg==",
    "source": "def grade(sample, item):\n    return 1.0\n",
    "calculate_output": "g",
    "labels": ["good", "bad"],
    "passing_labels": ["good"],
}
NUMBERS: dict[str, Any] = {
    "range": [0.0, 10.0],
    "temperature": 0.5,
    "top_p": 0.9,
    "seed": 7,
    "max_completions_tokens": 64,
}
SKIPPED = {"image_tag"}
"""Fields the SDK types that a referee run ignores by design: the python grader always
runs in referee's own sandbox image."""


def variants(tp: Any, field: str = "") -> list[Any]:
    """Example values of type ``tp`` (the field's name picks meaningful strings): the
    first is the base; the others cover each Literal value and Union member."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Required, typing.NotRequired) or str(origin).endswith("Required"):
        return variants(args[0], field)
    if origin is typing.Literal:
        return list(args)
    if origin in (typing.Union, types.UnionType):
        return [v for arg in args if arg is not type(None) for v in variants(arg, field)]
    if is_typeddict(tp):
        return typed_dict_variants(tp)
    if field in NUMBERS or isinstance(STRINGS.get(field), list):
        return [NUMBERS.get(field, STRINGS.get(field))]
    if origin in (list, Iterable) or (origin is not None and "Sequence" in str(origin)):
        return [[v] for v in variants(args[0], field)]
    if tp is str:
        return [STRINGS.get(field, "{{sample.output_text}}")]
    raise AssertionError(f"no example for {field}: {tp}")


def typed_dict_variants(td: Any) -> list[dict[str, Any]]:
    """A base (every field's first variant) and one example per other variant of each
    field, varied one field at a time."""
    hints = typing.get_type_hints(td, include_extras=True)
    options = {name: variants(tp, name) for name, tp in hints.items() if name not in SKIPPED}
    base = {name: values[0] for name, values in options.items()}
    out = [base]
    for name, values in options.items():
        out += [{**base, name: value} for value in values[1:]]
    return out


GRADERS = [
    StringCheckGraderParam,
    TextSimilarityGraderParam,
    PythonGraderParam,
    ScoreModelGraderParam,
    LabelModelGraderParam,
    MultiGraderParam,
]
EXAMPLES = [example for td in GRADERS for example in typed_dict_variants(td)]


def test_the_sdk_types_give_many_shapes() -> None:
    """The derivation reaches the choice points it is meant to: every metric, every
    content variant, every reasoning effort, each grader inside a multi."""
    metrics = {e["evaluation_metric"] for e in EXAMPLES if e["type"] == "text_similarity"}
    assert {"cosine", "meteor", "rouge_5", "gleu"} <= metrics
    contents = [m["content"] for e in EXAMPLES if e["type"] == "score_model" for m in e["input"]]
    kinds = {c["type"] if isinstance(c, dict) else type(c).__name__ for c in contents}
    assert kinds == {"str", "list", "input_text", "output_text", "input_image", "input_audio"}
    efforts = {
        e["sampling_params"].get("reasoning_effort") for e in EXAMPLES if e["type"] == "score_model"
    }
    assert {"minimal", "high"} <= efforts
    assert {e["graders"]["type"] for e in EXAMPLES if e["type"] == "multi"} == {
        "string_check",
        "text_similarity",
        "python",
        "score_model",
        "label_model",
    }


def reply(request: dict[str, Any]) -> Reply:
    """Embeddings for cosine, a label for a label grader, a score otherwise."""
    if "input" in request:
        return embeddings([1.0, 0.0], [0.6, 0.8])
    labels = "good" in str(request["messages"])
    return completion("good" if labels else "7")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        models = {**PROFILES, "embeddings": "text-embedding-3-small"}
        with judged_app(monkeypatch, models) as (client, endpoint):
            endpoint.script = reply
            yield client


def label(example: dict[str, Any]) -> str:
    """A stable test id: the grader's type (and the multi's inner type) and its index."""
    inner = example.get("graders", {})
    return f"{example['type']}-{inner.get('type', '')}-{EXAMPLES.index(example)}"


@pytest.mark.parametrize("grader", EXAMPLES, ids=label)
def test_every_sdk_shape_validates_and_runs(client: TestClient, grader: dict[str, Any]) -> None:
    prefix = "/v1/fine_tuning/alpha/graders"
    answer = client.post(f"{prefix}/validate", json={"grader": grader})
    assert answer.status_code == 200, answer.text
    body = {"grader": grader, "model_sample": "Paris", "item": {"answer": "Paris"}}
    answer = client.post(f"{prefix}/run", json=body)
    assert answer.status_code == 200, answer.text
    parsed = GraderRunResponse.model_validate(answer.json())
    errors = parsed.metadata.errors.model_dump()
    assert not any(v for k, v in errors.items() if k.endswith("error")), errors
    assert 0.0 <= parsed.reward <= 10.0
