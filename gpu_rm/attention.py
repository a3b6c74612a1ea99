"""Attention confined to a `PackedLayout`, registered as a Hugging Face attention function.

Hugging Face decoder models call the registered function with post-RoPE query, key and
value of shape (1, heads, N, head_dim) for the packed row; ``layout`` arrives as a keyword
argument passed through the model's forward. Each unit's prefix is causal self-attention;
each suffix attends to its unit's prefix and causally to itself (a lower-right aligned
causal mask). Only real token pairs are computed: no N x N mask is materialised, so the
cost is that of the sequences alone, not of the whole row.

On CUDA the per-segment `scaled_dot_product_attention` calls dispatch to flash or
memory-efficient kernels; on CPU to the fused CPU kernel.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.functional import scaled_dot_product_attention

from gpu_rm.packing import PackedLayout

ATTENTION_NAME = "referee_packed"


def packed_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Return (attn_output (1, N, heads, head_dim), None) as HF attention functions do.

    Raises ValueError without a ``layout`` keyword: this function is only meaningful for
    a packed row, and silently attending across sequences would give wrong scores.
    """
    layout = kwargs.get("layout")
    if not isinstance(layout, PackedLayout):
        raise ValueError("packed attention needs the packed layout (keyword 'layout')")
    groups = query.shape[1] // key.shape[1]
    if groups > 1:  # grouped-query attention: each KV head serves `groups` query heads
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    out = torch.empty_like(query)
    for unit in layout.units:
        p0, p1 = unit.prefix
        if p1 > p0:
            out[:, :, p0:p1] = scaled_dot_product_attention(
                query[:, :, p0:p1], key[:, :, p0:p1], value[:, :, p0:p1],
                is_causal=True, scale=scaling,
            )  # fmt: skip
        for s0, s1 in unit.suffixes:
            out[:, :, s0:s1] = _suffix_attention(query, key, value, (p0, p1), (s0, s1), scaling)
    return out.transpose(1, 2).contiguous(), None


def _suffix_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    prefix: tuple[int, int],
    suffix: tuple[int, int],
    scaling: float | None,
) -> torch.Tensor:
    (p0, p1), (s0, s1) = prefix, suffix
    q = query[:, :, s0:s1]
    if p1 == p0:
        return scaled_dot_product_attention(
            q, key[:, :, s0:s1], value[:, :, s0:s1], is_causal=True, scale=scaling
        )
    k = torch.cat((key[:, :, p0:p1], key[:, :, s0:s1]), dim=2)
    v = torch.cat((value[:, :, p0:p1], value[:, :, s0:s1]), dim=2)
    # Suffix token i sees the whole prefix and suffix tokens 0..i: j <= i + prefix length.
    rows = torch.arange(s1 - s0, device=q.device)[:, None]
    cols = torch.arange(k.shape[2], device=q.device)[None, :]
    mask = cols <= rows + (p1 - p0)
    return scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scaling)


def register_packed_attention() -> str:
    """Register `packed_attention` with Transformers (idempotent); return its name."""
    from transformers import AttentionInterface

    AttentionInterface.register(ATTENTION_NAME, packed_attention)
    return ATTENTION_NAME
