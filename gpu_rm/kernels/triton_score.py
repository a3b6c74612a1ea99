"""The Triton scoring kernel: fused last-token gather + RMS final norm + reward head.

One program per sequence reads only that sequence's last hidden row (two passes over H:
sum of squares, then normalise and project onto K outputs), so the norm and the head never
run over the other N - S tokens. The math is `gpu_rm.kernels.reference.score_reference`.

Importing this module imports Triton; `gpu_rm.kernels.dispatch` imports it lazily. With
``TRITON_INTERPRET=1`` set before import, the kernel runs on CPU tensors (tests and CI).
"""

from __future__ import annotations

import torch
import triton  # type: ignore[import-untyped]
import triton.language as tl  # type: ignore[import-untyped]

from referee.gpu_rm.kernels.build import Build
from referee.gpu_rm.kernels.head import ScoreHead


# Runtime parameters carry no annotations: Triton's compiler resolves annotations as
# globals of the kernel and rejects any that is not a constexpr (``Any`` included), while
# the interpreter accepts them; tests/gpu_rm/test_compile.py compiles it for real targets.
@triton.jit  # type: ignore[untyped-decorator]
def _score_kernel(  # type: ignore[no-untyped-def]
    hidden_ptr,
    ends_ptr,
    norm_w_ptr,
    head_w_ptr,
    head_b_ptr,
    out_ptr,
    row_stride,
    hidden_size,
    num_outputs,
    eps,
    norm_offset,
    has_bias: tl.constexpr,
    block_size_h: tl.constexpr,
    block_size_k: tl.constexpr,
):
    seq = tl.program_id(0)
    last = tl.load(ends_ptr + seq).to(tl.int64) - 1
    row_ptr = hidden_ptr + last * row_stride
    cols = tl.arange(0, block_size_h)
    squares = tl.zeros([block_size_h], dtype=tl.float32)
    for start in range(0, hidden_size, block_size_h):
        idx = start + cols
        x = tl.load(row_ptr + idx, mask=idx < hidden_size, other=0.0).to(tl.float32)
        squares += x * x
    inv = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / hidden_size + eps)
    outs = tl.arange(0, block_size_k)
    acc = tl.zeros([block_size_k], dtype=tl.float32)
    for start in range(0, hidden_size, block_size_h):
        idx = start + cols
        in_row = idx < hidden_size
        x = tl.load(row_ptr + idx, mask=in_row, other=0.0).to(tl.float32)
        w = tl.load(norm_w_ptr + idx, mask=in_row, other=0.0).to(tl.float32) + norm_offset
        normed = x * inv * w
        head_mask = (outs[:, None] < num_outputs) & in_row[None, :]
        head = tl.load(
            head_w_ptr + outs[:, None] * hidden_size + idx[None, :], mask=head_mask, other=0.0
        ).to(tl.float32)
        acc += tl.sum(head * normed[None, :], axis=1)
    if has_bias:
        acc += tl.load(head_b_ptr + outs, mask=outs < num_outputs, other=0.0).to(tl.float32)
    tl.store(out_ptr + seq * num_outputs + outs, acc, mask=outs < num_outputs)


def score_triton(hidden: torch.Tensor, ends: torch.Tensor, head: ScoreHead) -> torch.Tensor:
    """(S, K) float32 scores computed by the kernel; same contract as `score_reference`."""
    if hidden.ndim != 2 or hidden.stride(1) != 1:
        raise ValueError("hidden must be (N, H) with contiguous rows")
    hidden_size = int(hidden.shape[1])
    num_seqs = int(ends.shape[0])
    k = head.num_outputs
    out = torch.empty((num_seqs, k), dtype=torch.float32, device=hidden.device)
    if num_seqs == 0:
        return out
    head_weight = head.head_weight.contiguous()
    bias = head.head_bias if head.head_bias is not None else head_weight
    block_h = min(triton.next_power_of_2(hidden_size), 1024)
    block_k = max(triton.next_power_of_2(k), 2)
    _score_kernel[(num_seqs,)](
        hidden,
        ends.contiguous(),
        head.norm_weight.contiguous(),
        head_weight,
        bias,
        out,
        hidden.stride(0),
        hidden_size,
        k,
        head.norm_eps,
        head.norm_offset,
        has_bias=head.head_bias is not None,
        block_size_h=block_h,
        block_size_k=block_k,
    )
    return out


def builds(dtype: str) -> list[Build]:
    """The specialisations `score_triton` launches for model weights of Triton type
    ``dtype`` (fp32, bf16, fp16): hidden rows and weights in that type, int64 ends, fp32
    out; ints as Triton specialises them (i32, i64 for a stride past 2**31)."""
    pointers = {
        "hidden_ptr": f"*{dtype}",
        "ends_ptr": "*i64",
        "norm_w_ptr": f"*{dtype}",
        "head_w_ptr": f"*{dtype}",
        "head_b_ptr": f"*{dtype}",
        "out_ptr": "*fp32",
    }
    found = []
    for stride, has_bias, block_k in (("i32", True, 2), ("i64", False, 4)):
        scalars = {
            "row_stride": stride,
            "hidden_size": "i32",
            "num_outputs": "i32",
            "eps": "fp32",
            "norm_offset": "fp32",
        }
        constexprs = {"has_bias": has_bias, "block_size_h": 1024, "block_size_k": block_k}
        found.append(Build("score", _score_kernel, {**pointers, **scalars}, constexprs))
    return found
