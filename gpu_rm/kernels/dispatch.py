"""Choose the scoring implementations: the Triton kernels on CUDA, the references elsewhere."""

from __future__ import annotations

from typing import Literal

import torch

from referee.gpu_rm.kernels.head import ScoreHead, TokenHead
from referee.gpu_rm.kernels.reference import score_reference, token_logprobs_reference
from referee.gpu_rm.kernels.vocab_stats import TokenStats, token_stats_reference

Backend = Literal["auto", "triton", "reference"]


def score_last_tokens(
    hidden: torch.Tensor, ends: torch.Tensor, head: ScoreHead, backend: Backend = "auto"
) -> torch.Tensor:
    """(S, K) float32 scores of the sequences ending (exclusive) at ``ends`` in ``hidden``.

    ``auto`` runs the Triton kernel when ``hidden`` is on a CUDA device and Triton imports,
    else the PyTorch reference (CPU has no Triton backend outside the interpreter).
    ``triton`` forces the kernel (tests run it under ``TRITON_INTERPRET=1`` on CPU).
    """
    if backend == "reference" or (backend == "auto" and not hidden.is_cuda):
        return score_reference(hidden, ends, head)
    try:
        from referee.gpu_rm.kernels.triton_score import score_triton  # noqa: PLC0415 - Triton loads with the first CUDA batch
    except ImportError:
        if backend == "triton":
            raise
        return score_reference(hidden, ends, head)
    return score_triton(hidden, ends, head)


def token_logprobs(
    hidden: torch.Tensor,
    rows: torch.Tensor,
    candidates: torch.Tensor,
    head: TokenHead,
    backend: Backend = "auto",
) -> torch.Tensor:
    """(P, K) float32 log-probabilities over each position's candidate tokens (the
    contract: `token_logprobs_reference`); backends chosen as in `score_last_tokens`."""
    if backend == "reference" or (backend == "auto" and not hidden.is_cuda):
        return token_logprobs_reference(hidden, rows, candidates, head)
    try:
        from referee.gpu_rm.kernels.triton_tokens import token_logprobs_triton  # noqa: PLC0415 - Triton loads with the first CUDA batch
    except ImportError:
        if backend == "triton":
            raise
        return token_logprobs_reference(hidden, rows, candidates, head)
    return token_logprobs_triton(hidden, rows, candidates, head)


def token_stats(
    hidden: torch.Tensor,
    rows: torch.Tensor,
    targets: torch.Tensor,
    head: TokenHead,
    top_k: int = 0,
    backend: Backend = "auto",
) -> TokenStats:
    """Whole-vocabulary statistics of each row's target token (the contract:
    `token_stats_reference`); backends chosen as in `score_last_tokens`."""
    if backend == "reference" or (backend == "auto" and not hidden.is_cuda):
        return token_stats_reference(hidden, rows, targets, head, top_k)
    try:
        from referee.gpu_rm.kernels.triton_logprobs import token_stats_triton  # noqa: PLC0415 - Triton loads with the first CUDA batch
    except ImportError:
        if backend == "triton":
            raise
        return token_stats_reference(hidden, rows, targets, head, top_k)
    return token_stats_triton(hidden, rows, targets, head, top_k)
