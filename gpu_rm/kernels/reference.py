"""The PyTorch reference of the scoring kernel: the same math, the contract it is tested to.

Given packed final hidden states ``hidden`` (N, H) *before* the model's final norm and
exclusive end offsets ``ends`` (S,) of the sequences in the packed row, score each
sequence at its last token ``ends[i] - 1``:

    x      = hidden[ends[i] - 1]
    normed = x * rsqrt(mean(x^2) + eps) * (w + offset)
    scores = normed @ head_weight.T + head_bias

Inputs are in the model's dtype; every step is computed in float32 and the scores are
float32, with no intermediate rounding (Hugging Face's bf16 RMSNorm rounds twice; the
difference is within bf16 tolerance, and in float32 the two are the same). Only S rows are
normalised and projected instead of all N tokens.
"""

from __future__ import annotations

import torch

from referee.gpu_rm.kernels.head import ScoreHead


def score_reference(hidden: torch.Tensor, ends: torch.Tensor, head: ScoreHead) -> torch.Tensor:
    """(S, K) float32 scores; see the module docstring for the exact math."""
    rows = hidden.index_select(0, ends.to(torch.long) - 1).to(torch.float32)
    inv = torch.rsqrt(rows.pow(2).mean(dim=-1, keepdim=True) + head.norm_eps)
    normed = rows * inv * (head.norm_weight.to(torch.float32) + head.norm_offset)
    scores = normed @ head.head_weight.to(torch.float32).T
    if head.head_bias is not None:
        scores = scores + head.head_bias.to(torch.float32)
    return scores
