"""G-Eval style scores: the probability-weighted mean over the allowed score tokens.

With ``top_logprobs`` the judge's belief is a distribution, not one sampled token: at the
token where a score's value starts, every alternative that is an allowed answer on the
slot's scale contributes ``p * value``; the result is divided by the allowed mass, so
probability spent on tokens off the scale is ignored. Limitation: a value spread over
several tokens (``10`` tokenised as ``1`` ``0``) is read from its first token only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from referee.verifiers.judge.replies import Slot

_NOISE = ' \t\n":,}'


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token and its most likely alternatives (including itself)."""

    token: str
    top: tuple[tuple[str, float], ...]


def parse_tokens(raw: object) -> list[TokenLogprob] | None:
    """``choice.logprobs.content`` of a chat completion -> tokens; None when absent/odd."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    tokens: list[TokenLogprob] = []
    for entry in raw["content"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        alternatives = entry.get("top_logprobs") or [
            {"token": entry["token"], "logprob": entry.get("logprob", 0.0)}
        ]
        top = tuple(
            (str(alt["token"]), float(alt["logprob"]))
            for alt in alternatives
            if isinstance(alt, dict) and "token" in alt and "logprob" in alt
        )
        tokens.append(TokenLogprob(token=entry["token"], top=top))
    return tokens


def expected_value(
    tokens: Sequence[TokenLogprob], text: str, offset: int, slot: Slot
) -> float | None:
    """Probability-weighted mean of ``slot``'s value at character ``offset`` of ``text``.

    None when the tokens do not spell ``text``, no token covers ``offset``, or no
    alternative there is on the slot's scale: the caller then keeps the sampled value.
    """
    if "".join(t.token for t in tokens) != text:
        return None
    start = 0
    for token in tokens:
        if start + len(token.token) > offset:
            return _weigh(token, slot)
        start += len(token.token)
    return None


def _weigh(token: TokenLogprob, slot: Slot) -> float | None:
    mass = 0.0
    total = 0.0
    for alternative, logprob in token.top:
        value = slot.scale.get(alternative.strip(_NOISE).lower())
        if value is None or not math.isfinite(logprob):
            continue
        p = math.exp(logprob)
        mass += p
        total += p * value
    return total / mass if mass > 0 else None
