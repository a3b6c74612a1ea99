"""The backend contract: run one `Command` (a compile or one case) and say what happened.

A command names paths *inside* the sandbox: ``{box}`` (the program's directory: writable while
compiling, read-only while cases run) and ``{work}`` (a private, size-limited, writable
working directory). Each backend maps those to what it really uses. A backend raises
`sandbox.types.SandboxFailure` when the *infrastructure* fails; anything the program does
is reported in the `Execution`.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from referee.sandbox.identity import HostIdentity
from referee.sandbox.languages import MemoryRlimit


@dataclass(frozen=True)
class Channel:
    """Two host pipe ends a command's process gets, keeping their fd numbers: it reads from
    ``read_fd`` and writes to ``write_fd`` (their numbers are in ``REFEREE_CHANNEL_IN`` /
    ``REFEREE_CHANNEL_OUT``). The backend owns them: it closes its copies once the child
    holds them (so the far end sees EOF when the child dies), and always by the end."""

    read_fd: int
    write_fd: int

    def env(self) -> dict[str, str]:
        """The variables that tell the program its fd numbers."""
        return {"REFEREE_CHANNEL_IN": str(self.read_fd), "REFEREE_CHANNEL_OUT": str(self.write_fd)}

    def fds(self) -> tuple[int, int]:
        """Both fds."""
        return (self.read_fd, self.write_fd)


@dataclass(frozen=True)
class Command:
    """One process to run. Limits are in the units their names say."""

    argv: list[str]
    box: Path
    box_writable: bool
    cwd_is_box: bool
    env: dict[str, str]
    stdin: bytes
    files: dict[str, bytes]
    wall_s: float
    cpu_s: float
    memory_mb: int
    memory_rlimit: MemoryRlimit
    processes: int
    file_size_mb: int
    disk_mb: int
    output_bytes: int
    binds: dict[str, Path] = field(default_factory=dict)
    """Extra read-only host directories, sandbox path -> host path (e.g. a toolchain)."""
    channel: Channel | None = None
    """A pipe pair to a peer command running at the same time (see `Channel`)."""
    identity: HostIdentity | None = None
    """The host user to start the command as (`sandbox.identity`); None: the server's own."""
    spawn: bool = True
    """False: the command cannot start other processes (`sandbox.seccomp`); only for
    backends that say they confine spawning, and never with ``fetch``."""
    fetch: tuple[str, ...] = ()
    """Work-dir files (relative paths) to read back after the command (`backends.fetch`);
    at most ``output_bytes`` in all."""


@dataclass
class Execution:
    """What happened to a command. ``returncode`` < 0 means killed by that signal number.
    ``memory_kb`` is a peak; ``oom_killed`` is True only when the kernel said so."""

    returncode: int
    stdout: bytes
    stderr: bytes
    wall_s: float
    cpu_s: float
    memory_kb: int
    timed_out: bool
    output_exceeded: bool
    oom_killed: bool
    files: dict[str, bytes] = field(default_factory=dict)
    """The fetched files (`Command.fetch`) that could be read."""


class Backend(Protocol):
    """A way to run commands. ``isolating`` is False for backends that must only run trusted
    code. Implementations are thread-safe: the runner calls `execute` concurrently."""

    name: str
    isolating: bool
    links: bool
    """Whether it can run two programs linked by a channel (`Sandbox.run_linked`)."""
    fetches: bool
    """Whether it can read a case's files back after the program (`Command.fetch`)."""
    confines_spawning: bool
    """Whether it can keep a command from starting processes (`Command.spawn`)."""

    def problem(self) -> str | None:
        """Why this backend cannot run on this host, or None when it can. May do I/O."""
        ...

    def execute(self, command: Command) -> Execution:
        """Run ``command`` to completion or its limits. Raises SandboxFailure on infra errors."""
        ...


SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


def base_env(work: str) -> dict[str, str]:
    """The whole environment a sandboxed program gets (nothing from the host)."""
    return {
        "PATH": SANDBOX_PATH,
        "HOME": work,
        "TMPDIR": work,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def lifted_address_space() -> str:
    """The util-linux ``prlimit`` flag that raises the address-space soft limit to the
    hard one, for runtimes bounded otherwise (``data``, ``none``): a program inherits the
    soft limit of whoever starts it (a pool worker caps its own at
    ``REFEREE_WORKER_MEMORY_MB``), and the JVM reserving its heap, or Go its arenas, must
    not fail on the worker's limit instead of the case's."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    return f"--as={'unlimited' if hard == resource.RLIM_INFINITY else hard}:"
