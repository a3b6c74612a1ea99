"""The Triton kernel of the restricted language-model head: gather + RMS final norm + the
logits of a few candidate vocabulary rows + their log-softmax, at scored positions only.

One program per scored position reads that position's hidden row twice (sum of squares,
then normalise and project) and only the K candidate rows of the output layer, found by
token id; the ``[positions x vocab]`` logits never exist. The math is
`gpu_rm.kernels.reference.token_logprobs_reference`.

Importing this module imports Triton; `gpu_rm.kernels.dispatch` imports it lazily.
"""

from __future__ import annotations

import torch
import triton  # type: ignore[import-untyped]
import triton.language as tl  # type: ignore[import-untyped]

from referee.gpu_rm.kernels.build import Build
from referee.gpu_rm.kernels.head import TokenHead

MAX_CANDIDATES = 64
"""The widest candidate set a position may score (one block of the kernel)."""
_TILE = 8192
"""block_k x block_h stays at or under this many fp32 values per program."""


# No annotations on runtime parameters: see `gpu_rm.kernels.triton_score`.
@triton.jit  # type: ignore[untyped-decorator]
def _token_kernel(  # type: ignore[no-untyped-def]
    hidden_ptr,
    rows_ptr,
    cand_ptr,
    norm_w_ptr,
    lm_w_ptr,
    lm_b_ptr,
    out_ptr,
    row_stride,
    hidden_size,
    num_candidates,
    eps,
    norm_offset,
    softcap,
    has_bias: tl.constexpr,
    has_softcap: tl.constexpr,
    block_size_h: tl.constexpr,
    block_size_k: tl.constexpr,
):
    pos = tl.program_id(0)
    row_ptr = hidden_ptr + tl.load(rows_ptr + pos).to(tl.int64) * row_stride
    cols = tl.arange(0, block_size_h)
    squares = tl.zeros([block_size_h], dtype=tl.float32)
    for start in range(0, hidden_size, block_size_h):
        idx = start + cols
        x = tl.load(row_ptr + idx, mask=idx < hidden_size, other=0.0).to(tl.float32)
        squares += x * x
    inv = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / hidden_size + eps)
    ks = tl.arange(0, block_size_k)
    tokens = tl.load(cand_ptr + pos * num_candidates + ks, mask=ks < num_candidates, other=-1)
    valid = tokens >= 0
    weight_rows = lm_w_ptr + tl.where(valid, tokens, 0).to(tl.int64) * hidden_size
    acc = tl.zeros([block_size_k], dtype=tl.float32)
    for start in range(0, hidden_size, block_size_h):
        idx = start + cols
        in_row = idx < hidden_size
        x = tl.load(row_ptr + idx, mask=in_row, other=0.0).to(tl.float32)
        w = tl.load(norm_w_ptr + idx, mask=in_row, other=0.0).to(tl.float32) + norm_offset
        normed = x * inv * w
        lm = tl.load(
            weight_rows[:, None] + idx[None, :], mask=valid[:, None] & in_row[None, :], other=0.0
        ).to(tl.float32)
        acc += tl.sum(lm * normed[None, :], axis=1)
    if has_bias:
        acc += tl.load(lm_b_ptr + tl.where(valid, tokens, 0), mask=valid, other=0.0).to(tl.float32)
    if has_softcap:
        # tanh(z) = 2 sigmoid(2z) - 1: exact at both ends (exp overflows to inf, giving -1)
        acc = (2.0 / (1.0 + tl.exp(-2.0 * acc / softcap)) - 1.0) * softcap
    logits = tl.where(valid, acc, float("-inf"))
    top = tl.max(logits, axis=0)
    total = tl.sum(tl.where(valid, tl.exp(logits - top), 0.0), axis=0)
    out = logits - top - tl.log(total)
    tl.store(out_ptr + pos * num_candidates + ks, out, mask=ks < num_candidates)


def token_logprobs_triton(
    hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor, head: TokenHead
) -> torch.Tensor:
    """(P, K) float32 log-probabilities; same contract as `token_logprobs_reference`."""
    if hidden.ndim != 2 or hidden.stride(1) != 1:
        raise ValueError("hidden must be (N, H) with contiguous rows")
    num_positions, k = (int(n) for n in candidates.shape)
    if k > MAX_CANDIDATES:
        raise ValueError(f"at most {MAX_CANDIDATES} candidate tokens per position, not {k}")
    out = torch.empty((num_positions, k), dtype=torch.float32, device=hidden.device)
    if num_positions == 0 or k == 0:
        return out
    hidden_size = int(hidden.shape[1])
    block_k, block_h = _blocks(k, hidden_size)
    lm_weight = head.lm_weight.contiguous()
    _token_kernel[(num_positions,)](
        hidden,
        rows.to(torch.int64).contiguous(),
        candidates.to(torch.int64).contiguous(),
        head.norm_weight.contiguous(),
        lm_weight,
        head.lm_bias if head.lm_bias is not None else lm_weight,
        out,
        hidden.stride(0),
        hidden_size,
        k,
        head.norm_eps,
        head.norm_offset,
        head.softcap if head.softcap > 0 else 1.0,
        has_bias=head.lm_bias is not None,
        has_softcap=head.softcap > 0,
        block_size_h=block_h,
        block_size_k=block_k,
    )
    return out


def _blocks(k: int, hidden_size: int) -> tuple[int, int]:
    """(block_size_k, block_size_h): the candidate set in one block, and as much of the
    hidden row as keeps their product at most `_TILE`."""
    block_k = max(triton.next_power_of_2(k), 2)
    return block_k, min(triton.next_power_of_2(hidden_size), max(_TILE // block_k, 16))


def builds(dtype: str) -> list[Build]:
    """The specialisations `token_logprobs_triton` launches for weights of Triton type
    ``dtype``: a yes/no pair without extras (row stride i32) on a 4,096-wide hidden row
    and on an 896-wide one (a 0.5B model: another hidden block), and the widest set with
    bias and soft-capping (Gemma-style; stride i64)."""
    pointers = {
        "hidden_ptr": f"*{dtype}",
        "rows_ptr": "*i64",
        "cand_ptr": "*i64",
        "norm_w_ptr": f"*{dtype}",
        "lm_w_ptr": f"*{dtype}",
        "lm_b_ptr": f"*{dtype}",
        "out_ptr": "*fp32",
    }
    found = []
    shapes = (("i32", False, 2, 4096), ("i32", False, 2, 896), ("i64", True, MAX_CANDIDATES, 4096))
    for stride, extras, k, hidden_size in shapes:
        block_k, block_h = _blocks(k, hidden_size)
        scalars = {
            "row_stride": stride,
            "hidden_size": "i32",
            "num_candidates": "i32",
            "eps": "fp32",
            "norm_offset": "fp32",
            "softcap": "fp32",
        }
        constexprs = {
            "has_bias": extras,
            "has_softcap": extras,
            "block_size_h": block_h,
            "block_size_k": block_k,
        }
        found.append(Build("tokens", _token_kernel, {**pointers, **scalars}, constexprs))
    return found
