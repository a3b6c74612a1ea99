"""Text spans in token sequences: where a reference answer goes in a response, and which
tokens a span of characters occupies once the whole text is tokenised.

`place_reference` puts the reference where the response's own final answer was (inside
the last ``\\boxed{...}``, inside the last ``<answer>...</answer>``) or after it (an
``append`` template such as "The answer is "). `tokens_of_span` maps a character span to
the tokens that hold any of it: a token that merges the span's first or last characters
with neighbouring text belongs to the span (its probability is the model's reading of
that text in context), and the merge is reported, never hidden by a shifted span.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.gpu_rm.encoding import Rejected, Unearned

Placement = Literal["boxed", "answer_tag", "append"]
_BOX = "\\boxed{"


@dataclass(frozen=True)
class Placed:
    """The response with the reference in place: ``text[start:end]`` is the reference;
    ``answer`` is the text of the response's own answer it replaced ('' when appended);
    ``bare`` is the reference with its wrapper alone (the debiasing text)."""

    text: str
    start: int
    end: int
    answer: str
    bare: str
    bare_start: int


def place_reference(response: str, reference: str, how: Placement, template: str) -> Placed:
    """The response with ``reference`` placed ``how``; `Unearned` naming the response
    when it has no answer to replace."""
    if how == "append":
        prefix = response + template
        bare_start = len(template)
        return Placed(prefix + reference, len(prefix), len(prefix) + len(reference), "",
                      template + reference, bare_start)  # fmt: skip
    if how == "boxed":
        start = response.rfind(_BOX)
        if start < 0:
            raise Unearned("answer_not_found", "response: has no \\boxed{} to put the reference in")
        inner = start + len(_BOX)
        end = _closing_brace(response, inner)
        opener, closer = _BOX, "}"
    else:
        opener, closer = "<answer>", "</answer>"
        start = response.rfind(opener)
        end = response.find(closer, start + len(opener)) if start >= 0 else -1
        if start < 0 or end < 0:
            raise Unearned("answer_not_found", "response: has no <answer>...</answer> to put "
                           "the reference in")  # fmt: skip
        inner = start + len(opener)
    text = response[:inner] + reference + response[end:]
    return Placed(text, inner, inner + len(reference), response[inner:end],
                  opener + reference + closer, len(opener))  # fmt: skip


def _closing_brace(text: str, inner: int) -> int:
    """The index of the brace closing the group opened just before ``inner``."""
    depth = 1
    for index in range(inner, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    raise Unearned("answer_not_found", "response: its last \\boxed{ is never closed")


@dataclass(frozen=True)
class TokenSpan:
    """Tokens ``first`` to ``last`` (inclusive) hold a character span; ``merged_start`` /
    ``merged_end`` say whether the first / last of them also holds text outside it."""

    first: int
    last: int
    merged_start: bool
    merged_end: bool


def tokens_of_span(spans: list[tuple[int, int]], start: int, end: int) -> TokenSpan:
    """The tokens (by their character ``spans``) holding any of ``[start, end)``;
    `Rejected` when none does (an empty span, or text the tokenizer dropped)."""
    hit = [token for token, (a, b) in enumerate(spans) if b > a and a < end and b > start]
    if start >= end or not hit:
        raise Rejected("reference_not_found", "reference: occupies no token of the sequence")
    first, last = hit[0], hit[-1]
    return TokenSpan(first, last, spans[first][0] < start, spans[last][1] > end)
