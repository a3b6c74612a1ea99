"""Turn what a backend saw (`Execution`) into a per-case `CaseOutcome` status.

Order matters: output over budget, then a kernel OOM kill, then the wall deadline, then
CPU limit signals, then signals, then exit codes. When no cgroup reported an OOM kill, a
failing program is ``memory_limit`` if it peaked near the limit or its stderr carries a
runtime's out-of-memory message (the rlimit made an allocation fail); documented as a
heuristic because an rlimit failure looks like any other error to the kernel.
"""

from __future__ import annotations

import base64
import re
import signal

from referee.sandbox.backends.base import Execution
from referee.sandbox.types import CaseOutcome, CaseStatus, Limits

_OOM_TEXT = re.compile(
    rb"MemoryError|std::bad_alloc|OutOfMemoryError|heap out of memory|"
    rb"Fatal process out of memory|runtime: out of memory|memory allocation of \d+ bytes failed"
)
_CPU_SIGNALS = {signal.SIGXCPU.value}


def case_status(ex: Execution, limits: Limits) -> CaseStatus:
    """The status of one case; see the module docstring for the order of checks."""
    if ex.output_exceeded:
        return CaseStatus.OUTPUT_LIMIT
    if ex.oom_killed:
        return CaseStatus.MEMORY_LIMIT
    if ex.timed_out:
        return CaseStatus.TIMEOUT
    if ex.returncode < 0:
        sig = -ex.returncode
        if sig in _CPU_SIGNALS or (sig == signal.SIGKILL and ex.cpu_s >= limits.cpu_s):
            return CaseStatus.TIMEOUT
        if _near_memory_limit(ex, limits):
            return CaseStatus.MEMORY_LIMIT
        return CaseStatus.SIGNAL
    if ex.returncode == 0:
        return CaseStatus.OK
    if _near_memory_limit(ex, limits):
        return CaseStatus.MEMORY_LIMIT
    return CaseStatus.RUNTIME_ERROR


def _near_memory_limit(ex: Execution, limits: Limits) -> bool:
    if ex.memory_kb >= 0.9 * (limits.memory_mb << 10):
        return True
    return _OOM_TEXT.search(ex.stderr[-4096:]) is not None


def outcome(ex: Execution, limits: Limits) -> CaseOutcome:
    """Build the public `CaseOutcome` of one case."""
    status = case_status(ex, limits)
    return CaseOutcome(
        status=status,
        exit_code=ex.returncode if ex.returncode >= 0 else None,
        signal=-ex.returncode if ex.returncode < 0 else None,
        stdout=ex.stdout.decode("utf-8", errors="replace"),
        stderr=ex.stderr.decode("utf-8", errors="replace"),
        wall_s=round(ex.wall_s, 6),
        cpu_s=round(ex.cpu_s, 6),
        memory_kb=ex.memory_kb,
        truncated=ex.output_exceeded,
        files={name: base64.b64encode(data).decode() for name, data in ex.files.items()},
    )
