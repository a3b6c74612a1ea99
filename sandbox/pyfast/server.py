"""The fork server that runs INSIDE the sandbox (stdlib only; never imports `sandbox`).

It is started by `sandbox.pyfast.host` as ``python3 -E -s -c <this file's text> FD N NAME``
in a bwrap sandbox (no network, uid 65534, no capabilities, read-only system, pool
cgroup). Once the host says "go" (it has placed the process in the pool's cgroup by then),
it moves into a user namespace of its own and becomes pid 1 of a new pid namespace (the
*server*), which gives it the right to create a pid namespace per case.

While idle, the server keeps N *spares*: processes forked as pid 1 of a fresh pid
namespace (so every process a program starts dies with it), named NAME, that

1. unshare new user, mount, uts, ipc and network namespaces (so cases cannot see, signal
   or talk to each other, nor the server),
2. make their mounts private, hide /proc behind an empty tmpfs and mount a pty instance
   of their own (the server's /dev is read-only; a case gets its own /dev/shm too),

and wait for one request. Spares are never forked from the server itself, which has held
earlier requests (sources, files, a checker's expected output) in its heap: a *zygote*,
forked from the server before its first request and never given one, forks each spare
(through a short-lived middle process, so the spare is reparented to the server, its
namespace's init, which reaps and supervises it). Nothing of one request is ever in the
address space of another's case. Each request on the SOCK_SEQPACKET socket FD (a JSON header plus
four fds: stdin, stdout, stderr and a per-case control socket; six for a linked run, whose
channel's two pipe ends the program finds at fds 3 and 4, named in ``REFEREE_CHANNEL_IN`` /
``REFEREE_CHANNEL_OUT`` as on the bwrap path) goes to a spare (or to one
forked on the spot), which mounts a size-limited tmpfs on /work, writes the files,
applies rlimits, drops every capability and runs the program in this already-initialised
interpreter (no start-up cost). One fork per case, and none of it on the request's path
when a spare is ready.

The server supervises every running case from one event loop: it waits on the case's
pidfd and control socket, SIGKILLs the case at the wall-clock limit or when the host asks
(output over budget, or the host went away: the control socket then reads EOF), and sends
back a JSON result with the exit status and rusage, or ``{"error": ...}`` when the sandbox
itself failed for that case.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import resource
import select
import selectors
import signal
import socket
import struct
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 0x40000
SYS_CAPSET = 126  # x86_64
PR_SET_NAME = 15
SERVER_NAME = b"referee-server"
PROGRAM_STATUS = struct.Struct("=i")
"""The program's wait status, as its spare sends it to the server."""
CASE_FDS = (4, 6)  # stdin, stdout, stderr, control; then a linked run's channel (in, out)
RUNTIME_PYTHON: list[str] = []
"""Where the runtime's Python packages are (the host's `PYTHON_ENV`), put on every
program's path as PYTHONPATH does in the bwrap path; set once by `main` from argv."""
LINUX_CAPABILITY_VERSION_3 = 0x20080522

libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _unshare_user(flags: int) -> None:
    """unshare ``flags`` (which include CLONE_NEWUSER), keeping our uid and gid."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | flags), "unshare")
    _write("/proc/self/setgroups", b"deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1".encode())
    _write("/proc/self/gid_map", f"{gid} {gid} 1".encode())


def _write(path: str, data: bytes) -> None:
    """Write a whole file with plain syscalls: cheaper than ``open()`` in a fresh fork,
    where every object the io stack touches costs a copy-on-write page fault."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(libc.syscall(SYS_CAPSET, header, data), "capset")


def _isolate() -> None:
    """In a spare, before any request: the case's own user, mount, uts, ipc and network
    namespaces, private mounts, and an empty /proc (the pid namespace is already new)."""
    _unshare_user(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET)
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    _check(libc.mount(b"tmpfs", b"/proc", b"tmpfs", MS_RDONLY, b"size=4k"), "hide /proc")
    # /dev itself is read-only; its writable corners are the case's own, as in a bwrap of
    # its own: a new pty instance (other cases' terminals are not even listed).
    pts = b"newinstance,ptmxmode=0666,mode=0620"
    _check(libc.mount(b"devpts", b"/dev/pts", b"devpts", MS_NOSUID | MS_NOEXEC, pts), "devpts")


def _prepare_case(req: dict[str, object]) -> None:
    """With the request: the size-limited /work, the files, rlimits, no capabilities."""
    size = f"size={req['disk_bytes']},mode=1777".encode()
    _check(libc.mount(b"tmpfs", b"/work", b"tmpfs", MS_NOSUID | MS_NODEV, size), "mount /work")
    _check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, size), "/dev/shm")
    os.chdir("/work")
    files = req["files"]
    assert isinstance(files, dict)
    for name, text in files.items():
        if "/" in name:  # validated relative paths (`paths.relative_path`)
            os.makedirs(os.path.dirname(name), mode=0o777, exist_ok=True)
        _write(name, text.encode())
    cpu = int(req["cpu_s"])  # type: ignore[call-overload]
    memory = int(req["memory_bytes"])  # type: ignore[call-overload]
    fsize = int(req["fsize_bytes"])  # type: ignore[call-overload]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Counted per user namespace (Linux 5.14+), and the case has its own: this bounds the
    # case's processes and threads even where no pids cgroup is available.
    processes = int(req["processes"]) + 1  # type: ignore[call-overload]  # + this spare
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    _drop_capabilities()


def _set_name(name: bytes) -> None:
    libc.prctl(PR_SET_NAME, name, 0, 0, 0)


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    """One request: the JSON header and the fds that came with it. A message whose fds did
    not all arrive (MSG_CTRUNC) comes back with none: its fds are closed here."""
    msg, ancdata, flags, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(4 * max(CASE_FDS)))
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(memoryview(data)[: len(data) - len(data) % 4].cast("i"))
    if flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC):
        for fd in fds:
            os.close(fd)
        return msg, []
    return msg, fds


def _spare(sock: socket.socket) -> None:
    """A forked spare: isolate, wait for one request, run it. Exits rather than return;
    an exception that escapes (the socket failing) is left to the fork's ``os._exit``.

    A failure before the program starts is sent to the host on the request's control
    socket (fds[3]) before the case exits, so it is the first message the host reads: a
    sandbox failure, never mistaken for the program's own error."""
    os.closerange(3, sock.fileno())  # the server's other fds are not the case's business
    os.closerange(sock.fileno() + 1, 1 << 16)
    failure = None
    try:
        _isolate()
    except BaseException as exc:  # noqa: BLE001 - reported with the request, below
        failure = exc
    msg, fds = _receive(sock)
    if not msg:
        os._exit(0)  # the server is shutting down
    if len(fds) not in CASE_FDS:
        os._exit(255)  # the server checks the fds; this cannot happen
    # Receipt, read by the server when the case ends: a spare killed before this line
    # never ran the program, and its death is the sandbox's failure, not the program's.
    sock.send(b"1")
    _set_name(b"python3")
    try:
        if failure is not None:
            raise failure
        req = json.loads(msg)
        _prepare_case(req)
    except BaseException as exc:  # noqa: BLE001 - reported to the host as a sandbox failure
        with contextlib.suppress(OSError):
            os.write(fds[3], json.dumps({"error": f"case set-up: {exc!r}"}).encode())
        os._exit(255)
    _run_as_child(sock, req, fds)


def _run_as_child(sock: socket.socket, req: dict[str, object], fds: list[int]) -> None:
    """Run the program in a child, never as the namespace's pid 1: pid 1 ignores every
    signal it has no handler for, so a program that was pid 1 survived its own SIGTERM,
    SIGKILL or alarm, and an abort() was a segfault. This spare (pid 1) waits for the
    child and sends its wait status to the server on ``sock`` (after the receipt); when
    the spare exits, the kernel kills whatever the program left behind. Never returns."""
    pid = os.fork()
    if pid == 0:
        sock.close()  # the server's socket is not the program's business
        _run_case(req, fds)
    for fd in fds:
        os.close(fd)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(255)
        except InterruptedError:
            continue
    with contextlib.suppress(OSError):
        sock.send(PROGRAM_STATUS.pack(status))
    os._exit(0)


def _run_case(req: dict[str, object], fds: list[int]) -> None:
    """In the case process, set up: run the program as ``__main__``. Never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        # A channel's ends go to 3 and 4, by way of copies above both (an end may be 3 or 4).
        channel = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds[4:]]
        for target, fd in enumerate(channel, start=3):
            os.dup2(fd, target)
        os.closerange(3 + len(channel), 1 << 16)
        if channel:
            os.environ.update(REFEREE_CHANNEL_IN="3", REFEREE_CHANNEL_OUT="4")
        os.setsid()
        # The program's own streams live as long as the process: no context manager.
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        argv = req["argv"]
        assert isinstance(argv, list)
        sys.argv = ["/work/main.py", *argv]
        sys.path[0] = "/work"
        sys.path[1:1] = RUNTIME_PYTHON
        files = req["files"]
        assert isinstance(files, dict)
        code = _execute(str(files["main.py"]))  # also written to /work, for tracebacks
    except BaseException as exc:  # noqa: BLE001 - the case process must exit, whatever happened
        os.write(2, f"sandbox fast path: {exc!r}\n".encode())
    os._exit(code)


def _execute(source: str) -> int:
    import atexit
    import threading
    import traceback

    code = 0
    try:
        compiled = compile(source, "/work/main.py", "exec")
        exec(
            compiled,
            {"__name__": "__main__", "__file__": "/work/main.py", "__builtins__": __builtins__},
        )
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code & 0xFF
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - like the interpreter: print it, exit 1
        traceback.print_exc()
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    return code


ZYGOTE_NAME = b"referee-zygote"


def _start_zygote(spare_name: bytes) -> socket.socket:
    """Fork the zygote (before any request) and return the server's end of its socket."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            _zygote(theirs, spare_name)
        finally:
            os._exit(0)
    theirs.close()
    return ours


def _zygote(sock: socket.socket, spare_name: bytes) -> None:
    """For each byte from the server: fork a spare, send back its pid and socket."""
    os.closerange(3, sock.fileno())
    os.closerange(sock.fileno() + 1, 1 << 16)
    _set_name(ZYGOTE_NAME)
    while sock.recv(1) == b"f":
        try:
            pid, spare_sock = _fork_spare(sock, spare_name)
        except OSError as exc:
            sock.send(f"cannot fork a spare: {exc!r}".encode())
            continue
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _ints([spare_sock.fileno()]))]
        try:
            sock.sendmsg([str(pid).encode()], rights)
        finally:
            spare_sock.close()


def _fork_spare(server: socket.socket, spare_name: bytes) -> tuple[int, socket.socket]:
    """Fork a middle process that forks the spare as pid 1 of a new pid namespace and
    exits at once, so the spare is reparented to the server (the reaper of the middle
    one's namespace). Returns the spare's pid and the server's end of its socket."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    report_r, report_w = os.pipe()
    try:
        middle = os.fork()
    except OSError:
        for end in (ours, theirs):
            end.close()
        for fd in (report_r, report_w):
            os.close(fd)
        raise
    if middle == 0:
        _middle(server, ours, theirs, report_r, report_w, spare_name)
    theirs.close()
    os.close(report_w)
    _, status = os.waitpid(middle, 0)
    reported = os.read(report_r, 32)
    os.close(report_r)
    if status != 0 or not reported:
        ours.close()
        raise OSError(errno.EAGAIN, "the spare could not be forked")
    return int(reported), ours


def _middle(
    server: socket.socket,
    ours: socket.socket,
    theirs: socket.socket,
    report_r: int,
    report_w: int,
    spare_name: bytes,
) -> None:
    """The middle process: fork the spare into a new pid namespace, report its pid, exit."""
    status = 1
    try:
        ours.close()
        os.close(report_r)
        _check(libc.unshare(CLONE_NEWPID), "unshare pid")
        # Born with the spare's name, so the host never sees an idle spare under
        # another name (its leftover checks tell spares from cases by name).
        _set_name(spare_name)
        pid = os.fork()
        if pid == 0:
            os.close(report_w)
            server.close()
            try:
                _spare(theirs)
            finally:
                os._exit(255)
        os.write(report_w, str(pid).encode())
        status = 0
    finally:
        os._exit(status)


class Running:
    """One case the server supervises: a spare that was handed a request."""

    def __init__(self, spare: Spare, ctl: socket.socket, wall_s: float) -> None:
        self.pid = spare.pid
        self.pidfd = spare.pidfd
        self.receipt = spare.sock  # the spare writes one byte once it has the request
        self.ctl = ctl
        self.start = time.monotonic()
        self.deadline = self.start + wall_s
        self.timed_out = False
        self.killed = False
        self.took = False

    def kill(self) -> None:
        if not self.killed:
            self.killed = True
            os.kill(self.pid, signal.SIGKILL)

    def finish(self) -> None:
        """Reap the case (its pidfd said it exited) and report to the host, which may be
        gone: ignore that."""
        _, status, usage = os.wait4(self.pid, 0)  # exited: this does not block
        os.close(self.pidfd)
        status = self._program_status(status)
        code = os.waitstatus_to_exitcode(status)
        result: dict[str, object] = {
            "returncode": code,
            "wall_s": time.monotonic() - self.start,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss,
            "timed_out": self.timed_out,
        }
        if not self.took:
            result = {"error": f"the spare died (exit {code}) before it took the request"}
        with contextlib.suppress(OSError, ValueError):
            self.ctl.send(json.dumps(result).encode())
        self.ctl.close()

    def _program_status(self, spare_status: int) -> int:
        """The program's own wait status, which the spare sent after its receipt; the
        spare's when it sent none (it was killed: the case timed out or was stopped)."""
        try:
            self.took = self.receipt.recv(1, socket.MSG_DONTWAIT) == b"1"
            sent = self.receipt.recv(PROGRAM_STATUS.size, socket.MSG_DONTWAIT)
        except OSError:
            return spare_status
        finally:
            self.receipt.close()
        return PROGRAM_STATUS.unpack(sent)[0] if len(sent) == PROGRAM_STATUS.size else spare_status


class Spare:
    """A forked process that isolates itself (perhaps still doing so) and then waits on
    ``sock`` for its one request."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.pidfd = os.pidfd_open(pid)


class Server:
    """The event loop: requests from the host, exits and kill requests of running cases,
    and, when nothing else is waiting, forking spares up to ``spares``."""

    def __init__(self, sock: socket.socket, spares: int, spare_name: bytes) -> None:
        self.sock = sock
        self.spare_name = spare_name
        self.sel = selectors.DefaultSelector()
        self.sel.register(sock, selectors.EVENT_READ, self._request)
        self.running: dict[int, Running] = {}
        self.spares: dict[int, Spare] = {}
        self.wanted = spares
        self.target = spares
        self.zygote = _start_zygote(spare_name)

    def serve(self) -> None:
        """Until the host closes the socket; then kill every case and spare."""
        while self.sock.fileno() >= 0:
            timeout = self._expire()
            if len(self.spares) < self.target:
                timeout = 0
            events = self.sel.select(timeout)
            for key, _ in events:
                if self._current(key):
                    key.data(key.fileobj)
            if not events and len(self.spares) < self.target:
                self._replenish()
        for pid in [c.pid for c in self.running.values()] + [s.pid for s in self.spares.values()]:
            os.kill(pid, signal.SIGKILL)
        self.zygote.close()  # the zygote exits on EOF

    def _replenish(self) -> None:
        """Add a spare (only when idle: serving comes first). If forking fails, e.g. while
        a case's fork bomb fills the pids cgroup, stop trying until the next request."""
        try:
            self._add_spare()
        except OSError as exc:
            print(f"sandbox fast path: cannot fork a spare: {exc!r}", file=sys.stderr)
            self.target = len(self.spares)

    def _expire(self) -> float | None:
        """Kill cases past their wall limit; seconds until the next deadline, if any."""
        now = time.monotonic()
        for case in self.running.values():
            if case.deadline <= now and not case.killed:
                case.timed_out = True
                case.kill()
        soonest = min((c.deadline for c in self.running.values() if not c.killed), default=None)
        return None if soonest is None else max(0.0, soonest - now)

    def _current(self, key: selectors.SelectorKey) -> bool:
        """False for an event an earlier handler of the same batch made stale: its fd was
        unregistered, closed, or closed and registered again under the same number."""
        try:
            return self.sel.get_map().get(key.fileobj) is key
        except ValueError:  # a socket closed since the batch was selected
            return False

    def _add_spare(self) -> Spare:
        """A new spare from the zygote (see the module docstring). Raises OSError when the
        zygote could not fork one; exits the server when the zygote is gone, since a new
        one forked from here would carry this heap."""
        try:
            self.zygote.send(b"f")
            msg, fds = _receive(self.zygote)
        except OSError:
            msg, fds = b"", []
        if not msg:
            print("sandbox fast path: the zygote is gone", file=sys.stderr)
            os._exit(71)
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise OSError(errno.EAGAIN, msg.decode(errors="replace"))
        ours = socket.socket(fileno=fds[0])
        pid = int(msg)
        try:
            spare = Spare(pid, ours)
        except OSError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            ours.close()
            raise
        self.spares[spare.pidfd] = spare
        self.sel.register(spare.pidfd, selectors.EVENT_READ, self._spare_died)
        return spare

    def _request(self, sock: socket.socket) -> None:
        msg, fds = _receive(sock)
        if not msg:
            self.sel.unregister(sock)
            sock.close()
            return
        self.target = self.wanted
        if len(fds) not in CASE_FDS:
            for fd in fds:
                os.close(fd)
            print(f"sandbox fast path: a request came with {len(fds)} fds", file=sys.stderr)
            return
        try:
            ctl = socket.socket(fileno=fds[3])
        except OSError:
            for fd in fds:
                os.close(fd)
            print("sandbox fast path: a request's control fd is not a socket", file=sys.stderr)
            return
        ctl.setblocking(False)
        try:
            wall_s = float(json.loads(msg)["wall_s"])
            spare = self._hand_over(msg, fds)
        except Exception as exc:  # noqa: BLE001 - this case's sandbox failed; keep serving
            with contextlib.suppress(OSError, ValueError):
                ctl.send(json.dumps({"error": f"cannot start the case: {exc!r}"}).encode())
            ctl.close()
            return
        finally:
            for fd in fds[:3] + fds[4:]:  # the case has its copies; the control socket stays
                os.close(fd)
        case = Running(spare, ctl, wall_s)
        self.running[case.pidfd] = case
        self.sel.modify(case.pidfd, selectors.EVENT_READ, self._exited)
        self.sel.register(ctl, selectors.EVENT_READ, self._asked)

    def _hand_over(self, msg: bytes, fds: list[int]) -> Spare:
        """Send the request to a spare (forking one if none is ready). The spare is taken
        out of the pool only once it has the request; one that cannot take it is killed."""
        spare = self._live_spare() or self._add_spare()
        try:
            spare.sock.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _ints(fds))])
        except OSError:
            self._discard(spare)
            raise
        del self.spares[spare.pidfd]
        return spare

    def _live_spare(self) -> Spare | None:
        """A spare that has not exited; ones that have (their exit not yet seen by the loop)
        are forgotten on the way. One still dying can slip through: its missing receipt
        then makes the case a sandbox failure (`Running.finish`)."""
        for spare in list(self.spares.values()):
            poll = select.poll()  # not select(): pidfds can be numbered past 1023
            poll.register(spare.pidfd, select.POLLIN)
            if not poll.poll(0):
                return spare
            self._spare_died(spare.pidfd)
        return None

    def _discard(self, spare: Spare) -> None:
        """Kill a spare, reap it and forget it."""
        self.spares.pop(spare.pidfd, None)
        self.sel.unregister(spare.pidfd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(spare.pid, signal.SIGKILL)
        os.waitpid(spare.pid, 0)
        os.close(spare.pidfd)
        spare.sock.close()

    def _spare_died(self, pidfd: int) -> None:
        """A spare exited before it was used (killed, or out of memory): forget it, and
        fork no more until the next request, so a spare that dies at once is not forked
        again in a tight loop."""
        spare = self.spares.get(pidfd)
        if spare is None:
            return
        self._discard(spare)
        self.target = len(self.spares)
        print(f"sandbox fast path: a spare exited unused (pid {spare.pid})", file=sys.stderr)

    def _exited(self, pidfd: int) -> None:
        case = self.running.pop(pidfd)
        self.sel.unregister(pidfd)
        if case.ctl in self.sel.get_map():
            self.sel.unregister(case.ctl)
        case.finish()

    def _asked(self, ctl: socket.socket) -> None:
        """The host wants the case killed (output over budget) or has gone away (EOF)."""
        case = next(c for c in self.running.values() if c.ctl is ctl)
        self.sel.unregister(ctl)
        case.kill()


def _ints(fds: list[int]) -> bytes:
    import array

    return array.array("i", fds).tobytes()


def _become_namespace_parent() -> None:
    """Enter a user namespace of our own (full capabilities in it) and continue as pid 1 of
    a new pid namespace; the original process waits and exits with the server's status."""
    _unshare_user(CLONE_NEWPID)
    pid = os.fork()
    if pid:
        os.closerange(3, 1 << 16)  # only the server keeps the host's socket
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _warm() -> None:
    """Import what trivial programs usually import, once, before any fork."""
    import atexit  # noqa: F401
    import collections  # noqa: F401
    import functools  # noqa: F401
    import heapq  # noqa: F401
    import itertools  # noqa: F401
    import math  # noqa: F401
    import re  # noqa: F401
    import threading  # noqa: F401
    import traceback  # noqa: F401

    # The first compile() in a process builds the AST types (~1 ms); pay it once here,
    # not in every case.
    compile("pass", "<warm>", "exec")


def main() -> None:
    """Serve requests until the host closes the socket. argv: the socket's fd, how many
    spares to keep ready, the process name an idle spare carries, and the runtime's
    Python path (os.pathsep-separated, may be empty)."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    RUNTIME_PYTHON[:] = [path for path in sys.argv[4].split(os.pathsep) if path]
    _warm()
    # Fork nothing before the host has put us in the pool's cgroup, so that every case
    # (forked later, by a process already placed) inherits it.
    if sock.recv(16) != b"go":
        os._exit(0)
    _become_namespace_parent()
    Server(sock, int(sys.argv[2]), os.fsencode(sys.argv[3])).serve()


if __name__ == "__main__":
    main()
