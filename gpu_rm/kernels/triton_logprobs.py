"""The Triton kernel of the token statistics: output layer + online log-softmax over the
whole vocabulary + the target's logit, at scored positions only.

One program takes ``block_p`` normed rows and one split of the vocabulary, and walks that
split in tiles of ``block_v`` rows of the output layer: a tile of logits is one ``tl.dot``
over the hidden size, then folded into per-row running statistics (maximum, sum of
exponentials, sum of exponentials times logits, the target's logit) and dropped, so
nothing of size ``[positions x vocab]`` is ever written: memory O(positions x splits).
The splits (the grid's second axis) give a GPU enough programs when few positions are
read; their statistics are merged on the host (a log-sum-exp over splits). The math is
`gpu_rm.kernels.vocab_stats.token_stats_reference`; the top-k, when asked for, is a
second chunked pass (`vocab_stats.top_tokens`).

Importing this module imports Triton; `gpu_rm.kernels.dispatch` imports it lazily.
"""

from __future__ import annotations

import os

import torch
import triton  # type: ignore[import-untyped]
import triton.language as tl  # type: ignore[import-untyped]

from referee.gpu_rm.kernels.build import Build
from referee.gpu_rm.kernels.head import TokenHead
from referee.gpu_rm.kernels.vocab_stats import TokenStats, normed_rows, top_tokens
from referee.gpu_rm.settings import MAX_TOP_K

_INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
"""Read once, as Triton itself does when a kernel is decorated (`gpu_rm.kernels.targets`)."""
BLOCK_P, BLOCK_V, BLOCK_H = 64, 128, 64
"""Positions per program (each tile of the output layer read serves this many),
vocabulary rows per tile, hidden per step."""
PROGRAMS = 512
"""Enough programs to fill a GPU's SMs several times over: the vocabulary is split until
positions x splits reaches it."""


# No annotations on runtime parameters: see `gpu_rm.kernels.triton_score`.
@triton.jit  # type: ignore[untyped-decorator]
def _stats_kernel(  # type: ignore[no-untyped-def]
    normed_ptr,
    w_ptr,
    b_ptr,
    targets_ptr,
    out_ptr,
    num_positions,
    hidden_size,
    vocab_size,
    split_size,
    softcap,
    has_bias: tl.constexpr,
    has_softcap: tl.constexpr,
    precision: tl.constexpr,
    upcast: tl.constexpr,
    block_p: tl.constexpr,
    block_v: tl.constexpr,
    block_h: tl.constexpr,
):
    ps = tl.program_id(0) * block_p + tl.arange(0, block_p)
    p_ok = ps < num_positions
    target = tl.load(targets_ptr + ps, mask=p_ok, other=0)
    peak = tl.full([block_p], float("-inf"), dtype=tl.float32)
    total = tl.zeros([block_p], dtype=tl.float32)
    weighted = tl.zeros([block_p], dtype=tl.float32)
    target_logit = tl.zeros([block_p], dtype=tl.float32)
    hs = tl.arange(0, block_h)
    row_base = normed_ptr + ps[:, None].to(tl.int64) * hidden_size
    split = tl.program_id(1)
    v_end = tl.minimum(vocab_size, (split + 1) * split_size)
    for v0 in range(split * split_size, v_end, block_v):
        vs = v0 + tl.arange(0, block_v)
        v_ok = vs < v_end
        col_base = w_ptr + vs[None, :].to(tl.int64) * hidden_size
        acc = tl.zeros([block_p, block_v], dtype=tl.float32)
        for h0 in range(0, hidden_size, block_h):
            h = h0 + hs
            h_ok = h < hidden_size
            a = tl.load(row_base + h[None, :], mask=p_ok[:, None] & h_ok[None, :], other=0.0)
            b = tl.load(col_base + h[:, None], mask=v_ok[None, :] & h_ok[:, None], other=0.0)
            if upcast:  # the interpreter multiplies bf16 as raw 16-bit integers
                a, b = a.to(tl.float32), b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=precision)
        if has_bias:
            acc += tl.load(b_ptr + vs, mask=v_ok, other=0.0).to(tl.float32)[None, :]
        if has_softcap:  # tanh(z) = 2 sigmoid(2z) - 1
            acc = (2.0 / (1.0 + tl.exp(-2.0 * acc / softcap)) - 1.0) * softcap
        logits = tl.where(v_ok[None, :], acc, float("-inf"))
        new_peak = tl.maximum(peak, tl.max(logits, axis=1))
        scale = tl.exp(peak - new_peak)
        shifted = tl.where(v_ok[None, :], tl.exp(logits - new_peak[:, None]), 0.0)
        total = total * scale + tl.sum(shifted, axis=1)
        weighted = weighted * scale + tl.sum(shifted * tl.where(v_ok[None, :], acc, 0.0), axis=1)
        peak = new_peak
        hit = vs[None, :] == target[:, None]
        target_logit += tl.sum(tl.where(hit, acc, 0.0), axis=1)
    out = out_ptr + (split * num_positions + ps) * 4
    tl.store(out, target_logit, mask=p_ok)
    tl.store(out + 1, peak, mask=p_ok)
    tl.store(out + 2, total, mask=p_ok)
    tl.store(out + 3, weighted, mask=p_ok)


def token_stats_triton(
    hidden: torch.Tensor,
    rows: torch.Tensor,
    targets: torch.Tensor,
    head: TokenHead,
    top_k: int = 0,
) -> TokenStats:
    """Same contract as `token_stats_reference`. The normed rows are rounded to the
    weights' dtype for the tensor-core product (what the model's own forward does); a
    float32 model multiplies in full IEEE precision, never TF32."""
    if not 0 <= top_k <= MAX_TOP_K:
        raise ValueError(f"top_k must be within 0..{MAX_TOP_K}, not {top_k}")
    normed32 = normed_rows(hidden, rows, head)
    weight = head.lm_weight.contiguous()
    normed = normed32.to(weight.dtype).contiguous()
    count, hidden_size = (int(n) for n in normed.shape)
    splits, split_size = _splits(count, head.vocab_size)
    out = torch.zeros((splits, count, 4), dtype=torch.float32, device=hidden.device)
    if count:
        _stats_kernel[(triton.cdiv(count, BLOCK_P), splits)](
            normed, weight, head.lm_bias if head.lm_bias is not None else weight,
            targets.to(torch.int64).contiguous(), out, count, hidden_size, head.vocab_size,
            split_size, head.softcap if head.softcap > 0 else 1.0,
            has_bias=head.lm_bias is not None, has_softcap=head.softcap > 0,
            precision="ieee" if weight.dtype == torch.float32 else "tf32",
            upcast=_INTERPRETED and weight.dtype != torch.float32,
            block_p=BLOCK_P, block_v=BLOCK_V, block_h=BLOCK_H,
        )  # fmt: skip
    target_logit, peak, total, weighted = _merged(out)
    log_total = peak + torch.log(total)
    top_ids = torch.zeros((count, 0), dtype=torch.long, device=hidden.device)
    top_logprobs = torch.zeros((count, 0), dtype=torch.float32, device=hidden.device)
    if top_k:
        top_ids, top_logprobs = top_tokens(normed32, head, top_k, log_total)
    return TokenStats(target_logit - log_total, log_total - weighted / total, top_ids,
                      top_logprobs)  # fmt: skip


def _splits(count: int, vocab_size: int) -> tuple[int, int]:
    """(splits, vocabulary rows per split): enough splits for `PROGRAMS` programs, each a
    whole number of tiles."""
    wanted = max(1, min(triton.cdiv(PROGRAMS, max(triton.cdiv(count, BLOCK_P), 1)),
                        triton.cdiv(vocab_size, BLOCK_V)))  # fmt: skip
    split_size = triton.cdiv(triton.cdiv(vocab_size, wanted), BLOCK_V) * BLOCK_V
    return triton.cdiv(vocab_size, split_size), split_size


def _merged(out: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The splits' statistics (splits, P, 4) as one: the target's logit (found in one
    split), the maximum, and the sums rescaled to it."""
    peak = out[..., 1].max(dim=0).values
    scale = torch.exp(out[..., 1] - peak)
    total = (out[..., 2] * scale).sum(dim=0)
    weighted = (out[..., 3] * scale).sum(dim=0)
    return out[..., 0].sum(dim=0), peak, total, weighted


def builds(dtype: str) -> list[Build]:
    """The specialisations `token_stats_triton` launches for weights of Triton type
    ``dtype``: plain, and with bias and soft-capping (Gemma-style)."""
    pointers = {
        "normed_ptr": f"*{dtype}",
        "w_ptr": f"*{dtype}",
        "b_ptr": f"*{dtype}",
        "targets_ptr": "*i64",
        "out_ptr": "*fp32",
    }
    scalars = {"num_positions": "i32", "hidden_size": "i32", "vocab_size": "i32",
               "split_size": "i32", "softcap": "fp32"}  # fmt: skip
    precision = "ieee" if dtype == "fp32" else "tf32"
    found = []
    for extras in (False, True):
        constexprs = {"has_bias": extras, "has_softcap": extras, "precision": precision,
                      "upcast": False, "block_p": BLOCK_P, "block_v": BLOCK_V,
                      "block_h": BLOCK_H}  # fmt: skip
        found.append(Build("stats", _stats_kernel, {**pointers, **scalars}, constexprs))
    return found
