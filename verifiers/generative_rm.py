"""The ``grm`` verifier: a causal language model (``head: lm``) judges the response, and
the reward is read from its next-token distribution over a few verdict tokens.

Modes (``params.mode``):

- ``yes_no`` (default): P(yes | yes or no) after the model's judging template, the
  RewardDance / generative-verifier reading;
- ``score``: G-Eval's expected score over the score tokens (1..5 by default);
- ``pairwise``: P(the response is better than ``reference``), which holds the other
  response (A is the item's response, B the reference); with ``swap`` the pair is also
  read the other way round (B the item's response) and the two readings averaged, which
  cancels a judge's preference for a position (both are in ``details``).

Only the candidate rows of the output layer are computed, at the last position of each
sequence (`gpu_rm.kernels.token_logprobs`); items with the same prompt share its tokens.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.judging import JudgeMode
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import HeadKind
from referee.verifiers.batched_model import (
    BatchedModelVerifier,
    ModelParams,
    Submission,
    reply,
    transcript,
)
from referee.verifiers.types import Item, Result, Status


class GenerativeParams(ModelParams):
    mode: JudgeMode = "yes_no"
    template: str | None = Field(default=None, max_length=20_000)
    """Overrides the model's template for this mode: ``{prompt}``, ``{response}`` and
    ``{reference}`` are filled in, nothing else is interpreted."""
    truncation: Literal["keep_end", "reject"] = "keep_end"
    """Over-long items: drop the start (default) or reject; the verdict is read at the
    end, so the end is never cut."""
    swap: bool = False
    """``pairwise`` only: also read the pair in the other order and average."""

    @model_validator(mode="after")
    def _swap_is_pairwise(self) -> GenerativeParams:
        if self.swap and self.mode != "pairwise":
            raise ValueError("swap applies to the pairwise mode only")
        return self


class GenerativeRMVerifier(BatchedModelVerifier):
    """Rewards from a local causal LM's verdict-token probabilities; see the module
    docstring."""

    name: ClassVar[str] = "grm"
    Params: ClassVar[type[ModelParams]] = GenerativeParams
    description: ClassVar[str] = (
        "Generative reward model (local causal LM): P(yes), G-Eval expected score or a "
        "pairwise preference from verdict-token probabilities, only those vocabulary rows "
        "computed; batched and packed like rm."
    )
    heads: ClassVar[tuple[HeadKind, ...]] = ("lm",)
    kind: ClassVar[str] = "generative reward"

    def submissions(self, served: ServedModel, item: Item, params: Any) -> list[Submission]:
        texts = {"prompt": transcript(item.prompt), "response": reply(item.response)}
        if isinstance(item.reference, str):
            texts["reference"] = item.reference
        elif params.mode == "pairwise":
            texts["reference"] = ""  # the encoder names the missing field
        judge = served.model.judge
        found = [(served, judge.encode(texts, params.mode, params.template, params.truncation))]
        if params.swap:
            swapped = {**texts, "response": texts["reference"], "reference": texts["response"]}
            read = judge.encode(
                swapped, params.mode, params.template, params.truncation, "reference"
            )
            found.append((served, read))
        return found

    def floor(self, served: ServedModel, params: Any) -> float:
        """The lowest value a verdict token of ``params.mode`` stands for (an over-long
        response under ``truncation: reject`` earns it)."""
        verdict = served.model.judge.verdicts[params.mode]
        return min(verdict.values) if verdict is not None else 0.0

    def interpret_all(
        self, submitted: list[Submission], scored: list[Scored], params: Any
    ) -> Result:
        served = submitted[0][0]
        verdict = served.model.judge.verdicts[params.mode]
        tokens = served.model.tokenizer.convert_ids_to_tokens(list(verdict.candidates))
        first = scored[0].scores
        reward = verdict.expectation(first)
        details: dict[str, Any] = {
            "verdict_probabilities": dict(zip(tokens, verdict.probabilities(first), strict=True))
        }
        if params.swap:  # the other order: the item's response is B, so P(B) counts
            swapped = 1.0 - verdict.expectation(scored[1].scores)
            details["readings"] = {"response_first": reward, "response_second": swapped}
            reward = (reward + swapped) / 2
        return Result(status=Status.OK, reward=reward, details=details)
