"""Fixtures for the sandbox tests: real bwrap, real processes, and a leftover check that
runs after every test (no sandboxed process, no cgroup, no program directory left)."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, SandboxSettings
from sandbox.backends.bwrap import BwrapBackend

REPO_ROOT = Path(__file__).resolve().parents[2]

# Short limits keep the suite fast; escapes that spin or sleep hit them in about 1-2 s.
FAST = Limits(
    wall_s=2.0,
    cpu_s=1.0,
    memory_mb=128,
    processes=32,
    disk_mb=16,
    file_size_mb=8,
    output_bytes=64 << 10,
)

_BWRAP_PROBLEM = BwrapBackend(SandboxSettings()).problem()
needs_bwrap = pytest.mark.skipif(_BWRAP_PROBLEM is not None, reason=f"bwrap: {_BWRAP_PROBLEM}")


def _other_worker_owns(pid: int) -> bool:
    """True when ``pid`` descends from another pytest process (an xdist sibling's live run).
    A process that escaped its run is reparented away from every worker, so it still counts."""
    me = os.getpid()
    while pid > 1:
        if pid == me:
            return False
        try:
            if b"pytest" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def sandboxed_pids() -> list[int]:
    """Host pids of processes that run with the sandbox's environment (HOME=/work is set
    only inside the sandbox), i.e. anything a run left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        ours = b"HOME=/work\0" in env and b"TMPDIR=/work\0" in env
        if ours and not _other_worker_owns(int(entry.name)):
            found.append(int(entry.name))
    return found


def leftover_cgroups() -> list[Path]:
    """Groups named after this test process that still exist."""
    from sandbox import cgroups

    support = cgroups.detect()
    if support is None:
        return []
    prefix = f"referee-{os.getpid()}-"
    roots = {p for p in (support.memory, support.pids, support.cpu) if p}
    return [d for root in roots for d in root.iterdir() if d.name.startswith(prefix)]


# One program-directory root per test process, so xdist workers do not see each other's.
WORK_ROOT = Path(tempfile.mkdtemp(prefix=f"referee-test-{os.getpid()}-"))
os.environ["REFEREE_SANDBOX_WORK_ROOT"] = str(WORK_ROOT)


def boxes() -> set[str]:
    return {p.name for p in WORK_ROOT.glob("referee-box-*")}


_RESIDENT: list[Sandbox] = []


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    """Every test: after it, nothing of its runs is left on the host (the fast path's
    server is the one resident process allowed, and only its own three pids)."""
    before = boxes()
    yield
    resident = {pid for sandbox in _RESIDENT for pid in sandbox.resident_pids()}
    # Generous: under xdist, a sibling's killed tree is briefly reparented while it dies.
    deadline = time.monotonic() + 3.0
    while set(sandboxed_pids()) - resident and time.monotonic() < deadline:
        time.sleep(0.02)  # a killed tree is reaped asynchronously by its parent
    assert set(sandboxed_pids()) - resident == set(), "a sandboxed process outlived its run"
    assert leftover_cgroups() == [], "a run's cgroup was left behind"
    assert boxes() - before == set(), "a program directory was left behind"


@pytest.fixture(scope="session")
def bwrap_sandbox() -> Iterator[Sandbox]:
    if _BWRAP_PROBLEM is not None:
        pytest.skip(f"bwrap: {_BWRAP_PROBLEM}")
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=False, limits=FAST)) as sb:
        yield sb


@pytest.fixture(scope="session")
def fast_sandbox() -> Iterator[Sandbox]:
    if _BWRAP_PROBLEM is not None:
        pytest.skip(f"bwrap: {_BWRAP_PROBLEM}")
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=True, limits=FAST)) as sb:
        _RESIDENT.append(sb)
        yield sb
        _RESIDENT.remove(sb)


@pytest.fixture(params=["bwrap", "pyfast"])
def any_sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """Both isolating paths for Python programs: bwrap per case, and the fast path."""
    name = "bwrap_sandbox" if request.param == "bwrap" else "fast_sandbox"
    sandbox: Sandbox = request.getfixturevalue(name)
    return sandbox
