from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pytest

from referee.verifiers import (
    Item,
    ItemVerifier,
    Outcome,
    Params,
    Registry,
    Result,
    Status,
    score_items,
)
from referee.verifiers.base import ItemError, ItemInvalid, ItemTimeout
from referee.verifiers.rules.composite import CompositeVerifier
from referee.verifiers.rules.nesting import MAX_NESTING
from referee.verifiers.rules.string_match import StringVerifier
from referee.verifiers.types import Pool

EQ = {"verifier": "string"}
LYON = {"verifier": "string", "reference": "Lyon"}

CASES: list[tuple[dict[str, Any], float, dict[str, float]]] = [
    # (params, expected reward, expected components); response and reference are "Paris"
    ({"verifiers": {"a": EQ}}, 1.0, {"a": 1.0}),
    ({"verifiers": {"a": EQ, "b": LYON}}, 0.5, {"a": 1.0, "b": 0.0}),  # default: the mean
    ({"verifiers": {"a": EQ, "b": LYON, "c": EQ, "d": EQ}}, 0.75, {"b": 0.0}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "0.8*a + 0.2*b"}, 0.8, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "min(a, b)"}, 0.0, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "max(a, b)"}, 1.0, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "a * b"}, 0.0, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "1 - b"}, 1.0, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "clip(a + a + 1, 0, 1)"}, 1.0, {}),
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "a - 2"}, -1.0, {}),  # any range
    ({"verifiers": {"a": EQ, "b": LYON}, "formula": "a"}, 1.0, {"b": 0.0}),  # b still scored
    ({"verifiers": {"a": EQ}, "formula": "2^a^2 / 4"}, 0.5, {}),
    ({"verifiers": {"min": EQ}, "formula": "min(min, 0.5)"}, 0.5, {"min": 1.0}),
    ({"verifiers": {"_x1": EQ}}, 1.0, {"_x1": 1.0}),
    # the component's own reference, absent (parent's), a list, and params passed through
    ({"verifiers": {"a": {"verifier": "string", "reference": ["Lyon", "Paris"]}}}, 1.0, {}),
    ({"verifiers": {"a": {"verifier": "string", "params": {"op": "ne"}}}}, 0.0, {}),
    (
        {
            "verifiers": {
                "a": {"verifier": "string", "reference": "ari", "params": {"op": "contains"}}
            }
        },
        1.0,
        {},
    ),
    ({"verifiers": {"a": {"verifier": "string@1"}}}, 1.0, {}),  # pinned version
    (
        {"verifiers": {"s": {"verifier": "similarity", "reference": "Pariss"}}, "formula": "s"},
        10 / 11,
        {"s": 10 / 11},
    ),
    # composites nest; sub-components flatten as "name.sub"
    (
        {
            "verifiers": {
                "a": {"verifier": "composite", "params": {"verifiers": {"x": EQ, "y": LYON}}}
            }
        },
        0.5,
        {"a": 0.5, "a.x": 1.0, "a.y": 0.0},
    ),
    (
        {
            "verifiers": {
                "outer": {
                    "verifier": "composite",
                    "params": {
                        "verifiers": {
                            "mid": {"verifier": "composite", "params": {"verifiers": {"x": EQ}}}
                        }
                    },
                },
                "b": LYON,
            },
            "formula": "outer + b",
        },
        1.0,
        {"outer": 1.0, "outer.mid": 1.0, "outer.mid.x": 1.0, "b": 0.0},
    ),
]


@pytest.mark.parametrize(("params", "expected", "components"), CASES)
def test_composite_cases(score, params, expected, components) -> None:  # type: ignore[no-untyped-def]
    result = score("composite", "Paris", "Paris", **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(expected)
    assert result.components == pytest.approx(result.components | components)
    assert set(params["verifiers"]) <= set(result.components)
    assert result.verifier == "composite@1"


def test_details_carry_each_result(score) -> None:  # type: ignore[no-untyped-def]
    result = score("composite", "Paris", "Paris", verifiers={"a": EQ, "b": LYON})
    assert result.details["formula"] == "mean"
    sub = result.details["results"]["b"]
    assert sub == {
        "verifier": "string@1",
        "status": "ok",
        "reward": 0.0,
        "details": {"op": "eq", "matched": None},
    }


def _nested(depth: int) -> dict[str, Any]:
    params: dict[str, Any] = {"verifiers": {"leaf": EQ}}
    for _ in range(depth - 1):
        params = {"verifiers": {"c": {"verifier": "composite", "params": params}}}
    return params


def test_nesting_up_to_the_limit_scores(score) -> None:  # type: ignore[no-untyped-def]
    result = score("composite", "Paris", "Paris", **_nested(MAX_NESTING))
    assert result.status == Status.OK, result.error
    assert result.reward == 1.0


@pytest.mark.parametrize(
    ("params", "reference", "code", "field"),
    [
        ({}, "Paris", "invalid_params", "params.verifiers"),
        ({"verifiers": {}}, "Paris", "invalid_params", "params.verifiers"),
        ({"verifiers": {"a b": EQ}}, "Paris", "invalid_params", "params.verifiers"),
        ({"verifiers": {"1a": EQ}}, "Paris", "invalid_params", "params.verifiers"),
        ({"verifiers": {"a.b": EQ}}, "Paris", "invalid_params", "params.verifiers"),
        ({"verifiers": {"a": EQ}, "formula": "a +"}, "Paris", "invalid_params", "params.formula"),
        ({"verifiers": {"a": EQ}, "formula": "a + b"}, "Paris", "invalid_params", "params.formula"),
        (
            {"verifiers": {"a": EQ}, "formula": "expm1(a)"},
            "Paris",
            "invalid_params",
            "params.formula",
        ),
        ({"verifiers": {"a": EQ}, "formula": "{a}"}, "Paris", "invalid_params", "params.formula"),
        (
            {"verifiers": {"a": EQ}, "formula": "a" + "+a" * 600},
            "Paris",
            "invalid_params",
            "params.formula",
        ),
        ({"verifiers": {"a": EQ}, "formula": 5}, "Paris", "invalid_params", "params.formula"),
        ({"verifiers": {"a": EQ}, "weights": {}}, "Paris", "invalid_params", "params.weights"),
        (
            {"verifiers": {"a": {"verifier": "nope"}}},
            "Paris",
            "unknown_verifier",
            "params.verifiers.a.verifier",
        ),
        (
            {"verifiers": {"a": {"verifier": "string@9"}}},
            "Paris",
            "unknown_verifier",
            "params.verifiers.a.verifier",
        ),
        (
            {"verifiers": {"a": {"verifier": "bad name!"}}},
            "Paris",
            "invalid_params",
            "params.verifiers.a.verifier",
        ),
        (
            {"verifiers": {"a": {"verifier": "string", "weight": 2}}},
            "Paris",
            "invalid_params",
            "params.verifiers.a.weight",
        ),
        (
            {"verifiers": {"a": {"params": {}}}},
            "Paris",
            "invalid_params",
            "params.verifiers.a.verifier",
        ),
        # a component that is itself invalid: its code, and a message naming the component
        (
            {"verifiers": {"a": {"verifier": "string", "params": {"op": "equals"}}}},
            "Paris",
            "invalid_params",
            "params.verifiers.a",
        ),
        (
            {"verifiers": {"a": EQ, "b": {"verifier": "string", "reference": None}}},
            "Paris",
            "invalid_reference",
            "params.verifiers.b",
        ),
        ({"verifiers": {"a": EQ}}, None, "invalid_reference", "params.verifiers.a"),
        # a formula that cannot be evaluated with the rewards it got
        (
            {"verifiers": {"a": EQ, "b": LYON}, "formula": "a / b"},
            "Paris",
            "formula_failed",
            "params.formula",
        ),
        (_nested(MAX_NESTING + 1), "Paris", "too_deep", "params.verifiers.c"),
    ],
)
def test_composite_invalid(score, params, reference, code, field) -> None:  # type: ignore[no-untyped-def]
    result = score("composite", "Paris", reference, **params)
    assert result.status == Status.INVALID, result
    assert result.reward is None
    assert result.error is not None
    assert result.error.code == code
    assert field in result.error.message


def test_self_recursion_is_bounded(score) -> None:  # type: ignore[no-untyped-def]
    # The deepest spec names "composite" with params that would recurse if they could.
    params = _nested(20)
    result = score("composite", "Paris", "Paris", **params)
    assert result.status == Status.INVALID
    assert result.error.code == "too_deep"


# --- status propagation, with scripted sub-verifiers ------------------------------------


class ScriptedParams(Params):
    status: Literal["ok", "invalid", "error", "timeout"] = "ok"
    reward: float = 1.0


class Scripted(ItemVerifier[ScriptedParams]):
    """Returns whatever its params say; records the items it saw."""

    name = "scripted"
    Params = ScriptedParams
    seen: list[Item]

    def __init__(self) -> None:
        self.seen = []

    def check(self, item: Item, params: ScriptedParams) -> Outcome:
        self.seen.append(item)
        if params.status == "invalid":
            raise ItemInvalid("scripted_invalid", "reference: scripted")
        if params.status == "error":
            raise ItemError("judge_down", "scripted outage")
        if params.status == "timeout":
            raise ItemTimeout("scripted deadline")
        return Outcome(reward=params.reward, components={"inner": params.reward})


class NoReward:
    """A broken third-party verifier: ``ok`` without a reward."""

    name = "noreward"
    version = 1
    pool = Pool.CPU
    Params = Params
    description = ""

    def score(self, items: Sequence[Item]) -> list[Result]:
        return [Result(status=Status.OK) for _ in items]


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def local(scripted: Scripted) -> Registry:
    registry = Registry()
    for verifier in (StringVerifier(), CompositeVerifier(), scripted, NoReward()):
        registry.register(verifier)
    return registry


def _run(registry: Registry, *statuses: str, **item: Any) -> Result:
    components = {
        f"c{i}": {"verifier": "scripted", "params": {"status": status}}
        for i, status in enumerate(statuses)
    }
    built = Item(verifier="composite", response="r", params={"verifiers": components}, **item)
    return score_items([built], registry)[0]


@pytest.mark.parametrize(
    ("statuses", "status", "code", "component"),
    [
        (("ok", "error"), Status.ERROR, "judge_down", "c1"),
        (("timeout", "ok"), Status.TIMEOUT, "deadline", "c0"),
        (("timeout", "error"), Status.ERROR, "judge_down", "c1"),
        (("error", "invalid"), Status.INVALID, "scripted_invalid", "c1"),
        (("timeout", "error", "invalid"), Status.INVALID, "scripted_invalid", "c2"),
        (("error", "error"), Status.ERROR, "judge_down", "c0"),
    ],
)
def test_failure_precedence(local, statuses, status, code, component) -> None:  # type: ignore[no-untyped-def]
    result = _run(local, *statuses)
    assert result.status == status
    assert result.reward is None
    assert result.error is not None
    assert result.error.code == code
    assert f"params.verifiers.{component}: scripted@1" in result.error.message


def test_invalid_stops_scoring(local, scripted) -> None:  # type: ignore[no-untyped-def]
    result = _run(local, "invalid", "ok", "ok")
    assert result.status == Status.INVALID
    assert len(scripted.seen) == 1


def test_sub_items_share_prompt_response_and_group(local, scripted) -> None:  # type: ignore[no-untyped-def]
    result = _run(local, "ok", "ok", prompt="q?", group="g1", reference={"gold": 1})
    assert result.status == Status.OK
    assert result.components == {"c0": 1.0, "c1": 1.0, "c0.inner": 1.0, "c1.inner": 1.0}
    for seen in scripted.seen:
        assert (seen.prompt, seen.response, seen.group) == ("q?", "r", "g1")
        assert seen.reference == {"gold": 1}


def test_ok_without_reward_is_an_error(local) -> None:  # type: ignore[no-untyped-def]
    item = Item(
        verifier="composite", response="r", params={"verifiers": {"a": {"verifier": "noreward"}}}
    )
    result = score_items([item], local)[0]
    assert result.status == Status.ERROR
    assert result.error is not None
    assert result.error.code == "verifier_failed"
    assert "params.verifiers.a" in result.error.message


def test_unbound_composite_is_an_error_not_a_zero() -> None:
    item = Item(verifier="composite", response="r", params={"verifiers": {"a": EQ}})
    result = CompositeVerifier().score([item])[0]
    assert result.status == Status.ERROR
    assert result.reward is None
