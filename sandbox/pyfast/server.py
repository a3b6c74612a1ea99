"""The fork server that runs INSIDE the sandbox (stdlib only; never imports `sandbox`).

It is started by `sandbox.pyfast.host` as ``python3 -E -s -c <this file's text> FD`` in a
bwrap sandbox (no network, uid 65534, no capabilities, read-only system, pool cgroup).
For every request on the SOCK_SEQPACKET socket FD (a JSON header plus four fds: stdin,
stdout, stderr and a per-case control socket) it forks a *supervisor*, which

1. unshares new user, mount, pid, ipc and network namespaces (so cases cannot see, signal
   or talk to each other, nor to this server),
2. forks the *case* process: pid 1 of the new pid namespace, so every process the program
   starts dies with it; it mounts a private size-limited tmpfs on /work and an empty one
   over /proc, writes the files, applies rlimits, drops every capability, and runs the
   program in this already-initialised interpreter (no start-up cost);
3. waits on a pidfd and the control socket with the wall-clock limit as the select
   timeout, SIGKILLs the case on timeout or when the host asks (output over budget, or
   the host went away: the control socket then reads EOF), and sends back a JSON result
   with the exit status and rusage.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_RDONLY, MS_REC, MS_PRIVATE = 2, 4, 1, 0x4000, 0x40000
SYS_CAPSET = 126  # x86_64
LINUX_CAPABILITY_VERSION_3 = 0x20080522

libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _enter_namespaces() -> None:
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET
    _check(libc.unshare(flags), "unshare")
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(libc.syscall(SYS_CAPSET, header, data), "capset")


def _prepare_case(req: dict[str, object]) -> None:
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    size = f"size={req['disk_bytes']},mode=1777".encode()
    _check(libc.mount(b"tmpfs", b"/work", b"tmpfs", MS_NOSUID | MS_NODEV, size), "mount /work")
    _check(libc.mount(b"tmpfs", b"/proc", b"tmpfs", MS_RDONLY, b"size=4k"), "hide /proc")
    os.chdir("/work")
    files = req["files"]
    assert isinstance(files, dict)
    for name, text in files.items():
        with open(name, "w", encoding="utf-8") as f:
            f.write(text)
    cpu = int(req["cpu_s"])  # type: ignore[call-overload]
    memory = int(req["memory_bytes"])  # type: ignore[call-overload]
    fsize = int(req["fsize_bytes"])  # type: ignore[call-overload]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _drop_capabilities()


def _run_case(req: dict[str, object], fds: list[int]) -> None:
    """In the case process: set up, then run the program as ``__main__``. Never returns."""
    code = 1
    try:
        _prepare_case(req)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        os.setsid()
        # The program's own streams live as long as the process: no context manager.
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        argv = req["argv"]
        assert isinstance(argv, list)
        sys.argv = ["/work/main.py", *argv]
        sys.path[0] = "/work"
        code = _execute(str(req["source"]))
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


def _supervise(req: dict[str, object], fds: list[int]) -> None:
    """In the supervisor: see the module docstring, step 3. Never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    ctl = socket.socket(fileno=fds[3])
    try:
        _enter_namespaces()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            ctl.close()
            _run_case(req, fds)
        for fd in fds[:3]:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        wall = float(req["wall_s"])  # type: ignore[arg-type]
        ready, _, _ = select.select([pidfd, ctl.fileno()], [], [], wall)
        timed_out = not ready
        if pidfd not in ready:
            os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
        result: dict[str, object] = {
            "returncode": os.waitstatus_to_exitcode(status),
            "wall_s": time.monotonic() - start,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss,
            "timed_out": timed_out,
        }
    except BaseException as exc:  # noqa: BLE001 - reported to the host as a sandbox failure
        result = {"error": repr(exc)}
    try:
        ctl.send(json.dumps(result).encode())
    finally:
        os._exit(0)


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


def main() -> None:
    """Serve requests until the host closes the socket."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    _warm()
    while True:
        msg, ancdata, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(4 * 4))
        if not msg:
            return
        fds: list[int] = []
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(memoryview(data).cast("i"))
        if os.fork() == 0:
            sock.close()
            _supervise(json.loads(msg), fds)
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()
