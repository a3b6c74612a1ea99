"""The ``rm`` verifier: rewards from learned reward models (``head: sequence``), batched
by `gpu_rm` (the shared machinery is `verifiers.batched_model`)."""

from __future__ import annotations

from typing import Any, ClassVar

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.encoding import Encoded
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import HeadKind
from referee.verifiers.batched_model import BatchedModelVerifier, ModelParams, turns
from referee.verifiers.types import Item, Result, Status


class RewardModelParams(ModelParams):
    floor: float | None = None
    """The reward of a response too long to read (``truncation: reject``) while the
    prompt fits: a raw score has no floor of its own, so without one such an item is
    ``invalid`` (``too_long``), which a trainer masks; give the lowest score that should
    count (e.g. the model's usual minimum) to score it instead, flagged ``too_long``."""


class RewardModelVerifier(BatchedModelVerifier):
    """Scores (prompt, response) with a Hugging Face sequence-classification reward model.

    The reward is the configured objective's output after the model's activation; with
    several outputs (multi-objective heads) every raw output is a component.
    """

    name: ClassVar[str] = "rm"
    Params: ClassVar[type[ModelParams]] = RewardModelParams
    description: ClassVar[str] = (
        "Learned reward model (local Hugging Face checkpoint): dynamic batching, packed "
        "sequences, shared prompts computed once, fused Triton scoring kernel."
    )
    heads: ClassVar[tuple[HeadKind, ...]] = ("sequence",)
    kind: ClassVar[str] = "reward"

    def encode(self, served: ServedModel, item: Item, params: Any) -> Encoded:
        prompt, response = turns(item.prompt, "user"), turns(item.response, "assistant")
        encoded: Encoded = served.model.encoder.encode(prompt, response, params.truncation)
        return encoded

    def floor(self, served: ServedModel, params: Any) -> float | None:
        floor: float | None = params.floor
        return floor

    def interpret(self, served: ServedModel, enc: Encoded, scored: Scored, params: Any) -> Result:
        reward, outputs = served.model.reward(scored.scores)
        components = outputs if len(outputs) > 1 else {}
        details = {"logits": outputs}
        return Result(status=Status.OK, reward=reward, components=components, details=details)
