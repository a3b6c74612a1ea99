"""The ``state`` verifier: a checker program judges a set of files — typically the end
state of a stateful session (what an agent's rollout left in its directory).

``params.files`` (relative path -> base64 of the bytes) are what is judged: the service
fills them from ``params.session`` (a snapshot of the session's directory taken when the
item is scored), or a client sends them as they are. ``reference``: the checker,
``{"check": source, "language": "python3"}`` or the source alone (python3).

The checker runs in a fresh sandbox of its own — never inside the session, whose code
could have changed anything there — with the program in its read-only ``/box`` and the
files in its working directory. Nothing of the files runs unless the checker runs it:
the interpreter does not search the working directory for modules (``python3 -s
/box/main.py``), and symlinks are not part of a snapshot. A checker that *imports or
executes* the judged files gives them its own process to tamper with: check outputs
instead, or score code with the ``code`` verifier (``params.session_response``).

Reward: 1.0 when the checker exits 0, 0.0 when it exits otherwise (the state fails the
check: ``details.exit_code`` and the end of its output say why). With
``params.partial``, a checker that exits 0 prints the reward, a number in [0, 1], as the
last line of its stdout. A checker that cannot compile, or that exits 0 without the
number ``partial`` asks for, is ``invalid`` (the reference's fault); over its time limit,
``timeout`` — unless it gives a verdict on an empty directory (the state of an agent that
did nothing): then it works, these files broke it, and they score 0, flagged
``checker_failed`` or ``checker_timeout``. Otherwise files that make a checker loop or
print garbage would buy a status a trainer masks or retries. Both runs fit in 0.8 of the
executor's item timeout: the first's ``time_limit_s`` is cut to 0.7 of that share
(`placed_run_limit`; ``details.time_limit_s`` when shortened), the empty directory gets
what is left (never more than the first had).
"""

from __future__ import annotations

import base64
import binascii
import math
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from referee.sandbox import Case, CaseOutcome, CaseStatus, CompileStatus, Limits, Program, Sandbox
from referee.sandbox.paths import MAX_FILES, relative_path
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
from referee.verifiers.code.runtime import SandboxHandle, handle_of, require_ok
from referee.verifiers.code.verifier import known_language
from referee.verifiers.types import Item, Pool

MAX_FILES_BYTES = 64 << 20
TAIL = 2000


class StateParams(Params):
    files: dict[str, str] = Field(default_factory=dict, max_length=MAX_FILES)
    """The judged files: relative path -> base64 of the content."""
    partial: bool = False
    """The checker prints the reward (a number in [0, 1]) as its last line of stdout."""
    time_limit_s: float = Field(default=10.0, gt=0, le=120)
    memory_mb: int = Field(default=512, ge=16, le=4096)

    @field_validator("files")
    @classmethod
    def _paths(cls, files: dict[str, str]) -> dict[str, str]:
        for name in files:
            if not relative_path(name):
                raise ValueError(f"{name[:64]!r} is not a relative path inside the directory")
        return files


class StateReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check: str = Field(min_length=1)
    language: str = "python3"

    @field_validator("language")
    @classmethod
    def _known(cls, value: str) -> str:
        return known_language(value)


class StateVerifier(ItemVerifier[StateParams]):
    """Reward from a checker program run over files (a session's end state)."""

    name = "state"
    pool = Pool.SANDBOX
    Params = StateParams
    description = (
        "A checker program judges files - a stateful session's end state (params.session) "
        "or files sent as they are - in a fresh sandbox: exit 0 passes, or it prints the reward."
    )

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    def check(self, item: Item, params: StateParams) -> Outcome:
        reference = _reference(item.reference)
        files = _decoded(params.files)
        start = time.monotonic()
        limit = placed_run_limit(params.time_limit_s)
        case = self._checked(reference, files, params, limit)
        details: dict[str, Any] = {
            "files": len(files),
            "exit_code": case.exit_code,
            "checker_status": case.status.value,
            "stdout": case.stdout[-TAIL:],
            "stderr": case.stderr[-TAIL:],
        }
        if limit < params.time_limit_s:
            details["time_limit_s"] = limit
        reward = _verdict(case, params.partial)
        if reward is not None:
            return Outcome(reward, details=details)
        if files and self._judges_empty(reference, params, start):
            flag = "checker_timeout" if case.status is CaseStatus.TIMEOUT else "checker_failed"
            return Outcome(0.0, details={**details, "flags": [flag]})
        if case.status is CaseStatus.TIMEOUT:
            raise ItemTimeout(f"the checker ran longer than {limit:g} s")
        last = (case.stdout.strip().splitlines() or [""])[-1][:100]
        raise ItemInvalid(
            "invalid_reference",
            f"reference.check: with params.partial the checker's last line must be a "
            f"reward in [0, 1], not {last!r}",
        )

    def _judges_empty(self, reference: StateReference, params: StateParams, start: float) -> bool:
        """True when the checker gives a verdict on an empty directory (the state of an
        agent that did nothing), within what is left of the item's time since ``start``:
        it works, so files it gave none on broke it, and fail."""
        limit = rerun_limit(params.time_limit_s, start)
        if limit is None:
            return False  # no time left to tell
        return _verdict(self._checked(reference, {}, params, limit), params.partial) is not None

    def _checked(
        self, reference: StateReference, files: dict[str, bytes], params: StateParams, limit: float
    ) -> CaseOutcome:
        """The checker's run over ``files``; `ItemInvalid` when it does not compile."""
        program = Program(language=reference.language, source=reference.check)
        limits = Limits(
            wall_s=limit,
            cpu_s=limit,
            memory_mb=params.memory_mb,
            disk_mb=max(64, (sum(map(len, files.values())) >> 20) * 2 + 16),
            file_size_mb=max(16, (max(map(len, files.values()), default=0) >> 20) + 1),
        )
        report = require_ok(self._sandbox.get().run(program, [Case(data_files=files)], limits))
        compiled = report.compile
        if compiled is not None and compiled.status not in (
            CompileStatus.OK,
            CompileStatus.SKIPPED,
        ):
            said = compiled.output[-TAIL:]
            raise ItemInvalid("invalid_reference", f"reference.check does not compile: {said}")
        return report.cases[0]


def _reference(raw: Any) -> StateReference:
    if isinstance(raw, str):
        raw = {"check": raw}
    return parse_reference(StateReference, raw)


def _decoded(files: dict[str, str]) -> dict[str, bytes]:
    decoded: dict[str, bytes] = {}
    for name, data in files.items():
        try:
            decoded[name] = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ItemInvalid("invalid_params", f"params.files.{name}: not base64") from None
    if sum(map(len, decoded.values())) > MAX_FILES_BYTES:
        raise ItemInvalid("invalid_params", f"params.files: over {MAX_FILES_BYTES} bytes in all")
    return decoded


def _verdict(case: CaseOutcome, partial: bool) -> float | None:
    """The reward a checker's run gives; None when it gave none (over its time limit, or
    exited 0 without the number ``partial`` asks for)."""
    if case.status is CaseStatus.TIMEOUT:
        return None
    if case.status is not CaseStatus.OK:
        return 0.0
    if not partial:
        return 1.0
    lines = case.stdout.strip().splitlines()
    try:
        value = float(lines[-1]) if lines else math.nan
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None
