"""The process backend: rlimits only. IT DOES NOT ISOLATE ANYTHING — the program can read
your files, use the network and signal your processes. For trusted code and development.

Limits are set by exec'ing through util-linux ``prlimit`` (so no preexec hook runs in
the forked child), the work dir is a fresh host temp dir, and the process group is killed
when the command ends. A cgroup is not used: without a pid namespace there is no clean way to
keep a daemon from leaving, which is exactly the point of the other backends.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import tempfile
from pathlib import Path

from referee.sandbox.backends.base import Command, Execution, base_env, lifted_address_space
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.supervision import Spawn, watch
from referee.sandbox.types import SandboxFailure

log = logging.getLogger(__name__)


class ProcessBackend:
    """Not isolating; see the module docstring. Thread-safe."""

    name = "process"
    isolating = False
    links = True
    fetches = True
    confines_spawning = False

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings

    def problem(self) -> str | None:
        """None when util-linux ``prlimit`` is present."""
        return None if shutil.which("prlimit") else "util-linux prlimit not found"

    def execute(self, command: Command) -> Execution:
        """Run ``command`` as a plain child process under rlimits."""
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise SandboxFailure("util-linux prlimit not found")
        channel = command.channel.fds() if command.channel is not None else ()
        owned = set(channel)  # closed once: a second close could hit another thread's fd
        try:
            with tempfile.TemporaryDirectory(prefix="referee-work-") as work:
                for name, data in command.files.items():
                    Path(work, name).parent.mkdir(parents=True, exist_ok=True)
                    Path(work, name).write_bytes(data)
                argv = [self._path(a, command, work) for a in command.argv]
                env = {
                    **base_env(work),
                    **{k: self._path(v, command, work) for k, v in command.env.items()},
                }
                if command.channel is not None:
                    env.update(command.channel.env())
                spawn = Spawn(
                    argv=[prlimit, *_limit_flags(command), "--", *argv],
                    env=env,
                    stdin=command.stdin,
                    wall_s=command.wall_s,
                    output_bytes=command.output_bytes,
                    cwd=str(command.box) if command.cwd_is_box else work,
                    pass_fds=channel,
                    # the child holds the channel now: the peer must see EOF when it dies
                    prepare=lambda _proc: _close(owned),
                )
                try:
                    watched = watch(spawn)
                except OSError as exc:
                    raise SandboxFailure(f"cannot start process: {exc}") from exc
                files = _fetched(Path(work), command.fetch, command.output_bytes)
        finally:
            _close(owned)
        return Execution(
            returncode=watched.returncode,
            stdout=watched.output.bytes("stdout"),
            stderr=watched.output.bytes("stderr"),
            wall_s=watched.wall_s,
            cpu_s=watched.cpu_s,
            memory_kb=watched.maxrss_kb,
            timed_out=watched.timed_out,
            output_exceeded=watched.output.exceeded,
            oom_killed=False,
            files=files,
        )

    @staticmethod
    def _path(arg: str, command: Command, work: str) -> str:
        arg = arg.replace("{box}", str(command.box)).replace("{work}", work)
        for inside, host in command.binds.items():
            if arg.startswith(inside):
                arg = str(host) + arg[len(inside) :]
        return arg


def _fetched(work: Path, paths: tuple[str, ...], cap: int) -> dict[str, bytes]:
    """The regular files among ``paths`` (no symlinks followed), at most ``cap`` bytes in
    all, as the bwrap backend's supervisor reads them."""
    found: dict[str, bytes] = {}
    for name in paths:
        path = work / name
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
        if len(data) > cap:
            break
        found[name] = data
        cap -= len(data)
    return found


def _close(fds: set[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


def _limit_flags(command: Command) -> list[str]:
    cpu = max(1, math.ceil(command.cpu_s))
    flags = [f"--cpu={cpu}:{cpu + 1}", f"--fsize={command.file_size_mb << 20}", "--core=0"]
    memory = command.memory_mb << 20
    if command.memory_rlimit == "as":
        flags.append(f"--as={memory}")
    else:
        flags.append(lifted_address_space())
    if command.memory_rlimit == "data":
        flags.append(f"--data={memory}")
    return flags
