"""Adversarial inputs through the real worker pool: each is answered (a verdict or
``timeout``) within the item deadline + 0.2 s, and the pool keeps serving afterwards."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from referee.service.execution.local import LocalScorer
from referee.service.settings import Settings
from referee.verifiers import Item, Status
from referee.verifiers.math import MathVerifier

DEADLINE_S = 1.0
SLACK_S = 0.2

HANGS = "\\boxed{\\sum_{k=1}^{999} k^{k^{2}}}"
HANGS_GOLD = "\\sum_{k=1}^{999} k^{k^{2}} + 1"
"""A gold that keeps the sum: an answer's sum is compared, not refused as undone."""

ADVERSARIAL: list[tuple[str, str]] = [
    # (response, reference)
    ("\\boxed{9^{9^{9^9}}}", "5"),
    ("\\boxed{5}", "9^{9^{9^9}}"),
    ("\\boxed{(10^{10^7})!}", "5"),
    ("\\boxed{5}", "(10^{10^7})!"),
    ("\\boxed{10^{10^{10}}}", "10"),
    ("\\boxed{2^{10^{10}} x}", "x"),
    ("\\boxed{e^{e^{e^{e^{100}}}}}", "1"),
    ("\\boxed{99999999!}", "1"),
    ("\\boxed{x^{100000000}}", "x"),
    ("\\boxed{\\sum_{k=1}^{10^{12}} k^{k}}", "1"),
    ("\\boxed{" + ("\\alpha\\beta^{_}\\frac{" * 4000)[:64_000] + "}", "5"),
    (("\\alpha\\beta^{_}\\frac{" * 4000)[:64_000], "5"),
    ("\\boxed{" + "{" * 10_000 + "1" + "}" * 10_000 + "}", "1"),
    ("\\boxed{" + "{" * 10_000, "1"),
    ("\\boxed{" + "(" * 10_000 + "1" + ")" * 10_000 + "}", "1"),
    ("1" * 64_000, "5"),
    ("\\boxed{(x+1)^{10000}}", "(x+1)^{9999}"),
    ("\\boxed{" + "+".join(f"x^{{{i}}}" for i in range(300)) + "}", "x"),
    ("\\boxed{\\int_0^1 e^{x^{2}} \\sin(e^{x}) dx}", "1"),
    ("\\boxed{\\sum_{k=1}^{9999} k^{k}}", "1"),
    # a chain of ninety sides in distinct forms, each read to check the chain holds
    ("\\boxed{x=" + "=".join(f"2+0\\sin {i}" for i in range(2, 92)) + "}", "2"),
    ("\\boxed{" + "=".join(["\\frac{\\pm 1}{2}"] * 60) + "}", "1"),
    # not refused up front, and too slow for sympy: the worker is killed at the deadline
    (HANGS, HANGS_GOLD),
]


@pytest.fixture(scope="module")
def scorer() -> Iterator[LocalScorer]:
    settings = Settings.model_validate({"cpu_workers": 2, "item_timeout_s": DEADLINE_S})
    with LocalScorer(settings) as local:
        yield local


@pytest.mark.integration
@pytest.mark.parametrize(("response", "reference"), ADVERSARIAL, ids=lambda s: s[:24])
def test_adversarial_item_answered_within_deadline(
    scorer: LocalScorer, response: str, reference: str
) -> None:
    item = Item(verifier="math", response=response, reference=reference)
    start = time.monotonic()
    [result] = scorer.score([item])
    elapsed = time.monotonic() - start
    assert elapsed <= DEADLINE_S + SLACK_S, (elapsed, result)
    assert result.status in (Status.OK, Status.TIMEOUT, Status.INVALID), result
    if result.status == Status.OK:
        assert result.reward in (0.0, 1.0)
    # the pool still serves a normal item afterwards
    [normal] = scorer.score(
        [Item(verifier="math", response="\\boxed{\\frac{1}{2}}", reference="0.5")]
    )
    assert normal.status == Status.OK
    assert normal.reward == 1.0


@pytest.mark.integration
def test_adversarial_batch_keeps_batch_mates(scorer: LocalScorer) -> None:
    items = [Item(verifier="math", response=r, reference=g) for r, g in ADVERSARIAL]
    items.append(Item(verifier="math", response="\\boxed{42}", reference="42"))
    start = time.monotonic()
    results = scorer.score(items)
    assert time.monotonic() - start < 30
    assert results[-1].status == Status.OK
    assert results[-1].reward == 1.0
    assert all(r.status in (Status.OK, Status.TIMEOUT, Status.INVALID) for r in results)
    hang = results[[r for r, _ in ADVERSARIAL].index(HANGS)]
    assert hang.status == Status.TIMEOUT
    assert hang.reward is None


def _determinant(n: int, numeric: bool = False) -> str:
    """``\\det`` of an n x n matrix of symbols (or of two-digit numbers)."""
    cell = "{i}{j}" if numeric else "x_{{{i}{j}}}"
    rows = ["&".join(cell.format(i=i + 1, j=j + 1) for j in range(n)) for i in range(n)]
    return "\\det\\begin{pmatrix}" + "\\\\".join(rows) + "\\end{pmatrix}"


# (response, reference, reward): work sympy takes seconds over is refused before it
# starts (a wrong answer, 0), while the same shapes at ordinary sizes are still read
REFUSED_UP_FRONT: list[tuple[str, str, float]] = [
    ("\\boxed{\\binom{10000}{5000} - \\binom{10000}{5000} + 2}", "2", 0.0),
    ("\\boxed{\\binom{99999}{49999}}", "2", 0.0),
    (f"\\boxed{{{_determinant(5)}}}", "0", 0.0),
    (f"\\boxed{{{_determinant(9)}}}", "0", 0.0),
    ("\\boxed{" + _determinant(6).replace("pmatrix", "vmatrix")[4:] + "}", "0", 0.0),
    ("\\boxed{\\binom{10}{3}}", "120", 1.0),
    ("\\boxed{\\binom{2000}{1} - 1999}", "1", 1.0),
    # only a binomial's own numbers count: a large number beside it is no reason to refuse
    ("\\boxed{2024\\binom{5}{2}}", "20240", 1.0),
    ("\\boxed{{10 \\choose 3} + 2024}", "2144", 1.0),
    (f"\\boxed{{{_determinant(5, numeric=True)}}}", "0", 1.0),
    (f"\\boxed{{{_determinant(2)}}}", "x_{11} x_{22} - x_{12} x_{21}", 1.0),
]


@pytest.mark.parametrize(("response", "reference", "reward"), REFUSED_UP_FRONT)
def test_slow_shapes_are_refused_before_sympy_starts(
    response: str, reference: str, reward: float
) -> None:
    """In this process, no pool deadline: before the guard each of the refused ones kept
    sympy busy for 3 s to minutes (a worker killed at the deadline in the service)."""
    start = time.monotonic()
    [result] = MathVerifier().score([Item(verifier="math", response=response, reference=reference)])
    assert time.monotonic() - start < 2.0
    assert (result.status, result.reward) == (Status.OK, reward)
