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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Truncation = Literal["keep_end", "keep_start", "reject"]


class Rejected(Exception):
    """The item cannot be scored as given (status ``invalid``); the message names the field."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Encoded:
    """Token ids ready to pack; ``share_key`` is the prompt (items with equal prompts may
    share their common prefix); ``details`` go into the item's result."""

    ids: list[int]
    share_key: str
    details: dict[str, Any] = field(default_factory=dict)


Turn = dict[str, str]


class ChatEncoder:
    """Applies a tokenizer's chat template and the truncation policy. Thread-safe as far as
    the underlying fast tokenizer is (HF fast tokenizers are, for encoding)."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self._tokenizer = tokenizer
        self.max_length = max_length
        self._bos: int | None = tokenizer.bos_token_id
        self._unk: int | None = tokenizer.unk_token_id

    def encode(self, prompt: list[Turn], response: list[Turn], truncation: Truncation) -> Encoded:
        """Encode one item; raises `Rejected` for empty or unencodable text or, under
        ``reject``, for an over-long item."""
        if not any(turn["content"].strip() for turn in response):
            raise Rejected("empty_response", "response: is empty")
        for name, turns in (("prompt", prompt), ("response", response)):
            for turn in turns:
                _check_encodable(name, turn["content"])
        text = self._render(prompt + response)
        try:
            ids: list[int] = list(self._tokenizer(text, add_special_tokens=True)["input_ids"])
        except Exception as exc:  # noqa: BLE001 - tokenizers raise many types on bad text
            raise Rejected("untokenizable", f"response: does not tokenize: {exc}") from None
        if self._bos is not None and len(ids) > 1 and ids[0] == ids[1] == self._bos:
            ids = ids[1:]
        details: dict[str, Any] = {"tokens": len(ids)}
        if self._unk is not None and (unknown := ids.count(self._unk)):
            details["unknown_tokens"] = unknown
        if len(ids) > self.max_length:
            ids = self._truncate(ids, truncation, details)
        return Encoded(ids=ids, share_key=self._render(prompt) if prompt else "", details=details)

    def _render(self, turns: list[Turn]) -> str:
        if getattr(self._tokenizer, "chat_template", None):
            return str(self._tokenizer.apply_chat_template(turns, tokenize=False))
        return "\n\n".join(turn["content"] for turn in turns)

    def _truncate(self, ids: list[int], policy: Truncation, details: dict[str, Any]) -> list[int]:
        dropped = len(ids) - self.max_length
        if policy == "reject":
            raise Rejected(
                "too_long",
                f"response: {len(ids)} tokens exceed the model's max_length {self.max_length}",
            )
        if policy == "keep_start":
            kept = ids[: self.max_length]
        else:
            head = 1 if self._bos is not None and ids[0] == self._bos else 0
            kept = ids[:head] + ids[head + dropped :]
        details["truncated"] = {"policy": policy, "dropped_tokens": dropped}
        details["tokens"] = len(kept)
        return kept


def _check_encodable(field_name: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Rejected(
            "untokenizable", f"{field_name}: not valid Unicode text ({exc.reason})"
        ) from None
