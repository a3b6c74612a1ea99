"""Scoring kernels and their references: fused last-token gather + final norm + reward
head (`score_last_tokens`), and gather + final norm + restricted language-model head +
log-softmax over candidate tokens (`token_logprobs`).

The dispatchers choose; the ``*_reference`` functions are the contracts; the Triton
kernels live in `gpu_rm.kernels.triton_score` and `gpu_rm.kernels.triton_tokens` and are
imported only when used.
"""

from referee.gpu_rm.kernels.dispatch import Backend, score_last_tokens, token_logprobs
from referee.gpu_rm.kernels.head import ScoreHead, TokenHead
from referee.gpu_rm.kernels.reference import score_reference, token_logprobs_reference

__all__ = [
    "Backend",
    "ScoreHead",
    "TokenHead",
    "score_last_tokens",
    "score_reference",
    "token_logprobs",
    "token_logprobs_reference",
]
