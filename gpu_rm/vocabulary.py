"""A tokenizer's vocabulary as the encoders need it: which strings are single tokens (the
candidates a verdict is read from) and which are special tokens (never allowed inside
untrusted text, `gpu_rm.encoding`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def single_tokens(tokenizer: Any, strings: Iterable[str]) -> tuple[int, ...]:
    """The ids of those ``strings`` that are exactly one token (others are skipped: "Yes"
    and " Yes" are both offered because vocabularies differ), without repeats, in order."""
    found: list[int] = []
    for text in strings:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) == 1 and ids[0] not in found and ids[0] != tokenizer.unk_token_id:
            found.append(int(ids[0]))
    return tuple(found)


def special_strings(tokenizer: Any) -> tuple[str, ...]:
    """Every special token's text: the named ones (BOS, EOS, pad...) and added tokens
    marked special (chat markers such as ``<|im_start|>``)."""
    named = set(getattr(tokenizer, "all_special_tokens", ()))
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    named.update(token.content for token in added.values() if getattr(token, "special", False))
    return tuple(sorted(text for text in named if text))
