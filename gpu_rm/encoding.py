"""Turn (prompt, response) into the token ids a reward model scores, server-side.

The model's own chat template is applied to the prompt turns plus the response turn, then
the text is tokenised; a BOS the template already wrote and the tokenizer adds again is
stripped. Without a chat template, prompt and response are joined by a blank line.

Truncation policy when prompt + response exceed ``max_length`` tokens:
- ``keep_end`` (default): drop tokens from the start of the prompt (after a leading BOS), so
  the model still sees the end of the response, where its score is read;
- ``keep_start``: drop tokens from the end (what ``truncation=True`` does in Transformers);
- ``reject``: the item is invalid (``too_long``).
Truncation is reported in the item's details. Untrusted text: lone surrogates and other
text that cannot be encoded are rejected naming the field, never passed to the tokenizer.
A response (the policy's output) never writes conversation structure, yet it is scored:
special-token strings at its end are the generation's stop token (OpenRLHF's decoded
queries keep it) and are dropped; any other is read as plain text, broken by a word joiner
(U+2060) so the tokenizer cannot match it, and flagged ``special_token`` (`admit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from referee.gpu_rm.packing import TokenSequence
from referee.gpu_rm.vocabulary import special_strings

Truncation = Literal["keep_end", "keep_start", "reject"]


class Rejected(Exception):
    """The item cannot be scored as given (status ``invalid``); the message names the field."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Unearned(Exception):
    """The response earns nothing a model could read: no step to score, no answer to put
    the reference in. Not the client's fault: the verifier answers ``ok`` with its
    reward's floor, flagged ``code``, where the reward has a floor (else ``invalid``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Encoded:
    """Token ids ready to pack; ``share_key`` is the prompt (items with equal prompts may
    share their common prefix); ``scored``, ``candidates``, ``targets`` and ``top_k`` as
    in `TokenSequence`; ``details`` go into the item's result."""

    ids: list[int]
    share_key: str
    details: dict[str, Any] = field(default_factory=dict)
    scored: tuple[int, ...] = ()
    candidates: tuple[int, ...] = ()
    targets: tuple[int, ...] = ()
    top_k: int = 0

    def sequence(self) -> TokenSequence:
        """What the packer takes."""
        return TokenSequence(self.ids, self.share_key, self.scored, self.candidates,
                             self.targets, self.top_k)  # fmt: skip


Turn = dict[str, str]
WORD_JOINER = "\u2060"


@dataclass(frozen=True)
class Admitted:
    """A policy's text as `ChatEncoder.admit` lets it be scored: ``stop_tokens`` special
    tokens dropped from its end, ``as_text`` distinct special tokens inside it read as text,
    ``dropped`` removed from it (they could not be read as text)."""

    text: str
    stop_tokens: int = 0
    as_text: int = 0
    dropped: int = 0
    """Special tokens that could not be read as text, removed from it."""

    def report(self, details: dict[str, Any]) -> None:
        """Say in an item's ``details`` what was done: the stop tokens dropped, and a
        ``special_token`` flag for special tokens read as text (a response that spells
        them is trying to write structure; the reward is what the text earned)."""
        if self.stop_tokens:
            details["stop_tokens_dropped"] = (
                details.get("stop_tokens_dropped", 0) + self.stop_tokens
            )
        if self.dropped:
            details["special_tokens_dropped"] = self.dropped
        if self.as_text or self.dropped:
            flags = details.setdefault("flags", [])
            if "special_token" not in flags:
                flags.append("special_token")


class ChatEncoder:
    """Applies a tokenizer's chat template and the truncation policy. Thread-safe as far as
    the underlying fast tokenizer is (HF fast tokenizers are, for encoding). The pieces
    (`render`, `tokenize`, `truncate`, `check`) serve the generative and process encoders
    too."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._bos: int | None = tokenizer.bos_token_id
        self._unk: int | None = tokenizer.unk_token_id
        self.specials = special_strings(tokenizer)
        self._longest_first = sorted(self.specials, key=len, reverse=True)
        normalizer = getattr(getattr(tokenizer, "backend_tokenizer", None), "normalizer", None)
        self._normalized: Callable[[str], str] = (
            normalizer.normalize_str if normalizer is not None else str
        )

    def encode(self, prompt: list[Turn], response: list[Turn], truncation: Truncation) -> Encoded:
        """Encode one item; raises `Rejected` for unencodable text or, under ``reject``,
        for an over-long item."""
        for turn in prompt:
            self.check("prompt", turn["content"])
        admitted = [self.admit("response", turn["content"]) for turn in response]
        # an empty response is scored as the model sees it: an empty turn
        response = [{**t, "content": a.text} for t, a in zip(response, admitted, strict=True)]
        ids, _ = self.tokenize(self.render(prompt + response))
        details = self.describe(ids)
        for found in admitted:
            found.report(details)
        share_key = self.render(prompt) if prompt else ""
        ids, _ = self.truncate(ids, truncation, details, prompt=share_key)
        return Encoded(ids=ids, share_key=share_key, details=details)

    def check(self, field_name: str, text: str, untrusted: bool = False) -> None:
        """Raise `Rejected` for text that cannot be encoded or, when ``untrusted`` (text
        whose tokens are reported one by one, such as a log-prob continuation, where a
        changed text would be a changed answer), that spells a special token."""
        _check_encodable(field_name, text)
        if not untrusted:
            return
        for special in self.specials:
            if special in text:
                raise Rejected(
                    "special_token",
                    f"{field_name}: contains the model's special token {special!r} "
                    "(send token ids to score special tokens)",
                )

    def admit(self, field_name: str, text: str) -> Admitted:
        """A policy's ``text`` as it is scored: `Rejected` when it cannot be encoded;
        special-token strings at its end (the generation's stop token) dropped; any other
        broken by a word joiner after its first character, so that it is read as text
        and never as conversation structure (a response closing its own turn to write
        the verdict after it). A special token that cannot be broken (one character, or
        one the normalizer restores) is dropped."""
        _check_encodable(field_name, text)
        stripped, trimmed = 0, text.rstrip()
        while end := next((s for s in self._longest_first if trimmed.endswith(s)), None):
            text = trimmed[: -len(end)]
            stripped, trimmed = stripped + 1, text.rstrip()
        # (a single character cannot be broken: it is dropped below)
        found = [special for special in self._longest_first if len(special) > 1 and special in text]
        for special in found:
            text = text.replace(special, special[0] + WORD_JOINER + special[1:])
        # the text needs a second look only where a special token was in it
        raw = bool(found) or any(len(s) == 1 and s in text for s in self._longest_first)
        left, dropped, most = self._left(text, raw), 0, len(text) + 1
        while left is not None and dropped < most:
            # One character the joiner cannot break, or a token the normalizer puts back:
            # dropped, so that no response writes structure and every one is scored
            # (refusing it was an ``invalid`` a policy could buy by writing the token).
            if left not in text:
                text = self._normalized(text)  # what the tokenizer reads anyway
            text, dropped = text.replace(left, ""), dropped + 1
            left = self._left(text, True)
        if left is not None:  # a normalizer that keeps writing the token back
            message = f"{field_name}: the model's special token {left!r} cannot be removed"
            raise Rejected("special_token", message)
        return Admitted(text, stripped, len(found), dropped)

    def _left(self, text: str, raw: bool) -> str | None:
        """A special token the tokenizer would read in ``text`` (looked for in the text
        itself when ``raw``), or None. A special token marked "normalized" is matched
        after the tokenizer's normalizer, which could drop the joiner (or fold case): it
        is looked for where the tokenizer looks too."""
        normalized = self._normalized(text)
        seen = ([text] if raw else []) + ([normalized] if normalized != text else [])
        return next((s for s in self.specials for t in seen if s in t), None)

    def render(self, turns: list[Turn], generation_prompt: bool = False) -> str:
        """The chat template applied to ``turns`` (joined by blank lines without one)."""
        if getattr(self.tokenizer, "chat_template", None):
            return str(self.tokenizer.apply_chat_template(
                turns, tokenize=False, add_generation_prompt=generation_prompt))  # fmt: skip
        return "\n\n".join(turn["content"] for turn in turns)

    def tokenize(self, text: str, spans: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids of ``text`` with special tokens and, when asked (fast tokenizers only), each
        token's character span; a BOS the template wrote and the tokenizer added again is
        dropped."""
        try:
            found = self.tokenizer(text, add_special_tokens=True, return_offsets_mapping=spans)
        except Exception as exc:  # noqa: BLE001 - tokenizers raise many types on bad text
            raise Rejected("untokenizable", f"response: does not tokenize: {exc}") from None
        ids = list(found["input_ids"])
        spans_found = [(int(a), int(b)) for a, b in found.get("offset_mapping", [])]
        if self._bos is not None and len(ids) > 1 and ids[0] == ids[1] == self._bos:
            return ids[1:], spans_found[1:]
        return ids, spans_found

    def describe(self, ids: list[int]) -> dict[str, Any]:
        """The details every encoding reports: its length and unknown tokens."""
        details: dict[str, Any] = {"tokens": len(ids)}
        if self._unk is not None and (unknown := ids.count(self._unk)):
            details["unknown_tokens"] = unknown
        return details

    def truncate(
        self,
        ids: list[int],
        policy: Truncation,
        details: dict[str, Any],
        scored: tuple[int, ...] = (),
        prompt: str | None = None,
    ) -> tuple[list[int], tuple[int, ...]]:
        """``ids`` cut to ``max_length`` by ``policy`` (recorded in ``details``) and the
        ``scored`` offsets moved with them. Under ``reject``, or when a scored token would
        be cut away: `Unearned` (``too_long``) when the policy's text is what does not
        fit (``prompt``, the rendered text without it, fits), else `Rejected`."""
        if len(ids) <= self.max_length:
            return ids, scored
        dropped = len(ids) - self.max_length
        if policy == "keep_start":
            kept, cut, shift = ids[: self.max_length], self.max_length, 0
            lost = any(offset >= cut for offset in scored)
        else:
            head = 1 if self._bos is not None and ids[0] == self._bos else 0
            kept, shift = ids[:head] + ids[head + dropped :], dropped
            lost = any(head <= offset < head + dropped for offset in scored)
        if policy == "reject" or lost:
            how = "" if policy == "reject" else f" and {policy} would cut a scored token away"
            raise self._too_long(len(ids), how, prompt)
        details["truncated"] = {"policy": policy, "dropped_tokens": dropped}
        details["tokens"] = len(kept)
        return kept, tuple(offset - shift if offset >= shift else offset for offset in scored)

    def _too_long(self, tokens: int, how: str, prompt: str | None) -> Exception:
        """The failure of an item of ``tokens`` that cannot be cut (``how``): the
        response's (`Unearned`, its floor: a policy must not buy an ``invalid`` by writing
        at length) when the text without it, ``prompt``, fits; else the client's."""
        limit = self.max_length
        if prompt is not None:
            alone = len(self.tokenize(prompt)[0])
            if alone < limit:
                message = f"response: {tokens} tokens exceed the model's max_length {limit}{how}"
                return Unearned("too_long", message)
            return Rejected(
                "too_long", f"prompt: {alone} tokens, the model's max_length is {limit}"
            )
        return Rejected("too_long", f"{tokens} tokens exceed the model's max_length {limit}{how}")


def _check_encodable(field_name: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Rejected(
            "untokenizable", f"{field_name}: not valid Unicode text ({exc.reason})"
        ) from None
