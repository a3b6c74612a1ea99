from __future__ import annotations

import time
from typing import Any

import pytest

from referee.verifiers import Status

CASES: list[tuple[str, Any, dict[str, Any], float]] = [
    # (response, reference, params, expected reward)
    ("Paris", "Paris", {}, 1.0),
    ("  Paris\n", "Paris", {}, 1.0),
    ("  Paris\n", "Paris", {"normalize": {"strip": False}}, 0.0),
    ("paris", "Paris", {}, 0.0),
    ("paris", "PARIS", {"normalize": {"casefold": True}}, 1.0),
    ("Straße", "STRASSE", {"normalize": {"casefold": True}}, 1.0),
    ("\uff21\uff22\uff23", "ABC", {}, 1.0),  # full-width folds under NFKC
    ("\uff21\uff22\uff23", "ABC", {"normalize": {"nfkc": False}}, 0.0),
    ("a  b\n c", "a b c", {"normalize": {"collapse_whitespace": True}}, 1.0),
    ("a  b\n c", "a b c", {}, 0.0),
    ("x", ["y", "x"], {}, 1.0),
    ("x", ["y", "z"], {}, 0.0),
    ("cat", "dog", {"op": "ne"}, 1.0),
    ("cat", "cat", {"op": "ne"}, 0.0),
    ("cat", ["dog", "cat"], {"op": "ne"}, 0.0),
    ("the cat sat", "cat", {"op": "contains"}, 1.0),
    ("the Cat sat", "cat", {"op": "contains"}, 0.0),
    ("the Cat sat", "cAT", {"op": "icontains"}, 1.0),
    ("the dog sat", "cat", {"op": "icontains"}, 0.0),
    ("hello world", "hello", {"op": "startswith"}, 1.0),
    ("say hello", "hello", {"op": "startswith"}, 0.0),
    ("say hello", "hello", {"op": "endswith"}, 1.0),
    ("order 66 now", r"\b\d{2}\b", {"op": "regex"}, 1.0),
    ("order 666 now", r"\b\d{2}\b", {"op": "regex"}, 0.0),
    ("ABC", r"(?i)^abc$", {"op": "regex"}, 1.0),
    ("", "", {}, 1.0),
    ("", "x", {"op": "contains"}, 0.0),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), CASES)
def test_string_cases(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("string", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected
    assert result.verifier == "string@1"


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        (None, {}, "invalid_reference", "reference"),
        (5, {}, "invalid_reference", "reference"),
        ([], {}, "invalid_reference", "reference"),
        ("(", {"op": "regex"}, "invalid_reference", "regex"),
        ("x", {"op": "equals"}, "invalid_params", "params.op"),
        ("x", {"nope": 1}, "invalid_params", "params.nope"),
        ("x", {"normalize": {"lower": True}}, "invalid_params", "params.normalize.lower"),
    ],
)
def test_string_invalid(score, reference, params, code, field) -> None:  # type: ignore[no-untyped-def]
    result = score("string", "x", reference, **params)
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error.code == code
    assert field in result.error.message


def test_a_response_that_makes_a_regex_backtrack_does_not_match(score) -> None:  # type: ignore[no-untyped-def]
    """Neither a hung worker nor a ``timeout`` a trainer would mask: no match, flagged."""
    start = time.monotonic()
    result = score("string", "a" * 60 + "b", r"(a|aa)+$", op="regex", regex_timeout_s=0.2)
    assert time.monotonic() - start < 2.0
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["flags"] == ["pattern_timeout"]
    either = score("string", "a" * 60 + "b", [r"(a|aa)+$", "b$"], op="regex", regex_timeout_s=0.2)
    assert (either.reward, either.details["matched"]) == (1.0, "b$")
    assert "flags" not in either.details  # another pattern matched


def test_chat_response_uses_last_assistant_turn(score) -> None:  # type: ignore[no-untyped-def]
    convo = [
        {"role": "user", "content": "capital?"},
        {"role": "assistant", "content": "Lyon"},
        {"role": "user", "content": "sure?"},
        {"role": "assistant", "content": "Paris"},
    ]
    assert score("string", convo, "Paris").reward == 1.0
