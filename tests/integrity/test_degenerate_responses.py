"""A response is the policy's output: whatever it holds, an item whose reference and params
are valid is scored (`ok`), never `invalid` (the client's fault) nor `error` (retryable:
the infrastructure's fault). Degenerate text (nesting past what Python's readers take,
runs that overflow CPython's parser stack, huge numbers, control characters, lone
surrogates) once made ``tool_call``, ``instructions``, ``python_grader`` and the code
verifier's function-call cases answer ``invalid: too_deep`` or ``error: MemoryError``.

Table-driven over every built-in verifier that runs without a sandbox, a judge or a model,
each with a valid reference; then the sandboxed paths that read text the policy writes.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import reasoning_gym  # the `reasoning` extra: scripts/test.sh installs it

from referee.verifiers import Item, Registry, Result, Status, score_items
from tests.verifiers.code.conftest import code_item, fenced

N = 20_000
DEGENERATE = {
    "deep parentheses": "(" * N,
    "deep brackets": "[" * N,
    "deep braces": "{" * N,
    "deep closed list": "[" * 5_000 + "]" * 5_000,
    "deep JSON objects": '{"a":' * N,
    "deep boxes": "\\boxed{" * N,
    "deep fractions": "\\frac{" * N,
    "a call nested in JSON": '{"name":"f","arguments":' + '{"a":' * 5_000 + "1" + "}" * 5_001,
    "a tagged call nested too deeply": "<tool_call>" + '{"name":"f","arguments":' * 5_000,
    "many words": "x " * N,  # CPython's parser: MemoryError (its stack overflowed)
    "many unary minuses": "f(a=" + "-" * N + "1)",
    "many tildes": "f(a=" + "~" * N + "1)",
    "a long dotted name": "a." * N + "f(a=1)",
    "a huge integer": "f(a=" + "9" * N + ")",
    "a huge JSON integer": '{"name":"f","arguments":{"a":' + "9" * N + "}}",
    "a tower of powers": "\\boxed{9^{9^{9^{9^{9}}}}}",
    "a huge factorial": "\\boxed{99999999!}",
    "an overflowing exponent": "\\boxed{1e999999999}",
    "many boxes": "\\boxed{1}" * N,
    "many answer tags": "<answer>a</answer>" * 5_000,
    "many unclosed tags": "<tool_call>" * 5_000,
    "backslashes": "\\" * N,
    "dollars": "$" * N,
    "control characters": "".join(map(chr, range(32))) * 100,
    "lone surrogates": "\ud800 \udfff",
    "mathematical digits": "\U0001d7dc" * N,
    "empty": "",
    "blank": "   ",
    "punctuation only": ";",  # IFBench's format:quote_unquote indexed past a string
    "a lone full stop": ".",
}


def _reasoning_gym_reference() -> dict[str, Any]:
    entry = reasoning_gym.create_dataset("basic_arithmetic", size=1, seed=1)[0]
    return {"dataset": "basic_arithmetic", "entry": dict(entry)}


# verifier, reference, params: each valid (an `ok` for a right answer)
VALID: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "string": ("string", "4", {}),
    "qa": ("qa", "Paris", {"metric": "f1"}),
    "choice": ("choice", "C", {}),
    "format tags": ("format", None, {"mode": "tags"}),
    "format json": ("format", None, {"mode": "json"}),
    "length": ("length", None, {"mode": "linear", "budget": 100}),
    "similarity fuzzy": ("similarity", "the cat sat", {"metric": "fuzzy"}),
    "similarity bleu": ("similarity", "the cat sat", {"metric": "bleu"}),
    "similarity rouge": ("similarity", "the cat sat", {"metric": "rouge_l"}),
    "instructions": (
        "instructions",
        {
            "instruction_id_list": [
                "detectable_format:json_format",
                "change_case:english_lowercase",
                "length_constraints:number_sentences",
            ],
            "kwargs": [{}, {}, {"relation": "at least", "num_sentences": 2}],
        },
        {},
    ),
    "instructions loose": (
        "instructions",
        {
            "instruction_id_list": [
                "detectable_format:number_bullet_lists",
                "language:response_language",
            ],
            "kwargs": [{"num_bullets": 2}, {"language": "en"}],
        },
        {"mode": "loose"},
    ),
    "instructions ifbench": (
        "instructions",
        {
            "instruction_id_list": ["format:quote_unquote", "sentence:increment"],
            "kwargs": [{}, {"small_n": 1}],
        },
        {"reward": "fraction"},
    ),
    "tool_call": ("tool_call", {"calls": [{"name": "f", "arguments": {"a": 1}}]}, {}),
    "tool_call python": (
        "tool_call",
        {"calls": [{"name": "f", "arguments": {"a": 1}}]},
        {"format": "python"},
    ),
    "tool_call irrelevance": ("tool_call", {"calls": []}, {}),
    "math": ("math", "4", {}),
    "math set": ("math", "\\{1,2\\}", {}),
    "reasoning_gym": ("reasoning_gym", _reasoning_gym_reference(), {}),
    "composite": (
        "composite",
        None,
        {
            "verifiers": {
                "a": {"verifier": "string", "reference": "4"},
                "b": {"verifier": "math", "reference": "4"},
            },
            "formula": "a + b",
        },
    ),
    "calibration": ("calibration", "4", {"verifier": {"verifier": "math"}}),
}

SLOW_S = 5.0
"""No degenerate response may take long (most take milliseconds; sympy's are the slowest)."""


@pytest.mark.parametrize("kind", list(VALID))
def test_every_degenerate_response_is_scored(registry: Registry, kind: str) -> None:
    verifier, reference, params = VALID[kind]
    wrong: dict[str, str] = {}
    for name, response in DEGENERATE.items():
        item = Item(verifier=verifier, response=response, reference=reference, params=params)
        start = time.perf_counter()
        result = score_items([item], registry)[0]
        took = time.perf_counter() - start
        if result.status is not Status.OK or took > SLOW_S:
            wrong[name] = f"{result.status.value} {result.error} in {took:.1f} s"
    assert not wrong


def test_the_table_has_a_valid_item_for_each_verifier(registry: Registry) -> None:
    """The table's references are valid: a right answer scores 1, so an `ok` above is a
    verdict on the response, not a reference the verifier ignored."""
    right = {
        "string": "4",
        "qa": "<answer>Paris</answer>",
        "choice": "C",
        "format tags": "<think>a</think><answer>b</answer>",
        "format json": '{"a": 1}',
        "length": "short",
        "similarity fuzzy": "the cat sat",
        "similarity bleu": "the cat sat",
        "similarity rouge": "the cat sat",
        "instructions": '{"a": "one. two. three."}',
        "instructions loose": "* one\n* two",
        "instructions ifbench": "Two words. Now three words.",
        "tool_call": "f(a=1)",
        "tool_call python": "f(a=1)",
        "tool_call irrelevance": "I cannot help with that.",
        "math": "\\boxed{4}",
        "math set": "\\boxed{\\{2, 1\\}}",
        "reasoning_gym": f"<answer>{VALID['reasoning_gym'][1]['entry']['answer']}</answer>",
        "composite": "\\boxed{4}",
        "calibration": "\\boxed{4} <confidence>1.0</confidence>",
    }
    assert set(right) == set(VALID)
    rewards: dict[str, float | None] = {}
    for kind, response in right.items():
        verifier, reference, params = VALID[kind]
        item = Item(verifier=verifier, response=response, reference=reference, params=params)
        result = score_items([item], registry)[0]
        rewards[kind] = result.reward if result.status is Status.OK else None
    assert {kind: reward for kind, reward in rewards.items() if not reward} == {}


def _scored(registry: Registry, item: Item) -> Result:
    result = score_items([item], registry)[0]
    assert result.status is Status.OK, result.error
    return result


@pytest.mark.integration
def test_a_program_printing_a_result_nested_too_deeply_fails_its_case(
    registry: Registry,
) -> None:
    """The program can print the function-call driver's result mark itself: a value nested
    past what the host's reader takes is no return value, so the case fails."""
    program = (
        "import sys\n"
        "def add(a, b):\n"
        "    sys.stdout.write('\\n@@referee-result@@ ' + '[' * 50000 + '\\n')\n"
        "    sys.stdout.flush()\n"
        "    sys.exit(0)\n"
    )
    reference = {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]}
    result = _scored(registry, code_item(fenced(program), reference))
    assert result.reward == 0.0


@pytest.mark.integration
def test_a_python_grader_reads_a_response_nested_too_deeply_as_text(registry: Registry) -> None:
    """``sample.output_json`` is the response's JSON when it parses; nested too deeply for
    the reader, it is None and the grader still runs."""
    source = "def grade(sample, item):\n    return 0.25 if sample['output_json'] is None else 1.0\n"
    item = Item(
        verifier="python_grader",
        response="[" * N + "]" * N,
        reference={"source": source, "item": {}},
    )
    assert _scored(registry, item).reward == 0.25


SANDBOXED: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "code stdio": ("code", {"inputs": ["1\n"], "outputs": ["1\n"]}, {}),
    "code function": ("code", {"fn_name": "f", "inputs": [[1]], "outputs": [1]}, {}),
    "code asserts": ("code", {"tests": ["assert f(1) == 1"]}, {}),
    "sql": ("sql", {"query": "SELECT 1", "schema": "CREATE TABLE t(a);"}, {}),
    "python_grader": (
        "python_grader",
        {"source": "def grade(sample, item):\n    return 0.5\n", "item": {}},
        {},
    ),
}
SANDBOXED_RESPONSES = {
    "empty": "",
    "prose": "I don't know.",
    "deep brackets": "[" * N,
    "a NUL in the code": "```python\nprint(1)\x00\n```",
    "an unclosed fence": "```python\nprint(1)",
    "an empty fence": "```python\n```",
}


@pytest.mark.integration
def test_sandboxed_verifiers_score_degenerate_responses(registry: Registry) -> None:
    """The same law for the verifiers that run the response (or a grader) in a sandbox:
    each degenerate response is a verdict (0 for the code, whatever the grader says)."""
    cases = [
        (kind, name, Item(verifier=v, response=response, reference=ref, params=params))
        for kind, (v, ref, params) in SANDBOXED.items()
        for name, response in SANDBOXED_RESPONSES.items()
    ]
    results = score_items([item for _, _, item in cases], registry)
    wrong = {
        (kind, name): f"{result.status.value} {result.error}"
        for (kind, name, _), result in zip(cases, results, strict=True)
        if result.status is not Status.OK
    }
    assert not wrong
