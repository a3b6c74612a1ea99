from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status

CHARS = {"mode": "linear", "unit": "chars"}
DAPO = {"mode": "dapo", "max_length": 100, "cache": 20}

CASES: list[tuple[Any, dict[str, Any], float]] = [
    # (response, params, expected reward)
    # linear: 1 up to the budget, then down by 1/window per unit, never below floor
    ("", {**CHARS, "budget": 10}, 1.0),
    ("a" * 5, {**CHARS, "budget": 10}, 1.0),
    ("a" * 10, {**CHARS, "budget": 10}, 1.0),
    ("a" * 11, {**CHARS, "budget": 10}, 0.9),
    ("a" * 15, {**CHARS, "budget": 10}, 0.5),  # window defaults to the budget
    ("a" * 20, {**CHARS, "budget": 10}, 0.0),
    ("a" * 30, {**CHARS, "budget": 10}, 0.0),  # floor defaults to 0
    ("a" * 12, {**CHARS, "budget": 10, "window": 4}, 0.5),
    ("a" * 30, {**CHARS, "budget": 10, "floor": -1.0}, -1.0),
    ("a" * 40, {**CHARS, "budget": 10, "floor": -0.5}, -0.5),
    ("a" * 25, {**CHARS, "budget": 10, "floor": -0.5}, -0.5),
    ("a" * 15, {**CHARS, "budget": 10, "floor": 0.8}, 0.8),
    ("日本語", {**CHARS, "budget": 3}, 1.0),  # code points, not bytes
    ("one two  three\nfour", {"mode": "linear", "unit": "words", "budget": 3, "window": 2}, 0.5),
    ("   ", {"mode": "linear", "unit": "words", "budget": 1, "window": 1}, 1.0),
    # tokens: approximated from the text (4 pieces: Hello , world !) unless num_tokens is given
    ("Hello, world!", {"mode": "linear", "budget": 4}, 1.0),
    ("Hello, world!", {"mode": "linear", "budget": 2, "window": 4}, 0.5),
    ("x", {"mode": "linear", "budget": 100, "num_tokens": 150}, 0.5),
    ("x" * 1000, {"mode": "linear", "budget": 100, "num_tokens": 0}, 1.0),
    # dapo: 0 up to max_length - cache, linear to -1 at max_length, -1 beyond
    ("x", {**DAPO, "num_tokens": 0}, 0.0),
    ("x", {**DAPO, "num_tokens": 80}, 0.0),
    ("x", {**DAPO, "num_tokens": 81}, -0.05),
    ("x", {**DAPO, "num_tokens": 90}, -0.5),
    ("x", {**DAPO, "num_tokens": 100}, -1.0),
    ("x", {**DAPO, "num_tokens": 101}, -1.0),
    ("x", {**DAPO, "num_tokens": 10_000}, -1.0),
    ("a" * 95, {**DAPO, "unit": "chars"}, -0.75),
    ("w " * 85, {**DAPO, "unit": "words"}, -0.25),
    # chat responses are measured on the last assistant turn
    (
        [{"role": "assistant", "content": "a" * 50}, {"role": "assistant", "content": "a" * 15}],
        {**CHARS, "budget": 10},
        0.5,
    ),
]


@pytest.mark.parametrize(("response", "params", "expected"), CASES)
def test_length_cases(score, response, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("length", response, "the reference is ignored", **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(expected)
    assert result.verifier == "length@1"


@pytest.mark.parametrize(
    ("response", "params", "details"),
    [
        (
            "Hello, world!",
            {"mode": "linear", "budget": 4},
            {"length": 4, "unit": "tokens", "approximate": True},
        ),
        (
            "Hi",
            {"mode": "linear", "budget": 4, "num_tokens": 7},
            {"length": 7, "approximate": False},
        ),
        (
            "Hi there",
            {"mode": "dapo", "unit": "words", "max_length": 4, "cache": 2},
            {"length": 2, "unit": "words", "mode": "dapo"},
        ),
        ("Hi there", {**CHARS, "budget": 4}, {"length": 8, "unit": "chars", "approximate": False}),
    ],
)
def test_length_details(score, response, params, details) -> None:  # type: ignore[no-untyped-def]
    result = score("length", response, **params)
    assert result.status == Status.OK, result.error
    assert details.items() <= result.details.items()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "params.mode"),
        ({"mode": "cosine", "budget": 1}, "params.mode"),
        ({"mode": "linear"}, "params.budget"),
        ({"mode": "linear", "budget": 0}, "params.budget"),
        ({"mode": "linear", "budget": -5}, "params.budget"),
        ({"mode": "linear", "budget": 10, "window": 0}, "params.window"),
        ({"mode": "linear", "budget": 10, "floor": 2}, "params.floor"),
        ({"mode": "linear", "budget": 10, "floor": float("nan")}, "params.floor"),
        ({"mode": "linear", "budget": 10, "max_length": 20}, "params.max_length"),
        ({"mode": "dapo", "max_length": 100}, "params.cache"),
        ({"mode": "dapo", "cache": 10}, "params.max_length"),
        ({"mode": "dapo", "max_length": 100, "cache": 100}, "params.cache"),
        ({"mode": "dapo", "max_length": 100, "cache": 150}, "params.cache"),
        ({"mode": "dapo", "max_length": 100, "cache": 0}, "params.cache"),
        ({**DAPO, "budget": 10}, "params.budget"),
        ({**DAPO, "floor": -1}, "params.floor"),
        ({**DAPO, "unit": "chars", "num_tokens": 5}, "params.num_tokens"),
        ({**DAPO, "num_tokens": -1}, "params.num_tokens"),
        ({**DAPO, "unit": "bytes"}, "params.unit"),
        ({**DAPO, "tokens": 5}, "params.tokens"),
    ],
)
def test_length_invalid(score, params, field) -> None:  # type: ignore[no-untyped-def]
    result = score("length", "some response", **params)
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error.code == "invalid_params"
    assert field in result.error.message
