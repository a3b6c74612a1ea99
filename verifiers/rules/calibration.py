"""The ``calibration`` verifier: correctness with a Brier penalty on stated confidence (RLCR)."""

from __future__ import annotations

import regex
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from referee.verifiers.base import ItemVerifier, Outcome, Params
from referee.verifiers.rules.nesting import NestedScorer, SubVerifier, reward_of
from referee.verifiers.types import Item

DEFAULT_CONFIDENCE_PATTERN = r"(?i)<confidence>\s*([^<]*?)\s*</confidence>"
REGEX_TIMEOUT_S = 0.5
"""Budget for searching the response with the (client-supplied) confidence pattern."""

# A probability ("0.85", ".5", "1") or a percentage ("85%", "85.5 %").
_CONFIDENCE = regex.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(%?)")


class CalibrationParams(Params):
    verifier: SubVerifier
    """The nested verifier that decides correctness; its reward is clipped to [0, 1]."""
    confidence_pattern: str = DEFAULT_CONFIDENCE_PATTERN
    """Regex (``regex`` module syntax) with exactly one group capturing the stated
    confidence; the last match in the response counts."""
    missing_confidence: float = Field(default=0.0, ge=0, le=1)
    """Confidence assumed when the response states none, or states one that is not a
    probability in [0, 1] or a percentage in [0%, 100%]."""
    strip_confidence: bool = True
    """Remove every match of ``confidence_pattern`` from the response before the nested
    verifier sees it, so ``<confidence>`` tags do not spoil an exact-match check."""

    @field_validator("confidence_pattern")
    @classmethod
    def _one_group(cls, value: str) -> str:
        try:
            groups = regex.compile(value).groups
        except regex.error as exc:
            raise PydanticCustomError(
                "pattern", "not a valid regex: {reason}", {"reason": str(exc)}
            ) from None
        if groups != 1:
            raise PydanticCustomError(
                "pattern", "needs exactly one group, has {groups}", {"groups": groups}
            )
        return value


class CalibrationVerifier(NestedScorer, ItemVerifier[CalibrationParams]):
    """Reward ``correctness - (confidence - correctness)^2``, in [-1, 1] (RLCR).

    ``correctness`` is the nested verifier's reward clipped to [0, 1]; ``confidence`` is
    parsed from the response (``0.85`` or ``85%``), or ``missing_confidence`` when absent
    or malformed (``details.confidence_missing`` is then true). A confident right answer
    earns 1, an unsure right answer less, a confident wrong answer -1, and an honest
    "confidence 0" on a wrong answer 0. If the nested verifier is not ``ok``, this item
    takes its status with a message naming ``params.verifier``, reward null.
    ``components``: ``correctness``, ``confidence`` and ``brier``.
    """

    name = "calibration"
    Params = CalibrationParams
    description = "Correctness from a nested verifier minus a Brier penalty on stated confidence."

    def check(self, item: Item, params: CalibrationParams) -> Outcome:
        text = item.response_text()
        try:
            stated = _last_group(params.confidence_pattern, text)
            stripped = _strip(params.confidence_pattern, text) if params.strip_confidence else None
        except TimeoutError:
            return _unreadable(params)
        confidence = _parse_confidence(stated)
        spec = params.verifier
        result = self.score_nested(spec, spec.sub_item(item, stripped), "params.verifier")
        correctness = min(max(reward_of(result, "params.verifier"), 0.0), 1.0)
        missing = confidence is None
        confidence = params.missing_confidence if confidence is None else confidence
        brier = (confidence - correctness) ** 2
        return Outcome(
            reward=correctness - brier,
            components={"correctness": correctness, "confidence": confidence, "brier": brier},
            details={
                "confidence_text": stated,
                "confidence_missing": missing,
                "verifier": result.verifier,
                "details": result.details,
            },
        )


def _unreadable(params: CalibrationParams) -> Outcome:
    """A response on which the confidence pattern ran out of time (backtracking that the
    response drives): a wrong answer without a stated confidence, flagged, never the
    ``timeout`` a trainer would mask. An honest confidence of 0 does at least as well."""
    confidence = params.missing_confidence
    brier = confidence**2
    reason = f"confidence_pattern ran past {REGEX_TIMEOUT_S:g} s on this response"
    return Outcome(
        reward=-brier,
        components={"correctness": 0.0, "confidence": confidence, "brier": brier},
        details={"confidence_missing": True, "flags": ["pattern_timeout"], "reason": reason},
    )


def _last_group(pattern: str, text: str) -> str | None:
    """The last match's group; raises TimeoutError past `REGEX_TIMEOUT_S`."""
    matches = list(regex.finditer(pattern, text, timeout=REGEX_TIMEOUT_S))
    if not matches:
        return None
    group = matches[-1].group(1)
    return group if isinstance(group, str) else None


def _strip(pattern: str, text: str) -> str | None:
    """``text`` without the matches of ``pattern``, or None when nothing matched; raises
    TimeoutError past `REGEX_TIMEOUT_S`."""
    stripped, count = regex.subn(pattern, "", text, timeout=REGEX_TIMEOUT_S)
    return stripped if count else None


def _parse_confidence(stated: str | None) -> float | None:
    """A probability in [0, 1] from ``0.85`` or ``85%``; None if absent or out of range."""
    if stated is None:
        return None
    match = _CONFIDENCE.fullmatch(stated.strip())
    if match is None:
        return None
    value = float(match.group(1)) / (100.0 if match.group(2) else 1.0)
    return value if 0.0 <= value <= 1.0 else None
