"""The test formats accepted in an item's ``reference``, parsed into one `Suite`.

- **stdio** ``{"inputs": [str], "outputs": [str]}`` (APPS / CodeContests / LiveCodeBench):
  each input is fed on stdin, the output compared with the chosen comparator.
- **function** ``{"fn_name": str, "inputs": [...], "outputs": [...]}``: each input is either
  a string holding one JSON value per line (LiveCodeBench) or a list of arguments (APPS);
  each output is a JSON string or a value. The function is a top-level ``fn_name`` or a
  method of a LeetCode-style ``class Solution``. Python only.
- **assert** ``{"test": str, "entry_point": str?}`` (HumanEval: ``check(candidate)`` is
  called with ``entry_point``), or ``{"tests": [str, ...], "setup": str?}`` (MBPP: one case
  per assert snippet). For languages other than Python, ``test`` is appended to the program.
- Optional on stdio suites: ``checker`` (special judge source, ``checker_language``,
  default python3) and on any suite ``subtasks`` ``[{"cases": [int], "weight": float}]``.

A reference may also be that object serialised as a JSON string (verl and many HF datasets
store code tests so).

Every problem raises `ItemInvalid` naming the field (``reference.outputs: ...``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from referee.verifiers.base import ItemInvalid, describe_validation_error

Kind = Literal["stdio", "function", "assert"]

MAX_CASES = 1000


class Subtask(BaseModel):
    """IOI-style group: scores the minimum of its cases, times ``weight``."""

    model_config = ConfigDict(extra="forbid")

    cases: list[int] = Field(min_length=1)
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)


_ENTRY_POINT = r"^[A-Za-z_][A-Za-z0-9_]*(?:\(\))?(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\(\))?)*$"


class _Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    inputs: list[Any] | None = Field(default=None, max_length=MAX_CASES)
    outputs: list[Any] | None = Field(default=None, max_length=MAX_CASES)
    fn_name: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    test: str | None = None
    tests: list[str] | None = Field(default=None, min_length=1, max_length=MAX_CASES)
    entry_point: str | None = Field(default=None, pattern=_ENTRY_POINT)
    """What ``check`` is called with: a name, or names and empty calls joined by dots
    (LeetCodeDataset's ``Solution().twoSum``)."""
    setup: str = ""
    checker: str | None = None
    checker_language: str = "python3"
    subtasks: list[Subtask] | None = None


@dataclass(frozen=True)
class TestCase:
    """One case: ``stdin`` for the program; ``expected`` output text (stdio) or
    ``expected_value`` (function; ``has_value`` tells a JSON null from no value)."""

    stdin: str
    expected: str = ""
    expected_value: Any = None
    has_value: bool = False


@dataclass
class Suite:
    """A parsed reference. ``test`` / ``setup`` / ``entry_point`` serve assert suites."""

    kind: Kind
    cases: list[TestCase]
    fn_name: str = ""
    test: str = ""
    setup: str = ""
    entry_point: str | None = None
    checker: str | None = None
    checker_language: str = "python3"
    subtasks: list[Subtask] = field(default_factory=list)


def parse_suite(reference: object) -> Suite:
    """Parse ``reference`` (client input) into a `Suite`; raise `ItemInvalid` naming the field."""
    if isinstance(reference, str):
        reference = _decoded(reference)
    if not isinstance(reference, dict):
        raise ItemInvalid("invalid_reference", "reference: expected an object with tests")
    try:
        ref = _Reference.model_validate(reference)
    except ValidationError as exc:
        message = describe_validation_error(exc, "reference")
        raise ItemInvalid("invalid_reference", message) from None
    if ref.test is not None or ref.tests is not None:
        suite = _assert_suite(ref)
    elif ref.inputs is not None or ref.outputs is not None:
        suite = _io_suite(ref)
    else:
        raise ItemInvalid(
            "invalid_reference",
            "reference: no tests: give inputs/outputs, fn_name with inputs/outputs, "
            "test (assert-style) or tests",
        )
    if ref.checker is not None and suite.kind != "stdio":
        raise ItemInvalid("invalid_reference", "reference.checker: only for stdin/stdout tests")
    suite.checker, suite.checker_language = ref.checker, ref.checker_language
    suite.subtasks = _check_subtasks(ref.subtasks or [], len(suite.cases))
    _check_text(suite)
    return suite


def _decoded(text: str) -> object:
    """A JSON-string reference, decoded (a string that is not JSON stays a string and is
    refused by the caller as not an object)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ItemInvalid(
            "invalid_reference", f"reference: a string that is not a JSON object of tests: {exc}"
        ) from None


def _io_suite(ref: _Reference) -> Suite:
    inputs, outputs = ref.inputs or [], ref.outputs or []
    if len(inputs) != len(outputs):
        raise ItemInvalid(
            "invalid_reference",
            f"reference.outputs: {len(outputs)} outputs for {len(inputs)} inputs; "
            "every input needs exactly one expected output",
        )
    if not inputs:
        raise ItemInvalid("invalid_reference", "reference.inputs: no test cases")
    if ref.fn_name is not None:
        cases = [_call_case(i, a, o) for i, (a, o) in enumerate(zip(inputs, outputs, strict=True))]
        return Suite("function", cases, fn_name=ref.fn_name)
    for name, values in (("inputs", inputs), ("outputs", outputs)):
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise ItemInvalid(
                    "invalid_reference", f"reference.{name}.{index}: expected a string"
                )
    return Suite(
        "stdio", [TestCase(stdin=a, expected=o) for a, o in zip(inputs, outputs, strict=True)]
    )


def _call_case(index: int, args: object, output: object) -> TestCase:
    if isinstance(args, str):
        try:
            values = [json.loads(line) for line in args.splitlines() if line.strip()]
        except ValueError as exc:
            raise ItemInvalid(
                "invalid_reference", f"reference.inputs.{index}: not one JSON value per line: {exc}"
            ) from None
    elif isinstance(args, list):
        values = args
    else:
        raise ItemInvalid(
            "invalid_reference", f"reference.inputs.{index}: expected a string or a list of args"
        )
    expected = output
    if isinstance(output, str):
        try:
            expected = json.loads(output)
        except ValueError:
            expected = output  # a plain string return value written without JSON quotes
    return TestCase(stdin=json.dumps(values), expected_value=expected, has_value=True)


def _assert_suite(ref: _Reference) -> Suite:
    if ref.tests is not None:
        cases = [TestCase(stdin=snippet) for snippet in ref.tests]
        return Suite("assert", cases, setup=ref.setup, entry_point=ref.entry_point)
    test = ref.test or ""
    if not test.strip():
        raise ItemInvalid("invalid_reference", "reference.test: empty test")
    if "def check(" in test and ref.entry_point is None:
        raise ItemInvalid(
            "invalid_reference", "reference.entry_point: needed to call check(candidate)"
        )
    call = f"\n\ncheck({ref.entry_point})\n" if "def check(" in test else "\n"
    cases = [TestCase(stdin=test + call)]
    return Suite("assert", cases, test=test, setup=ref.setup, entry_point=ref.entry_point)


def _check_subtasks(subtasks: list[Subtask], n: int) -> list[Subtask]:
    for index, sub in enumerate(subtasks):
        bad = [c for c in sub.cases if not 0 <= c < n]
        if bad:
            raise ItemInvalid(
                "invalid_reference",
                f"reference.subtasks.{index}.cases: case {bad[0]} out of range (0..{n - 1})",
            )
    if subtasks and sum(s.weight for s in subtasks) <= 0:
        raise ItemInvalid("invalid_reference", "reference.subtasks: weights sum to 0")
    return subtasks


def _check_text(suite: Suite) -> None:
    """Reject text that cannot be written as UTF-8 (lone surrogates from JSON escapes)."""
    for index, case in enumerate(suite.cases):
        for name, text in (("inputs", case.stdin), ("outputs", case.expected)):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ItemInvalid(
                    "invalid_reference", f"reference.{name}.{index}: not valid UTF-8 text"
                ) from None
