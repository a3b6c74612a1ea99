"""Start one host process and watch it: feed stdin, read capped output while it runs,
enforce the wall-clock deadline, kill the whole tree, and collect exit status and usage.

Backends build the argv (bwrap, prlimit...) and hand `watch` two hooks: ``prepare`` runs
after the process exists but before the untrusted program starts (cgroup placement,
rlimits), and ``kill`` tears the whole tree down (a process-group kill is not enough for
namespaced children). No signal-based timeouts: deadlines are selector timeouts.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from referee.sandbox.identity import HostIdentity, as_user
from referee.sandbox.output import CappedOutput

_CHUNK = 1 << 16
# After the main process exits, how long to wait for pipe EOF before killing what holds
# the pipes open (a daemon that escaped the wait, in the non-namespaced backend).
_DRAIN_S = 0.2


@dataclass
class Watched:
    """What `watch` saw. ``returncode`` follows subprocess: negative means killed by that
    signal. ``wall_s`` runs from the program's release to its exit."""

    returncode: int
    output: CappedOutput
    wall_s: float
    cpu_s: float
    maxrss_kb: int
    timed_out: bool


@dataclass
class Spawn:
    """How to start and control the process; see the module docstring for the hooks."""

    argv: list[str]
    env: dict[str, str]
    stdin: bytes
    wall_s: float
    output_bytes: int
    cwd: str | None = None
    pass_fds: tuple[int, ...] = ()
    prepare: Callable[[subprocess.Popen[bytes]], None] | None = None
    release: Callable[[], None] | None = None
    kill: Callable[[subprocess.Popen[bytes]], None] | None = None
    identity: HostIdentity | None = None
    """Start the process as this host user (see `sandbox.identity`); None: as ourselves."""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)


def watch(spawn: Spawn) -> Watched:
    """Run ``spawn`` to completion (or its deadline). Raises OSError if it cannot start;
    the process is always reaped, even when a hook raises."""
    proc = subprocess.Popen(
        spawn.argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=spawn.env,
        cwd=spawn.cwd,
        pass_fds=spawn.pass_fds,
        start_new_session=True,
        **as_user(spawn.identity),
    )
    kill = spawn.kill or _kill_group
    try:
        _give_pipes(proc, spawn.identity)
        if spawn.prepare is not None:
            spawn.prepare(proc)
        if spawn.release is not None:
            spawn.release()
        return _loop(proc, spawn, kill)
    finally:
        if proc.returncode is None:
            kill(proc)
            _reap(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _give_pipes(proc: subprocess.Popen[bytes], identity: HostIdentity | None) -> None:
    """Hand the stdio pipes to the user the child runs as, so that it may reopen them
    (``/dev/stdin``, ``> /dev/stderr``); the program only starts after this (``release``)."""
    if identity is None:
        return
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            os.fchown(stream.fileno(), identity.uid, identity.gid)


def _reap(proc: subprocess.Popen[bytes]) -> tuple[float, int]:
    """Wait for ``proc`` and return (cpu seconds, max RSS KiB) of it and its reaped tree."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def _loop(
    proc: subprocess.Popen[bytes],
    spawn: Spawn,
    kill: Callable[[subprocess.Popen[bytes]], None],
) -> Watched:
    assert proc.stdin and proc.stdout and proc.stderr
    output = CappedOutput(spawn.output_bytes)
    start = time.monotonic()
    deadline = start + spawn.wall_s
    pidfd = os.pidfd_open(proc.pid)
    sel = selectors.DefaultSelector()
    streams = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(spawn.stdin)
    stdin_fd = proc.stdin.fileno()
    os.set_blocking(stdin_fd, False)
    if pending:
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    sel.register(pidfd, selectors.EVENT_READ)
    exited_at: float | None = None
    timed_out = False
    try:
        while streams or exited_at is None:
            now = time.monotonic()
            if exited_at is None and now >= deadline:
                timed_out = True
                kill(proc)
                exited_at = now
            limit = deadline if exited_at is None else exited_at + _DRAIN_S
            if exited_at is not None and now >= limit:
                break
            for key, _ in sel.select(max(0.0, limit - now)):
                fd = int(key.fd)
                if fd == pidfd:
                    sel.unregister(pidfd)
                    exited_at = time.monotonic()
                    # The main process is gone: whatever still holds the pipes is a leftover.
                    kill(proc)
                elif fd == stdin_fd:
                    pending = _write_some(sel, proc, pending)
                elif _read_some(sel, fd, streams, output):
                    kill(proc)
                    exited_at = exited_at or time.monotonic()
    finally:
        sel.close()
        os.close(pidfd)
    cpu_s, maxrss = _reap(proc)
    end = exited_at or time.monotonic()
    return Watched(proc.returncode, output, end - start, cpu_s, maxrss, timed_out)


def _write_some(
    sel: selectors.BaseSelector, proc: subprocess.Popen[bytes], pending: memoryview
) -> memoryview:
    assert proc.stdin
    try:
        written = os.write(proc.stdin.fileno(), pending[:_CHUNK])
    except (BrokenPipeError, BlockingIOError) as exc:
        written = 0 if isinstance(exc, BlockingIOError) else len(pending)
    pending = pending[written:]
    if not pending:
        sel.unregister(proc.stdin.fileno())
        with contextlib.suppress(OSError):
            proc.stdin.close()
    return pending


def _read_some(
    sel: selectors.BaseSelector, fd: int, streams: dict[int, str], output: CappedOutput
) -> bool:
    """Read one chunk; returns True when the output budget is exceeded."""
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return False
    if not data:
        sel.unregister(fd)
        del streams[fd]
        return False
    if output.feed(streams[fd], data):
        for other in list(streams):
            sel.unregister(other)
        streams.clear()
        return True
    return False
