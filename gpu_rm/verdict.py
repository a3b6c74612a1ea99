"""A verdict read from a language model's next-token distribution over a few tokens.

Every generative reading is an expectation over a candidate token set: P(yes | yes or no)
gives "yes" tokens the value 1 and "no" tokens 0; G-Eval's expected score gives each
score token its number; a pairwise preference gives the first response's letter 1. The
kernel returns log-probabilities over the candidates (normalised within the set), so the
reward is ``sum(exp(logprob) * value)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.gpu_rm.vocabulary import single_tokens


@dataclass(frozen=True)
class Verdict:
    """Candidate token ids and the value each stands for."""

    candidates: tuple[int, ...]
    values: tuple[float, ...]

    def expectation(self, logprobs: Sequence[float]) -> float:
        """The expected value under the candidates' probabilities (which sum to 1)."""
        return sum(math.exp(lp) * v for lp, v in zip(logprobs, self.values, strict=True))

    def probabilities(self, logprobs: Sequence[float]) -> list[float]:
        """Each candidate's probability within the set."""
        return [math.exp(lp) for lp in logprobs]


def verdict_of(tokenizer: Any, groups: Sequence[tuple[Sequence[str], float]]) -> Verdict | None:
    """The verdict whose candidates are the single-token strings of each group, valued by
    the group's number; None when some group has no single-token string (that reading is
    impossible with this vocabulary). A token in two groups keeps its first value."""
    candidates: list[int] = []
    values: list[float] = []
    for strings, value in groups:
        ids = [i for i in single_tokens(tokenizer, strings) if i not in candidates]
        if not ids:
            return None
        candidates += ids
        values += [value] * len(ids)
    return Verdict(tuple(candidates), tuple(values))
