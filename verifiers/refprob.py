"""The ``refprob`` verifier: a reward from a language model's probability of the reference
answer after the response's reasoning, for answers no rule can check (RLPR, VeriFree).

The reference replaces the response's own final answer (``placement``: inside the last
``\\boxed{}``, inside the last ``<answer>...</answer>``, or appended after ``template``),
the conversation is tokenised whole and the reference's tokens are read where the model
sees them (`gpu_rm.likelihood`). ``score``: the mean token probability (``mean_prob``,
RLPR's default), the geometric mean (``geometric_mean``) or the total log-likelihood
(``log_likelihood``, VeriFree). ``debias`` subtracts the same score of the reference in
its wrapper alone (no reasoning) and clips to [0, 1], so reasoning earns only what it
adds. The model is a ``head: lm`` entry of the model catalog; the response's reasoning
cannot see or reach the reference: it is placed by referee after the reasoning is fixed.
An empty response, or one with no answer where ``placement`` looks for it, earns 0
(flagged ``empty_response`` / ``answer_not_found``). A ``log_likelihood`` has no floor:
there the reference goes after ``template`` at the end of such a response (VeriFree's
way; after nothing, for an empty one), flagged the same. Never ``invalid``: a response
must not buy a status a trainer masks.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.encoding import Encoded, Rejected, Unearned
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import HeadKind
from referee.gpu_rm.spans import Placement
from referee.verifiers.batched_model import (
    BatchedModelVerifier,
    ModelParams,
    Submission,
    reply,
    turns,
)
from referee.verifiers.types import Item, Result, Status

Score = Literal["mean_prob", "geometric_mean", "log_likelihood"]


class RefProbParams(ModelParams):
    placement: Placement = "boxed"
    template: str = Field(default="\nThe answer is ", max_length=1000)
    """Written before the reference when ``placement`` is ``append``."""
    score: Score = "mean_prob"
    debias: bool = False

    @model_validator(mode="after")
    def _debias_needs_a_probability(self) -> RefProbParams:
        if self.debias and self.score == "log_likelihood":
            raise ValueError("debias takes a probability score (mean_prob, geometric_mean)")
        return self


class RefProbVerifier(BatchedModelVerifier):
    """Rewards from the reference answer's probability; see the module docstring."""

    name: ClassVar[str] = "refprob"
    Params: ClassVar[type[ModelParams]] = RefProbParams
    description: ClassVar[str] = (
        "Reference-probability reward (RLPR / VeriFree) from a local causal LM: the "
        "reference placed after the response's reasoning, its tokens' probabilities read "
        "in context; optional debiasing; batched and packed like rm."
    )
    heads: ClassVar[tuple[HeadKind, ...]] = ("lm",)
    kind: ClassVar[str] = "language"

    def submissions(self, served: ServedModel, item: Item, params: Any) -> list[Submission]:
        if not isinstance(item.reference, str):
            raise Rejected("invalid_reference", "reference: must be the answer's text")
        likelihood = served.model.likelihood
        given = (turns(item.prompt, "user"), reply(item.response), item.reference)
        try:
            encoded: list[Encoded] = likelihood.reference(
                *given, (params.placement, params.template), params.truncation, params.debias
            )
        except Unearned as unearned:
            if params.score != "log_likelihood":
                raise  # scored at the floor, 0
            # No floor to give: the reference after the template, at the response's end.
            encoded = likelihood.reference(
                *given, ("append", params.template), params.truncation, False, empty_ok=True
            )
            flags = encoded[0].details.get("flags", ())
            encoded[0].details["flags"] = sorted({*flags, unearned.code})
        return [(served, enc) for enc in encoded]

    def floor(self, served: ServedModel, params: Any) -> float | None:
        # a probability (or a debiased difference clipped to [0, 1]) has 0 as its floor;
        # a log-likelihood has none (`submissions` appends the reference instead)
        return None if params.score == "log_likelihood" else 0.0

    def interpret_all(
        self, submitted: list[Submission], scored: list[Scored], params: Any
    ) -> Result:
        logprobs = [row[0] for row in scored[0].rows]
        value = _score(logprobs, params.score)
        components = {"score": value, "reference_tokens": float(len(logprobs))}
        reward = value
        if params.debias:
            baseline = _score([row[0] for row in scored[1].rows], params.score)
            components["baseline"] = baseline
            reward = min(max(value - baseline, 0.0), 1.0)
        details = {"placement": params.placement, "score": params.score,
                   "token_logprobs": logprobs[:256]}  # fmt: skip
        return Result(status=Status.OK, reward=reward, components=components, details=details)


def _score(logprobs: list[float], how: Score) -> float:
    if how == "log_likelihood":
        return sum(logprobs)
    if how == "geometric_mean":
        return math.exp(sum(logprobs) / len(logprobs))
    return sum(math.exp(lp) for lp in logprobs) / len(logprobs)
