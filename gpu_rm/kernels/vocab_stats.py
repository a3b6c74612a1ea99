"""Token statistics over the whole vocabulary, never holding ``[positions x vocab]``.

At each scored position (a row of pre-norm ``hidden``), after the model's final RMS norm
and output layer (`TokenHead`: weight, optional bias and logit soft-capping):

    log P(target)  = z[target] - logsumexp(z)
    entropy        = logsumexp(z) - sum(softmax(z) * z)
    top-k          = the k most likely tokens and their log-probabilities

`token_stats_reference` is the contract: it walks the vocabulary in chunks of ``chunk``
rows, keeping per position a running maximum, the sum of ``exp(z - max)`` and of
``exp(z - max) * z`` (the online softmax), the target's logit and a running top-k, so its
memory is O(positions x chunk). The normed rows are rounded to the weights' dtype (the
model's own forward does that); everything after is float32. The Triton kernel
(`gpu_rm.kernels.triton_logprobs`) computes the same statistics in one fused pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from referee.gpu_rm.kernels.head import TokenHead
from referee.gpu_rm.kernels.reference import rms_normed
from referee.gpu_rm.settings import MAX_TOP_K


@dataclass
class TokenStats:
    """Per position: ``logprobs`` (P,) and ``entropies`` (P,) float32; ``top_ids`` (P, k)
    int64 and ``top_logprobs`` (P, k) float32, most likely first (k = 0: empty)."""

    logprobs: torch.Tensor
    entropies: torch.Tensor
    top_ids: torch.Tensor
    top_logprobs: torch.Tensor


def normed_rows(hidden: torch.Tensor, rows: torch.Tensor, head: TokenHead) -> torch.Tensor:
    """The final RMS norm of ``hidden[rows]`` (P, H), computed in float32 and rounded to
    the output layer's dtype, as the model's own forward feeds its output layer (a no-op
    for a float32 model); returned as float32."""
    normed = rms_normed(hidden, rows.to(torch.long), head.norm_weight, head.norm_eps,
                        head.norm_offset)  # fmt: skip
    return normed.to(head.lm_weight.dtype).to(torch.float32)


def chunk_logits(normed: torch.Tensor, head: TokenHead, start: int, end: int) -> torch.Tensor:
    """float32 logits (P, end - start) of vocabulary rows ``start:end``, soft-capped."""
    logits = normed @ head.lm_weight[start:end].to(torch.float32).T
    if head.lm_bias is not None:
        logits = logits + head.lm_bias[start:end].to(torch.float32)
    if head.softcap > 0:
        logits = torch.tanh(logits / head.softcap) * head.softcap
    return logits


def token_stats_reference(
    hidden: torch.Tensor,
    rows: torch.Tensor,
    targets: torch.Tensor,
    head: TokenHead,
    top_k: int = 0,
    chunk: int = 8192,
) -> TokenStats:
    """See the module docstring. ``targets`` (P,) are vocabulary ids; ``top_k`` at most
    `MAX_TOP_K`."""
    return stats_of_normed(normed_rows(hidden, rows, head), targets, head, top_k, chunk)


def stats_of_normed(
    normed: torch.Tensor, targets: torch.Tensor, head: TokenHead, top_k: int, chunk: int = 8192
) -> TokenStats:
    """`token_stats_reference` from rows already normed (float32): the path for a final
    norm the kernels do not know, which the model's own module applies. ``head``'s norm
    fields are not used. The chunk shrinks so that a chunk of logits stays near 2**26
    values however many rows are read."""
    if not 0 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k must be within 0..{MAX_TOP_K}, not {top_k}")
    count, device = normed.shape[0], normed.device
    chunk = max(256, min(chunk, (1 << 26) // max(count, 1)))
    top = torch.full((count, 0), float("-inf"), device=device)
    top_ids = torch.zeros((count, 0), dtype=torch.long, device=device)
    peak = torch.full((count,), float("-inf"), device=device)
    total = torch.zeros(count, device=device)
    weighted = torch.zeros(count, device=device)
    target_logit = torch.zeros(count, device=device)
    targets = targets.to(torch.long)
    for start in range(0, head.vocab_size, chunk):
        end = min(start + chunk, head.vocab_size)
        logits = chunk_logits(normed, head, start, end)
        new_peak = torch.maximum(peak, logits.max(dim=-1).values)
        scale = torch.exp(peak - new_peak)
        shifted = torch.exp(logits - new_peak[:, None])
        total = total * scale + shifted.sum(-1)
        weighted = weighted * scale + (shifted * logits).sum(-1)
        peak = new_peak
        inside = (targets >= start) & (targets < end)
        local = (targets - start).clamp(0, end - start - 1)
        target_logit += torch.where(inside, logits.gather(1, local[:, None])[:, 0], 0.0)
        if top_k:
            merged = torch.cat([top, logits], dim=1)
            ids = torch.cat([top_ids, torch.arange(start, end, device=device).expand(count, -1)], 1)
            top, picked = merged.topk(min(top_k, merged.shape[1]), dim=1)
            top_ids = ids.gather(1, picked)
    log_total = peak + torch.log(total)
    return TokenStats(
        logprobs=target_logit - log_total,
        entropies=log_total - weighted / total,
        top_ids=top_ids,
        top_logprobs=top - log_total[:, None],
    )


def top_tokens(
    normed: torch.Tensor, head: TokenHead, top_k: int, log_total: torch.Tensor, chunk: int = 8192
) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``top_k`` most likely tokens of each normed row and their log-probabilities
    (``log_total`` is each row's logsumexp), by a chunked pass over the vocabulary."""
    count, device = normed.shape[0], normed.device
    top = torch.full((count, 0), float("-inf"), device=device)
    top_ids = torch.zeros((count, 0), dtype=torch.long, device=device)
    for start in range(0, head.vocab_size, chunk):
        end = min(start + chunk, head.vocab_size)
        merged = torch.cat([top, chunk_logits(normed, head, start, end)], dim=1)
        ids = torch.cat([top_ids, torch.arange(start, end, device=device).expand(count, -1)], 1)
        top, picked = merged.topk(min(top_k, merged.shape[1]), dim=1)
        top_ids = ids.gather(1, picked)
    return top_ids, top - log_total[:, None]
