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
    pass


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

    def interpret(self, served: ServedModel, enc: Encoded, scored: Scored, params: Any) -> Result:
        reward, outputs = served.model.reward(scored.scores)
        components = outputs if len(outputs) > 1 else {}
        details = {"logits": outputs}
        return Result(status=Status.OK, reward=reward, components=components, details=details)
