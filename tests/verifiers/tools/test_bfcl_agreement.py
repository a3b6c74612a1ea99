"""The ``tool_call`` verifier agrees with BFCL's own AST checker on BFCL's samples.

For every sample of the simple, multiple, parallel and parallel-multiple categories, a
right answer (each parameter's first acceptable value) and mutated answers (a required
parameter dropped, an unknown one added, a wrong value, a wrong type, int for float,
case and punctuation changed, calls reordered, duplicated or renamed, a tuple for a
list) are written as Python call syntax; both checkers judge each, and every verdict
must agree.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterator
from typing import Any

import pytest

from referee.verifiers.tools import ToolCallVerifier
from referee.verifiers.types import Item
from tests.verifiers.tools.bfcl import bfcl_checker, bfcl_data

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple"]
Calls = list[dict[str, dict[str, Any]]]


def right_answer(gold: list[dict[str, dict[str, list[Any]]]]) -> Calls:
    return [
        {name: {p: next(v for v in acc if v != "") for p, acc in params.items() if acc != [""]}}
        for call in gold
        for name, params in call.items()
    ]


def wrong_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "zz"
    if isinstance(value, list):
        return [*value, value[0] if value else 1]
    if isinstance(value, dict):
        return {**value, "zz": 1}
    return "zz"


def mutations(calls: Calls, rng: random.Random) -> Iterator[tuple[str, Calls]]:
    yield "right", calls
    for index, call in enumerate(calls):
        [(name, args)] = call.items()
        keys = sorted(args)
        changed = copy.deepcopy(calls)
        changed[index] = {name: {**args, "unknown_param": 1}}
        yield "extra param", changed
        changed = copy.deepcopy(calls)
        changed[index] = {name + "_x": args}
        yield "renamed", changed
        if not keys:
            continue
        key = rng.choice(keys)
        value = args[key]
        for label, new in [
            ("dropped", None),
            ("wrong value", wrong_value(value)),
            ("wrong type", str(value) if not isinstance(value, str) else 7),
            (
                "int for float",
                int(value) if isinstance(value, float) and value.is_integer() else None,
            ),
            ("case and punctuation", value.upper() + "." if isinstance(value, str) else None),
            ("tuple for list", tuple(value) if isinstance(value, list) else None),
        ]:
            if new is None and label != "dropped":
                continue
            changed = copy.deepcopy(calls)
            kept = {k: v for k, v in args.items() if k != key}
            changed[index] = {name: kept if label == "dropped" else {**kept, key: new}}
            yield label, changed
    if len(calls) > 1:
        yield "reordered", list(reversed(calls))
    yield "duplicated", [*calls, calls[0]]


def as_python(calls: Calls) -> str:
    rendered = [
        f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        for call in calls
        for name, args in call.items()
    ]
    return "[" + ", ".join(rendered) + "]"


def bfcl_valid(checker: Any, entry: dict[str, Any], gold: Any, calls: Calls, category: str) -> bool:
    result = checker.ast_checker(
        entry["function"], calls, gold, checker.Language.PYTHON, category, "referee"
    )
    return bool(result["valid"])


@pytest.mark.parametrize("category", CATEGORIES)
def test_verdicts_agree_with_bfcl(category: str) -> None:
    checker = bfcl_checker()
    verifier = ToolCallVerifier()
    rng = random.Random(category)
    compared, disagreements = 0, []
    for entry, gold in bfcl_data(category):
        reference = {"ground_truth": gold, "functions": entry["function"]}
        cases = list(mutations(right_answer(gold), rng))
        items = [
            Item(
                verifier="tool_call",
                response=as_python(calls),
                reference=reference,
                params={"underscore_dots": False},
            )
            for _, calls in cases
        ]
        for (label, calls), result in zip(cases, verifier.score(items), strict=True):
            assert result.status.value == "ok", (entry["id"], label, result.error)
            ours = result.reward == 1.0
            theirs = bfcl_valid(checker, entry, gold, calls, category)
            compared += 1
            if ours != theirs and not greedy_miss(checker, entry, gold, calls, category, ours):
                disagreements.append((entry["id"], label, ours, theirs, result.details))
    assert compared > 1000
    assert disagreements == [], (len(disagreements), compared, disagreements[:5])


def greedy_miss(
    checker: Any, entry: dict[str, Any], gold: Any, calls: Calls, category: str, ours: bool
) -> bool:
    """The one difference we claim: BFCL matches parallel calls greedily (first fit) and
    can miss a one-to-one matching that exists; we find it. True when we accepted, BFCL
    refused, and BFCL itself accepts the same calls in some other order."""
    if not ours or len(calls) > 6:
        return False
    return any(
        bfcl_valid(checker, entry, gold, list(order), category)
        for order in itertools.permutations(calls)
    )
