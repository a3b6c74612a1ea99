"""The ``verilog`` verifier: compile the response's design with the reference's
testbench under iverilog (``-g2012``), simulate with vvp, and read the testbench's report.

``reference``: ``{"testbench": str}`` (or the testbench as a plain string). The design is
the last ``verilog``/``systemverilog`` fenced block (or untagged block, or the whole
response). Reward: 0.0 when the simulation output matches ``fail_pattern``, else 1.0 when
it matches ``pass_pattern``, else 0.0 (no verdict printed). A design that does not
compile, a simulation that crashes or runs out of time: ``ok`` with reward 0. A sandbox
failure: ``error``.

The verdict is read from the simulation's output, so it must be the testbench's alone.
A design could otherwise print the pass line and end the simulation before the
testbench checks anything (``$display("ALL TESTS PASSED"); $finish;``), or write the
testbench's error counter through a hierarchical name (``tb.errors = 0``). So a design:

- calls only the system functions in `DESIGN_SYSTEM_CALLS` (arithmetic, sizes, random
  numbers, time, assertions' sampled values): nothing that prints, ends or pauses the
  simulation, reads or writes files, or runs commands; a ``$`` anywhere else in its code
  (comments and strings aside) scores 0, flagged ``design_system_task``;
- compiles on its own, without the testbench: a name it cannot resolve in itself (a
  reach into the testbench) scores 0, flagged ``not_self_contained``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import Field, field_validator

from referee.sandbox import (
    Case,
    CaseOutcome,
    CaseStatus,
    CompileOutcome,
    CompileStatus,
    Limits,
    Program,
    Sandbox,
)
from referee.verifiers.base import (
    ItemInvalid,
    ItemVerifier,
    Outcome,
    Params,
    runs_end,
    time_left,
)
from referee.verifiers.code.extraction import extract_code
from referee.verifiers.code.runtime import SandboxHandle, handle_of, require_ok
from referee.verifiers.types import Item, Pool

OUTPUT_CHARS = 2000
COMPILE_S = 60.0
"""A build's own limit (the sandbox's default); under an executor, what is left of the
item's time instead when less."""

DESIGN_SYSTEM_CALLS = frozenset(
    {
        *("$clog2", "$signed", "$unsigned", "$bits", "$size", "$high", "$low", "$left"),
        *("$right", "$increment", "$dimensions", "$unpacked_dimensions", "$typename"),
        *("$countones", "$countbits", "$onehot", "$onehot0", "$isunknown", "$cast"),
        *("$rtoi", "$itor", "$realtobits", "$bitstoreal", "$shortrealtobits"),
        *("$bitstoshortreal", "$floor", "$ceil", "$sqrt", "$pow", "$ln", "$log10", "$exp"),
        *("$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$atan2", "$hypot", "$sinh"),
        *("$cosh", "$tanh", "$asinh", "$acosh", "$atanh"),
        *("$random", "$urandom", "$urandom_range", "$dist_uniform", "$time", "$stime"),
        *("$realtime", "$past", "$rose", "$fell", "$stable", "$changed", "$sformatf"),
    }
)
"""The system functions a design may call; every other ``$`` name is refused."""
# Comments and string literals, blanked before the design's ``$`` names are read; a ``$``
# not inside an identifier (``a$b`` is one) starts a system name, or stands alone (a
# macro pasting ``$`` to a name, which is refused as well).
_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.DOTALL)
_SYSTEM_NAME = re.compile(r"(?<![A-Za-z0-9_$])\$[A-Za-z0-9_$]*")


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
    version = 2  # 1 scored designs that print or end the simulation themselves
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
        # A design that never finishes, or whose elaboration runs on (a constant function
        # looping at compile time), fails: its two builds and its simulation together end
        # within the item timeout, or the item would time out instead (a status a trainer
        # masks).
        began = time.monotonic()
        refusal = self._refusal(found.code, began)
        if refusal is not None:
            return Outcome(0.0, details={**details, **refusal})
        build = time_left(COMPILE_S, began)
        limit = params.time_limit_s
        limits = Limits(wall_s=limit, cpu_s=limit, memory_mb=params.memory_mb, compile_wall_s=build)
        program = Program(language="verilog", source=testbench, files={"design.v": found.code})
        sandbox = self._sandbox.get()
        report = require_ok(sandbox.run(program, [Case()], limits, end_by=runs_end(began)))
        compiled = report.compile
        if compiled is not None and compiled.status is not CompileStatus.OK:
            failed = _not_built(compiled, "the design does not compile")
            return Outcome(0.0, details={**details, **failed})
        if not report.cases:  # the builds left no time to simulate
            message = "the builds took the item's time: the design was not simulated"
            return Outcome(0.0, details={**details, "message": message, "flags": ["time_budget"]})
        return _verdict(report.cases[0], params, details)

    def _refusal(self, design: str, began: float) -> dict[str, Any] | None:
        """Why ``design`` is refused before it meets the testbench (details of its 0), or
        None: a system task only a testbench may call, or a name outside itself (its
        build, within what is left of the item's time since ``began``)."""
        refused = refused_system_calls(design)
        if refused:
            message = f"the design calls what only a testbench may: {', '.join(refused)}"
            return {"message": message, "flags": ["design_system_task"]}
        alone = Program(language="verilog", source=design)
        limits = Limits(compile_wall_s=time_left(COMPILE_S, began))
        compiled = require_ok(self._sandbox.get().run(alone, [], limits)).compile
        if compiled is not None and compiled.status is not CompileStatus.OK:
            message = "the design does not compile on its own (without the testbench)"
            return _not_built(compiled, message, "not_self_contained")
        return None


def _not_built(compiled: CompileOutcome, message: str, flag: str | None = None) -> dict[str, Any]:
    """The details of a 0 for a build that failed (``message``, ``flag``) or ran out of
    time (flagged ``compile_timeout``)."""
    found: dict[str, Any] = {"compile_error": compiled.output[-OUTPUT_CHARS:]}
    if compiled.status is CompileStatus.TIMEOUT:
        message, flag = "building the design ran out of time", "compile_timeout"
    return {**found, "message": message, **({"flags": [flag]} if flag else {})}


def _verdict(run: CaseOutcome, params: VerilogParams, details: dict[str, Any]) -> Outcome:
    """The testbench's verdict from the simulation's output."""
    output = run.stdout + run.stderr
    details.update(status=run.status.value, output=output[-OUTPUT_CHARS:], time_s=run.wall_s)
    if run.status is not CaseStatus.OK:
        return Outcome(0.0, details={**details, "message": f"simulation {run.status.value}"})
    if re.search(params.fail_pattern, output):
        return Outcome(0.0, details={**details, "verdict": "fail"})
    if re.search(params.pass_pattern, output):
        return Outcome(1.0, details={**details, "verdict": "pass"})
    message = "the testbench printed no pass/fail verdict"
    return Outcome(0.0, details={**details, "verdict": "none", "message": message})


def refused_system_calls(design: str) -> list[str]:
    """The ``$`` names in ``design``'s code (comments and strings aside) that are not in
    `DESIGN_SYSTEM_CALLS`, sorted; a lone ``$`` is listed as itself."""
    code = _NOT_CODE.sub(" ", design)
    return sorted({name for name in _SYSTEM_NAME.findall(code) if name not in DESIGN_SYSTEM_CALLS})


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
