"""The restricted language-model head kernel (gather + final norm + candidate rows of the
output layer + log-softmax over the candidates) against its PyTorch reference, on fresh
random inputs, and the reference against a plain full-vocabulary computation.

Runs under Triton's interpreter on CPU (conftest sets TRITON_INTERPRET=1); the same test
runs the compiled kernel when a CUDA device is present.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import torch

pytest.importorskip("triton")

from referee.gpu_rm.kernels import TokenHead, token_logprobs, token_logprobs_reference
from referee.gpu_rm.kernels.triton_tokens import MAX_CANDIDATES, token_logprobs_triton

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def random_case(
    dtype: torch.dtype, hidden_size: int, vocab: int, k: int, extras: bool, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, TokenHead]:
    """Hidden rows, 6 scored rows among them, candidate sets of 1..k ids (-1 padded,
    drawn without repeats), and a head; with ``extras`` a bias, soft-capping and a Gemma
    norm offset."""
    gen = torch.Generator().manual_seed(seed)
    hidden = (torch.randn(40, hidden_size, generator=gen) * 3).to(dtype)
    rows = torch.randint(0, 40, (6,), generator=gen)
    candidates = torch.full((6, k), -1, dtype=torch.long)
    for p in range(6):
        width = int(torch.randint(1, k + 1, (), generator=gen))
        candidates[p, :width] = torch.randperm(vocab, generator=gen)[:width]
    head = TokenHead(
        norm_weight=torch.randn(hidden_size, generator=gen).to(dtype),
        norm_eps=1e-6,
        lm_weight=torch.randn(vocab, hidden_size, generator=gen).to(dtype),
        lm_bias=torch.randn(vocab, generator=gen).to(dtype) if extras else None,
        norm_offset=1.0 if extras else 0.0,
        softcap=4.0 if extras else 0.0,
    )
    moved = TokenHead(
        head.norm_weight.to(DEVICE), head.norm_eps, head.lm_weight.to(DEVICE),
        None if head.lm_bias is None else head.lm_bias.to(DEVICE), head.norm_offset,
        head.softcap,
    )  # fmt: skip
    return hidden.to(DEVICE), rows.to(DEVICE), candidates.to(DEVICE), moved


CASES = [(64, 50, 2, False), (200, 300, 7, True), (96, 500, 64, False)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("hidden_size", "vocab", "k", "extras"), CASES)
def test_kernel_matches_reference(
    dtype: str, hidden_size: int, vocab: int, k: int, extras: bool
) -> None:
    seed = int(torch.randint(0, 2**31 - 1, ()).item())  # fresh inputs every run
    hidden, rows, candidates, head = random_case(
        getattr(torch, dtype), hidden_size, vocab, k, extras, seed
    )
    got = token_logprobs_triton(hidden, rows, candidates, head)
    want = token_logprobs_reference(hidden, rows, candidates, head)
    assert got.shape == (6, k) and got.dtype == torch.float32
    pads = candidates < 0
    assert torch.isneginf(got[pads]).all() and torch.isneginf(want[pads]).all()
    # Both accumulate in fp32 from the same inputs; only summation order differs.
    torch.testing.assert_close(got[~pads], want[~pads], rtol=1e-5, atol=1e-4,
                               msg=f"seed {seed}")  # fmt: skip
    sums = got.exp().sum(-1)
    torch.testing.assert_close(sums, torch.ones_like(sums), msg=f"seed {seed}")


@pytest.mark.parametrize("extras", [False, True])
def test_reference_is_the_full_softmax_restricted_to_the_candidates(extras: bool) -> None:
    """The contract by a different road: full-vocabulary logits of the normed rows, then
    log-softmax over the candidate columns only."""
    hidden, rows, candidates, head = random_case(torch.float32, 32, 80, 5, extras, seed=5)
    norm = torch.nn.RMSNorm(32, eps=head.norm_eps).to(DEVICE)
    with torch.no_grad():
        norm.weight.copy_(head.norm_weight + head.norm_offset)
    logits = torch.nn.functional.linear(norm(hidden[rows]), head.lm_weight, head.lm_bias)
    if head.softcap:
        logits = torch.tanh(logits / head.softcap) * head.softcap
    got = token_logprobs_reference(hidden, rows, candidates, head)
    for p in range(6):
        ids = candidates[p][candidates[p] >= 0]
        want = torch.log_softmax(logits[p, ids], dim=-1)
        torch.testing.assert_close(got[p, : len(ids)], want, rtol=1e-5, atol=1e-5)


def test_dispatcher_uses_reference_on_cpu_and_the_kernel_when_asked() -> None:
    hidden, rows, candidates, head = random_case(torch.float32, 48, 60, 4, True, seed=9)
    if DEVICE == "cpu":
        reference = token_logprobs_reference(hidden, rows, candidates, head)
        assert torch.equal(token_logprobs(hidden, rows, candidates, head), reference)
    torch.testing.assert_close(
        token_logprobs(hidden, rows, candidates, head, backend="triton"),
        token_logprobs_reference(hidden, rows, candidates, head),
        rtol=1e-5, atol=1e-4,
    )  # fmt: skip


def test_a_set_wider_than_one_block_is_refused() -> None:
    hidden, rows, _, head = random_case(torch.float32, 16, 200, 2, False, seed=1)
    wide = torch.zeros((6, MAX_CANDIDATES + 1), dtype=torch.long, device=DEVICE)
    with pytest.raises(ValueError, match="at most 64"):
        token_logprobs_triton(hidden, rows, wide, head)
