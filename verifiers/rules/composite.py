"""The ``composite`` verifier: several verifiers on one item, combined by a formula."""

from __future__ import annotations

import re

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params
from referee.verifiers.rules.formula import (
    NAME_PATTERN,
    Chain,
    ChainOp,
    Expr,
    FormulaError,
    Name,
    Number,
    evaluate,
    parse,
)
from referee.verifiers.rules.nesting import (
    FAILURE_PRECEDENCE,
    NestedScorer,
    SubVerifier,
    reward_of,
)
from referee.verifiers.types import Item, Result, Status

_NAME = re.compile(NAME_PATTERN)


class CompositeParams(Params):
    verifiers: dict[str, SubVerifier] = Field(min_length=1)
    """Component name -> nested verifier. Names are identifiers (``[A-Za-z_][A-Za-z0-9_]*``)
    so the formula can refer to them."""
    formula: str | None = None
    """How component rewards combine, e.g. ``0.8*correct + 0.2*format`` or
    ``min(correct, clip(length, 0, 1))``; see `verifiers.rules.formula` for the language.
    Default: the mean of all components."""

    @field_validator("verifiers")
    @classmethod
    def _names_are_identifiers(cls, value: dict[str, SubVerifier]) -> dict[str, SubVerifier]:
        for name in value:
            if not _NAME.fullmatch(name):
                raise PydanticCustomError(
                    "component_name",
                    "component name {name} is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                    {"name": repr(name)},
                )
        return value

    @field_validator("formula")
    @classmethod
    def _formula_is_valid(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        try:
            names = parse(value).names()
        except FormulaError as exc:
            raise PydanticCustomError("formula", "{reason}", {"reason": str(exc)}) from None
        components = info.data.get("verifiers")
        if components is None:  # verifiers failed validation and is reported on its own
            return value
        unknown = sorted(names - components.keys())
        if unknown:
            raise PydanticCustomError(
                "formula",
                "unknown component(s) {unknown}; components are: {known}",
                {"unknown": ", ".join(unknown), "known": ", ".join(components)},
            )
        return value

    def expression(self) -> Expr:
        """The parsed formula, or the mean of the components when there is none."""
        if self.formula is not None:
            return parse(self.formula)  # cached: validation parsed it already
        names = list(self.verifiers)
        plus: ChainOp = "+"
        total = Chain(Name(names[0]), tuple((plus, Name(name)) for name in names[1:]))
        return Chain(total, (("/", Number(float(len(names)))),))


class CompositeVerifier(NestedScorer, ItemVerifier[CompositeParams]):
    """Score one item with several verifiers and combine their rewards with a formula.

    Each component is scored on a sub-item with the parent's prompt, response and group,
    and the component's own ``reference`` if it sets one (else the parent's). The reward
    is the formula's value, in whatever range the formula gives; ``components`` holds each
    component's reward, plus its own components flattened as ``name.sub``; ``details``
    holds each component's verifier, status, reward and details.

    If any component is not ``ok``, the composite is not ``ok`` either, reward null —
    never a 0. Precedence when several fail: ``invalid`` > ``error`` > ``timeout``
    (``invalid`` first because retrying cannot help; scoring stops at the first
    ``invalid``). The error message names the component (``params.verifiers.<name>``).
    A formula that cannot be evaluated with the rewards obtained (division by zero,
    overflow) is ``invalid`` naming ``params.formula``. Nesting is capped at
    `verifiers.rules.nesting.MAX_NESTING` levels.
    """

    name = "composite"
    Params = CompositeParams
    description = "Several verifiers on one item, combined by an arithmetic formula."

    def check(self, item: Item, params: CompositeParams) -> Outcome:
        results = self._score_components(item, params)
        _raise_worst_failure(results)
        rewards = {name: reward_of(result, _field(name)) for name, result in results.items()}
        try:
            reward = evaluate(params.expression(), rewards)
        except FormulaError as exc:
            raise ItemInvalid("formula_failed", f"params.formula: {exc}") from None
        components = dict(rewards)
        for name, result in results.items():
            components.update({f"{name}.{sub}": v for sub, v in result.components.items()})
        details = {
            "formula": params.formula or "mean",
            "results": {name: _summary(result) for name, result in results.items()},
        }
        return Outcome(reward=reward, components=components, details=details)

    def _score_components(self, item: Item, params: CompositeParams) -> dict[str, Result]:
        results: dict[str, Result] = {}
        for name, spec in params.verifiers.items():
            results[name] = self.score_nested(spec, spec.sub_item(item), _field(name))
            if results[name].status == Status.INVALID:
                break  # nothing outranks invalid, so the rest need not run
        return results


def _field(name: str) -> str:
    return f"params.verifiers.{name}"


def _raise_worst_failure(results: dict[str, Result]) -> None:
    for status in FAILURE_PRECEDENCE:
        for name, result in results.items():
            if result.status == status:
                reward_of(result, _field(name))  # raises the matching exception


def _summary(result: Result) -> dict[str, object]:
    return {
        "verifier": result.verifier,
        "status": result.status.value,
        "reward": result.reward,
        "details": result.details,
    }
