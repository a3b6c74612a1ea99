"""Per-run cgroups for memory and process limits, on cgroup v1 or v2 — detected, never
assumed. `detect` looks at /proc/self/cgroup and /proc/self/mountinfo once and tries to
create (and remove) a child group; anything missing or read-only means "not available",
and the sandbox then relies on rlimits alone (see `doctor`).

Groups are created under the caller's own cgroup (``<own>/referee-<pid>-<n>``), so a
container's or a service manager's limits still bound them.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

_counter = itertools.count()


@dataclass(frozen=True)
class CgroupSupport:
    """Where memory and pids groups can be made. ``None`` means that controller is absent."""

    version: int
    memory: Path | None
    pids: Path | None
    cpu: Path | None = None

    def describe(self) -> str:
        """One line for `referee doctor`."""
        parts = [
            f"{name} at {path}"
            for name, path in (("memory", self.memory), ("pids", self.pids))
            if path
        ]
        return f"cgroup v{self.version}: " + (", ".join(parts) or "no usable controller")


def _own_paths() -> dict[str, str]:
    """controller name (or '' for v2) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _mounts() -> dict[str, Path]:
    """controller name (or '' for the v2 hierarchy) -> mount point."""
    mounts: dict[str, Path] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _, options = right.split(" ")[:3]
        point = Path(left.split(" ")[4])
        if fstype == "cgroup2":
            mounts.setdefault("", point)
        elif fstype == "cgroup":
            for opt in options.split(","):
                mounts.setdefault(opt, point)
    return mounts


def _writable_parent(mount: Path, own: str) -> Path | None:
    """The caller's group under ``mount`` if a child group can be created there."""
    parent = mount / own.lstrip("/")
    probe = parent / f"referee-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return None
    return parent


@functools.lru_cache(maxsize=1)
def detect() -> CgroupSupport | None:
    """What this host allows; cached for the process. None when no cgroup is usable."""
    try:
        own, mounts = _own_paths(), _mounts()
    except OSError:
        return None
    if "memory" in mounts or "pids" in mounts:
        memory = pids = cpu = None
        if "cpuacct" in mounts:
            cpu = _writable_parent(mounts["cpuacct"], own.get("cpuacct", "/"))
        if "memory" in mounts:
            memory = _writable_parent(mounts["memory"], own.get("memory", "/"))
        if "pids" in mounts:
            pids = _writable_parent(mounts["pids"], own.get("pids", "/"))
        if memory or pids:
            return CgroupSupport(1, memory, pids, cpu)
    if "" in mounts:
        parent = _writable_parent(mounts[""], own.get("", "/"))
        if parent is not None:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            if "memory" in enabled or "pids" in enabled:
                return CgroupSupport(
                    2,
                    parent if "memory" in enabled else None,
                    parent if "pids" in enabled else None,
                    parent,
                )
    return None


class CaseCgroup:
    """One group per sandboxed run, removed by `close` (which first kills what is left).

    Not thread-safe; one owner. Raises OSError when the host refuses a write."""

    def __init__(
        self, support: CgroupSupport, memory_bytes: int, max_pids: int, kind: str = "run"
    ) -> None:
        self.support = support
        # "referee-<pid>-<n>" for one run, "referee-pool-<pid>-<n>" for the long-lived
        # fast-path server, so a leak check can tell them apart.
        prefix = "referee" if kind == "run" else f"referee-{kind}"
        name = f"{prefix}-{os.getpid()}-{next(_counter)}"
        self.dirs: list[Path] = []
        parents = (support.memory, support.pids, support.cpu)
        for parent in dict.fromkeys(p for p in parents if p):
            path = parent / name
            path.mkdir()
            self.dirs.append(path)
        self.memory = support.memory / name if support.memory else None
        self.pids = support.pids / name if support.pids else None
        self.cpu = support.cpu / name if support.cpu else None
        try:
            self._limit(memory_bytes, max_pids)
        except OSError:
            self.close()
            raise

    def _limit(self, memory_bytes: int, max_pids: int) -> None:
        if self.memory is not None:
            if self.support.version == 1:
                (self.memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                # Without this, a v1 group may swap instead of being OOM-killed.
                with contextlib.suppress(OSError):
                    (self.memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):
                    (self.memory / "memory.swappiness").write_text("0")
            else:
                (self.memory / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):
                    (self.memory / "memory.swap.max").write_text("0")
        if self.pids is not None:
            (self.pids / "pids.max").write_text(str(max_pids))

    def add(self, pid: int) -> None:
        """Move ``pid`` (a host pid) into every controller's group."""
        for path in self.dirs:
            (path / "cgroup.procs").write_text(str(pid))

    def peak_bytes(self) -> int:
        """Peak memory use of the group, 0 when unknown."""
        if self.memory is None:
            return 0
        name = "memory.max_usage_in_bytes" if self.support.version == 1 else "memory.peak"
        try:
            return int((self.memory / name).read_text())
        except (OSError, ValueError):
            return 0

    def cpu_seconds(self) -> float | None:
        """CPU time used by everything that ran in the group, None when unknown."""
        if self.cpu is None:
            return None
        try:
            if self.support.version == 1:
                return int((self.cpu / "cpuacct.usage").read_text()) / 1e9
            stat = dict(line.split() for line in (self.cpu / "cpu.stat").read_text().splitlines())
            return int(stat["usage_usec"]) / 1e6
        except (OSError, ValueError, KeyError):
            return None

    def oom_killed(self) -> bool:
        """True when the kernel killed something in the group for memory."""
        if self.memory is None:
            return False
        name = "memory.oom_control" if self.support.version == 1 else "memory.events"
        try:
            lines = (self.memory / name).read_text().splitlines()
        except OSError:
            return False
        counts = dict(line.split() for line in lines if len(line.split()) == 2)
        return int(counts.get("oom_kill", "0")) > 0

    def pids_left(self) -> list[int]:
        """Host pids still in the group."""
        pids: set[int] = set()
        for path in self.dirs:
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return sorted(pids)

    def close(self) -> None:
        """Kill every process left in the group, then remove it. Best effort, bounded
        (about 2 s); a group that cannot be removed is reported by `doctor`-style checks
        as a leftover, never silently reused."""
        deadline = time.monotonic() + 2.0
        for path in reversed(self.dirs):
            while True:
                for pid in self.pids_left():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.005)
        self.dirs = []
