"""Whole-vocabulary token statistics: the Triton kernel against the chunked reference on
fresh random inputs, and the reference against ``torch.log_softmax`` over full float32
logits (the plain way it must equal while never forming those logits).

Runs under Triton's interpreter on CPU (conftest sets TRITON_INTERPRET=1); the same test
runs the compiled kernel when a CUDA device is present.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import torch

pytest.importorskip("triton")

from referee.gpu_rm.kernels import TokenHead, token_stats, token_stats_reference
from referee.gpu_rm.kernels.triton_logprobs import token_stats_triton
from referee.gpu_rm.kernels.vocab_stats import normed_rows

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def random_case(
    dtype: torch.dtype, hidden_size: int, vocab: int, count: int, extras: bool, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, TokenHead]:
    gen = torch.Generator().manual_seed(seed)
    hidden = (torch.randn(50, hidden_size, generator=gen) * 3).to(dtype).to(DEVICE)
    rows = torch.randint(0, 50, (count,), generator=gen).to(DEVICE)
    targets = torch.randint(0, vocab, (count,), generator=gen).to(DEVICE)
    head = TokenHead(
        norm_weight=torch.randn(hidden_size, generator=gen).to(dtype).to(DEVICE),
        norm_eps=1e-6,
        lm_weight=(torch.randn(vocab, hidden_size, generator=gen) * 0.3).to(dtype).to(DEVICE),
        lm_bias=torch.randn(vocab, generator=gen).to(dtype).to(DEVICE) if extras else None,
        norm_offset=1.0 if extras else 0.0,
        softcap=6.0 if extras else 0.0,
    )
    return hidden, rows, targets, head


def full_logsoftmax(hidden: torch.Tensor, rows: torch.Tensor, head: TokenHead) -> torch.Tensor:
    """The plain way: every vocabulary logit in float32, then log_softmax."""
    logits = normed_rows(hidden, rows, head) @ head.lm_weight.to(torch.float32).T
    if head.lm_bias is not None:
        logits = logits + head.lm_bias.to(torch.float32)
    if head.softcap:
        logits = torch.tanh(logits / head.softcap) * head.softcap
    return torch.log_softmax(logits, dim=-1)


@pytest.mark.parametrize("extras", [False, True])
@pytest.mark.parametrize("chunk", [64, 1000, 8192])
def test_reference_equals_log_softmax_over_full_logits(extras: bool, chunk: int) -> None:
    seed = int(torch.randint(0, 2**31 - 1, ()).item())
    hidden, rows, targets, head = random_case(torch.float32, 48, 777, 19, extras, seed)
    want = full_logsoftmax(hidden, rows, head)
    got = token_stats_reference(hidden, rows, targets, head, top_k=7, chunk=chunk)
    index = torch.arange(19, device=DEVICE)
    torch.testing.assert_close(got.logprobs, want[index, targets], atol=1e-4, rtol=0,
                               msg=f"seed {seed}")  # fmt: skip
    entropy = -(want.exp() * want).sum(-1)
    torch.testing.assert_close(got.entropies, entropy, atol=1e-4, rtol=0, msg=f"seed {seed}")
    top = want.topk(7, dim=-1)
    torch.testing.assert_close(got.top_logprobs, top.values, atol=1e-4, rtol=0)
    assert torch.equal(got.top_ids, top.indices), f"seed {seed}"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("hidden_size", "vocab", "count", "extras"),
                         [(64, 300, 5, False), (80, 1000, 37, True)])  # fmt: skip
def test_kernel_matches_reference(
    dtype: str, hidden_size: int, vocab: int, count: int, extras: bool
) -> None:
    seed = int(torch.randint(0, 2**31 - 1, ()).item())  # fresh inputs every run
    hidden, rows, targets, head = random_case(
        getattr(torch, dtype), hidden_size, vocab, count, extras, seed
    )
    got = token_stats_triton(hidden, rows, targets, head, top_k=3)
    want = token_stats_reference(hidden, rows, targets, head, top_k=3)
    for name in ("logprobs", "entropies", "top_logprobs"):
        torch.testing.assert_close(getattr(got, name), getattr(want, name), atol=1e-4,
                                   rtol=1e-5, msg=f"{name}, seed {seed}")  # fmt: skip
    assert torch.equal(got.top_ids, want.top_ids), f"seed {seed}"


def test_dispatcher_and_empty_and_bad_k() -> None:
    hidden, rows, targets, head = random_case(torch.float32, 32, 200, 4, False, seed=3)
    if DEVICE == "cpu":
        ours, ref = token_stats(hidden, rows, targets, head), token_stats_reference(
            hidden, rows, targets, head)  # fmt: skip
        assert torch.equal(ours.logprobs, ref.logprobs)
    empty = token_stats(hidden, rows[:0], targets[:0], head, backend="triton")
    assert empty.logprobs.shape == (0,) and empty.top_ids.shape == (0, 0)
    with pytest.raises(ValueError, match="top_k"):
        token_stats_reference(hidden, rows, targets, head, top_k=21)
