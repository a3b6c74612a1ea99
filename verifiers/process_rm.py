"""The ``prm`` verifier: a process reward model scores every step of the response.

The response is split into steps at ``params.step_separator`` and each step is scored at
its end (`gpu_rm.steps`): a token-classification model (``head: token``) gives
P(positive label) there, a causal LM (``head: lm``) P(positive | positive or negative
tokens). Every step's score is a component (``step_1``...); the reward aggregates them
(``min`` by default: a chain is as good as its worst step; ``last``, ``mean``,
``product``). A response with no separator is one step; one with no non-blank step
earns 0 (flagged ``no_steps``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import Field

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.encoding import Encoded
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import HeadKind
from referee.verifiers.batched_model import BatchedModelVerifier, ModelParams, reply, turns
from referee.verifiers.types import Item, Result, Status

Aggregation = Literal["min", "last", "mean", "product"]


class ProcessParams(ModelParams):
    step_separator: str = Field(default="\n\n", min_length=1, max_length=64)
    aggregation: Aggregation = "min"


class ProcessRMVerifier(BatchedModelVerifier):
    """Per-step rewards from a local process reward model; see the module docstring."""

    name: ClassVar[str] = "prm"
    Params: ClassVar[type[ModelParams]] = ProcessParams
    description: ClassVar[str] = (
        "Process reward model (local token classifier or causal LM): a score per step, "
        "aggregated by min, last, mean or product; batched and packed like rm."
    )
    heads: ClassVar[tuple[HeadKind, ...]] = ("token", "lm")
    kind: ClassVar[str] = "process reward"

    def encode(self, served: ServedModel, item: Item, params: Any) -> Encoded:
        encoded: Encoded = served.model.steps.encode(
            turns(item.prompt, "user"), reply(item.response), params.step_separator,
            params.truncation,
        )  # fmt: skip
        return encoded

    def floor(self, served: ServedModel, params: Any) -> float:
        return 0.0  # every aggregation of step probabilities lies in [0, 1]

    def interpret(self, served: ServedModel, enc: Encoded, scored: Scored, params: Any) -> Result:
        steps = [step_score(served, row) for row in scored.rows]
        reward = aggregate(steps, params.aggregation)
        components = {f"step_{n}": value for n, value in enumerate(steps, start=1)}
        details = {"aggregation": params.aggregation, "step_scores": steps}
        return Result(status=Status.OK, reward=reward, components=components, details=details)


def step_score(served: ServedModel, row: list[float]) -> float:
    """One step's probability of being right, from its row of scores."""
    model = served.model
    if model.steps.verdict is not None:  # an lm head: log-probabilities over the candidates
        return float(model.steps.verdict.expectation(row))
    if len(row) == 1:
        return 1.0 / (1.0 + math.exp(-row[0])) if row[0] >= -700 else 0.0
    top = max(row)
    weights = [math.exp(value - top) for value in row]
    return float(weights[model.positive] / sum(weights))


def aggregate(steps: list[float], how: Aggregation) -> float:
    """The reward from the step scores (never empty: every item has a step)."""
    if how == "min":
        return min(steps)
    if how == "last":
        return steps[-1]
    if how == "mean":
        return sum(steps) / len(steps)
    return math.prod(steps)
