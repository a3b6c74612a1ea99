"""Where the response starts in a query whose prompt may have been cut from the left.

OpenRLHF sends ``query`` = the decoded tokens of prompt + response, but when the prompt is
longer than its budget it keeps only the prompt's *last* tokens, so the query starts with
a suffix of ``prompts[i]``, not the whole prompt. Scoring the whole query would then score
prompt text (a ``\\boxed{4}`` in a few-shot example earns a reward for "I don't know"), so
the response is what follows the longest suffix of the prompt that starts the query, and
a query in which no such suffix can be found is not scored at all.

Decoding a token slice can differ from the text at the cut: a leading space dropped
(SentencePiece) or a split multi-byte character decoded as U+FFFD; both are skipped. At
the prompt's end, a trailing space the decoder's clean-up merged away is allowed for.
"""

from __future__ import annotations

MIN_OVERLAP = 16
"""Characters of the prompt that must start the query (or the whole prompt when it is
shorter): a shorter match could be chance, not the prompt."""


def response_of(query: str, prompt: str) -> str | None:
    """The response part of ``query``, or None when no suffix of ``prompt`` (of at least
    `MIN_OVERLAP` characters) starts it. A prompt's trailing whitespace may be missing
    from the query: decoding prompt and response together with Transformers' clean-up
    of tokenization spaces (WordPiece tokenizers; BPE ones too before Transformers 5)
    turns ``"Answer: " + ".5"`` into ``"Answer:.5"`` (a space before punctuation or
    ``n't`` is dropped), and refusing that refused OpenRLHF's whole batch over what one
    response began with."""
    found = _after(query, prompt)
    trimmed = prompt.rstrip()
    if found is None and trimmed != prompt:
        found = _after(query, trimmed)
    return found


def _after(query: str, prompt: str) -> str | None:
    """`response_of` for a prompt taken as it is."""
    if query.startswith(prompt):
        return query[len(prompt) :]
    head = query.lstrip("\ufffd").lstrip()
    overlap = _longest_overlap(head, prompt)
    if overlap < min(MIN_OVERLAP, len(prompt.strip())) or overlap == 0:
        return None
    return head[overlap:]


def _longest_overlap(head: str, prompt: str) -> int:
    """The length of the longest prefix of ``head`` that is a suffix of ``prompt``
    (prefix function over ``head`` + separator + ``prompt``, linear time)."""
    text = head[: len(prompt)] + "\x00" + prompt
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        border[i] = k + 1 if text[i] == text[k] else 0
    return border[-1]
