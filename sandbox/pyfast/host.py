"""The caller's side of the Python fast path: start the fork server in a bwrap sandbox
once, then run each case by handing the server four fds (stdin, stdout, stderr, control),
and for one side of a linked run (`Sandbox.run_linked`) its channel's two ends as well.

Output is read here, from the case's own pipes, with the same capped reader as every other
backend; the wall limit is enforced inside the sandbox by the server, and this side adds
a grace period after which it declares the server broken: the case is a sandbox failure,
the server is stopped, and the next case starts a new one.

Isolation matches the bwrap backend (see `sandbox.pyfast.server` for the per-case
namespaces), with two documented differences: the memory and pids cgroup is shared by the
pool (sized for ``parallelism`` cases) while each case is bounded by rlimits (RLIMIT_AS
for memory) — so a fork bomb in one case can make a concurrent case's fork fail — and the
program runs as pid 1 of its namespace, which ignores signals it sends to itself.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import json
import os
import queue
import selectors
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from importlib import resources
from typing import IO

from referee.sandbox import cgroups
from referee.sandbox.backends.base import Channel, Execution, base_env
from referee.sandbox.backends.bwrap import isolation_args
from referee.sandbox.identity import HostIdentity, IdentityPool, as_user
from referee.sandbox.languages import PYTHON_ENV, RUNTIME_MOUNT
from referee.sandbox.output import CappedOutput
from referee.sandbox.pyfast.wire import CaseReport, CaseRequest
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import Case, FastPathDeclined, Limits, Program, SandboxFailure

_GRACE_S = 2.0
_CHUNK = 1 << 16
_SERVER_ARGV_LIMIT = 100_000
_MAX_SPARES = 4  # isolated processes kept forked and waiting for a case
_SPARE_NAME = "referee-spare"  # an idle spare's process name (comm), set by the server
# The server's own children that legitimately stay: idle spares and the zygote forking them.
_ZYGOTE_NAME = "referee-zygote"
_RESIDENT_NAMES = frozenset({_SPARE_NAME, _ZYGOTE_NAME})


class ForkServer:
    """One fork server; thread-safe. Started on first use, restarted if it dies."""

    def __init__(self, settings: SandboxSettings, identities: IdentityPool | None = None) -> None:
        self.settings = settings
        self._identities = identities
        self._identity: HostIdentity | None = None
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._pidfd: int | None = None  # the server's bwrap, signalled without a pid race
        self._sock: socket.socket | None = None
        self._group: cgroups.CaseCgroup | None = None
        self._stderr: IO[bytes] | None = None

    def close(self) -> None:
        """Stop the server and remove its cgroup."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        _LIVE.discard(self)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None and self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)  # its owner thread reaps it in any case
            os.close(self._pidfd)
            self._proc, self._pidfd = None, None
        if self._group is not None:
            self._group.close()
            self._group = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._identities is not None:
            self._identities.release(self._identity)
        self._identity = None

    def _runtime_bind(self) -> list[str]:
        """The runtime directory, where the per-case sandbox shows it (`RUNTIME_MOUNT`)."""
        runtime = self.settings.runtime_dir
        return [] if runtime is None else ["--ro-bind", str(runtime), RUNTIME_MOUNT]

    def _ensure(self) -> socket.socket:
        if self._proc is not None and self._proc.poll() is None and self._sock is not None:
            return self._sock
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        source = resources.files("referee.sandbox.pyfast").joinpath("server.py").read_text()
        limits = self.settings.limits
        support = cgroups.detect()
        try:
            if support is not None:
                pool = self.settings.parallelism
                self._group = cgroups.CaseCgroup(
                    support,
                    # A case's tmpfs: /work and /dev/shm, each up to disk_mb.
                    ((limits.memory_mb + 2 * limits.disk_mb) * pool + 64) << 20,
                    limits.processes * pool + 8,
                    kind="pool",
                )
            argv = [
                self.settings.bwrap_path,
                *isolation_args(self.settings.sandbox_uid),
                "--perms",
                "1777",
                "--tmpfs",
                "/work",
                "--symlink",
                "/work",
                "/tmp",
                *self._runtime_bind(),
                "--remount-ro",
                "/",
                "--remount-ro",  # cases mount their own /dev/shm and /dev/pts
                "/dev",
                "--chdir",
                "/work",
                "--",
                "/usr/bin/python3",
                "-E",
                "-s",
                "-c",
                source,
                str(theirs.fileno()),
                str(min(self.settings.parallelism, _MAX_SPARES)),
                _SPARE_NAME,
                PYTHON_ENV["PYTHONPATH"],
            ]
            # The server's own complaints (never a case's output) land here, so a failure
            # report can say why the server died.
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
            if self._identities is not None:
                self._identity = self._identities.acquire()
            self._proc, self._pidfd = _spawn(argv, theirs.fileno(), self._stderr, self._identity)
            if self._group is not None:
                _place(self._group, self._proc.pid)
            ours.send(b"go")  # the server forks nothing before this
        except OSError as exc:
            ours.close()
            self._stop()
            raise SandboxFailure(f"cannot start the Python fast path: {exc}") from exc
        finally:
            theirs.close()
        self._sock = ours
        _LIVE.add(self)
        return ours

    def _complaints(self) -> str:
        """The end of what the server wrote to stderr, if anything, as a suffix."""
        with self._lock:
            if self._stderr is None:
                return ""
            # pread, not seek + read: the server writes through the same file offset.
            fd = self._stderr.fileno()
            size = os.fstat(fd).st_size
            tail = os.pread(fd, 2000, max(0, size - 2000)).decode(errors="replace").strip()
        return f"; the server said: {tail}" if tail else ""

    def server_pids(self) -> list[int]:
        """Host pids that legitimately outlive a case: first the server itself (bwrap, its
        init, the interpreter and the server it forks as pid 1 of its own namespace), then
        its idle spares (forked and isolated, never handed a case), the zygote that forks
        them and any middle process of a fork in progress. Empty when not running."""
        if self._proc is None or self._proc.poll() is not None:
            return []
        chain = [self._proc.pid]
        for _ in range(3):
            with contextlib.suppress(OSError, IndexError, ValueError):
                first = _children(chain[-1])[0]
                chain.append(first)
        with contextlib.suppress(OSError):
            resident = [pid for pid in _children(chain[-1]) if _comm(pid) in _RESIDENT_NAMES]
            chain += resident
            # below the zygote: only the short-lived middles and the spares they fork
            for pid in resident:
                if _comm(pid) == _ZYGOTE_NAME:
                    chain += _tree(pid)
        return chain

    def fits(self, limits: Limits) -> bool:
        """True when the pool's cgroup was sized for cases with these limits (and they let
        the case start processes: the fast path has no seccomp filter of its own)."""
        pool = self.settings.limits
        sized = limits.memory_mb <= pool.memory_mb and limits.processes <= pool.processes
        return sized and limits.spawn

    def execute(
        self, program: Program, case: Case, limits: Limits, channel: Channel | None = None
    ) -> Execution:
        """Run one case of a python3 program, given ``channel``'s ends if any (this call
        owns them: they are closed here, whatever happens). Raises SandboxFailure if the
        server breaks."""
        try:
            return self._execute(program, case, limits, channel)
        finally:
            for fd in channel.fds() if channel is not None else ():
                os.close(fd)

    def _execute(
        self, program: Program, case: Case, limits: Limits, channel: Channel | None
    ) -> Execution:
        files = {**program.files, **case.files, "main.py": program.source}
        request = CaseRequest(
            files=files,
            argv=case.argv,
            wall_s=limits.wall_s,
            cpu_s=max(1, round(limits.cpu_s + 0.499)),
            memory_bytes=limits.memory_mb << 20,
            fsize_bytes=limits.file_size_mb << 20,
            processes=limits.processes,
            disk_bytes=limits.disk_mb << 20,
        )
        header = json.dumps(request).encode()
        if len(header) > _SERVER_ARGV_LIMIT:
            raise FastPathDeclined("program too large for the fast path")
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ctl, ctl_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        theirs = [stdin_r, out_w, err_w, ctl_theirs.fileno()]
        theirs += channel.fds() if channel is not None else ()
        try:
            with self._lock:
                sock = self._ensure()
                if self._identity is not None:  # the case may reopen /dev/stdin & co.
                    for fd in theirs[:3] + theirs[4:]:
                        os.fchown(fd, self._identity.uid, self._identity.gid)
                try:
                    sock.sendmsg(
                        [header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _int_array(theirs))]
                    )
                except OSError as exc:
                    self._stop()
                    raise SandboxFailure(f"fast path server is gone: {exc}") from exc
        finally:
            for fd in theirs[:3]:
                os.close(fd)
            ctl_theirs.close()
        # Ours until closed; closing an fd twice could close another thread's new fd.
        owned = {stdin_w, out_r, err_r}
        try:
            return _collect(ctl, owned, stdin_w, out_r, err_r, case.stdin.encode(), limits)
        except _Unresponsive as exc:
            complaints = self._complaints()
            with self._lock:
                if self._sock is sock:  # not yet replaced by another thread
                    self._stop()
            raise SandboxFailure(f"{exc}{complaints}") from None
        except SandboxFailure as exc:
            raise SandboxFailure(f"{exc}{self._complaints()}") from None
        finally:
            ctl.close()
            for fd in owned:
                os.close(fd)


_LIVE: weakref.WeakSet[ForkServer] = weakref.WeakSet()


class _Unresponsive(SandboxFailure):
    """The server missed a case's wall limit by more than the grace period: it is broken."""


@atexit.register
def _stop_all() -> None:
    """A sandbox still open at interpreter exit must not leave its server's cgroup behind
    (the server process itself dies with us: bwrap's die-with-parent)."""
    for server in list(_LIVE):
        server.close()


def _spawn(
    argv: list[str], fd: int, stderr: IO[bytes], identity: HostIdentity | None
) -> tuple[subprocess.Popen[bytes], int]:
    """Start the server from a thread that lives exactly as long as the server; return it
    and a pidfd for it, opened before anything could reap it.

    bwrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that
    forked bwrap exits, not the process: a server started by a short-lived worker thread
    (a run's case pool) was SIGKILLed with that thread, under whatever cases it was
    running. The owner thread waits for the server, so it ends only after the server."""
    started: queue.Queue[tuple[subprocess.Popen[bytes], int] | BaseException] = queue.Queue()

    def own() -> None:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=base_env("/work"),
                pass_fds=(fd,),
                start_new_session=True,
                **as_user(identity),
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            started.put(exc)
            return
        try:
            started.put((proc, os.pidfd_open(proc.pid)))
        except BaseException as exc:  # noqa: BLE001 - as above; the server must not stay
            proc.kill()
            started.put(exc)
        proc.wait()

    threading.Thread(target=own, name="referee-pyfast-server", daemon=True).start()
    got = started.get()
    if isinstance(got, BaseException):
        raise got
    return got


def _place(group: cgroups.CaseCgroup, pid: int) -> None:
    """Put ``pid`` and its descendants in ``group``, each before listing its children: a
    child forked after its parent was placed inherits the group, one forked before is
    listed. (The server itself forks nothing until told to go.)"""
    try:
        group.add(pid)
    except ProcessLookupError:
        return  # exited: nothing of it to place
    try:
        children = _children(pid)
    except OSError:
        return  # exited since
    for child in children:
        _place(group, child)


def _int_array(fds: list[int]) -> bytes:

    return array.array("i", fds).tobytes()


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _tree(pid: int) -> list[int]:
    """Every descendant of ``pid`` (racing processes that exit meanwhile are skipped)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for child in _children(pid):
            found += [child, *_tree(child)]
    return found


def _comm(pid: int) -> str:
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def _collect(
    ctl: socket.socket,
    owned: set[int],
    stdin_w: int,
    out_r: int,
    err_r: int,
    stdin: bytes,
    limits: Limits,
) -> Execution:
    """Feed stdin, read capped output, and wait for the server's result for this case."""
    output = CappedOutput(limits.output_bytes)
    sel = selectors.DefaultSelector()
    streams = {out_r: "stdout", err_r: "stderr"}
    for fd in (stdin_w, out_r, err_r):
        os.set_blocking(fd, False)
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    sel.register(ctl, selectors.EVENT_READ)
    pending = memoryview(stdin)
    if pending:
        sel.register(stdin_w, selectors.EVENT_WRITE)
    else:
        owned.discard(stdin_w)
        os.close(stdin_w)
    deadline = time.monotonic() + limits.wall_s + _GRACE_S
    result: CaseReport | None = None
    try:
        while result is None or streams:
            timeout = deadline - time.monotonic()
            if timeout <= 0 and result is None:
                raise _Unresponsive("fast path server did not answer in time")
            if timeout <= 0:
                raise SandboxFailure("the case's output did not end after its result")
            for key, _ in sel.select(timeout):
                if key.fileobj is ctl:
                    sel.unregister(ctl)
                    result = _result(ctl, output.exceeded)
                    deadline = min(deadline, time.monotonic() + 0.5)
                elif key.fd == stdin_w:
                    pending = _feed(sel, stdin_w, pending)
                    if not pending:
                        owned.discard(stdin_w)
                        os.close(stdin_w)
                else:
                    _drain(sel, int(key.fd), streams, output, ctl)
    finally:
        sel.close()
    if "error" in result:
        raise SandboxFailure(f"fast path: {result['error']}")
    return Execution(
        returncode=int(result["returncode"]),
        stdout=output.bytes("stdout"),
        stderr=output.bytes("stderr"),
        wall_s=float(result["wall_s"]),
        cpu_s=float(result["cpu_s"]),
        memory_kb=int(result["maxrss_kb"]),
        timed_out=bool(result["timed_out"]),
        output_exceeded=output.exceeded,
        oom_killed=False,
    )


def _result(ctl: socket.socket, output_exceeded: bool) -> CaseReport:
    """The server's JSON report on the case. After an output-limit kill the socket may be reset
    before it answers: the case was still killed for its output, which is what counts."""
    try:
        raw = ctl.recv(1 << 16)
    except OSError:
        raw = b""
    if raw:
        loaded: CaseReport = json.loads(raw)
        return loaded
    if output_exceeded:
        return CaseReport(returncode=-9, wall_s=0.0, cpu_s=0.0, maxrss_kb=0, timed_out=False)
    return CaseReport(error="the server closed the case without a result")


def _feed(sel: selectors.BaseSelector, fd: int, pending: memoryview) -> memoryview:
    try:
        written = os.write(fd, pending[:_CHUNK])
    except BlockingIOError:
        written = 0
    except BrokenPipeError:
        written = len(pending)
    pending = pending[written:]
    if not pending:
        sel.unregister(fd)
    return pending


def _drain(
    sel: selectors.BaseSelector,
    fd: int,
    streams: dict[int, str],
    output: CappedOutput,
    ctl: socket.socket,
) -> None:
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return
    if not data:
        sel.unregister(fd)
        del streams[fd]
        return
    if output.feed(streams[fd], data):
        with contextlib.suppress(OSError):
            ctl.send(b"kill")  # the server kills the case and still reports
        for other in list(streams):
            sel.unregister(other)
        streams.clear()
