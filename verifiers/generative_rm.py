"""The ``grm`` verifier: a causal language model (``head: lm``) judges the response, and
the reward is read from its next-token distribution over a few verdict tokens.

Modes (``params.mode``):

- ``yes_no`` (default): P(yes | yes or no) after the model's judging template, the
  RewardDance / generative-verifier reading;
- ``score``: G-Eval's expected score over the score tokens (1..5 by default);
- ``pairwise``: P(the response is better than ``reference``), which holds the other
  response (A is the item's response, B the reference). To cancel a judge's preference
  for a position, send the pair both ways and average.

Only the candidate rows of the output layer are computed, at the last position of each
sequence (`gpu_rm.kernels.token_logprobs`); items with the same prompt share its tokens.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.encoding import Encoded
from referee.gpu_rm.judging import JudgeMode
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import HeadKind
from referee.verifiers.batched_model import BatchedModelVerifier, ModelParams, reply, transcript
from referee.verifiers.types import Item, Result, Status


class GenerativeParams(ModelParams):
    mode: JudgeMode = "yes_no"
    template: str | None = Field(default=None, max_length=20_000)
    """Overrides the model's template for this mode: ``{prompt}``, ``{response}`` and
    ``{reference}`` are filled in, nothing else is interpreted."""
    truncation: Literal["keep_end", "reject"] = "keep_end"
    """Over-long items: drop the start (default) or reject; the verdict is read at the
    end, so the end is never cut."""


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

    def encode(self, served: ServedModel, item: Item, params: Any) -> Encoded:
        texts = {"prompt": transcript(item.prompt), "response": reply(item.response)}
        if isinstance(item.reference, str):
            texts["reference"] = item.reference
        elif params.mode == "pairwise":
            texts["reference"] = ""  # the encoder names the missing field
        encoded: Encoded = served.model.judge.encode(
            texts, params.mode, params.template, params.truncation
        )
        return encoded

    def interpret(self, served: ServedModel, enc: Encoded, scored: Scored, params: Any) -> Result:
        verdict = served.model.judge.verdicts[params.mode]
        reward = verdict.expectation(scored.scores)
        tokens = served.model.tokenizer.convert_ids_to_tokens(list(verdict.candidates))
        probabilities = dict(zip(tokens, verdict.probabilities(scored.scores), strict=True))
        details = {"verdict_probabilities": probabilities}
        return Result(status=Status.OK, reward=reward, details=details)
