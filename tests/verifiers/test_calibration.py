from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Item, Registry, Result, Status, score_items
from referee.verifiers.rules.calibration import CalibrationVerifier
from tests.verifiers.test_composite import Scripted

EQ = {"verifier": "string"}


@pytest.fixture
def calibrate(registry: Registry):  # type: ignore[no-untyped-def]
    """Like conftest's ``score``, whose ``verifier`` argument would clash with the param."""

    def run(response: Any, reference: Any, **params: Any) -> Result:
        item = Item(verifier="calibration", response=response, reference=reference, params=params)
        return score_items([item], registry)[0]

    return run


def conf(value: str, answer: str = "Paris") -> str:
    return f"{answer} <confidence>{value}</confidence>"


CASES: list[tuple[str, dict[str, Any], float, float | None]] = [
    # (response, params, expected reward, stated confidence or None if missing/malformed);
    # reference "Paris"; reward = correctness - (confidence - correctness)^2
    (conf("0.8"), {}, 0.96, 0.8),
    (conf("1"), {}, 1.0, 1.0),
    (conf("1.0"), {}, 1.0, 1.0),
    (conf("0"), {}, 0.0, 0.0),
    (conf(".5"), {}, 0.75, 0.5),
    (conf(" 0.5 "), {}, 0.75, 0.5),
    (conf("0.8", "Lyon"), {}, -0.64, 0.8),
    (conf("1", "Lyon"), {}, -1.0, 1.0),
    (conf("0", "Lyon"), {}, 0.0, 0.0),
    (conf("0.3", "Lyon"), {}, -0.09, 0.3),
    (conf("85%"), {}, 0.9775, 0.85),
    (conf("85 %"), {}, 0.9775, 0.85),
    (conf("100%"), {}, 1.0, 1.0),
    (conf("0%", "Lyon"), {}, 0.0, 0.0),
    ("Paris <CONFIDENCE>0.5</Confidence>", {}, 0.75, 0.5),
    ("<confidence>0.1</confidence> Paris <confidence>0.9</confidence>", {}, 0.99, 0.9),
    # missing or malformed: missing_confidence stands in
    ("Paris", {}, 0.0, None),
    ("Paris", {"missing_confidence": 0.5}, 0.75, None),
    ("Lyon", {"missing_confidence": 0.5}, -0.25, None),
    (conf("high"), {}, 0.0, None),
    (conf("1.5"), {}, 0.0, None),
    (conf("150%"), {}, 0.0, None),
    (conf("-0.5"), {}, 0.0, None),
    (conf("0.5.1"), {}, 0.0, None),
    (conf(""), {}, 0.0, None),
    ("Paris <confidence>0.9", {}, 0.0, None),  # unclosed tag
    # the tag is stripped before the nested check, unless told otherwise
    (conf("0.9"), {"strip_confidence": False}, -0.81, 0.9),
    (
        conf("0.9"),
        {
            "strip_confidence": False,
            "verifier": {"verifier": "string", "params": {"op": "contains"}},
        },
        0.99,
        0.9,
    ),
    ("Paris\nConfidence: 0.7", {"confidence_pattern": r"Confidence:\s*(\S+)"}, 0.91, 0.7),
    ("Paris (70% sure)", {"confidence_pattern": r"\((\d+%) sure\)"}, 0.91, 0.7),
    # graded and out-of-range correctness is clipped to [0, 1]
    (
        conf("1"),
        {"verifier": {"verifier": "similarity", "reference": "Pariss"}},
        10 / 11 - (1 / 11) ** 2,
        1.0,
    ),
    (
        conf("1"),
        {
            "verifier": {
                "verifier": "composite",
                "params": {"verifiers": {"a": EQ}, "formula": "a + 1"},
            }
        },
        1.0,
        1.0,
    ),
    (
        conf("0"),
        {
            "verifier": {
                "verifier": "composite",
                "params": {"verifiers": {"a": EQ}, "formula": "a - 2"},
            }
        },
        0.0,
        0.0,
    ),
    # the nested spec's own reference
    (conf("1", "Lyon"), {"verifier": {"verifier": "string", "reference": "Lyon"}}, 1.0, 1.0),
]


@pytest.mark.parametrize(("response", "params", "expected", "stated"), CASES)
def test_calibration_cases(calibrate, response, params, expected, stated) -> None:  # type: ignore[no-untyped-def]
    result = calibrate(response, "Paris", **{"verifier": EQ, **params})
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(expected)
    confidence = params.get("missing_confidence", 0.0) if stated is None else stated
    assert result.components["confidence"] == pytest.approx(confidence)
    correctness = result.components["correctness"]
    assert 0.0 <= correctness <= 1.0
    assert result.components["brier"] == pytest.approx((confidence - correctness) ** 2)
    assert result.details["confidence_missing"] is (stated is None)
    assert result.verifier == "calibration@1"


def test_details_carry_the_nested_result(calibrate) -> None:  # type: ignore[no-untyped-def]
    result = calibrate(conf("85%"), "Paris", verifier=EQ)
    assert result.details["confidence_text"] == "85%"
    assert result.details["verifier"] == "string@1"
    assert result.details["details"] == {"op": "eq", "matched": "Paris"}


def test_chat_response_uses_last_assistant_turn(calibrate) -> None:  # type: ignore[no-untyped-def]
    convo = [{"role": "user", "content": "capital?"}, {"role": "assistant", "content": conf("1")}]
    assert calibrate(convo, "Paris", verifier=EQ).reward == 1.0


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        ("Paris", {}, "invalid_params", "params.verifier"),
        ("Paris", {"verifier": "string"}, "invalid_params", "params.verifier"),
        (
            "Paris",
            {"verifier": {"verifier": "nope"}},
            "unknown_verifier",
            "params.verifier.verifier",
        ),
        ("Paris", {"verifier": {**EQ, "weight": 1}}, "invalid_params", "params.verifier.weight"),
        (
            "Paris",
            {"verifier": EQ, "confidence_pattern": "("},
            "invalid_params",
            "params.confidence_pattern",
        ),
        (
            "Paris",
            {"verifier": EQ, "confidence_pattern": "conf"},
            "invalid_params",
            "params.confidence_pattern",
        ),
        (
            "Paris",
            {"verifier": EQ, "confidence_pattern": "(a)(b)"},
            "invalid_params",
            "params.confidence_pattern",
        ),
        (
            "Paris",
            {"verifier": EQ, "missing_confidence": 1.5},
            "invalid_params",
            "params.missing_confidence",
        ),
        (
            "Paris",
            {"verifier": EQ, "missing_confidence": -0.1},
            "invalid_params",
            "params.missing_confidence",
        ),
        ("Paris", {"verifier": EQ, "threshold": 0.5}, "invalid_params", "params.threshold"),
        (None, {"verifier": EQ}, "invalid_reference", "params.verifier"),
        (
            "Paris",
            {"verifier": {**EQ, "params": {"op": "equals"}}},
            "invalid_params",
            "params.verifier",
        ),
    ],
)
def test_calibration_invalid(calibrate, reference, params, code, field) -> None:  # type: ignore[no-untyped-def]
    result = calibrate(conf("0.5"), reference, **params)
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error.code == code
    assert field in result.error.message


def test_a_nested_pattern_the_response_makes_backtrack_is_no_match(calibrate) -> None:  # type: ignore[no-untyped-def]
    spec = {**EQ, "reference": r"(a|aa)+$", "params": {"op": "regex", "regex_timeout_s": 0.1}}
    result = calibrate("a" * 60 + "b", "Paris", verifier=spec)
    assert (result.status, result.components["correctness"]) == (Status.OK, 0.0)
    assert result.details["details"]["flags"] == ["pattern_timeout"]


def test_a_response_that_makes_the_confidence_pattern_backtrack_is_wrong(calibrate) -> None:  # type: ignore[no-untyped-def]
    """Not a ``timeout`` a trainer would mask: wrong, no stated confidence, flagged; an
    honest confidence of 0 on a wrong answer (reward 0) does at least as well."""
    result = calibrate("a" * 60 + "b", "x", verifier=EQ, confidence_pattern=r"(a|aa)+$")
    assert result.status == Status.OK
    assert result.components["correctness"] == 0.0
    assert result.reward == -(result.components["confidence"] ** 2) <= 0.0
    assert result.details["flags"] == ["pattern_timeout"]


@pytest.mark.parametrize(
    ("status", "expected"),
    [("error", Status.ERROR), ("timeout", Status.TIMEOUT), ("invalid", Status.INVALID)],
)
def test_nested_failure_is_never_a_zero(status: str, expected: Status) -> None:
    registry = Registry()
    registry.register(Scripted())
    registry.register(CalibrationVerifier())
    spec = {"verifier": "scripted", "params": {"status": status}}
    item = Item(verifier="calibration", response=conf("1"), params={"verifier": spec})
    result = score_items([item], registry)[0]
    assert result.status == expected
    assert result.reward is None
    assert result.error is not None
    assert "params.verifier: scripted@1" in result.error.message
