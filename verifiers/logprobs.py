"""The ``logprobs`` verifier: token statistics of a continuation under a local causal LM,
the engine behind ``POST /v1/logprobs`` (and usable in ``/v1/score``, where the reward is
the continuation's mean log-probability).

Per continuation token: its log-probability, the entropy of the model's distribution at
that position, optionally the ``top_k`` most likely tokens (k <= 20), and with
``compare_model`` the log-ratio ``log p(model) - log p(compare_model)`` per token (the
second model must share the first's vocabulary). The prompt and continuation come as
text (``prompt``/``response``) or as token ids (``prompt_ids``/``continuation_ids``).
Whole-vocabulary statistics are computed in vocabulary chunks (CPU) or one fused Triton
kernel (CUDA), never as ``[tokens x vocab]`` logits (`gpu_rm.kernels.vocab_stats`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from referee.gpu_rm.batcher import Scored
from referee.gpu_rm.encoding import Encoded, Rejected
from referee.gpu_rm.registry import ServedModel
from referee.gpu_rm.settings import MAX_TOP_K, HeadKind
from referee.verifiers.batched_model import BatchedModelVerifier, ModelParams, Submission, turns
from referee.verifiers.types import Item, Result, Status

MAX_IDS = 131_072


class LogprobsParams(ModelParams):
    top_k: int = Field(default=0, ge=0, le=MAX_TOP_K)
    compare_model: str | None = Field(default=None, max_length=128)
    prompt_ids: list[int] | None = Field(default=None, max_length=MAX_IDS)
    continuation_ids: list[int] | None = Field(default=None, max_length=MAX_IDS)


class LogprobsVerifier(BatchedModelVerifier):
    """Token statistics; see the module docstring."""

    name: ClassVar[str] = "logprobs"
    Params: ClassVar[type[ModelParams]] = LogprobsParams
    description: ClassVar[str] = (
        "Token statistics of a continuation under a local causal LM: per-token "
        "log-probabilities, entropies, top-k, log-ratios against a second model; the "
        "reward is the mean log-probability."
    )
    heads: ClassVar[tuple[HeadKind, ...]] = ("lm",)
    kind: ClassVar[str] = "language"

    def submissions(self, served: ServedModel, item: Item, params: Any) -> list[Submission]:
        if params.continuation_ids is not None:
            prompt: Any = params.prompt_ids if params.prompt_ids is not None else []
            continuation: Any = params.continuation_ids
        else:
            if params.prompt_ids is not None:
                raise Rejected("invalid_params", "params.prompt_ids: needs continuation_ids")
            prompt = item.prompt if isinstance(item.prompt, str) else turns(item.prompt, "user")
            continuation = item.response if isinstance(item.response, str) else ""
            if not isinstance(item.response, str):
                raise Rejected("invalid_params", "response: the continuation must be text")
        encoded: Encoded = served.model.likelihood.continuation(
            prompt, continuation, params.truncation, params.top_k
        )
        found = [(served, encoded)]
        if params.compare_model is not None:
            found.append((self.companion(served, params.compare_model), encoded))
        return found

    def interpret_all(
        self, submitted: list[Submission], scored: list[Scored], params: Any
    ) -> Result:
        encoded = submitted[0][1]
        rows = scored[0].rows
        logprobs = [row[0] for row in rows]
        entropies = [row[1] for row in rows]
        count = len(logprobs)
        details: dict[str, Any] = {
            "tokens": list(encoded.targets),
            "logprobs": logprobs,
            "entropies": entropies,
            "sum_logprob": sum(logprobs),
            "mean_logprob": sum(logprobs) / count,
            "mean_entropy": sum(entropies) / count,
        }
        if params.top_k:
            details["top_k"] = [
                [[int(row[2 + 2 * j]), row[3 + 2 * j]] for j in range(params.top_k)] for row in rows
            ]
        if len(scored) > 1:
            ratios = [mine - theirs[0] for mine, theirs in zip(logprobs, scored[1].rows,
                                                                 strict=True)]  # fmt: skip
            details["log_ratio"] = ratios
            details["sum_log_ratio"] = sum(ratios)
        components = {"mean_entropy": details["mean_entropy"], "tokens": float(count)}
        return Result(status=Status.OK, reward=details["mean_logprob"], components=components,
                      details=details)  # fmt: skip
