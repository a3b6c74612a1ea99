"""Reading a judge's reply: JSON first, then a tolerant fallback.

Judges are asked for one JSON object, but real replies wrap it in prose or code fences,
leave trailing commas, or answer ``score: 7`` in plain text. `parse_reply` accepts all of
these and returns one `SlotValue` per expected slot, or raises `ReplyUnparsable` saying what
is wrong, which becomes the re-ask message. A reply is untrusted text: nothing in it is
evaluated, and values outside the slot's scale are rejected, never clamped.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

VALUE_KEYS = ("score", "verdict", "value", "rating", "winner")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_DECODER = json.JSONDecoder()


class ReplyUnparsable(Exception):
    """The reply does not contain a usable verdict; the message says why (for a re-ask)."""


@dataclass(frozen=True)
class Slot:
    """One value the judge must give: a criterion id, or ``score``/``winner``.

    ``scale`` maps accepted answers (lower case) to raw values; ``bounds``, when set, also
    accepts any number within them (a judge answering 3.5 on a 1..5 scale).
    """

    key: str
    scale: dict[str, float]
    bounds: tuple[float, float] | None = None


@dataclass(frozen=True)
class ReplySpec:
    """What a reply must hold. ``listed`` replies are ``{"criteria": [{"id", "reason",
    "score"}]}`` (or a bare list, or a map id -> score); the others are flat objects
    ``{"reason", <value_key>}`` with a single slot."""

    slots: tuple[Slot, ...]
    listed: bool
    value_key: str = "score"
    aliases: tuple[str, ...] = ()
    """Other keys a flat reply may hold its value under (``{"result": 0.7}``), tried after
    ``value_key``; for prompts written by callers, whose wording referee does not control."""

    def flat_keys(self) -> tuple[str, ...]:
        """The keys a flat reply's value is looked up under, in order."""
        return (self.value_key, *self.aliases)


@dataclass(frozen=True)
class SlotValue:
    """A slot's raw value, the judge's reason, and where the value starts in the reply text
    (None when it could not be located; logprob scoring then uses the sampled value)."""

    value: float
    reason: str
    offset: int | None


def parse_reply(text: str, spec: ReplySpec) -> dict[str, SlotValue]:
    """Verdicts by slot key; raises `ReplyUnparsable` when any slot is missing or bad."""
    problem = "no JSON object found"
    for candidate in _json_candidates(text):
        try:
            raw = _values(candidate, spec)
        except ReplyUnparsable as exc:
            problem = str(exc)
            continue
        return _verdicts(text, spec, raw)
    raw_text = _values_from_text(text, spec)
    if raw_text is None:
        raise ReplyUnparsable(problem)
    return _verdicts(text, spec, raw_text)


def _verdicts(text: str, spec: ReplySpec, raw: dict[str, tuple[Any, str]]) -> dict[str, SlotValue]:
    return {
        slot.key: SlotValue(
            value=_coerce(raw[slot.key][0], slot),
            reason=raw[slot.key][1],
            offset=locate_value(text, slot.key, spec),
        )
        for slot in spec.slots
    }


def _json_candidates(text: str) -> Iterator[Any]:
    """Every JSON value the text plausibly holds, most likely first."""
    sources = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for source in sources:
        for variant in (source, _TRAILING_COMMA.sub(r"\1", source)):
            with contextlib.suppress(ValueError, RecursionError):
                yield json.loads(variant)
    for variant in (text, _TRAILING_COMMA.sub(r"\1", text)):
        for match in re.finditer(r"[{\[]", variant):
            try:
                yield _DECODER.raw_decode(variant, match.start())[0]
            except ValueError:
                continue
            except RecursionError:  # nested past what the reader takes: no verdict in it
                break


def _values(obj: Any, spec: ReplySpec) -> dict[str, tuple[Any, str]]:
    """Raw value and reason per slot key from a decoded JSON value."""
    if not spec.listed:
        key = next((k for k in spec.flat_keys() if isinstance(obj, dict) and k in obj), None)
        if key is not None:
            return {spec.slots[0].key: (obj[key], str(obj.get("reason", "")))}
        if isinstance(obj, int | float | str) and not isinstance(obj, bool):
            return {spec.slots[0].key: (obj, "")}
        raise ReplyUnparsable(f'expected an object with "{spec.value_key}"')
    entries = _entries(obj)
    missing = [slot.key for slot in spec.slots if slot.key not in entries]
    if missing:
        raise ReplyUnparsable(f"no score for criteria {', '.join(missing)}")
    return {slot.key: entries[slot.key] for slot in spec.slots}


def _entries(obj: Any) -> dict[str, tuple[Any, str]]:
    if isinstance(obj, dict) and isinstance(obj.get("criteria"), list | dict):
        obj = obj["criteria"]
    if isinstance(obj, dict) and "id" in obj:
        obj = [obj]
    entries: dict[str, tuple[Any, str]] = {}
    if isinstance(obj, list):
        for entry in obj:
            if isinstance(entry, dict) and "id" in entry:
                value = next((entry[k] for k in VALUE_KEYS if k in entry), None)
                entries[str(entry["id"])] = (value, str(entry.get("reason", "")))
    elif isinstance(obj, dict):
        for key, entry in obj.items():
            if isinstance(entry, dict):
                value = next((entry[k] for k in VALUE_KEYS if k in entry), None)
                entries[str(key)] = (value, str(entry.get("reason", "")))
            else:
                entries[str(key)] = (entry, "")
    return entries


def _values_from_text(text: str, spec: ReplySpec) -> dict[str, tuple[Any, str]] | None:
    """Last resort for prose replies: ``<key>: <value>`` per slot, or a bare value."""
    found: dict[str, tuple[Any, str]] = {}
    for slot in spec.slots:
        keys = (slot.key,) if spec.listed else spec.flat_keys()
        names = "|".join(re.escape(key) for key in keys)
        match = re.search(
            rf"\b(?:{names})\b\W{{0,5}}?[:=]\s*\**\"?([A-Za-z0-9.\-]+)", text, re.IGNORECASE
        )
        if match is None and not spec.listed and text.strip().lower() in slot.scale:
            found[slot.key] = (text.strip(), "")
            continue
        if match is None:
            return None
        found[slot.key] = (match.group(1), "")
    return found


def _coerce(raw: Any, slot: Slot) -> float:
    """Raw JSON or text value -> the slot's raw value; raises `ReplyUnparsable`."""
    token: str
    if isinstance(raw, bool):
        token = "1" if raw else "0"
    elif isinstance(raw, int | float):
        if slot.bounds and slot.bounds[0] <= raw <= slot.bounds[1]:
            return float(raw)
        token = str(int(raw)) if float(raw).is_integer() else str(raw)
    elif isinstance(raw, str):
        token = raw.strip().strip("\"'").strip().lower()
        try:
            return _coerce(float(token), slot)
        except ValueError:
            pass
    else:
        token = repr(raw)
    if token in slot.scale:
        return slot.scale[token]
    allowed = ", ".join(sorted({k for k in slot.scale if not k.isalpha()} or slot.scale))
    if not allowed and slot.bounds is not None:  # a pure range: caller-written prompts
        allowed = f"a number from {slot.bounds[0]:g} to {slot.bounds[1]:g}"
    raise ReplyUnparsable(f"{slot.key}: {raw!r} is not an allowed score ({allowed})")


def locate_value(text: str, key: str, spec: ReplySpec) -> int | None:
    """Offset in ``text`` where the value for slot ``key`` starts, or None.

    Used only to find the token whose alternatives logprob scoring weighs, so a wrong
    guess costs precision, never correctness: the caller checks that token's alternatives.
    """
    value_keys = "|".join(VALUE_KEYS)
    value = re.compile(rf'"(?:{value_keys})"\s*:\s*"?')
    if not spec.listed:
        match = re.compile(rf'"{re.escape(spec.value_key)}"\s*:\s*"?').search(text)
        return match.end() if match else None
    named = re.search(rf'"{re.escape(key)}"', text)
    if named is None:
        return None
    direct = re.compile(r'\s*:\s*"?(?=[\w\-])').match(text, named.end())
    if direct is not None:
        return direct.end()
    after = value.search(text, named.end())
    return after.end() if after else None
