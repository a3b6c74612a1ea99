"""The Triton scoring kernel against its PyTorch reference, on fresh random inputs.

Runs under Triton's interpreter on CPU (conftest sets TRITON_INTERPRET=1), so sizes stay
small; the same test runs the compiled kernel when a CUDA device is present.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import torch

pytest.importorskip("triton")

from referee.gpu_rm.kernels import ScoreHead, score_last_tokens, score_reference
from referee.gpu_rm.kernels.triton_score import score_triton

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def random_case(
    dtype: torch.dtype, hidden_size: int, k: int, bias: bool, seed: int
) -> tuple[torch.Tensor, torch.Tensor, ScoreHead]:
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 9, (5,), generator=gen)
    ends = torch.cumsum(lengths, 0)
    n = int(ends[-1])
    hidden = (torch.randn(n, hidden_size, generator=gen) * 3).to(dtype).to(DEVICE)
    head = ScoreHead(
        norm_weight=torch.randn(hidden_size, generator=gen).to(dtype).to(DEVICE),
        norm_eps=1e-6,
        head_weight=torch.randn(k, hidden_size, generator=gen).to(dtype).to(DEVICE),
        head_bias=torch.randn(k, generator=gen).to(dtype).to(DEVICE) if bias else None,
    )
    return hidden, ends.to(DEVICE), head


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("hidden_size", "k", "bias"), [(64, 1, False), (200, 3, True)])
def test_kernel_matches_reference(dtype: str, hidden_size: int, k: int, bias: bool) -> None:
    torch_dtype = getattr(torch, dtype)
    seed = int(torch.randint(0, 2**31 - 1, ()).item())  # fresh inputs every run
    hidden, ends, head = random_case(torch_dtype, hidden_size, k, bias, seed)
    got = score_triton(hidden, ends, head)
    want = score_reference(hidden, ends, head)
    assert got.shape == (5, k) and got.dtype == torch.float32
    # Both accumulate in fp32 from the same inputs; only summation order differs.
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4, msg=f"seed {seed}")


def test_reference_is_norm_then_head_on_last_tokens_only() -> None:
    hidden, ends, head = random_case(torch.float32, 32, 2, True, seed=7)
    norm = torch.nn.RMSNorm(32, eps=head.norm_eps).to(DEVICE)
    with torch.no_grad():
        norm.weight.copy_(head.norm_weight)
    full = torch.nn.functional.linear(norm(hidden), head.head_weight, head.head_bias)
    torch.testing.assert_close(score_reference(hidden, ends, head), full[ends - 1])


def test_gemma_offset_adds_one_to_the_norm_weight() -> None:
    hidden, ends, head = random_case(torch.float32, 32, 1, False, seed=3)
    shifted = ScoreHead(head.norm_weight - 1.0, head.norm_eps, head.head_weight, None, 1.0)
    torch.testing.assert_close(
        score_reference(hidden, ends, shifted), score_reference(hidden, ends, head)
    )


def test_dispatcher_uses_reference_on_cpu_and_kernel_when_asked() -> None:
    hidden, ends, head = random_case(torch.float32, 48, 2, False, seed=11)
    cpu = (
        hidden.cpu(),
        ends.cpu(),
        ScoreHead(head.norm_weight.cpu(), head.norm_eps, head.head_weight.cpu()),
    )
    assert torch.equal(score_last_tokens(*cpu), score_reference(*cpu))
    torch.testing.assert_close(
        score_last_tokens(hidden, ends, head, backend="triton"),
        score_reference(hidden, ends, head),
        rtol=1e-5,
        atol=1e-4,
    )
