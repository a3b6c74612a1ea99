"""The fast path's wire format, typed: what the host sends the server for one case (a
JSON header, beside four fds) and what the server reports back on the case's control
socket. `server.py` runs inside the sandbox with the standard library only and cannot
import this module: it reads and writes exactly these keys."""

from __future__ import annotations

from typing import TypedDict


class CaseRequest(TypedDict):
    """Host -> server: the case's files (``main.py`` among them), argv and limits."""

    files: dict[str, str]
    argv: list[str]
    wall_s: float
    cpu_s: int
    memory_bytes: int
    fsize_bytes: int
    processes: int
    disk_bytes: int


class CaseReport(TypedDict, total=False):
    """Server -> host: how the case ended, or ``error`` when the server could not run it."""

    returncode: int
    wall_s: float
    cpu_s: float
    maxrss_kb: int
    timed_out: bool
    error: str
