"""The ``length`` verifier: a reward (usually added to another) that penalises long responses.

Two shapes:

- ``linear``: 1.0 up to ``budget``, then falling by ``1/window`` per unit, never below ``floor``;
- ``dapo``: DAPO's soft overlong punishment (Yu et al., 2025): 0 up to ``max_length - cache``,
  then falling linearly to -1 at ``max_length``, and -1 beyond.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from referee.verifiers.base import ItemVerifier, Outcome, Params
from referee.verifiers.rules.field_error import field_error
from referee.verifiers.types import Item

Unit = Literal["chars", "words", "tokens"]

# Stand-in for a tokenizer when the client gives no count: each run of word characters and
# each punctuation mark is one token. BPE tokenizers split long or rare words further, so
# this undercounts on such text; trainers should pass ``num_tokens``.
WORD_PIECE = re.compile(r"\w+|[^\w\s]")

# The params each mode reads; setting one that the mode ignores is a client mistake.
MODE_FIELDS: dict[str, tuple[str, ...]] = {
    "linear": ("budget", "window", "floor"),
    "dapo": ("max_length", "cache"),
}
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "linear": ("budget",),
    "dapo": ("max_length", "cache"),
}


class LengthParams(Params):
    mode: Literal["linear", "dapo"]
    """``linear``: budget, window, floor. ``dapo``: max_length, cache."""
    unit: Unit = "tokens"
    """What the lengths below count: Unicode code points, whitespace-separated words, or tokens."""
    num_tokens: int | None = Field(default=None, ge=0)
    """The response's token count, when the client knows it (a trainer does); used as the
    length for unit ``tokens``. Without it, tokens are approximated (see `WORD_PIECE`)."""
    budget: int | None = Field(default=None, gt=0)
    """``linear``: the length up to which the reward is 1.0."""
    window: int | None = Field(default=None, gt=0)
    """``linear``: how far past ``budget`` the reward reaches 0; default ``budget``."""
    floor: float = Field(default=0.0, le=1.0, allow_inf_nan=False)
    """``linear``: the lowest reward; may be negative to keep penalising very long responses."""
    max_length: int | None = Field(default=None, gt=0)
    """``dapo``: L_max, beyond which the reward is -1."""
    cache: int | None = Field(default=None, gt=0)
    """``dapo``: L_cache, the width of the soft-penalty zone just below ``max_length``."""

    @model_validator(mode="after")
    def _check_fields(self) -> LengthParams:
        if self.num_tokens is not None and self.unit != "tokens":
            raise _error("num_tokens", "only used with unit 'tokens'", self.num_tokens)
        for name in REQUIRED_FIELDS[self.mode]:
            if getattr(self, name) is None:
                raise _error(name, f"required for mode {self.mode!r}", None)
        for mode, names in MODE_FIELDS.items():
            for name in names:
                if mode != self.mode and name in self.model_fields_set:
                    message = f"not used by mode {self.mode!r}"
                    raise _error(name, message, getattr(self, name))
        if self.cache is not None and self.max_length is not None and self.cache >= self.max_length:
            raise _error("cache", "must be less than max_length", self.cache)
        return self


def _error(field: str, message: str, value: object) -> ValidationError:
    return field_error("LengthParams", field, message, value)


class LengthVerifier(ItemVerifier[LengthParams]):
    """Reward by response length: in [floor, 1] for ``linear``, in [-1, 0] for ``dapo``.

    ``reference`` is ignored. The length is measured on the response text (the last
    assistant turn of a conversation), or is ``params.num_tokens`` when given.
    ``details``: ``length``, ``unit``, ``approximate`` (true when tokens were estimated
    from the text) and ``mode``.
    """

    name = "length"
    Params = LengthParams
    description = "Length penalty: linear past a budget, or DAPO's soft overlong punishment."

    def check(self, item: Item, params: LengthParams) -> Outcome:
        length, approximate = measure(item.response_text(), params.unit, params.num_tokens)
        if params.mode == "linear":
            assert params.budget is not None  # enforced by LengthParams
            reward = linear_reward(
                length, params.budget, params.window or params.budget, params.floor
            )
        else:
            assert params.max_length is not None and params.cache is not None
            reward = dapo_reward(length, params.max_length, params.cache)
        details = {"length": length, "unit": params.unit, "approximate": approximate}
        return Outcome(reward=reward, details={**details, "mode": params.mode})


def measure(text: str, unit: Unit, num_tokens: int | None = None) -> tuple[int, bool]:
    """The length of ``text`` in ``unit``, and whether it is an estimate."""
    if unit == "chars":
        return len(text), False
    if unit == "words":
        return len(text.split()), False
    if num_tokens is not None:
        return num_tokens, False
    return sum(1 for _ in WORD_PIECE.finditer(text)), True


def linear_reward(length: int, budget: int, window: int, floor: float) -> float:
    """1.0 up to ``budget``, then ``1 - (length - budget) / window``, never below ``floor``."""
    if length <= budget:
        return 1.0
    return max(floor, 1.0 - (length - budget) / window)


def dapo_reward(length: int, max_length: int, cache: int) -> float:
    """DAPO's soft overlong punishment: 0, then linear down to -1 over the last ``cache``."""
    soft_start = max_length - cache
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (soft_start - length) / cache
    return -1.0
