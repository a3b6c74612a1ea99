"""Scoring kernels and their references: fused last-token gather + final norm + reward
head (`score_last_tokens`); gather + final norm + restricted language-model head +
log-softmax over candidate tokens (`token_logprobs`); and whole-vocabulary statistics of
target tokens, log-probability, entropy and top-k, in vocabulary chunks (`token_stats`).

The dispatchers choose; the ``*_reference`` functions are the contracts; the Triton
kernels live in `gpu_rm.kernels.triton_score`, `triton_tokens` and `triton_logprobs` and
are imported only when used.
"""

from referee.gpu_rm.kernels.dispatch import (
    Backend,
    score_last_tokens,
    token_logprobs,
    token_stats,
)
from referee.gpu_rm.kernels.head import ScoreHead, TokenHead
from referee.gpu_rm.kernels.reference import score_reference, token_logprobs_reference
from referee.gpu_rm.kernels.vocab_stats import TokenStats, token_stats_reference

__all__ = [
    "Backend",
    "ScoreHead",
    "TokenHead",
    "TokenStats",
    "score_last_tokens",
    "score_reference",
    "token_logprobs",
    "token_logprobs_reference",
    "token_stats",
    "token_stats_reference",
]
