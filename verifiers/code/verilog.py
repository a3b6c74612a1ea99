"""The ``verilog`` verifier: compile the response's design with the reference's
testbench under iverilog (``-g2012``), simulate with vvp, and read the testbench's report.

``reference``: ``{"testbench": str}`` (or the testbench as a plain string). The design is
the last ``verilog``/``systemverilog`` fenced block (or untagged block, or the whole
response). Reward: 0.0 when the simulation output matches ``fail_pattern``, else 1.0 when
it matches ``pass_pattern``, else 0.0 (no verdict printed). A design that does not
compile, a simulation that crashes or runs out of time: ``ok`` with reward 0. A sandbox
failure: ``error``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from referee.sandbox import Case, CaseStatus, CompileStatus, Limits, Program, Sandbox
from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params, run_limit
from referee.verifiers.code.extraction import extract_code
from referee.verifiers.code.runtime import SandboxHandle, handle_of, require_ok
from referee.verifiers.types import Item, Pool

OUTPUT_CHARS = 2000


class VerilogParams(Params):
    pass_pattern: str = r"(?i)\b(all tests passed|pass(ed)?)\b"
    fail_pattern: str = r"(?i)\b(fail(ed|ure|s)?|error|mismatch(es)?\s*[:=]?\s*[1-9])"
    """Checked first: a testbench that prints both passed and failed lines has failed."""
    time_limit_s: float = Field(default=10.0, gt=0, le=60)
    memory_mb: int = Field(default=256, ge=16, le=4096)

    @field_validator("pass_pattern", "fail_pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


class VerilogVerifier(ItemVerifier[VerilogParams]):
    """Reward 1/0 from the testbench's pass/fail report (see the module docstring)."""

    name = "verilog"
    pool = Pool.SANDBOX
    Params = VerilogParams
    description = "Simulate the response's Verilog design under the reference testbench (iverilog)."

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    def check(self, item: Item, params: VerilogParams) -> Outcome:
        testbench = _testbench(item.reference)
        found = extract_code(item.response_text(), "verilog")
        details: dict[str, Any] = {"extraction": found.source}
        if found.source == "none":
            return Outcome(0.0, details={**details, "message": "no code found in the response"})
        try:
            found.code.encode("utf-8")
        except UnicodeEncodeError:
            return Outcome(0.0, details={**details, "message": "the code is not valid UTF-8"})
        sandbox = self._sandbox.get()
        # A design that never finishes fails its simulation: within the item timeout, or
        # the item would time out instead (a status a trainer masks).
        limit = run_limit(params.time_limit_s, runs=1)
        if limit < params.time_limit_s:
            details["time_limit_s"] = limit
        limits = Limits(wall_s=limit, cpu_s=limit, memory_mb=params.memory_mb)
        program = Program(language="verilog", source=testbench, files={"design.v": found.code})
        report = require_ok(sandbox.run(program, [Case()], limits))
        if report.compile is not None and report.compile.status is not CompileStatus.OK:
            details["compile_error"] = report.compile.output[-OUTPUT_CHARS:]
            return Outcome(0.0, details={**details, "message": "the design does not compile"})
        run = report.cases[0]
        output = run.stdout + run.stderr
        details.update(status=run.status.value, output=output[-OUTPUT_CHARS:], time_s=run.wall_s)
        if run.status is not CaseStatus.OK:
            return Outcome(0.0, details={**details, "message": f"simulation {run.status.value}"})
        if re.search(params.fail_pattern, output):
            return Outcome(0.0, details={**details, "verdict": "fail"})
        if re.search(params.pass_pattern, output):
            return Outcome(1.0, details={**details, "verdict": "pass"})
        return Outcome(
            0.0,
            details={
                **details,
                "verdict": "none",
                "message": "the testbench printed no pass/fail verdict",
            },
        )


def _testbench(reference: object) -> str:
    if isinstance(reference, dict):
        reference = reference.get("testbench")
    if not isinstance(reference, str) or not reference.strip():
        raise ItemInvalid(
            "invalid_reference", "reference.testbench: expected the testbench source (a string)"
        )
    try:
        reference.encode("utf-8")
    except UnicodeEncodeError:
        raise ItemInvalid("invalid_reference", "reference.testbench: not valid UTF-8") from None
    return reference
