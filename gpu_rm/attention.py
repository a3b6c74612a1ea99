"""Attention confined to a `PackedLayout`, registered as a Hugging Face attention function.

Hugging Face decoder models call the registered function with post-RoPE query, key and
value of shape (1, heads, N, head_dim) for the packed row; ``packed`` (a `PackedRow`)
arrives as a keyword argument passed through the model's forward. Each unit's prefix is
causal self-attention; each suffix attends to its unit's prefix and causally to itself.

Two ways to compute it, chosen per model (`RewardModel`):

- ``flex`` (the default on CUDA): one FlexAttention call per layer over the whole row,
  with a block mask built once per forward from the layout: a token sees another when
  both belong to the same unit, the key is not after the query, and the key is in the
  unit's prefix or the query's own segment. Blocks outside every sequence are skipped,
  so the cost is that of the sequences. The row is padded to a multiple of a bucket
  (each pad token sees only itself) so compiled kernels are reused across batches. The
  model's sliding window (``sliding_window``) and logit soft-capping (``softcap``) are
  part of the mask and the score function, so Mistral-, Qwen2- and Gemma2-style layers
  get exactly their own attention.
- ``segments`` (the default on CPU, where FlexAttention has no fused kernel outside
  ``torch.compile``): one `scaled_dot_product_attention` per prefix and per suffix, which
  CPU runs in fused kernels without planning per shape. It cannot express sliding windows
  or soft-capping: a model with either uses ``flex``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
from torch.nn.functional import scaled_dot_product_attention
from transformers import AttentionInterface

from referee.gpu_rm.packing import PackedLayout

ATTENTION_NAME = "referee_packed"
AttentionBackend = Literal["flex", "segments"]
BLOCK = 128
"""FlexAttention's block size: masks are built, and work skipped, in blocks of this."""

_COMPILED: dict[str, Callable[..., Any]] = {}


@dataclass
class PackedRow:
    """A packed row on its device, as the attention function needs it.

    Per position ``i`` of the (bucketed) row: ``unit[i]`` (pads: a unit of their own),
    ``segment[i]`` (the unit's prefix, or one suffix), ``in_prefix[i]`` and the model's
    ``position[i]``. Block masks are built on first use, one per sliding window.
    """

    layout: PackedLayout
    backend: AttentionBackend
    length: int
    unit: torch.Tensor
    segment: torch.Tensor
    in_prefix: torch.Tensor
    position: torch.Tensor
    masks: dict[int | None, BlockMask] = field(default_factory=dict)

    def block_mask(self, window: int | None) -> BlockMask:
        """The block mask for layers with sliding window ``window`` (None: global)."""
        if window not in self.masks:
            self.masks[window] = create_block_mask(
                _mask_mod(self, window),
                None,
                None,
                self.length,
                self.length,
                device=self.unit.device,
                BLOCK_SIZE=BLOCK,
                _compile=self.unit.is_cuda,
            )
        return self.masks[window]


def bucketed(length: int, bucket: int) -> int:
    """``length`` rounded up to a multiple of ``bucket`` (1: no rounding)."""
    return -(-length // bucket) * bucket


def packed_row(
    layout: PackedLayout, device: torch.device, backend: AttentionBackend, bucket: int
) -> PackedRow:
    """The `PackedRow` of ``layout``: ``flex`` rows are padded to ``bucket``."""
    n = layout.computed_tokens
    length = bucketed(n, bucket) if backend == "flex" else n
    unit = torch.empty(length, dtype=torch.int32)
    segment = torch.empty(length, dtype=torch.int32)
    in_prefix = torch.zeros(length, dtype=torch.bool)
    next_segment = 0
    for index, u in enumerate(layout.units):
        p0, p1 = u.prefix
        unit[p0:p1], segment[p0:p1], in_prefix[p0:p1] = index, next_segment, True
        next_segment += 1
        for s0, s1 in u.suffixes:
            unit[s0:s1], segment[s0:s1] = index, next_segment
            next_segment += 1
    pads = torch.arange(length - n, dtype=torch.int32)
    unit[n:] = -1 - pads  # every pad a unit of its own: it sees only itself
    segment[n:] = -1 - pads
    position = torch.zeros(length, dtype=torch.long)
    position[:n] = torch.tensor(layout.position_ids, dtype=torch.long)
    return PackedRow(
        layout,
        backend,
        length,
        to_device(unit, device),
        to_device(segment, device),
        to_device(in_prefix, device),
        to_device(position, device),
    )


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``tensor`` on ``device``; to CUDA from pinned memory without blocking the host (the
    copy runs on the caller's current stream)."""
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def _mask_mod(row: PackedRow, window: int | None) -> Callable[..., torch.Tensor]:
    unit, segment, in_prefix, position = row.unit, row.segment, row.in_prefix, row.position

    def visible(b: Any, h: Any, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        same = (unit[q] == unit[k]) & (k <= q) & (in_prefix[k] | (segment[q] == segment[k]))
        if window is None:
            return same
        # Hugging Face's sliding window: the key lies within the last `window` positions.
        return same & (position[k] > position[q] - window)

    return visible


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

    Raises ValueError without a ``packed`` keyword (this function is only meaningful for
    a packed row, and silently attending across sequences would give wrong scores), and
    when the segments backend meets a layer it cannot reproduce.
    """
    row = kwargs.get("packed")
    if not isinstance(row, PackedRow):
        raise ValueError("packed attention needs the packed row (keyword 'packed')")
    window, softcap = kwargs.get("sliding_window"), kwargs.get("softcap")
    if row.backend == "flex":
        out = _flex(query, key, value, row.block_mask(window), scaling, softcap)
    elif window is not None or softcap is not None:
        raise ValueError("the segments backend cannot apply sliding windows or soft-capping")
    else:
        out = _segments(query, key, value, row.layout, scaling)
    return out.transpose(1, 2).contiguous(), None


def _flex(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: BlockMask,
    scaling: float | None,
    softcap: float | None,
) -> torch.Tensor:
    score_mod = None if softcap is None else _softcapped(softcap)
    attend = _compiled_flex() if query.is_cuda else _eager_flex
    grouped = query.shape[1] != key.shape[1]
    out = attend(
        query, key, value, score_mod=score_mod, block_mask=mask, scale=scaling,
        enable_gqa=grouped,
    )  # fmt: skip
    assert isinstance(out, torch.Tensor)
    return out


def _eager_flex(*args: Any, **kwargs: Any) -> Any:
    """FlexAttention without compilation (CPU: a reference that materialises scores)."""
    return flex_attention(*args, **kwargs)


def _softcapped(cap: float) -> Callable[..., torch.Tensor]:
    def score_mod(score: torch.Tensor, b: Any, h: Any, q: Any, k: Any) -> torch.Tensor:
        return cap * torch.tanh(score / cap)

    return score_mod


def _compiled_flex() -> Callable[..., Any]:
    """FlexAttention compiled once per process (shapes are bucketed, so few variants)."""
    if "flex" not in _COMPILED:
        _COMPILED["flex"] = torch.compile(flex_attention, dynamic=False)
    return _COMPILED["flex"]


def _segments(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    layout: PackedLayout,
    scaling: float | None,
) -> torch.Tensor:
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
    return out


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
    AttentionInterface.register(ATTENTION_NAME, packed_attention)
    return ATTENTION_NAME
