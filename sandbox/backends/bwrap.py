"""The bubblewrap backend: the default on Linux.

Every command gets fresh user, pid, network, ipc, uts, mount and cgroup namespaces (no network
at all: only a loopback of its own), runs as uid/gid 65534 with every capability dropped
and ``no_new_privs`` (bwrap sets it), sees read-only system directories, ``/proc/sys`` and
``/dev`` and a read-only program directory, writes only to private size-limited tmpfs
mounts (``/work``, also ``/tmp``, and ``/dev/shm``), and dies with its parent.

Started by root, bwrap itself runs as the command's own unprivileged host uid
(``command.identity``, see `sandbox.identity`), so the user namespace maps uid 65534 inside to
that uid outside, never to root. Started by anyone else, it maps to that user.

Limits: rlimits (CPU, memory per the language's strategy, file size, processes, no core
dumps) are set inside the sandbox by ``prlimit`` before it execs the program
(`_rlimit_flags`); while bwrap holds the sandbox on ``--block-fd`` the tree is placed into
a per-command cgroup (memory + pids) when the host allows one. The pid namespace guarantees
that nothing outlives the command: when its first process exits, the kernel kills the rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import select
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from referee.sandbox import cgroups, seccomp
from referee.sandbox.backends.base import Command, Execution, base_env, lifted_address_space
from referee.sandbox.backends.fetch import fetched, supervised
from referee.sandbox.identity import IdentityPool, as_user
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.supervision import Spawn, Watched, watch
from referee.sandbox.types import SandboxFailure

BOX = "/box"
WORK = "/work"
PRLIMIT = "/usr/bin/prlimit"
_SETUP_TIMEOUT_S = 10.0
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "java-17-openjdk",
    "java-21-openjdk",
    "localtime",
    "R",  # /usr/lib/R/etc links here
    "mono",
    "racket",  # config.rktd: without it racket recompiles its libraries at every start
)


@functools.lru_cache(maxsize=1)
def system_mounts() -> tuple[str, ...]:
    """bwrap arguments that show the host's system directories read-only (symlinked top
    directories such as /lib -> usr/lib are recreated as symlinks). Cached per process."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    for name in _ETC:
        if Path("/etc", name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return tuple(args)


def memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def isolation_args(uid: int) -> list[str]:
    """What every sandboxed process gets from bwrap: all new namespaces, an unprivileged
    identity with no capabilities, its own session, read-only system dirs, /proc, /dev.
    One list, so the per-case backend and the Python fast path cannot drift apart."""
    return [
        "--unshare-all",
        "--uid",
        str(uid),
        "--gid",
        str(uid),
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        *system_mounts(),
        "--proc",
        "/proc",
        *_proc_read_only(),
        "--dev",
        "/dev",
    ]


@functools.lru_cache(maxsize=1)
def _proc_read_only() -> tuple[str, ...]:
    """bwrap remounts /proc/sys read-only only when the directory itself is writable,
    which it never is, though its files are to a sandbox mapped to host root: bind them
    read-only ourselves (the unprivileged identity is the first line, this the second)."""
    args: list[str] = []
    for path in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return tuple(args)


class BwrapBackend:
    """Runs each command in its own bwrap sandbox. Thread-safe (no shared mutable state)."""

    name = "bwrap"
    isolating = True
    links = True
    fetches = True
    confines_spawning = seccomp.supported()

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings

    def problem(self) -> str | None:
        """None when bwrap runs and can create the namespaces; else why not."""
        if not Path(self.settings.bwrap_path).exists():
            return f"{self.settings.bwrap_path} not found (Debian: apt-get install bubblewrap)"
        if not Path(PRLIMIT).exists():
            return f"{PRLIMIT} not found (Debian: apt-get install util-linux)"
        # Started as root, runs start bwrap as an unprivileged uid: probe as one.
        probe = IdentityPool(self.settings.host_uid_base, 1).acquire()
        try:
            done = subprocess.run(
                [
                    self.settings.bwrap_path,
                    *isolation_args(self.settings.sandbox_uid),
                    "--",
                    "/bin/true",
                ],
                capture_output=True,
                timeout=10,
                check=False,
                env={},
                **as_user(probe),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap failed to start: {exc}"
        if done.returncode != 0:
            return f"bwrap cannot create namespaces: {done.stderr.decode(errors='replace')}"
        return None

    def argv(
        self,
        command: Command,
        fds: dict[str, int],
        block_fd: int,
        info_fd: int,
        fetch_fd: int | None = None,
        filter_fd: int | None = None,
    ) -> list[str]:
        """The full bwrap command line for ``command``; ``fds`` maps work-dir file names to
        readable fds whose content bwrap copies in. The program starts under ``prlimit``
        with the command's limits (`_rlimit_flags`); with ``fetch_fd``, under the fetching
        supervisor (`backends.fetch`) that writes the files to that fd; with ``filter_fd``,
        under that seccomp filter (`Command.spawn`)."""
        args = [
            self.settings.bwrap_path,
            *isolation_args(self.settings.sandbox_uid),
            "--size",
            str(command.disk_mb << 20),
            "--perms",
            "1777",
            "--tmpfs",
            WORK,
            "--symlink",
            WORK,
            "/tmp",
            # bwrap's /dev is an unbounded, writable tmpfs with a world-writable /dev/shm:
            # without a memory cgroup a case could park any amount of RAM there. /dev goes
            # read-only (device nodes stay usable) and /dev/shm is bounded like /work.
            "--remount-ro",
            "/dev",
            "--size",
            str(command.disk_mb << 20),
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            "--bind" if command.box_writable else "--ro-bind",
            str(command.box),
            BOX,
        ]
        for inside, host in command.binds.items():
            args += ["--ro-bind", str(host), inside]
        for directory in _parents(list(fds)):
            args += ["--perms", "0777", "--dir", f"{WORK}/{directory}"]
        for name, fd in fds.items():
            args += ["--perms", "0644", "--file", str(fd), f"{WORK}/{name}"]
        # The root itself is bwrap's scratch tmpfs: make it read-only like the rest.
        args += ["--remount-ro", "/", "--chdir", BOX if command.cwd_is_box else WORK]
        if filter_fd is not None:
            args += ["--seccomp", str(filter_fd)]
        args += ["--block-fd", str(block_fd), "--info-fd", str(info_fd), "--"]
        program = [PRLIMIT, *_rlimit_flags(command), "--"]
        program += [a.replace("{box}", BOX).replace("{work}", WORK) for a in command.argv]
        if fetch_fd is None:
            return args + program
        return args + supervised(program, fetch_fd, command.output_bytes, WORK, command.fetch)

    def execute(self, command: Command) -> Execution:
        """Run one command; see the module docstring for what isolates it."""
        channel = command.channel.fds() if command.channel is not None else ()
        # fds this call owns; closing one twice could close another thread's fd.
        owned = set(channel)
        try:
            fds = {name: memfd(name, data) for name, data in command.files.items()}
            owned.update(fds.values())
            block_r, block_w = os.pipe()
            owned.update((block_r, block_w))
            info_r, info_w = os.pipe()
            owned.update((info_r, info_w))
            fetch_fd = memfd("fetch", b"") if command.fetch else None
            if fetch_fd is not None:
                owned.add(fetch_fd)
            filter_fd = None if command.spawn else memfd("seccomp", seccomp.no_spawn_filter())
            if filter_fd is not None:
                owned.add(filter_fd)
            group = self._cgroup(command)
        except BaseException:
            _close_all(owned)
            raise
        env = {**base_env(WORK), **{k: v.replace("{work}", WORK) for k, v in command.env.items()}}
        if command.channel is not None:
            env.update(command.channel.env())
        child_ends = (info_w, block_r, *fds.values(), *channel)
        if filter_fd is not None:
            child_ends = (*child_ends, filter_fd)
        # the fetch memfd goes to the child too, but stays open here: it is read after
        kept = (fetch_fd,) if fetch_fd is not None else ()
        spawn = Spawn(
            argv=self.argv(command, fds, block_r, info_w, fetch_fd, filter_fd),
            env=env,
            stdin=command.stdin,
            wall_s=command.wall_s,
            output_bytes=command.output_bytes,
            pass_fds=(*child_ends, *kept),
            prepare=lambda proc: self._prepare(proc, command, info_r, child_ends, owned, group),
            release=lambda: release(block_w),
            kill=lambda proc: self._kill(proc, group),
            identity=command.identity,
        )
        files: dict[str, bytes] = {}
        try:
            watched = watch(spawn)
            if fetch_fd is not None:
                files = fetched(fetch_fd, command.output_bytes)
        except OSError as exc:
            raise SandboxFailure(f"bwrap could not run: {exc}") from exc
        finally:
            _close_all(owned)
            usage = _Usage.of(group)
            if group is not None:
                group.close()
        return dataclasses.replace(self._execution(watched, usage), files=files)

    def _cgroup(self, command: Command) -> cgroups.CaseCgroup | None:
        support = cgroups.detect()
        if support is None:
            return None
        try:
            # tmpfs pages are charged to the group, so the disk quota is added on top.
            return cgroups.CaseCgroup(
                support, (command.memory_mb + command.disk_mb) << 20, command.processes + 2
            )
        except OSError as exc:
            raise SandboxFailure(f"cannot create a cgroup: {exc}") from exc

    def _prepare(
        self,
        proc: subprocess.Popen[bytes],
        command: Command,
        info_r: int,
        child_ends: tuple[int, ...],
        owned: set[int],
        group: cgroups.CaseCgroup | None,
    ) -> None:
        # The child has its copies now; ours must go so that EOF on info_r means "written".
        for fd in child_ends:
            os.close(fd)
            owned.discard(fd)
        child = child_pid(info_r)
        try:
            if group is not None:
                group.add(proc.pid)
                group.add(child)
        except OSError as exc:
            raise SandboxFailure(f"cannot place the sandbox in its cgroup: {exc}") from exc

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes], group: cgroups.CaseCgroup | None) -> None:
        # Killing bwrap's outer process takes the sandbox's pid 1 with it (die-with-parent,
        # and the pid namespace ends with its init); the cgroup kill is the second net.
        # os.kill, not proc.kill(): Popen would reap it first and lose its rusage.
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, 9)
        if group is not None:
            for pid in group.pids_left():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)

    @staticmethod
    def _execution(watched: Watched, usage: _Usage) -> Execution:
        code = watched.returncode
        # bwrap reports a child killed by signal N as exit status 128 + N.
        if 128 < code < 128 + 65:
            code = -(code - 128)
        return Execution(
            returncode=code,
            stdout=watched.output.bytes("stdout"),
            stderr=watched.output.bytes("stderr"),
            wall_s=watched.wall_s,
            cpu_s=watched.cpu_s if usage.cpu_s is None else usage.cpu_s,
            memory_kb=usage.peak_bytes >> 10 if usage.peak_bytes else watched.maxrss_kb,
            timed_out=watched.timed_out,
            output_exceeded=watched.output.exceeded,
            oom_killed=usage.oom,
        )


@dataclass(frozen=True)
class _Usage:
    """What the command's cgroup measured. Preferred to rusage: bwrap's outer process does not
    collect its sandbox's usage, and ru_maxrss inherits the forking parent's peak."""

    peak_bytes: int = 0
    cpu_s: float | None = None
    oom: bool = False

    @staticmethod
    def of(group: cgroups.CaseCgroup | None) -> _Usage:
        if group is None:
            return _Usage()
        return _Usage(group.peak_bytes(), group.cpu_seconds(), group.oom_killed())


def _parents(names: list[str]) -> list[str]:
    """Every directory the relative paths ``names`` need, parents before children."""
    found = {str(parent) for name in names for parent in PurePosixPath(name).parents}
    return sorted(found - {"."}, key=lambda d: (d.count("/"), d))


def _close_all(fds: set[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


def release(block_w: int) -> None:
    """Let the sandbox's first process go on to exec the program."""
    os.write(block_w, b"x")


def child_pid(info_r: int) -> int:
    """Read bwrap's ``--info-fd`` JSON (it closes the fd after writing) for the host pid of
    the sandbox's first process."""
    data = b""
    while True:
        ready, _, _ = select.select([info_r], [], [], _SETUP_TIMEOUT_S)
        if not ready:
            raise SandboxFailure("bwrap did not report its child in time")
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError) as exc:
        raise SandboxFailure(f"bwrap failed before starting: {data[:200]!r}") from exc


def _rlimit_flags(command: Command) -> list[str]:
    """util-linux ``prlimit`` flags for the program (inherited by everything it starts).
    The limits are set inside the sandbox, by the process that then execs the program:
    setting another user's limits from outside needs CAP_SYS_RESOURCE, which a root in a
    container often lacks, and the program starts as another user when we are root."""
    cpu = max(1, math.ceil(command.cpu_s))
    fsize = command.file_size_mb << 20
    flags = [
        f"--cpu={cpu}:{cpu + 1}",
        f"--fsize={fsize}:{fsize}",
        "--core=0:0",
        f"--stack={64 << 20}:{64 << 20}",
    ]
    memory = command.memory_mb << 20
    if command.memory_rlimit == "as":
        flags.append(f"--as={memory}:{memory}")
    else:
        flags.append(lifted_address_space())
    if command.memory_rlimit == "data":
        flags.append(f"--data={memory}:{memory}")
    # Counted per user namespace (Linux 5.14+), and each sandbox has its own: it bounds
    # this run's processes and threads even without a pids cgroup, and never the server's.
    flags.append(f"--nproc={command.processes}:{command.processes}")
    return flags
