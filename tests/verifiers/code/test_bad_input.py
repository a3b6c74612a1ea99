"""Hostile programs and unusable references: each a clear status and message, no hang."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

ONE = {"inputs": ["1\n"], "outputs": ["1\n"]}

# (name, program, params, expected case status)
HOSTILE: list[tuple[str, str, dict[str, Any], str]] = [
    ("never terminates", "while True:\n    pass", {"time_limit_s": 0.5}, "timeout"),
    ("sleeps forever", "import time\ntime.sleep(1000)", {"time_limit_s": 0.5}, "timeout"),
    (
        "reads stdin forever",
        "import sys\nwhile True:\n    sys.stdin.read()",
        {"time_limit_s": 0.5},
        "timeout",
    ),
    ("crashes the interpreter", "import ctypes\nctypes.string_at(0)", {}, "signal"),
    ("exhausts memory", "x = bytearray(2**34)", {}, "memory_limit"),
    (
        "invalid UTF-8 output",
        "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe1\\n')",
        {},
        "wrong_answer",
    ),
]


@pytest.mark.parametrize(
    ("name", "program", "params", "status"),
    HOSTILE,
    ids=[h[0] for h in HOSTILE],
)
def test_hostile_programs_score_zero_with_a_reason(
    score_many: ScoreMany, name: str, program: str, params: dict[str, Any], status: str
) -> None:
    (result,) = score_many([code_item(fenced(program), ONE, **params)])
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["cases"][0]["status"] == status


def test_output_flood_is_output_limit() -> None:
    # Several floods through one private sandbox: after an output-limit kill the fast
    # path's control socket may be reset, which must still read as output_limit.
    from referee.sandbox import Sandbox
    from referee.verifiers.code import CodeVerifier

    flood = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)"
    with Sandbox() as box:
        results = CodeVerifier(sandbox=box).score([code_item(fenced(flood), ONE)] * 5)
    for result in results:
        assert (result.status, result.reward) == (Status.OK, 0.0), result.error
        assert result.details["cases"][0]["status"] == "output_limit"


def test_code_that_is_not_valid_utf8_is_a_zero(score_many: ScoreMany) -> None:
    (result,) = score_many([code_item(fenced("print(1)\n# \ud800"), ONE)])
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["message"] == "the code is not valid UTF-8"


# (reference, params, field named in the message)
UNUSABLE: list[tuple[Any, dict[str, Any], str]] = [
    (
        {"inputs": ["1\n", "2\n"], "outputs": ["1\n"]},
        {},
        "reference.outputs: 1 outputs for 2 inputs",
    ),
    ({"inputs": [], "outputs": []}, {}, "reference.inputs"),
    ({"inputs": [1], "outputs": ["1"]}, {}, "reference.inputs.0"),
    ({"inputs": ["\ud800"], "outputs": ["1"]}, {}, "reference.inputs.0: not valid UTF-8"),
    ("not tests", {}, "reference: a string that is not a JSON object"),
    ('["a list"]', {}, "reference: expected an object"),
    ('{"inputs": ["1"]}', {}, "reference.outputs"),
    ({"nothing": 1}, {}, "reference.nothing"),
    ({}, {}, "reference: no tests"),
    ({"test": "def check(c): pass"}, {}, "reference.entry_point"),
    (
        {"inputs": ["1"], "outputs": ["1"], "subtasks": [{"cases": [3]}]},
        {},
        "reference.subtasks.0.cases",
    ),
    ({"fn_name": "f", "inputs": ["{bad"], "outputs": ["1"]}, {}, "reference.inputs.0"),
    ({"fn_name": "f", "inputs": ["1"], "outputs": ["1"]}, {"language": "cpp"}, "reference"),
    (ONE, {"language": "cobol"}, "params.language"),
    (ONE, {"compare": "fuzzy"}, "params.compare"),
    (ONE, {"time_limit_s": 1000}, "params.time_limit_s"),
    (
        {"inputs": ["1"], "outputs": ["1"], "checker": "import sys\nprint('great')"},
        {},
        "reference.checker",
    ),
]


@pytest.mark.parametrize(("reference", "params", "field"), UNUSABLE)
def test_unusable_reference_or_params_is_invalid(
    score_many: ScoreMany, reference: Any, params: dict[str, Any], field: str
) -> None:
    (result,) = score_many([code_item(fenced("print(1)"), reference, **params)])
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error is not None and field in result.error.message


def test_broken_sandbox_is_error_never_zero(tmp_path: Any) -> None:
    from referee.sandbox import Sandbox, SandboxSettings
    from referee.verifiers import Item
    from referee.verifiers.code import CodeVerifier

    broken = Sandbox(SandboxSettings(bwrap_path=str(tmp_path / "no-bwrap"), python_fast_path=False))
    verifier = CodeVerifier(sandbox=broken)
    (result,) = verifier.score([Item(verifier="code", response=fenced("print(1)"), reference=ONE)])
    assert result.status == Status.ERROR
    assert result.reward is None
    # bwrap missing is an operator's fix: error, never a 0, and not worth retrying
    assert result.error is not None and result.error.code == "not_configured"
    assert not result.error.retryable and "apt-get install bubblewrap" in result.error.message
