"""The PyTorch reference of the scoring kernel: the same math, the contract it is tested to.

Given packed final hidden states ``hidden`` (N, H) *before* the model's final norm and
exclusive end offsets ``ends`` (S,) of the sequences in the packed row, score each
sequence at its last token ``ends[i] - 1``:

    x      = hidden[ends[i] - 1]
    normed = x * rsqrt(mean(x^2) + eps) * (w + offset)
    scores = normed @ head_weight.T + head_bias

`token_logprobs_reference` is the contract of the restricted language-model head: at
positions ``rows`` (P,), the same norm, then the logits of only the candidate vocabulary
rows ``candidates[p]`` (P, K; -1 pads a shorter set), soft-capped when the model caps its
logits, and their log-softmax *over that set*: log P(token | the set), -inf at pads. The
``[tokens x vocab]`` logits of a plain forward are never formed.

Inputs are in the model's dtype; every step is computed in float32 and the scores are
float32, with no intermediate rounding (Hugging Face's bf16 RMSNorm rounds twice; the
difference is within bf16 tolerance, and in float32 the two are the same). Only S rows are
normalised and projected instead of all N tokens.
"""

from __future__ import annotations

import torch

from referee.gpu_rm.kernels.head import ScoreHead, TokenHead


def score_reference(hidden: torch.Tensor, ends: torch.Tensor, head: ScoreHead) -> torch.Tensor:
    """(S, K) float32 scores; see the module docstring for the exact math."""
    normed = rms_normed(hidden, ends.to(torch.long) - 1, head.norm_weight, head.norm_eps,
                     head.norm_offset)  # fmt: skip
    scores = normed @ head.head_weight.to(torch.float32).T
    if head.head_bias is not None:
        scores = scores + head.head_bias.to(torch.float32)
    return scores


def token_logprobs_reference(
    hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor, head: TokenHead
) -> torch.Tensor:
    """(P, K) float32 log-probabilities over each row's candidate set; see the module
    docstring."""
    normed = rms_normed(hidden, rows.to(torch.long), head.norm_weight, head.norm_eps,
                     head.norm_offset)  # fmt: skip
    return candidate_logprobs(normed, candidates, head)


def candidate_logprobs(
    normed: torch.Tensor, candidates: torch.Tensor, head: TokenHead
) -> torch.Tensor:
    """`token_logprobs_reference` from rows already normed (the path for a final norm the
    kernels do not know, applied by the model's own module); ``head``'s norm fields are
    not used."""
    normed = normed.to(torch.float32)
    valid = candidates >= 0
    ids = candidates.clamp(min=0).to(torch.long)
    weights = head.lm_weight.index_select(0, ids.reshape(-1)).to(torch.float32)
    logits = (weights.reshape(*ids.shape, -1) * normed[:, None, :]).sum(-1)
    if head.lm_bias is not None:
        logits = logits + head.lm_bias.to(torch.float32)[ids]
    if head.softcap > 0:
        logits = torch.tanh(logits / head.softcap) * head.softcap
    logits = logits.masked_fill(~valid, float("-inf"))
    return torch.log_softmax(logits, dim=-1)


def rms_normed(
    hidden: torch.Tensor, rows: torch.Tensor, weight: torch.Tensor, eps: float, offset: float
) -> torch.Tensor:
    """RMS-normalised float32 copies of ``hidden[rows]`` (the final norm every kernel
    applies to its rows first)."""
    picked = hidden.index_select(0, rows).to(torch.float32)
    inv = torch.rsqrt(picked.pow(2).mean(dim=-1, keepdim=True) + eps)
    return picked * inv * (weight.to(torch.float32) + offset)
