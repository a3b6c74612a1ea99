"""A process killed in the middle of a run leaves its program directory and cgroup
behind; the next sandbox made on the host (a replacement worker, a restarted server)
removes them, and never touches those of a live process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.sandbox import cgroups, leftovers
from tests.conftest import REPO

from .conftest import needs_bwrap, sandboxed_pids

_KILLED_MID_RUN = """
import sys
from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings
settings = SandboxSettings(backend="bwrap", python_fast_path=False)
with Sandbox(settings) as box:
    box.run(Program(language="python3", source="import time; time.sleep(60)"), [Case()],
            Limits(wall_s=60, cpu_s=5))
"""


def _made_by(pid: int, root: Path) -> tuple[list[Path], list[Path]]:
    """Program directories under ``root`` and cgroups named after ``pid``."""
    dirs = list(root.glob(f"referee-box-{pid}-*"))
    support = cgroups.detect()
    parents = {p for p in (support.memory, support.pids, support.cpu) if p} if support else set()
    groups = [g for parent in parents for g in parent.glob(f"referee-{pid}-*")]
    return dirs, groups


def _wait_for(check: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)


def _program_runs() -> bool:
    """True once the sandboxed program itself (not just bwrap setting up) is running."""
    for pid in sandboxed_pids():
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"/usr/bin/python3"):
                return True
    return False


def _start_and_kill(work_root: Path, when: str) -> tuple[int, list[Path]]:
    """Start a run in a child process, SIGKILL the child once ``when`` holds ("dir": its
    program directory exists, so bwrap may not even be started; "running": the sandboxed
    program runs), and return the child's pid and the cgroups it had made, read while it
    lived: once it is dead any sandbox starting on this host (another test worker's)
    may sweep them first."""
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_RUN],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        _wait_for(lambda: _made_by(child.pid, work_root)[0])
        if when == "running":
            _wait_for(_program_runs)
            assert _program_runs(), "the run never started"
        assert _made_by(child.pid, work_root)[0], "the run never started"
    finally:
        groups = _made_by(child.pid, work_root)[1]
        child.send_signal(signal.SIGKILL)
        child.wait()
    return child.pid, groups


@needs_bwrap
def test_what_a_killed_process_left_is_swept(work_root: Path) -> None:
    pid, made = _start_and_kill(work_root, "running")
    _wait_for(lambda: not sandboxed_pids(), timeout=5)
    assert sandboxed_pids() == [], "the sandbox did not die with its maker"
    dirs, groups = _made_by(pid, work_root)
    assert dirs, "nothing was left behind: this test proves nothing"
    assert bool(made) == (cgroups.detect() is not None)

    swept = leftovers.sweep(work_root)

    assert _made_by(pid, work_root) == ([], [])
    assert swept.directories >= 1
    assert swept.cgroups >= len(groups)  # those another worker's sweep had not taken


@needs_bwrap
@pytest.mark.parametrize("attempt", range(3))
def test_a_sandbox_orphaned_while_starting_is_killed_by_the_sweep(
    work_root: Path, attempt: int
) -> None:
    """Killed before bwrap armed --die-with-parent, the sandbox would run on with nobody
    to enforce its wall limit (the program sleeps 60 s): the sweep must end it."""
    pid, _ = _start_and_kill(work_root, "dir")
    time.sleep(0.5)  # let a fork in flight reach bwrap
    leftovers.sweep(work_root)
    _wait_for(lambda: not sandboxed_pids(), timeout=5)
    assert sandboxed_pids() == []
    assert _made_by(pid, work_root) == ([], [])


def test_a_live_process_keeps_its_directories(work_root: Path) -> None:
    mine = work_root / f"{leftovers.box_prefix()}keep"
    mine.mkdir()
    try:
        leftovers.sweep(work_root)
        assert mine.exists()
    finally:
        mine.rmdir()


def test_sweeping_a_missing_root_is_harmless(tmp_path: Path) -> None:
    assert leftovers.sweep(tmp_path / "absent") == leftovers.Swept(0, 0)
