"""The ``python_grader`` verifier: a user's ``grade(sample, item) -> float`` run sandboxed.

The OpenAI-style ``python`` grader. ``reference`` is ``{"source": str, "item": {...}}``;
the response is the sample. The source runs in the sandbox (no network, private
filesystem, limits) with ``sample = {"output_text": response, "output_json": parsed or
None}`` and the item. Its return value, a number, is the reward.

Statuses keep the two layers apart: a grader that raises, prints no score or returns a
non-number is the grader's fault (``invalid`` with the traceback's last line); a broken
sandbox is ``error``; running out of time is ``timeout``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox import CaseStatus, Sandbox
from referee.verifiers.base import (
    ItemInvalid,
    ItemTimeout,
    ItemVerifier,
    Outcome,
    Params,
    parse_reference,
)
from referee.verifiers.code.runtime import SandboxHandle, handle_of
from referee.verifiers.sandboxed_python import run_python
from referee.verifiers.types import Item, Pool

MARKER = "\x1ereferee-score:"

HARNESS = f"""
import json, sys
import grader
data = json.loads(sys.stdin.read())
score = grader.grade(data["sample"], data["item"])
sys.stdout.write("\\n{MARKER}" + json.dumps(score) + "\\n")
"""


class PythonGraderParams(Params):
    timeout_s: float = Field(default=10.0, gt=0, le=60)
    memory_mb: int = Field(default=512, ge=64, le=4096)


class GraderReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=256_000)
    item: dict[str, Any] = Field(default_factory=dict)


class PythonGraderVerifier(ItemVerifier[PythonGraderParams]):
    name = "python_grader"
    pool = Pool.SANDBOX
    Params = PythonGraderParams
    description = "OpenAI-style python grader: grade(sample, item) run in the sandbox."

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    def check(self, item: Item, params: PythonGraderParams) -> Outcome:
        reference = parse_reference(GraderReference, item.reference)
        text = item.response_text()
        stdin = json.dumps({"sample": sample_of(text), "item": reference.item})
        files = {"grader.py": reference.source}
        outcome = run_python(
            self._sandbox.get(), HARNESS, stdin, params.timeout_s, params.memory_mb, files
        )
        if outcome.status == CaseStatus.TIMEOUT:
            raise ItemTimeout(f"the grader ran longer than {params.timeout_s:g} s")
        score = _score(outcome.stdout)
        if outcome.status != CaseStatus.OK:
            last = (outcome.stderr.strip().splitlines() or [outcome.status.value])[-1]
            raise ItemInvalid("grader_failed", f"reference.source: the grader failed: {last}")
        if score is None:
            message = "reference.source: grade() must return a finite number"
            raise ItemInvalid("grader_failed", message)
        return Outcome(reward=score, details={"stderr": outcome.stderr[-2000:]})


def sample_of(text: str) -> dict[str, Any]:
    """The ``sample`` argument: the output text, and its JSON when it parses."""
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):  # the response's text: it may be anything
        parsed = None
    return {"output_text": text, "output_json": parsed}


def _score(stdout: str) -> float | None:
    _, found, tail = stdout.rpartition(MARKER)
    if not found:
        return None
    try:
        value = json.loads(tail.strip())
    except (ValueError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
