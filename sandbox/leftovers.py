"""What a killed process leaves behind, found by name and removed.

A run removes its program directory and its cgroup when it ends. A worker process killed
in the middle of a run (a preempted or timed-out pool worker, an OOM kill, a crash) cannot:
its sandboxed processes die with it (bwrap's ``--die-with-parent`` and the pid
namespace), but the directory on disk and the empty cgroup stay. Both carry the pid of
the process that made them (``referee-box-<pid>-…``, ``referee-<pid>-<n>``,
``referee-pool-<pid>-<n>``), so `sweep` can tell whose they are: anything whose maker is
no longer alive is removed. A live maker's things are never touched, whatever its pid.

Sandboxed processes can outlive their maker too, in one narrow window: a maker killed
after forking bwrap but before bwrap armed ``--die-with-parent`` leaves a sandbox that
nothing will ever stop (bwrap goes on when its block fd reads EOF). bwrap's command line
names the program directory it binds, so `sweep` finds and kills those as well.

Pids are only meaningful within one pid namespace: a work root must not be shared by
servers in different containers (each container's own temp dir, the default, is not).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox import cgroups

BOX_PREFIX = "referee-box-"
_BOX = re.compile(r"referee-box-(\d+)-")
_BOX_BYTES = re.compile(rb"/referee-box-(\d+)-")
_GROUP = re.compile(r"referee-(?:pool-|session-)?(\d+)-\d+$")
_RMDIR_WAIT_S = 2.0


def box_prefix() -> str:
    """The name prefix of a program directory made by this process."""
    return f"{BOX_PREFIX}{os.getpid()}-"


@dataclass(frozen=True)
class Swept:
    """What one `sweep` removed."""

    directories: int = 0
    cgroups: int = 0


def sweep(work_root: Path | None) -> Swept:
    """Remove program directories under ``work_root`` (None: the system temp dir) and
    cgroups under this process's parent groups whose maker is dead. Best effort: what
    cannot be removed now is left for the next sweep. Never raises for a missing root."""
    root = work_root or Path(tempfile.gettempdir())
    _kill_orphans()
    directories = 0
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            found = _BOX.match(entry.name)
            if found and not _alive(int(found.group(1))) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
                directories += not entry.exists()
    return Swept(directories, _sweep_cgroups())


def _kill_orphans() -> None:
    """SIGKILL every process whose command line binds a dead maker's program directory
    (killing bwrap's inner process, pid 1 of the sandbox, ends the whole sandbox)."""
    dead: dict[int, bool] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if not cmdline.split(b"\0", 1)[0].endswith(b"bwrap"):
            continue  # only sandboxes: never a host command that merely names the dir
        for found in _BOX_BYTES.finditer(cmdline):
            maker = int(found.group(1))
            if dead.setdefault(maker, not _alive(maker)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)
                break


def _sweep_cgroups() -> int:
    support = cgroups.detect()
    if support is None:
        return 0
    removed = 0
    for parent in dict.fromkeys(p for p in (support.memory, support.pids, support.cpu) if p):
        with contextlib.suppress(OSError):
            for entry in parent.iterdir():
                found = _GROUP.match(entry.name)
                if found and not _alive(int(found.group(1))) and _remove_group(entry):
                    removed += 1
    return removed


def _remove_group(group: Path) -> bool:
    """Kill whatever is still in ``group`` (normally nothing: it died with its maker),
    then remove it. True when it is gone."""
    deadline = time.monotonic() + _RMDIR_WAIT_S
    while True:
        with contextlib.suppress(OSError):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        try:
            group.rmdir()
            return True
        except FileNotFoundError:
            return False
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def _alive(pid: int) -> bool:
    """True when ``pid`` names a process that is not a zombie (a dead maker awaiting its
    parent's wait still holds its pid but will never clean up)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
