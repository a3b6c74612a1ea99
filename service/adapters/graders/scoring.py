"""Graders as referee items: one item per leaf grader, and the results combined back
into the grader's answer (``multi``'s formula, error flags, token usage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from referee.service.adapters.graders.schemas import (
    COSINE,
    EMBEDDING_PROFILE,
    SIMILARITY,
    Grader,
    GraderRunResponse,
    InputAudio,
    InputImage,
    InputText,
    LabelModel,
    ModelInput,
    Multi,
    ScoreModel,
    StringCheck,
    TextSimilarity,
)
from referee.service.adapters.graders.templates import Expansion, render
from referee.verifiers.judge.dialogue import UNPARSABLE
from referee.verifiers.python_grader import sample_of
from referee.verifiers.rules.formula import FormulaError, evaluate, parse
from referee.verifiers.types import Item, Result, Status

_STRING_OPS = {"eq": "eq", "ne": "ne", "like": "contains", "ilike": "icontains"}


Leaf = tuple[str, Item]
"""A leaf grader's dotted key (``""`` for a lone grader) and the item that scores it."""


def leaf_items(
    grader: Grader, sample_text: str, item: dict[str, Any], budget: Expansion, key: str = ""
) -> list[Leaf]:
    """(key, item) for every leaf grader; keys are dotted paths through ``multi``. Raises
    `GraderTooLarge` past ``budget`` and `TemplateError` for a missing variable."""
    if isinstance(grader, Multi):
        return [
            pair
            for name, child in grader.graders.items()
            for pair in leaf_items(
                child, sample_text, item, budget, f"{key}.{name}" if key else name
            )
        ]
    budget.take_leaf()
    sample = sample_of(sample_text)
    if isinstance(grader, StringCheck):
        params = {"op": _STRING_OPS[grader.operation], "normalize": {"nfkc": False, "strip": False}}
        made = Item(
            verifier="string",
            response=render(grader.input, sample, item, budget),
            reference=render(grader.reference, sample, item, budget),
            params=params,
        )
    elif isinstance(grader, TextSimilarity):
        made = _similarity_item(grader, sample, item, budget)
    elif isinstance(grader, ScoreModel | LabelModel):
        made = _judge_item(grader, sample_text, sample, item, budget)
    else:
        made = Item(
            verifier="python_grader",
            response=sample_text,
            reference={"source": grader.source, "item": item},
        )
    return [(key, made)]


def _similarity_item(
    grader: TextSimilarity, sample: dict[str, Any], item: dict[str, Any], budget: Expansion
) -> Item:
    """A ``similarity`` item, or for ``cosine`` a judge item in embedding mode on the
    `EMBEDDING_PROFILE` judge profile (the embedding model's endpoint)."""
    response = render(grader.input, sample, item, budget)
    reference = render(grader.reference, sample, item, budget)
    if grader.evaluation_metric == COSINE:
        params: dict[str, Any] = {"mode": "embedding", "profile": EMBEDDING_PROFILE}
        return Item(verifier="judge", response=response, reference=reference, params=params)
    params = {"metric": SIMILARITY[grader.evaluation_metric]}
    return Item(verifier="similarity", response=response, reference=reference, params=params)


# Chat endpoints other than OpenAI's (vLLM chat templates) know no "developer" role;
# OpenAI itself treats it as the system message.
_ROLES = {"developer": "system"}


def _judge_item(
    grader: ScoreModel | LabelModel,
    sample_text: str,
    sample: dict[str, Any],
    item: dict[str, Any],
    budget: Expansion,
) -> Item:
    """A ``judge`` item in messages mode (``score_model``) or labels mode
    (``label_model``); ``params.model`` is ``grader.model`` as given."""
    messages = [
        {"role": _ROLES.get(m.role, m.role), "content": _content(m, sample, item, budget)}
        for m in grader.input
    ]
    sampling = grader.sampling_params.judge_sampling() if grader.sampling_params else {}
    params: dict[str, Any] = {"model": grader.model, "sampling": sampling}
    if isinstance(grader, ScoreModel):
        params |= {"mode": "messages", "score_range": list(grader.range)}
    else:
        params |= {
            "mode": "labels",
            "labels": grader.labels,
            "passing_labels": grader.passing_labels,
        }
    return Item(
        verifier="judge", response=sample_text, reference={"messages": messages}, params=params
    )


def _content(
    message: ModelInput, sample: dict[str, Any], item: dict[str, Any], budget: Expansion
) -> str | list[dict[str, Any]]:
    """A message's rendered content: one string when it is all text (parts joined by
    newlines, as chat templates do), else chat content parts for a judge that takes
    images or audio."""
    parts = message.parts()
    texts = [part if isinstance(part, str) else part.text for part in parts if _text(part)]
    if len(texts) == len(parts):
        return render("\n".join(texts), sample, item, budget)
    return [_chat_part(part, sample, item, budget) for part in parts]


def _text(part: object) -> TypeGuard[str | InputText]:
    return isinstance(part, str | InputText)


def _chat_part(
    part: str | InputText | InputImage | InputAudio,
    sample: dict[str, Any],
    item: dict[str, Any],
    budget: Expansion,
) -> dict[str, Any]:
    if isinstance(part, str | InputText):
        text = part if isinstance(part, str) else part.text
        return {"type": "text", "text": render(text, sample, item, budget)}
    if isinstance(part, InputImage):
        image: dict[str, Any] = {"url": render(part.image_url, sample, item, budget)}
        if part.detail is not None:
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    return {"type": "input_audio", "input_audio": part.input_audio.model_dump()}


def combine(
    grader: Grader, results: dict[str, Result], key: str = ""
) -> tuple[float | None, dict[str, float | None]]:
    """The grader's reward and every sub-grader's, from the leaves' results.

    A leaf's reward is its result's as it is (a ``score_model``'s raw score on its
    ``range``), so ``calculate_output`` sees the same numbers OpenAI's would.
    """
    if not isinstance(grader, Multi):
        return leaf_reward(results[key]), {}
    subs: dict[str, float | None] = {}
    values: dict[str, float] = {}
    for name, child in grader.graders.items():
        child_key = f"{key}.{name}" if key else name
        reward, nested = combine(child, results, child_key)
        subs[name] = reward
        subs.update({f"{name}.{k}": v for k, v in nested.items()})
        if reward is not None:
            values[name] = reward
    if len(values) < len(grader.graders):
        return None, subs
    try:
        return evaluate(parse(grader.calculate_output), values), subs
    except FormulaError:
        return None, subs


def leaf_reward(result: Result) -> float | None:
    """A leaf's reward; None when it failed, or when a working judge would not grade the
    sample (``judge_unparsable``: referee scores it at the floor, OpenAI's graders report
    a parse error without a score, which this endpoint mirrors)."""
    if result.status != Status.OK or UNPARSABLE in result.details.get("flags", ()):
        return None
    return result.reward


def report(
    grader: Grader, leaves: Sequence[Leaf], results: Sequence[Result], execution_time: float
) -> GraderRunResponse:
    """The ``/v1/graders/run`` answer from the leaves' results (same order as ``leaves``)."""
    by_key = {key: result for (key, _), result in zip(leaves, results, strict=True)}
    reward, subs = combine(grader, by_key)
    usage = token_usage(leaves, results)
    metadata = {
        "name": grader.name,
        "type": grader.type,
        "errors": error_flags(leaves, results),
        "execution_time": execution_time,
        "scores": {key: leaf_reward(result) for key, result in by_key.items()},
        "token_usage": sum(entry["total_tokens"] for entry in usage.values()) if usage else None,
        "sampled_model_name": None,
    }
    return GraderRunResponse(
        reward=reward,
        sub_rewards=subs,
        metadata=metadata,
        model_grader_token_usage_per_model=usage,
    )


def template_failure(grader: Grader, message: str) -> GraderRunResponse:
    """The answer when a ``{{...}}`` variable is missing: nothing ran, reward null."""
    metadata = {
        "name": grader.name,
        "type": grader.type,
        "errors": error_flags([], [], message),
        "execution_time": 0.0,
        "scores": {},
        "token_usage": None,
        "sampled_model_name": None,
    }
    return GraderRunResponse(reward=None, sub_rewards={}, metadata=metadata)


def error_flags(
    leaves: Sequence[Leaf], results: Sequence[Result], template_error: str | None = None
) -> dict[str, Any]:
    """OpenAI's ``metadata.errors`` flags for what went wrong, plus ``other_error_details``
    (referee's) saying why when a grader could not run as given."""
    flags: dict[str, Any] = {
        "formula_parse_error": False,
        "sample_parse_error": False,
        "invalid_variable_error": template_error is not None,
        "python_grader_server_error": False,
        "python_grader_server_error_type": None,
        "python_grader_runtime_error": False,
        "python_grader_runtime_error_details": None,
        "model_grader_server_error": False,
        "model_grader_refusal_error": False,
        "model_grader_parse_error": False,
        "model_grader_server_error_details": None,
        "unresponsive_reward_error": False,
        "truncated_observation_error": False,
        "other_error": False,
    }
    details = [template_error] if template_error else []
    for (key, item), result in zip(leaves, results, strict=True):
        if result.status == Status.TIMEOUT:
            flags["unresponsive_reward_error"] = True
        elif result.status != Status.OK:
            details += _flag(flags, key, item.verifier, result)
        elif UNPARSABLE in result.details.get("flags", ()):
            # A working judge would not grade this sample: scored at the range's floor.
            flags["model_grader_parse_error"] = True
        elif item.verifier == "python_grader" and result.details.get("flags"):
            # The grader grades its probes but failed on this sample: scored its floor.
            flags["python_grader_runtime_error"] = True
            flags["python_grader_runtime_error_details"] = result.details.get("reason")
    if details:
        flags["other_error_details"] = "; ".join(details)
    return flags


def _flag(flags: dict[str, Any], key: str, verifier: str, result: Result) -> list[str]:
    """Set the flags for one ``error``/``invalid`` leaf; returns its other-error details.

    ``model_grader_refusal_error`` is never set: a refusal is a reply without a score,
    so it is re-asked and then flagged as ``model_grader_parse_error``.
    """
    message = result.error.message if result.error else ""
    failed = result.status == Status.ERROR
    if verifier == "python_grader":
        flags["python_grader_server_error" if failed else "python_grader_runtime_error"] = True
        if not failed:
            flags["python_grader_runtime_error_details"] = message
        return []
    if verifier == "judge" and failed:
        unparsable = result.error is not None and result.error.code == UNPARSABLE
        flags["model_grader_parse_error" if unparsable else "model_grader_server_error"] = True
        if not unparsable:
            flags["model_grader_server_error_details"] = message
        return []
    flags["other_error"] = True
    return [_grader_field(key, message)] if verifier == "judge" else []


def _grader_field(key: str, message: str) -> str:
    """A judge leaf's ``params.<field>: ...`` message as ``grader[.graders.<name>].<field>``:
    the params the adapter fills from the grader at run time carry the grader's field
    names (``model``, resolved against the configured profiles only when it runs)."""
    path = "grader" + "".join(f".graders.{name}" for name in key.split(".") if name)
    head, found, rest = message.partition("params.")
    return f"{path}.{rest}" if found and not head else f"{path}: {message}"


_TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")


def token_usage(leaves: Sequence[Leaf], results: Sequence[Result]) -> dict[str, dict[str, int]]:
    """Judge tokens by grader ``model``, in OpenAI's shape, over the leaves that scored.

    ``cached_tokens`` stays 0: the endpoint's prompt-cache counts are not read, and an
    answer from referee's reply cache cost no tokens at all. Tokens spent on a leaf that
    failed (unparsable after re-asks, server errors) are not reported here.
    """
    usage: dict[str, dict[str, int]] = {}
    for (_, item), result in zip(leaves, results, strict=True):
        spent = result.details.get("usage")
        model = item.params.get("model")
        if item.verifier != "judge" or not isinstance(spent, dict) or not isinstance(model, str):
            continue
        entry = usage.setdefault(model, dict.fromkeys(_TOKEN_FIELDS, 0))
        prompt, completion = int(spent["prompt_tokens"]), int(spent["completion_tokens"])
        entry["prompt_tokens"] += prompt
        entry["completion_tokens"] += completion
        entry["total_tokens"] += prompt + completion
    return usage
