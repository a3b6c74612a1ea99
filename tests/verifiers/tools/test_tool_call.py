"""The ``tool_call`` verifier: every call format, partial credit, irrelevance, bad input,
the attacks a policy would try, and the two-golds invariant."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.tools import ToolCallVerifier
from referee.verifiers.tools.matching import standardized
from referee.verifiers.types import Item, Message

WEATHER = {
    "name": "weather.get",
    "description": "Current weather.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "unit": {"type": "string"},
        },
        "required": ["city"],
    },
}
GOLD = {
    "functions": [WEATHER],
    "ground_truth": [
        {"weather.get": {"city": ["Paris", "Paris, France"], "days": [3], "unit": ["", "C"]}}
    ],
}
TWO = {
    "functions": [WEATHER],
    "ground_truth": [
        {"weather.get": {"city": ["Paris"], "days": [1], "unit": [""]}},
        {"weather.get": {"city": ["Rome"], "days": [1], "unit": [""]}},
    ],
}
OPENAI_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "weather_get", "arguments": '{"city": "paris", "days": 3}'},
}


def score(response: Any, reference: Any = GOLD, **params: Any) -> Any:
    [result] = ToolCallVerifier().score(
        [Item(verifier="tool_call", response=response, reference=reference, params=params)]
    )
    return result


# (name, response, reference, params, reward)
CASES: list[tuple[str, Any, Any, dict[str, Any], float]] = [
    ("python", "weather.get(city='Paris', days=3)", GOLD, {}, 1.0),
    (
        "python list, optional given",
        "[weather.get(city='paris, france', days=3, unit='C')]",
        GOLD,
        {},
        1.0,
    ),
    (
        "python in a fence",
        "Sure:\n```python\nweather.get(city='Paris', days=3)\n```",
        GOLD,
        {},
        1.0,
    ),
    (
        "json object",
        '{"name": "weather.get", "arguments": {"city": "Paris", "days": 3}}',
        GOLD,
        {},
        1.0,
    ),
    (
        "json arguments as a string",
        json.dumps(
            [{"name": "weather.get", "arguments": json.dumps({"city": "Paris", "days": 3})}]
        ),
        GOLD,
        {},
        1.0,
    ),
    (
        "hermes",
        "Let me check.\n<tool_call>\n"
        '{"name": "weather.get", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        GOLD,
        {},
        1.0,
    ),
    (
        "openai tool_calls, dots as underscores",
        [
            {"role": "user", "content": "?"},
            {"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]},
        ],
        GOLD,
        {},
        1.0,
    ),
    (
        "underscores refused when asked",
        [{"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]}],
        GOLD,
        {"underscore_dots": False},
        0.0,
    ),
    ("wrong value", "weather.get(city='Lyon', days=3)", GOLD, {}, 0.0),
    ("bool is not an int", "weather.get(city='Paris', days=True)", GOLD, {}, 0.0),
    ("float is not an int", "weather.get(city='Paris', days=3.0)", GOLD, {}, 0.0),
    ("missing required", "weather.get(days=3)", GOLD, {}, 0.0),
    ("missing non-optional", "weather.get(city='Paris')", GOLD, {}, 0.0),
    ("unknown parameter", "weather.get(city='Paris', days=3, debug=True)", GOLD, {}, 0.0),
    ("wrong function", "weather.set(city='Paris', days=3)", GOLD, {}, 0.0),
    ("positional arguments", "weather.get('Paris', 3)", GOLD, {}, 0.0),
    (
        "parallel, any order",
        "[weather.get(city='Rome', days=1), weather.get(city='Paris', days=1)]",
        TWO,
        {},
        1.0,
    ),
    ("parallel, one missing", "weather.get(city='Rome', days=1)", TWO, {}, 0.0),
    (
        "parallel, one missing, partial",
        "weather.get(city='Rome', days=1)",
        TWO,
        {"reward": "partial"},
        0.5,
    ),
    (
        "irrelevance, no call",
        "I cannot look that up.",
        {"functions": [WEATHER], "ground_truth": []},
        {},
        1.0,
    ),
    (
        "irrelevance, a call",
        "weather.get(city='Paris')",
        {"functions": [WEATHER], "ground_truth": []},
        {},
        0.0,
    ),
    *(
        (f"irrelevance, {what}", text, {"functions": [WEATHER], "ground_truth": []}, {}, reward)
        for what, text, reward in [
            ("a call with positional arguments", "weather.get('Paris', 3)", 0.0),
            ("a call with a variable", "weather.get(city=town)", 0.0),
            ("a broken <tool_call> block", "<tool_call>{name: weather.get}</tool_call>", 0.0),
            ("a named JSON call, broken", '{"name": 3}', 0.0),
            ("OpenAI tool_calls, broken", '{"tool_calls": [{"id": 1}]}', 0.0),
            ("a JSON list of numbers", "[1, 2, 3]", 1.0),
            ("a JSON object that is no call", '{"answer": 42}', 1.0),
            ("a call broken off", "weather.get(city=", 1.0),
        ]
    ),
    (
        "plain gold calls",
        "weather.get(city='Paris', days=3)",
        {"calls": [{"name": "weather.get", "arguments": {"city": "Paris", "days": 3}}]},
        {},
        1.0,
    ),
    (
        "no functions described",
        "weather.get(city='paris', days=3)",
        {"ground_truth": GOLD["ground_truth"]},
        {},
        1.0,
    ),
]


@pytest.mark.parametrize(
    ("name", "response", "reference", "params", "reward"), CASES, ids=[c[0] for c in CASES]
)
def test_cases(
    name: str, response: Any, reference: Any, params: dict[str, Any], reward: float
) -> None:
    result = score(response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward), result.details


# Attacks: what a policy would try to score without the right call.
SPRAY = (
    "[weather.get(city='Paris', days=3), weather.get(city='Paris', days=4), "
    "weather.get(city='Lyon', days=3)]"
)
ATTACKS: list[tuple[str, Any, Any, dict[str, Any]]] = [
    (
        "spray every candidate value",
        SPRAY,
        GOLD,
        {},
    ),
    (
        "spray, partial credit",
        SPRAY,
        GOLD,
        {"reward": "partial", "expect": 1 / 3},
    ),
    (
        "one call twice for two golds",
        "[weather.get(city='Paris', days=1), weather.get(city='Paris', days=1)]",
        TWO,
        {},
    ),
    ("code instead of a literal", "weather.get(city=__import__('os').getcwd(), days=3)", GOLD, {}),
    ("a variable instead of a value", "weather.get(city=city, days=3)", GOLD, {}),
    ("NaN days", '{"name": "weather.get", "arguments": {"city": "Paris", "days": NaN}}', GOLD, {}),
    (
        "claims success in prose",
        "The call weather.get(city='Paris', days=3) has been made successfully.",
        GOLD,
        {},
    ),
    ("broken hermes block", "<tool_call>{'name': 'weather.get'}</tool_call>", GOLD, {}),
    ("deep nesting", "weather.get(city=" + "[" * 5000 + "]" * 5000 + ", days=3)", GOLD, {}),
    # a name given twice, the right value last (Python's json and dict keep the last;
    # Python refuses the call, other readers keep the first): the tool may get "Lyon"
    ("a keyword given twice", "weather.get(city='Lyon', city='Paris', days=3)", GOLD, {}),
    (
        "a JSON key given twice",
        '<tool_call>{"name": "weather.get", "arguments": '
        '{"city": "Lyon", "city": "Paris", "days": 3}}</tool_call>',
        GOLD,
        {},
    ),
    (
        "a bare JSON key given twice",
        '{"name": "weather.get", "arguments": {"city": "Lyon", "days": 3, "city": "Paris"}}',
        GOLD,
        {},
    ),
    (
        "a key given twice in OpenAI arguments",
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        **OPENAI_CALL,
                        "function": {
                            "name": "weather_get",
                            "arguments": '{"city": "Lyon", "city": "Paris", "days": 3}',
                        },
                    }
                ],
            }
        ],
        GOLD,
        {},
    ),
    (
        "a call made twice-keyed where none is expected",
        "weather.get(city='Lyon', city='Lyon')",
        {"functions": [WEATHER], "ground_truth": []},
        {},
    ),
    (
        "too many calls",
        "[" + ", ".join(["weather.get(city='Paris', days=3)"] * 100) + "]",
        GOLD,
        {},
    ),
]


@pytest.mark.parametrize(
    ("name", "response", "reference", "params"), ATTACKS, ids=[a[0] for a in ATTACKS]
)
def test_attacks_do_not_score(
    name: str, response: Any, reference: Any, params: dict[str, Any]
) -> None:
    expect = params.pop("expect", 0.0)
    result = score(response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(expect), result.details


def test_a_call_of_many_keywords_is_read_in_one_pass() -> None:
    """Read by ``ast`` (``1_0`` is past the quick reader): checking for a repeated keyword
    must not cost the square of the keywords."""
    keywords = ", ".join(f"k{i}=1_0" for i in range(30_000))
    start = time.monotonic()
    result = score(f"weather.get({keywords}, k0=1)")
    assert time.monotonic() - start < 5.0
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert "'k0' given twice" in result.details["unreadable"]


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        (None, "reference"),
        ({"functions": [WEATHER]}, "exactly one of ground_truth and calls"),
        ({"ground_truth": [{"a": {}, "b": {}}]}, "reference.ground_truth.0"),
        ({"ground_truth": [{"a": {"x": 1}}]}, "reference.ground_truth.0.a.x"),
        ({"calls": [{"name": ""}]}, "reference.calls.0.name"),
    ],
)
def test_bad_references_are_invalid(reference: Any, field: str) -> None:
    result = score("f()", reference)
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message


def test_bad_params_are_invalid() -> None:
    result = score("f()", GOLD, format="yaml")
    assert result.status == Status.INVALID
    assert result.error is not None and "params.format" in result.error.message


values = st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(values, values)
def test_one_answer_is_never_right_for_two_golds(first: str, second: str) -> None:
    """The invariant: a call right for gold A is wrong for a gold B that differs from A
    (as BFCL compares strings)."""
    if standardized(first) == standardized(second):
        return
    golds = [{"ground_truth": [{"f": {"x": [v]}}]} for v in (first, second)]
    response = f"f(x={first!r})"
    rewards = [score(response, gold).reward for gold in golds]
    assert rewards == [1.0, 0.0]


def test_the_response_text_of_a_conversation_is_read_when_it_has_no_tool_calls() -> None:
    response = [Message(role="assistant", content="weather.get(city='Paris', days=3)")]
    assert score(response).reward == 1.0


def test_memory_kept_between_items_is_bounded() -> None:
    """What a client could make a worker keep: long strings and huge references are
    used, not cached (the caches hold short gold strings and ordinary tool lists)."""
    from referee.verifiers.tools import matching

    before = matching._standardized.cache_info().currsize
    matching.standardized("x" * 10_000)
    assert matching._standardized.cache_info().currsize == before
    verifier = ToolCallVerifier()
    huge = {**GOLD, "functions": [{**WEATHER, "description": "d" * 100_000}]}
    [result] = verifier.score([Item(verifier="tool_call", response="f()", reference=huge)])
    assert result.status == Status.OK
    assert len(verifier._references) == 0
    verifier.score([Item(verifier="tool_call", response="f()", reference=GOLD)])
    assert len(verifier._references) == 1


def test_a_reference_given_as_json_text_scores_as_the_object() -> None:
    """verl-style datasets keep ground truth as a string."""
    text = json.dumps(GOLD)
    for response, reward in (("weather.get(city='Paris', days=3)", 1.0), ("f()", 0.0)):
        assert score(response, text).reward == reward
    broken = score("weather.get(city='Paris', days=3)", text[:-1])
    assert broken.status == Status.INVALID and broken.error is not None
    assert "reference" in broken.error.message
