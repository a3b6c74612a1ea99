"""The ``python_grader`` verifier: a user's ``grade(sample, item) -> float`` run sandboxed.

The OpenAI-style ``python`` grader. ``reference`` is ``{"source": str, "item": {...},
"probes": [str, ...]?}``; the response is the sample. The source runs in the sandbox (no
network, private filesystem, limits) with ``sample = {"output_text": response,
"output_json": parsed or None}`` and the item. Its return value, a number, is the reward.

Statuses keep the two layers apart, and place a failure on whoever caused it:

- a grader that does not import, or that fails on every sample, is the grader's fault
  (``invalid: grader_failed`` with the traceback's last line); a broken sandbox is
  ``error``;
- a grader that raises, exits, prints no score or runs out of time on *this response*,
  while it grades a probe, was broken by the response: the item scores ``params.floor``
  (0), flagged ``grader_failed`` or ``grader_timeout``. Otherwise a response could buy a
  status a trainer masks or retries instead of a low reward. The probes are
  ``reference.probes`` (output texts the grader is known to grade, e.g. the gold answer)
  or, by default, the item's own top-level string values; ``probes: []`` turns it off;
- a grader too slow on the probes as well is ``timeout``, and so is one that ran out of
  time on the response when the item has no time left to grade a probe. Under an
  executor the first run's ``timeout_s`` is cut to 0.56 of the item timeout
  (`placed_run_limit`) to leave the probes the rest of 0.8 of it.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox import CaseOutcome, CaseStatus, Sandbox
from referee.verifiers.base import (
    ItemInvalid,
    ItemTimeout,
    ItemVerifier,
    Outcome,
    Params,
    parse_reference,
    placed_run_limit,
    rerun_limit,
)
from referee.verifiers.code.runtime import SandboxHandle, handle_of
from referee.verifiers.sandboxed_python import run_python
from referee.verifiers.types import Item, Pool

#: Probes taken from the item by default, and the longest one.
DEFAULT_PROBES = 4
MAX_PROBE_CHARS = 100_000

# The harness reads every sample from stdin and writes, after importing the grader, a
# line saying so, then one score line per sample it graded. Both lines carry a nonce made
# per run: a grader that prints its sample cannot let a response forge them.
HARNESS = """
import json, sys
data = json.loads(sys.stdin.read())
import grader
tag = "\\n\\x1ereferee-{nonce}:"
sys.stdout.write(tag + "imported\\n")
sys.stdout.flush()
for sample in data["samples"]:
    try:
        score = grader.grade(sample, data["item"])
    except Exception:
        if not data["probing"]:
            raise
        continue
    sys.stdout.write(tag + json.dumps(score) + "\\n")
    sys.stdout.flush()
"""


class PythonGraderParams(Params):
    timeout_s: float = Field(default=10.0, gt=0, le=60)
    memory_mb: int = Field(default=512, ge=64, le=4096)
    floor: float = Field(default=0.0, allow_inf_nan=False)


class GraderReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=256_000)
    item: dict[str, Any] = Field(default_factory=dict)
    probes: list[str] | None = Field(default=None, max_length=8)


@dataclass(frozen=True)
class GraderRun:
    """What one sandbox run of the harness showed."""

    imported: bool
    scores: list[float | None]  # one per score line: None when not a finite number
    outcome: CaseOutcome

    @property
    def failure(self) -> str:
        """The run's last stderr line, or its status."""
        lines = self.outcome.stderr.strip().splitlines()
        return lines[-1] if lines else self.outcome.status.value


class PythonGraderVerifier(ItemVerifier[PythonGraderParams]):
    name = "python_grader"
    pool = Pool.SANDBOX
    Params = PythonGraderParams
    description = "OpenAI-style python grader: grade(sample, item) run in the sandbox."

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    def check(self, item: Item, params: PythonGraderParams) -> Outcome:
        reference = parse_reference(GraderReference, item.reference)
        probes = _probes(reference)
        start = time.monotonic()
        limit = placed_run_limit(params.timeout_s)
        run = self._graded(reference, [sample_of(item.response_text())], limit, params, False)
        details: dict[str, Any] = {"stderr": run.outcome.stderr[-2000:]}
        if limit < params.timeout_s:
            details["time_limit_s"] = limit
        if run.outcome.status == CaseStatus.OK and run.scores and run.scores[-1] is not None:
            return Outcome(reward=run.scores[-1], details=details)
        if run.imported and probes and self._grades_a_probe(reference, probes, start, params):
            timed_out = run.outcome.status == CaseStatus.TIMEOUT
            flag = "grader_timeout" if timed_out else "grader_failed"
            reason = f"the grader failed on this response: {run.failure}"
            return Outcome(params.floor, details={**details, "flags": [flag], "reason": reason})
        raise _unplaced(run, limit)

    def _grades_a_probe(
        self,
        reference: GraderReference,
        probes: list[str],
        start: float,
        params: PythonGraderParams,
    ) -> bool:
        """True when the grader returns a finite number for at least one probe, within
        what is left of the item's time since ``start``: it works, so a failure on the
        response is the response's doing."""
        limit = rerun_limit(params.timeout_s, start)
        if limit is None:
            return False  # no time left to tell
        samples = [sample_of(text) for text in probes]
        run = self._graded(reference, samples, limit, params, True)
        return any(score is not None for score in run.scores)

    def _graded(
        self,
        reference: GraderReference,
        samples: list[dict[str, Any]],
        limit: float,
        params: PythonGraderParams,
        probing: bool,
    ) -> GraderRun:
        nonce = secrets.token_hex(16)
        stdin = json.dumps({"samples": samples, "item": reference.item, "probing": probing})
        harness = HARNESS.replace("{nonce}", nonce)
        files = {"grader.py": reference.source}
        outcome = run_python(self._sandbox.get(), harness, stdin, limit, params.memory_mb, files)
        return _read(outcome, f"\n\x1ereferee-{nonce}:")


def sample_of(text: str) -> dict[str, Any]:
    """The ``sample`` argument: the output text, and its JSON when it parses."""
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):  # the response's text: it may be anything
        parsed = None
    return {"output_text": text, "output_json": parsed}


def _probes(reference: GraderReference) -> list[str]:
    """The output texts a working grader grades: the reference's, or the item's own
    top-level strings."""
    if reference.probes is not None:
        return reference.probes
    texts = [v for v in reference.item.values() if isinstance(v, str) and v.strip()]
    return [text for text in texts if len(text) <= MAX_PROBE_CHARS][:DEFAULT_PROBES]


def _unplaced(run: GraderRun, limit: float) -> ItemTimeout | ItemInvalid:
    """The status of a run that gave no score when no probe shows the grader works."""
    if run.outcome.status == CaseStatus.TIMEOUT:
        return ItemTimeout(f"the grader ran longer than {limit:g} s")
    if run.outcome.status != CaseStatus.OK or not run.imported:
        return ItemInvalid("grader_failed", f"reference.source: the grader failed: {run.failure}")
    return ItemInvalid("grader_failed", "reference.source: grade() must return a finite number")


def _read(outcome: CaseOutcome, tag: str) -> GraderRun:
    lines = outcome.stdout.split(tag)[1:]
    imported = bool(lines) and lines[0].split("\n", 1)[0] == "imported"
    scores = [_number(line.split("\n", 1)[0]) for line in lines[1:]] if imported else []
    return GraderRun(imported=imported, scores=scores, outcome=outcome)


def _number(text: str) -> float | None:
    try:
        value = json.loads(text.strip())
    except (ValueError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
