"""OpenAI-style graders on referee's verifiers: parse, template, plan, combine.

A grader JSON (``string_check``, ``text_similarity``, ``python``, ``multi``) becomes one
referee item per leaf grader; the leaves are scored together through the dispatcher and
a ``multi`` grader's ``calculate_output`` is evaluated by the safe formula parser.
Templates ``{{sample.output_text}}``, ``{{sample.output_json.x}}`` and ``{{item.a.b}}``
are filled from the request. A failure sets the matching flag in ``metadata.errors``
and the reward is null: a broken grader is never a reward of 0.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from verifiers.python_grader import sample_of
from verifiers.rules.formula import FormulaError, evaluate, parse
from verifiers.types import Item, Result, Status

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


Grader = Annotated[StringCheck | TextSimilarity | PythonGrader | Multi, Field(discriminator="type")]
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


def render(template: str, sample: dict[str, Any], item: dict[str, Any]) -> str:
    """Fill ``{{sample.x}}`` / ``{{item.x}}``; strings as they are, other values as JSON."""

    def value(match: re.Match[str]) -> str:
        found: Any = {"sample": sample, "item": item}[match.group(1)]
        for key in match.group(2).strip(".").split("."):
            if not isinstance(found, dict) or key not in found:
                raise TemplateError(
                    f"{{{{{match.group(1)}{match.group(2)}}}}} is not in the request"
                )
            found = found[key]
        return found if isinstance(found, str) else json.dumps(found)

    return _TEMPLATE.sub(value, template)


def leaf_items(
    grader: Grader, sample_text: str, item: dict[str, Any], key: str = ""
) -> list[tuple[str, Item]]:
    """(key, item) for every leaf grader; keys are dotted paths through ``multi``."""
    if isinstance(grader, Multi):
        return [
            pair
            for name, child in grader.graders.items()
            for pair in leaf_items(child, sample_text, item, f"{key}.{name}" if key else name)
        ]
    sample = sample_of(sample_text)
    if isinstance(grader, StringCheck):
        params = {"op": _STRING_OPS[grader.operation], "normalize": {"nfkc": False, "strip": False}}
        made = Item(
            verifier="string",
            response=render(grader.input, sample, item),
            reference=render(grader.reference, sample, item),
            params=params,
        )
    elif isinstance(grader, TextSimilarity):
        made = Item(
            verifier="similarity",
            response=render(grader.input, sample, item),
            reference=render(grader.reference, sample, item),
            params={"metric": _SIMILARITY[grader.evaluation_metric]},
        )
    else:
        made = Item(
            verifier="python_grader",
            response=sample_text,
            reference={"source": grader.source, "item": item},
        )
    return [(key, made)]


def combine(
    grader: Grader, results: dict[str, Result], key: str = ""
) -> tuple[float | None, dict[str, float | None]]:
    """The grader's reward and every sub-grader's, from the leaves' results."""
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


def error_flags(results: list[Result], template_error: str | None = None) -> dict[str, Any]:
    """OpenAI's ``metadata.errors`` flags for what went wrong."""
    flags: dict[str, Any] = {
        "formula_parse_error": False,
        "sample_parse_error": False,
        "invalid_variable_error": template_error is not None,
        "python_grader_server_error": False,
        "python_grader_runtime_error": False,
        "python_grader_runtime_error_details": None,
        "unresponsive_reward_error": False,
        "other_error": False,
    }
    for result in results:
        python = result.verifier is not None and result.verifier.startswith("python_grader")
        message = result.error.message if result.error else None
        if result.status == Status.TIMEOUT:
            flags["unresponsive_reward_error"] = True
        elif result.status == Status.ERROR:
            flags["python_grader_server_error" if python else "other_error"] = True
        elif result.status == Status.INVALID and python:
            flags["python_grader_runtime_error"] = True
            flags["python_grader_runtime_error_details"] = message
        elif result.status == Status.INVALID:
            flags["other_error"] = True
    if template_error:
        flags["other_error_details"] = template_error
    return flags
