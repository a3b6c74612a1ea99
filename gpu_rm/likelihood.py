"""Turn an item into a likelihood reading: the token ids, the positions whose next-token
distribution is read, and the tokens read there (`Encoded.targets`).

Two readings:

- `LikelihoodEncoder.reference` (the ``refprob`` verifier): the reference answer placed in
  the response (`gpu_rm.spans.place_reference`), the conversation rendered through the
  chat template and tokenised whole; the reference's tokens are located by character
  offsets (`tokens_of_span`), and each is read at the position before it. With
  ``debias``, a second sequence holds the reference in its wrapper alone (no reasoning).
- `LikelihoodEncoder.continuation` (``/v1/logprobs``): a prompt and a continuation, as
  text (a string prompt is joined to the continuation as they are; chat turns go through
  the chat template with its generation prompt) or as token ids (used as given).

Truncation never cuts a read token or its position: such an item is ``too_long``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.gpu_rm.encoding import ChatEncoder, Encoded, Rejected, Truncation, Turn, Unearned
from referee.gpu_rm.errors import ModelMisconfigured
from referee.gpu_rm.spans import Placement, place_reference, tokens_of_span


class LikelihoodEncoder:
    """Encodes likelihood readings for one causal LM."""

    def __init__(self, chat: ChatEncoder, vocab_size: int) -> None:
        self.chat = chat
        self.vocab_size = vocab_size

    def reference(
        self,
        prompt: list[Turn],
        response: str,
        reference: str,
        placement: tuple[Placement, str],
        truncation: Truncation,
        debias: bool,
        empty_ok: bool = False,
    ) -> list[Encoded]:
        """The reasoning's sequence, and the bare one when ``debias``; `Unearned` for an
        empty response (unless ``empty_ok``) or one with no answer to replace; `Rejected`
        for an empty reference or a truncation that would cut the reference (special
        tokens in the response are read as text: `ChatEncoder.admit`)."""
        if not reference.strip():
            raise Rejected("empty_reference", "reference: is empty")
        for turn in prompt:
            self.chat.check("prompt", turn["content"])
        admitted = self.chat.admit("response", response)
        response = admitted.text
        if not response.strip() and not empty_ok:
            raise Unearned("empty_response", "response: is empty")
        self.chat.check("reference", reference)
        placed = place_reference(response, reference, *placement)
        # the reasoning is what does not fit when the bare sequence does (`truncate`)
        found = [
            self._span(prompt, placed.text, (placed.start, placed.end), truncation, placed.bare)
        ]
        found[0].details["replaced_answer"] = placed.answer[:200]
        admitted.report(found[0].details)
        if debias:
            end = placed.bare_start + len(reference)
            found.append(self._span(prompt, placed.bare, (placed.bare_start, end), truncation))
        return found

    def continuation(
        self,
        prompt: list[Turn] | str | Sequence[int],
        continuation: str | Sequence[int],
        truncation: Truncation,
        top_k: int,
    ) -> Encoded:
        """Every continuation token read at the position before it; `Rejected` for an
        empty continuation, ids outside the vocabulary, or a cut continuation."""
        if isinstance(continuation, str):
            encoded = self._text_continuation(prompt, continuation, truncation)
        else:
            encoded = self._id_continuation(prompt, continuation, truncation)
        return Encoded(encoded.ids, encoded.share_key, encoded.details, encoded.scored,
                       targets=encoded.targets, top_k=top_k)  # fmt: skip

    def _text_continuation(self, prompt: Any, continuation: str, truncation: Truncation) -> Encoded:
        if not isinstance(prompt, list | str):
            raise Rejected("invalid_params", "prompt: token ids need continuation ids too")
        if not continuation:
            raise Rejected("empty_response", "continuation: is empty")
        self.chat.check("continuation", continuation, untrusted=True)
        if isinstance(prompt, str):
            self.chat.check("prompt", prompt)
            head = prompt
        else:
            for turn in prompt:
                self.chat.check("prompt", turn["content"])
            head = self.chat.render(prompt, generation_prompt=True)
        text = head + continuation
        ids, spans = self.chat.tokenize(text, spans=True)
        return self._read(ids, spans, (len(head), len(text)), head, truncation)

    def _id_continuation(
        self, prompt: Any, continuation: Sequence[int], truncation: Truncation
    ) -> Encoded:
        if isinstance(prompt, str) or (prompt and not isinstance(prompt[0], int)):
            raise Rejected("invalid_params", "prompt: continuation ids need prompt ids too")
        ids = [*prompt, *continuation]
        if not continuation or not prompt:
            raise Rejected("empty_response", "prompt and continuation: need at least one id each")
        if any(not 0 <= token < self.vocab_size for token in ids):
            raise Rejected("invalid_params", f"token ids: must be within 0..{self.vocab_size - 1}")
        details = self.chat.describe(ids)
        kept, scored, targets = self._cut(ids, (len(prompt), len(ids) - 1), truncation, details)
        return Encoded(kept, str(list(prompt)), details, scored, targets=targets)

    def _span(
        self,
        prompt: list[Turn],
        text: str,
        read: tuple[int, int],
        truncation: Truncation,
        bare: str | None = None,
    ) -> Encoded:
        """Render ``prompt`` + the assistant's ``text`` and read its ``[start, end)``
        (``read``); ``bare``: the assistant's text without what the policy wrote, which
        must fit for an over-long item to be the policy's doing (`Unearned`)."""
        start, end = read
        rendered = self.chat.render([*prompt, {"role": "assistant", "content": text}])
        at = rendered.rfind(text)
        if at < 0:
            raise ModelMisconfigured("the model's chat template changes the assistant's "
                                     "text, so the reference cannot be located in it")  # fmt: skip
        ids, spans = self.chat.tokenize(rendered, spans=True)
        share_key = self.chat.render(prompt) if prompt else ""
        without = None  # rendered only for an item too long: off the hot path
        if bare is not None and len(ids) > self.chat.max_length:
            without = self.chat.render([*prompt, {"role": "assistant", "content": bare}])
        return self._read(ids, spans, (at + start, at + end), share_key, truncation, without)

    def _read(
        self,
        ids: list[int],
        spans: list[tuple[int, int]],
        read: tuple[int, int],
        share_key: str,
        truncation: Truncation,
        without: str | None = None,
    ) -> Encoded:
        """Read the tokens of characters ``read`` of the text ``ids`` encode (`_cut`)."""
        span = tokens_of_span(spans, *read)
        if span.first == 0:
            raise Rejected("invalid_params", "prompt: is empty (the first token has no "
                           "position before it to be read at)")  # fmt: skip
        merged = {"start": span.merged_start, "end": span.merged_end}
        details = {**self.chat.describe(ids), "read_tokens": span.last - span.first + 1,
                   "merged_boundary": merged}  # fmt: skip
        kept, scored, targets = self._cut(
            ids, (span.first, span.last), truncation, details, without
        )
        return Encoded(kept, share_key, details, scored, targets=targets)

    def _cut(
        self,
        ids: list[int],
        read: tuple[int, int],
        truncation: Truncation,
        details: Any,
        without: str | None = None,
    ) -> tuple[list[int], tuple[int, ...], tuple[int, ...]]:
        """Truncate ``ids`` keeping tokens ``first..last`` (``read``, the read ones) and
        the position before each; returns the ids, the positions and the tokens read
        there. ``without``: the text without what the policy wrote (`ChatEncoder.truncate`)."""
        first, last = read
        needed = tuple(range(first - 1, last + 1))
        kept, offsets = self.chat.truncate(ids, truncation, details, needed, without)
        scored = offsets[:-1]
        return kept, scored, tuple(kept[offset + 1] for offset in scored)
