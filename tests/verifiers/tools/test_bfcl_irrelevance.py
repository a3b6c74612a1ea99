"""``tool_call`` agrees with BFCL on its irrelevance category: every sample, answered in
the ways a model answers one (a refusal, a right-looking call, calls with positional or
variable arguments, an empty list, numbers, prose with a call in it), against BFCL's own
verdict (its prompting decoder, then ``is_empty_output``: a decoded call fails the
sample). Where referee reads more formats than BFCL's Python decoder (JSON, Hermes tags,
fenced code), it finds more calls, never fewer: asserted as such."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers.tools import ToolCallVerifier
from referee.verifiers.types import Item, Status
from tests.verifiers.tools.bfcl import bfcl_entries, bfcl_no_call

VERIFIER = ToolCallVerifier()


def ours_no_call(text: str, functions: list[dict[str, Any]]) -> bool:
    item = Item(
        verifier="tool_call",
        response=text,
        reference={"ground_truth": [], "functions": functions},
        params={"underscore_dots": False},
    )
    [result] = VERIFIER.score([item])
    assert result.status == Status.OK, result.error
    return result.reward == 1.0


def answers(function: dict[str, Any]) -> list[str]:
    name = function["name"]
    params = list((function.get("parameters") or {}).get("properties") or {})[:2] or ["x"]
    keywords = ", ".join(f"{p}=1" for p in params)
    return [
        "I cannot help with that: none of the functions fits.",
        "None of the provided functions can be used.",
        f"{name}({keywords})",
        f"[{name}({keywords})]",
        f"{name}(1, 2)",  # positional: still a call
        f"{name}({params[0]}=value)",  # a variable: still a call
        f"{name}()",
        "[]",
        "[1, 2, 3]",
        "None",
        "42",
        f"You could call {name}({keywords}) yourself.",
        f"{name}({params[0]}=",  # broken off
    ]


FORMATS_BFCL_DOES_NOT_READ = [
    '{{"name": "{name}", "arguments": {{}}}}',
    '<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>',
    "```python\n{name}()\n```",
]


def test_irrelevance_verdicts_agree_with_bfcl() -> None:
    compared, disagreements = 0, []
    for entry in bfcl_entries("irrelevance"):
        functions = entry["function"]
        for text in answers(functions[0]):
            compared += 1
            ours, theirs = ours_no_call(text, functions), bfcl_no_call(text)
            if ours != theirs:
                disagreements.append((functions[0]["name"], text, ours, theirs))
    assert compared >= 240 * 13
    assert disagreements == [], (len(disagreements), disagreements[:8])


@pytest.mark.parametrize("shape", FORMATS_BFCL_DOES_NOT_READ)
def test_formats_bfcl_cannot_decode_are_calls_to_referee(shape: str) -> None:
    """More calls found, never fewer: a call in a format BFCL's decoder does not read
    fails irrelevance here (it is a call) and passes there."""
    for entry in bfcl_entries("irrelevance")[:40]:
        text = shape.format(name=entry["function"][0]["name"])
        assert bfcl_no_call(text)
        assert not ours_no_call(text, entry["function"])
