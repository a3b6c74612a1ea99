"""CPU time of a process, read by itself and by its parent on the same clock.

Budgets (`referee.verifiers.budget`) count CPU seconds, not wall seconds: on a loaded
machine an answer's check takes longer by the clock but the same CPU, so whether it is
within budget does not depend on what else runs. A worker notes its own CPU time when a
budget starts (`own_cpu_s`, from times(2)); the parent reads the worker's from
``/proc/<pid>/stat`` (`cpu_s`): the kernel's same user + system accounting, in the same
clock ticks.
"""

from __future__ import annotations

import os

_TICKS_PER_S = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
_UTIME = 11
"""Index of utime among the fields after the command name in ``/proc/<pid>/stat``
(field 14 of proc(5), counting from the state, field 3); stime follows it."""


def own_cpu_s() -> float:
    """This process's user + system CPU seconds."""
    times = os.times()
    return times.user + times.system


def cpu_s(pid: int) -> float | None:
    """Process ``pid``'s user + system CPU seconds; None where ``/proc`` cannot tell (not
    Linux, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return (int(fields[_UTIME]) + int(fields[_UTIME + 1])) / _TICKS_PER_S
    except (IndexError, ValueError):
        return None
