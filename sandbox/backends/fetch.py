"""Reading files back from a case's private working directory (SandboxFusion's
``fetch_files``), which is gone when the sandbox ends.

The program then runs under a small supervisor *inside* the sandbox: it starts the
program (its rlimits are set by ``prlimit`` after the supervisor, so they bound the
program, not the supervisor), waits for it, reads the asked-for regular files (at most
``cap`` bytes in all; FIFOs, devices and directories are skipped, never waited on) and
writes them as JSON to a memfd the host passed in, then ends as the program ended: the
same exit code, or killed by the same signal (with core dumps off). The memfd is closed
in the program, so only the supervisor writes it. A program that kills its supervisor
loses its own files and nothing else.
"""

from __future__ import annotations

import base64
import json
import os

SUPERVISOR = r"""
import base64, json, os, resource, signal, stat, sys
fd, cap, root = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
split = sys.argv.index("--", 4)
paths, command = sys.argv[4:split], sys.argv[split + 1:]
os.set_inheritable(fd, False)
pid = os.fork()
if pid == 0:
    try:
        os.execv(command[0], command)
    finally:
        os._exit(127)
status = os.waitpid(pid, 0)[1]
found, left = {}, cap
for path in paths:
    try:
        handle = os.open(os.path.join(root, path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        continue
    try:
        if stat.S_ISREG(os.fstat(handle).st_mode):
            data = os.read(handle, left + 1)
            if len(data) > left:
                break
            found[path] = base64.b64encode(data).decode()
            left -= len(data)
    finally:
        os.close(handle)
os.write(fd, json.dumps(found).encode())
if os.WIFSIGNALED(status):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
os._exit(os.WEXITSTATUS(status))
"""
PYTHON = "/usr/bin/python3"


def supervised(argv: list[str], fd: int, cap: int, root: str, paths: tuple[str, ...]) -> list[str]:
    """``argv`` run under the supervisor, which writes ``paths`` (relative to ``root``)
    to ``fd``."""
    return [PYTHON, "-I", "-S", "-c", SUPERVISOR, str(fd), str(cap), root, *paths, "--", *argv]


def fetched(fd: int, cap: int) -> dict[str, bytes]:
    """What the supervisor wrote to ``fd`` (empty when it wrote nothing: the program took
    it down, or the run was killed)."""
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, cap * 2 + 65536)
    try:
        found = json.loads(raw) if raw else {}
        return {str(name): base64.b64decode(data) for name, data in found.items()}
    except (ValueError, TypeError, AttributeError):
        return {}
