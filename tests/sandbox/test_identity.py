"""Started as root, sandboxes start as unprivileged host users of their own
(`sandbox.identity`); their program directories are private to them."""

from __future__ import annotations

import ctypes
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from referee.sandbox import Case, Program, Sandbox, SandboxSettings
from referee.sandbox.identity import IdentityPool
from referee.sandbox.program_dir import ProgramDir
from referee.sandbox.types import SandboxFailure
from tests.sandbox.conftest import FAST, sandboxed_pids

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="only root can start other users")


def _host_uids(pids: list[int]) -> set[int]:
    uids = set()
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        uids.add(int(status.split("Uid:")[1].split()[0]))
    return uids


@root_only
def test_concurrent_runs_are_distinct_unprivileged_host_users(bwrap_sandbox: Sandbox) -> None:
    sleeper = Program(language="python3", source="import time; time.sleep(1)")
    threads = [
        threading.Thread(target=bwrap_sandbox.run, args=(sleeper, [Case()])) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 2
    uids: set[int] = set()
    while len(uids) < 3 and time.monotonic() < deadline:
        uids = _host_uids(sandboxed_pids())
        time.sleep(0.02)
    for thread in threads:
        thread.join()
    assert len(uids) == 3, uids
    base, span = FAST_SETTINGS.host_uid_base, FAST_SETTINGS.host_uid_span
    assert all(base <= uid < base + span for uid in uids), uids


FAST_SETTINGS = SandboxSettings()


@root_only
def test_the_fast_path_server_is_an_unprivileged_host_user(fast_sandbox: Sandbox) -> None:
    fast_sandbox.run(Program(language="python3", source="pass"), [Case()])
    server = fast_sandbox.resident_pids()[2:]
    assert server and 0 not in _host_uids(server)


def test_a_program_directory_is_private_to_its_run(work_root: Path) -> None:
    owner = IdentityPool(1_000_000_000, 16).acquire()
    box = ProgramDir(work_root, {"main.c": "int main(){}"}, owner)
    path = box.path()
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        assert stat.S_IMODE((path / "main.c").stat().st_mode) == 0o600
        if owner is not None:
            assert path.stat().st_uid == owner.uid
            assert (path / "main.c").stat().st_uid == owner.uid
    finally:
        box.remove()


def test_compiled_files_lose_setuid_bits(tmp_path: Path) -> None:
    box = ProgramDir(tmp_path, {"main.c": ""})
    planted = box.path() / "shell"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o6755)
    box.sanitize()
    assert stat.S_IMODE(planted.stat().st_mode) == 0o755
    box.remove()


@root_only
def test_a_work_root_other_users_cannot_reach_is_a_clear_failure(tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    box = ProgramDir(hidden, {"main.py": ""}, IdentityPool(1_000_000_000, 16).acquire())
    with pytest.raises(SandboxFailure, match="not reachable by other users"):
        box.path()


def test_the_pool_never_hands_one_uid_to_two_live_runs() -> None:
    pool = IdentityPool(1_000_000_000, 16, active=True)
    taken = [pool.acquire() for _ in range(16)]
    assert all(t is not None for t in taken)
    assert len({t.uid for t in taken if t is not None}) == 16
    first = taken[0]
    assert first is not None
    pool.release(first)
    again = pool.acquire()
    assert again is not None and again.uid == first.uid  # the only free one


def test_an_unprivileged_pool_hands_out_nothing() -> None:
    assert IdentityPool(1_000_000_000, 16, active=False).acquire() is None


def test_limits_apply_to_a_program_started_as_another_user() -> None:
    """rlimits are set inside the sandbox (prlimit), not from the host, which may lack
    CAP_SYS_RESOURCE over another user's process."""
    with Sandbox(SandboxSettings(python_fast_path=False, limits=FAST)) as sandbox:
        report = sandbox.run(
            Program(
                language="python3",
                source="import resource\nprint(resource.getrlimit(resource.RLIMIT_CPU))",
            ),
            [Case()],
        )
    assert report.cases[0].stdout.strip() == "(1, 2)", report


_INOTIFY_HOG = (
    "import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\nheld = 0\n"
    "while held < 100000 and libc.inotify_init1(0) >= 0:\n    held += 1\n"
    "print(held, ctypes.get_errno(), flush=True)\ntime.sleep(1.5)\n"
)


@root_only
def test_a_case_cannot_use_up_the_servers_inotify_instances(bwrap_sandbox: Sandbox) -> None:
    """inotify instances are counted per user: a case taking all it may leaves the
    server's (root's) untouched, since the case runs as a host user of its own."""
    libc = ctypes.CDLL(None, use_errno=True)
    failures: list[int] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            fd = libc.inotify_init1(os.O_CLOEXEC)
            if fd < 0:
                failures.append(ctypes.get_errno())
            else:
                os.close(fd)
            time.sleep(0.01)

    watcher = threading.Thread(target=probe)
    watcher.start()
    try:
        program = Program(language="python3", source=_INOTIFY_HOG)
        [case] = bwrap_sandbox.run(program, [Case()]).cases
    finally:
        done.set()
        watcher.join()
    held, errno = map(int, case.stdout.split())
    assert errno == 24, case  # EMFILE: the case did reach its per-user ceiling
    assert 0 < held < 100000
    assert failures == []
