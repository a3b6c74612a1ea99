"""Fixtures for the sandbox tests: real bwrap, real processes, and a leftover check that
runs after every test (no sandboxed process, no cgroup, no program directory left)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox import Limits, Sandbox, SandboxSettings
from referee.sandbox.backends.bwrap import BwrapBackend
from tests.conftest import require

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


def _ours(entry: Path) -> bool:
    """True when the process belongs to this test process's runs.

    Every run bind-mounts a program directory from this process's work root (named
    ``referee-test-<pid>-``), so a sandboxed process shows that path in its mountinfo and
    the bwrap around it in its command line, however it has been reparented since. An
    xdist sibling's runs carry the sibling's pid instead and are not counted.
    """
    marker = f"referee-test-{os.getpid()}-"
    try:
        if marker.encode() in (entry / "cmdline").read_bytes():
            return True
        return marker in (entry / "mountinfo").read_text()
    except OSError:
        return False


def sandboxed_pids() -> list[int]:
    """Host pids of this test process's sandboxed processes (HOME=/work is set only for
    a run), i.e. after a test, anything its runs left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"HOME=/work\0" in env and b"TMPDIR=/work\0" in env and _ours(entry):
            found.append(int(entry.name))
    return found


def leftover_cgroups() -> list[Path]:
    """Groups named after this test process (runs and sessions) that still exist."""
    from referee.sandbox import cgroups

    support = cgroups.detect()
    if support is None:
        return []
    prefixes = (f"referee-{os.getpid()}-", f"referee-session-{os.getpid()}-")
    roots = {p for p in (support.memory, support.pids, support.cpu) if p}
    return [d for root in roots for d in root.iterdir() if d.name.startswith(prefixes)]


@pytest.fixture(scope="session", autouse=True)
def work_root() -> Iterator[Path]:
    """One program-directory root per test process, so xdist workers do not see each
    other's; every sandbox built in these tests reads it from the environment."""
    root = Path(tempfile.mkdtemp(prefix=f"referee-test-{os.getpid()}-"))
    root.chmod(0o711)  # run as root, sandboxes start as other users: they must traverse it
    os.environ["REFEREE_SANDBOX_WORK_ROOT"] = str(root)
    yield root
    del os.environ["REFEREE_SANDBOX_WORK_ROOT"]
    shutil.rmtree(root, ignore_errors=True)


def boxes() -> set[str]:
    """Program directories under the work root; a sandbox's build cache (`sandbox.builds`)
    lives as long as its sandbox, like the fast-path server, and is not one."""
    root = os.environ.get("REFEREE_SANDBOX_WORK_ROOT")
    found = {p.name for p in Path(root).glob("referee-box-*")} if root else set()
    return {name for name in found if "-builds-" not in name}


_RESIDENT: list[Sandbox] = []


def fast_path_strays() -> set[int]:
    """Processes under a resident fast-path server other than the server itself: a case
    (or something it started) still alive.

    Idle spares are told apart by their process name, which a case could also take; a
    case that renamed itself to hide would still be killed at its wall limit, so the
    check can miss a case only while it is still inside its limits."""
    strays: set[int] = set()
    for sandbox in _RESIDENT:
        chain = sandbox.resident_pids()
        if chain:
            found = set(descendants(chain[0]))
            # Resident pids read again, after the tree: a spare forked since the first
            # read is in the tree, and must be in the list it is subtracted from.
            strays |= found - set(sandbox.resident_pids())
    return strays


def descendants(pid: int) -> list[int]:
    """Every process under ``pid``: the children of each of its threads (a process a
    thread forked is listed under that thread only), and theirs."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    """Every test: after it, nothing of its runs is left on the host (the fast path's
    server is the one resident process allowed, and only its own pids), and no Python
    case silently left the fast path for the per-case bwrap fallback."""
    before = boxes()
    fallbacks = {id(sb): sb.fast_path_fallbacks for sb in _RESIDENT}
    yield
    resident = {pid for sandbox in _RESIDENT for pid in sandbox.resident_pids()}
    # A case's spare exits right after it reports and is reaped by its server: on the
    # 2-core CI machine under the full suite that once took over 3 s.
    deadline = time.monotonic() + 10.0
    while (set(sandboxed_pids()) - resident or fast_path_strays()) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.02)  # a killed tree is reaped asynchronously by its parent
    assert set(sandboxed_pids()) - resident == set(), "a sandboxed process outlived its run"
    assert fast_path_strays() == set(), "a fast-path case outlived its run"
    for sb in _RESIDENT:
        assert sb.fast_path_fallbacks == fallbacks.get(id(sb), 0), "fast path fell back"
    assert leftover_cgroups() == [], "a run's cgroup was left behind"
    assert boxes() - before == set(), "a program directory was left behind"


@pytest.fixture(scope="session")
def bwrap_sandbox(work_root: Path) -> Iterator[Sandbox]:
    require(_BWRAP_PROBLEM is None, f"bwrap: {_BWRAP_PROBLEM}")
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=False, limits=FAST)) as sb:
        yield sb


@pytest.fixture(scope="session")
def fast_sandbox(work_root: Path) -> Iterator[Sandbox]:
    require(_BWRAP_PROBLEM is None, f"bwrap: {_BWRAP_PROBLEM}")
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
