"""ItemVerifier's params handling: validated once per distinct params, never a wrong reuse."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from referee.verifiers.base import KEPT_PARAMS, ItemVerifier, Outcome, Params, object_reference
from referee.verifiers.types import Item, Status


class _Threshold(Params):
    threshold: float | None = 0.5
    label: str = ""


class _Echo(ItemVerifier[_Threshold]):
    name = "echo"
    Params = _Threshold

    def check(self, item: Item, params: _Threshold) -> Outcome:
        return Outcome(1.0, details={"threshold": params.threshold, "label": params.label})


def _score(verifier: _Echo, params: dict[str, Any]) -> Any:
    [result] = verifier.score([Item(verifier="echo", response="x", params=params)])
    return result


def test_items_with_the_same_params_share_one_validated_instance() -> None:
    verifier = _Echo()
    first = verifier.parse_params({"threshold": 0.2, "label": "a"})
    assert verifier.parse_params({"threshold": 0.2, "label": "a"}) is first
    assert verifier.parse_params({"threshold": 0.3, "label": "a"}) is not first
    assert verifier.parse_params({}) is verifier.parse_params({})


def test_shared_params_cannot_be_changed_by_one_item() -> None:
    params = _Echo().parse_params({"threshold": 0.2})
    with pytest.raises(ValidationError):
        params.threshold = 0.9  # type: ignore[misc]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_is_refused_even_after_null_was_accepted(bad: float) -> None:
    """orjson writes NaN and infinity as null: a kept {"threshold": null} must not be
    served for them."""
    verifier = _Echo()
    assert _score(verifier, {"threshold": None}).status == Status.OK
    result = _score(verifier, {"threshold": bad})
    assert result.status == Status.INVALID
    assert result.error.code == "invalid_params"


def test_invalid_params_are_refused_every_time_and_not_kept() -> None:
    verifier = _Echo()
    for _ in range(2):
        result = _score(verifier, {"threshold": "high"})
        assert result.status == Status.INVALID
        assert "params.threshold" in result.error.message
    assert len(verifier.__dict__["_params_kept"]) == 0


def test_kept_params_are_bounded() -> None:
    verifier = _Echo()
    for index in range(KEPT_PARAMS * 3):
        assert _score(verifier, {"label": str(index)}).details["label"] == str(index)
    assert len(verifier.__dict__["_params_kept"]) <= KEPT_PARAMS
    fresh, long_label = _Echo(), "x" * 5000
    assert _score(fresh, {"label": long_label}).details["label"] == long_label
    assert len(fresh.__dict__["_params_kept"]) == 0  # over 1 KiB of JSON: never kept


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  {"a": [1, 2]}', {"a": [1, 2]}),
        ("yes", "yes"),  # a text reference stays text
        ("42", "42"),  # JSON, but not an object: untouched
        ('["a"]', '["a"]'),
        ('{"a": ', '{"a": '),  # not JSON: left for validation to refuse
        ({"a": 1}, {"a": 1}),
        (None, None),
    ],
)
def test_object_references_may_come_as_json_text(raw: object, read: object) -> None:
    assert object_reference(raw) == read
