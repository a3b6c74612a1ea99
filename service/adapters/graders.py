"""OpenAI-style graders on referee's verifiers: parse, template, plan, combine.

A grader JSON (``string_check``, ``text_similarity``, ``python``, ``score_model``,
``multi``) becomes one referee item per leaf grader; the leaves are scored together
through the dispatcher and a ``multi`` grader's ``calculate_output`` is evaluated by the
safe formula parser. Templates ``{{sample.output_text}}``, ``{{sample.output_json.x}}``
and ``{{item.a.b}}`` are filled from the request. A failure sets the matching flag in
``metadata.errors`` and the reward is null: a broken grader is never a reward of 0.

A ``score_model`` grader is a ``judge`` item in ``messages`` mode: its rendered ``input``
is sent as it is to the judge profile that ``model`` selects (see
`verifiers.judge.profiles.profile_for_model`), and its reward is the number the judge
answers, within ``range`` and not normalised, as OpenAI returns it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from referee.verifiers.python_grader import sample_of
from referee.verifiers.rules.field_error import field_error
from referee.verifiers.rules.formula import FormulaError, evaluate, parse
from referee.verifiers.types import Item, Result, Status

_TEMPLATE = re.compile(r"\{\{\s*(sample|item)((?:\.[A-Za-z0-9_]+)+)\s*\}\}")
_SIMILARITY = {"fuzzy_match": "fuzzy", "bleu": "bleu", "rouge_l": "rouge_l"}
_STRING_OPS = {"eq": "eq", "ne": "ne", "like": "contains", "ilike": "icontains"}


class _Grader(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""


class StringCheck(_Grader):
    type: Literal["string_check"]
    input: str
    reference: str
    operation: Literal["eq", "ne", "like", "ilike"]


class TextSimilarity(_Grader):
    type: Literal["text_similarity"]
    input: str
    reference: str
    evaluation_metric: str
    pass_threshold: float | None = Field(default=None, ge=0, le=1)

    @field_validator("evaluation_metric")
    @classmethod
    def _supported(cls, metric: str) -> str:
        if metric not in _SIMILARITY:
            raise ValueError(f"unsupported here; use one of {', '.join(_SIMILARITY)}")
        return metric


class PythonGrader(_Grader):
    type: Literal["python"]
    source: str = Field(min_length=1)
    image_tag: str | None = None


class TextPart(BaseModel):
    """A text content part of a model grader message. Images and audio are refused: the
    judge profiles are text chat endpoints."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["input_text", "output_text"]
    text: str


class ModelInput(BaseModel):
    """One message of a ``score_model`` grader's ``input``; its text may hold templates."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "developer", "user", "assistant"]
    content: str | Annotated[list[TextPart], Field(min_length=1)]
    type: Literal["message"] | None = None

    def text(self) -> str:
        """The content as one string; parts are joined by newlines, as chat templates do."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content)


class SamplingParams(BaseModel):
    """A model grader's sampling. ``max_completions_tokens`` becomes the request's
    ``max_tokens``; ``reasoning_effort`` is accepted but not sent (chat endpoints that serve
    no reasoning model reject it; put it in the profile's ``extra_body`` where wanted)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    max_completions_tokens: int | None = Field(default=None, ge=1, le=131_072)
    reasoning_effort: str | None = None

    def judge_sampling(self) -> dict[str, float | int]:
        """The judge's ``params.sampling`` for these settings."""
        wanted = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_completions_tokens,
        }
        return {name: value for name, value in wanted.items() if value is not None}


class ScoreModel(_Grader):
    """OpenAI's ``score_model`` grader. ``pass_threshold`` is accepted and checked to lie
    in ``range`` but does not change the reward (OpenAI reports the raw score too)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    type: Literal["score_model"]
    model: str = Field(min_length=1, max_length=256)
    input: list[ModelInput] = Field(min_length=1, max_length=64)
    range: tuple[float, float] = (0.0, 1.0)
    pass_threshold: float | None = None
    sampling_params: SamplingParams | None = None

    @field_validator("range")
    @classmethod
    def _ordered(cls, bounds: tuple[float, float]) -> tuple[float, float]:
        if bounds[0] >= bounds[1]:
            raise ValueError("range[0] must be below range[1]")
        return bounds

    @model_validator(mode="after")
    def _threshold_in_range(self) -> ScoreModel:
        low, high = self.range
        if self.pass_threshold is not None and not low <= self.pass_threshold <= high:
            message = f"must lie within range [{low:g}, {high:g}]"
            raise field_error("ScoreModel", "pass_threshold", message, self.pass_threshold)
        return self


class Multi(_Grader):
    type: Literal["multi"]
    graders: dict[str, Grader] = Field(min_length=1)
    calculate_output: str

    @model_validator(mode="after")
    def _formula_names_graders(self) -> Multi:
        try:
            names = parse(self.calculate_output).names()
        except FormulaError as exc:
            raise ValueError(f"calculate_output: {exc}") from None
        unknown = sorted(set(names) - set(self.graders))
        if unknown:
            raise ValueError(f"calculate_output: unknown graders {', '.join(unknown)}")
        return self


Grader = Annotated[
    StringCheck | TextSimilarity | PythonGrader | ScoreModel | Multi, Field(discriminator="type")
]
Multi.model_rebuild()


class GraderRequest(BaseModel):
    """``POST /v1/graders/validate``."""

    grader: Grader


class GraderRunRequest(BaseModel):
    """``POST /v1/graders/run``: the grader, the model's sample, and the dataset item."""

    grader: Grader
    model_sample: str
    item: dict[str, Any] = Field(default_factory=dict)


class GraderRunResponse(BaseModel):
    reward: float | None
    sub_rewards: dict[str, float | None]
    metadata: dict[str, Any]
    model_grader_token_usage_per_model: dict[str, Any] = Field(default_factory=dict)


class TemplateError(ValueError):
    """A ``{{...}}`` variable the request does not provide."""


class GraderTooLarge(ValueError):
    """The grader would expand past the request's budget (leaves or rendered text)."""


class Expansion:
    """What one request's grader may expand to: ``leaves`` leaf graders in all, and
    ``chars`` characters of rendered templates in all (a template repeating a large
    ``{{item...}}`` value must not turn a small body into gigabytes)."""

    def __init__(self, leaves: int, chars: int) -> None:
        self.leaves = leaves
        self.chars = chars

    def take_leaf(self) -> None:
        self.leaves -= 1
        if self.leaves < 0:
            raise GraderTooLarge("the grader has more leaf graders than one request may score")

    def take_chars(self, count: int) -> None:
        self.chars -= count
        if self.chars < 0:
            raise GraderTooLarge("the grader's templates expand to more text than allowed")


def render(template: str, sample: dict[str, Any], item: dict[str, Any], budget: Expansion) -> str:
    """Fill ``{{sample.x}}`` / ``{{item.x}}``; strings as they are, other values as JSON.
    Every character rendered is taken from ``budget`` as it is produced."""
    budget.take_chars(len(template))

    def value(match: re.Match[str]) -> str:
        found: Any = {"sample": sample, "item": item}[match.group(1)]
        for key in match.group(2).strip(".").split("."):
            if not isinstance(found, dict) or key not in found:
                raise TemplateError(
                    f"{{{{{match.group(1)}{match.group(2)}}}}} is not in the request"
                )
            found = found[key]
        text = found if isinstance(found, str) else json.dumps(found)
        budget.take_chars(len(text))
        return text

    return _TEMPLATE.sub(value, template)


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
        made = Item(
            verifier="similarity",
            response=render(grader.input, sample, item, budget),
            reference=render(grader.reference, sample, item, budget),
            params={"metric": _SIMILARITY[grader.evaluation_metric]},
        )
    elif isinstance(grader, ScoreModel):
        made = _judge_item(grader, sample_text, sample, item, budget)
    else:
        made = Item(
            verifier="python_grader",
            response=sample_text,
            reference={"source": grader.source, "item": item},
        )
    return [(key, made)]


# Chat endpoints other than OpenAI's (vLLM chat templates) know no "developer" role;
# OpenAI itself treats it as the system message.
_ROLES = {"developer": "system"}


def _judge_item(
    grader: ScoreModel,
    sample_text: str,
    sample: dict[str, Any],
    item: dict[str, Any],
    budget: Expansion,
) -> Item:
    """A ``judge`` item in messages mode; ``params.model`` is ``grader.model`` as given."""
    messages = [
        {"role": _ROLES.get(m.role, m.role), "content": render(m.text(), sample, item, budget)}
        for m in grader.input
    ]
    sampling = grader.sampling_params.judge_sampling() if grader.sampling_params else {}
    params = {
        "mode": "messages",
        "model": grader.model,
        "score_range": list(grader.range),
        "sampling": sampling,
    }
    return Item(
        verifier="judge", response=sample_text, reference={"messages": messages}, params=params
    )


def combine(
    grader: Grader, results: dict[str, Result], key: str = ""
) -> tuple[float | None, dict[str, float | None]]:
    """The grader's reward and every sub-grader's, from the leaves' results.

    A leaf's reward is its result's as it is (a ``score_model``'s raw score on its
    ``range``), so ``calculate_output`` sees the same numbers OpenAI's would.
    """
    if not isinstance(grader, Multi):
        result = results[key]
        return (result.reward if result.status == Status.OK else None), {}
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


def report(
    grader: Grader, leaves: Sequence[Leaf], results: Sequence[Result], execution_time: float
) -> GraderRunResponse:
    """The ``/v1/graders/run`` answer from the leaves' results (same order as ``leaves``)."""
    by_key = {key: result for (key, _), result in zip(leaves, results, strict=True)}
    reward, subs = combine(grader, by_key)
    metadata = {
        "name": grader.name,
        "type": grader.type,
        "errors": error_flags(leaves, results),
        "execution_time": execution_time,
        "scores": {key: result.reward for key, result in by_key.items()},
    }
    return GraderRunResponse(
        reward=reward,
        sub_rewards=subs,
        metadata=metadata,
        model_grader_token_usage_per_model=token_usage(leaves, results),
    )


def template_failure(grader: Grader, message: str) -> GraderRunResponse:
    """The answer when a ``{{...}}`` variable is missing: nothing ran, reward null."""
    metadata = {
        "name": grader.name,
        "type": grader.type,
        "errors": error_flags([], [], message),
        "execution_time": 0.0,
        "scores": {},
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
        "python_grader_runtime_error": False,
        "python_grader_runtime_error_details": None,
        "model_grader_server_error": False,
        "model_grader_refusal_error": False,
        "model_grader_parse_error": False,
        "model_grader_server_error_details": None,
        "unresponsive_reward_error": False,
        "other_error": False,
    }
    details = [template_error] if template_error else []
    for (key, item), result in zip(leaves, results, strict=True):
        if result.status == Status.TIMEOUT:
            flags["unresponsive_reward_error"] = True
        elif result.status != Status.OK:
            details += _flag(flags, key, item.verifier, result)
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
        unparsable = result.error is not None and result.error.code == "judge_unparsable"
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
