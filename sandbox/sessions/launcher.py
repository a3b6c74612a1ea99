"""Starting sessions: each in a bwrap sandbox of its own, held for the session's life.

A session gets everything a one-shot case gets from the bwrap backend (the same argv:
new namespaces, uid 65534, no capabilities, read-only system, no network, a private
size-limited ``/work`` and ``/dev/shm``, rlimits, an unprivileged host identity when the
server is root), plus a cgroup of its own whose memory and pids limits bound everything
it runs for as long as it lives. Sessions need the bwrap backend.

Every session's bwrap is forked by one thread that lives as long as the launcher: bwrap's
``--die-with-parent`` fires when the *thread* that forked it exits, so a session started
from a short-lived request thread would die with it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import subprocess
import tempfile
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import IO

from referee.sandbox import cgroups, leftovers
from referee.sandbox.backends.base import Channel, Command, base_env
from referee.sandbox.backends.bwrap import WORK, BwrapBackend, child_pid, memfd, release
from referee.sandbox.identity import HostIdentity, IdentityPool, as_user
from referee.sandbox.languages import PYTHON_ENV, RUNTIME_MOUNT
from referee.sandbox.paths import MAX_FILES, plain_name, relative_path
from referee.sandbox.sessions.session import SandboxedAgent, Session
from referee.sandbox.sessions.types import SessionLost, SessionSpec
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import SandboxFailure

AGENT_PYTHON = "/usr/bin/python3"
"""The system's interpreter runs the agent (every session kind needs it)."""
START_S = 10.0
"""A session's agent must say it is ready within this."""
MAX_FILE_BYTES = 16 << 20
"""The largest file a session request moves (put, get), and the most a snapshot holds."""


class Launcher:
    """Starts sessions. Thread-safe. `close` stops the forking thread (sessions it started
    are their owner's to close; they die with the process in any case)."""

    def __init__(
        self,
        settings: SandboxSettings,
        identities: IdentityPool | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.settings = settings
        self.max_file_bytes = max_file_bytes
        self.backend = BwrapBackend(settings)
        self.identities = identities or IdentityPool(settings.host_uid_base, settings.host_uid_span)
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._box: Path | None = None  # made, with the forking thread, by the first start
        self._problem: str | None = None
        self._probed = False

    def problem(self) -> str | None:
        """Why sessions cannot start on this host, or None. Probed once."""
        if self.settings.backend != "bwrap":
            return (
                "sessions need the bwrap backend (REFEREE_SANDBOX_BACKEND=bwrap), "
                f"not {self.settings.backend}"
            )
        if not self._probed:
            self._problem, self._probed = self.backend.problem(), True
        return self._problem

    def close(self) -> None:
        with self._lock:
            box, self._box = self._box, None
        if box is not None:
            self._jobs.put(None)
            with contextlib.suppress(OSError):
                box.rmdir()

    def _started(self) -> Path:
        """The empty, read-only program directory sessions see at /box; the first call
        also starts the forking thread."""
        with self._lock:
            if self._box is None:
                root = self.settings.work_root
                self._box = Path(tempfile.mkdtemp(prefix=leftovers.box_prefix(), dir=root))
                self._box.chmod(0o755)
                forker = threading.Thread(target=self._fork_forever, daemon=True, name="sessions")
                forker.start()
            return self._box

    def start(self, spec: SessionSpec) -> Session:
        """A running session. Raises ValueError for a spec that can never start (a file
        name with a path out of the directory), `SandboxFailure` when the sandbox fails."""
        _require_valid(spec)
        problem = self.problem()
        if problem is not None:
            raise SandboxFailure(problem)
        identity = self.identities.acquire()
        try:
            agent = self._sandbox(spec, identity)
        except BaseException:
            self.identities.release(identity)
            raise
        session = Session(spec, agent, self.max_file_bytes)
        try:
            session.ready(START_S)
        except SessionLost as exc:
            raise SandboxFailure(f"the session did not start: {exc.reason}") from None
        return session

    def _command(
        self, spec: SessionSpec, channel: Channel, identity: HostIdentity | None
    ) -> Command:
        limits = spec.limits
        options = {
            "output_bytes": limits.output_bytes,
            "database": spec.database,
            "python_path": PYTHON_ENV["PYTHONPATH"],
        }
        source = _agent_source()
        runtime = self.settings.runtime_dir
        agent_args = [str(channel.read_fd), str(channel.write_fd), json.dumps(options)]
        return Command(
            argv=[AGENT_PYTHON, "-E", "-s", "-c", source, spec.kind.value, *agent_args],
            box=self._started(),
            box_writable=False,
            cwd_is_box=False,
            env=dict(PYTHON_ENV),
            stdin=b"",
            files={name: text.encode() for name, text in spec.files.items()},
            wall_s=0.0,
            cpu_s=limits.cpu_s,
            memory_mb=limits.memory_mb,
            memory_rlimit="as",
            processes=limits.processes,
            file_size_mb=limits.file_size_mb,
            disk_mb=limits.disk_mb,
            output_bytes=limits.output_bytes,
            binds={} if runtime is None else {RUNTIME_MOUNT: runtime},
            channel=channel,
            identity=identity,
        )

    def _sandbox(self, spec: SessionSpec, identity: HostIdentity | None) -> SandboxedAgent:
        owned: list[int] = []  # closed here whatever happens; the agent's pipe ends survive
        to_agent = from_agent = -1
        group: cgroups.CaseCgroup | None = None
        stderr: IO[bytes] | None = None
        try:
            agent_r, to_agent = os.pipe()
            from_agent, agent_w = os.pipe()
            owned += [agent_r, agent_w]
            command = self._command(spec, Channel(agent_r, agent_w), identity)
            fds = {name: memfd(name, data) for name, data in command.files.items()}
            block_r, block_w = os.pipe()
            info_r, info_w = os.pipe()
            owned += [*fds.values(), block_r, block_w, info_r, info_w]
            group = _cgroup(spec)
            argv = self.backend.argv(command, fds, block_r, info_w)
            env = {**base_env(WORK), **command.env}
            stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the session
            passed = (agent_r, agent_w, block_r, info_w, *fds.values())
            proc = self._fork(argv, env, passed, stderr, identity)
            for fd in passed:  # the child has them; EOF on info_r now means "written"
                os.close(fd)
                owned.remove(fd)
            pidfd = os.pidfd_open(proc.pid)
            pid = child_pid(info_r)
            if group is not None:
                group.add(proc.pid)
                group.add(pid)
            release(block_w)
        except BaseException as exc:
            for fd in (to_agent, from_agent):
                if fd >= 0:
                    os.close(fd)
            if group is not None:
                group.close()  # kills what started
            if stderr is not None:
                stderr.close()
            if isinstance(exc, OSError):
                raise SandboxFailure(f"cannot start the session's sandbox: {exc}") from exc
            raise
        finally:
            for fd in owned:
                os.close(fd)
        done = lambda: self.identities.release(identity)  # noqa: E731
        return SandboxedAgent(proc, pidfd, to_agent, from_agent, group, stderr, done)

    def _fork(
        self,
        argv: list[str],
        env: dict[str, str],
        passed: tuple[int, ...],
        stderr: IO[bytes],
        identity: HostIdentity | None,
    ) -> subprocess.Popen[bytes]:
        """Popen on the forking thread (see the module docstring)."""
        answer: queue.Queue[subprocess.Popen[bytes] | BaseException] = queue.Queue()

        def fork() -> None:
            try:
                answer.put(
                    subprocess.Popen(
                        argv,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=stderr,
                        env=env,
                        pass_fds=passed,
                        start_new_session=True,
                        **as_user(identity),
                    )
                )
            except BaseException as exc:  # noqa: BLE001 - raised by the caller
                answer.put(exc)

        self._jobs.put(fork)
        got = answer.get()
        if isinstance(got, BaseException):
            raise got
        return got

    def _fork_forever(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()


@functools.cache
def _agent_source() -> str:
    return resources.files("referee.sandbox.sessions").joinpath("agent.py").read_text()


def _cgroup(spec: SessionSpec) -> cgroups.CaseCgroup | None:
    support = cgroups.detect()
    if support is None:
        return None
    limits = spec.limits
    try:
        # /work and /dev/shm live in memory, charged to the group: both on top.
        memory = (limits.memory_mb + 2 * limits.disk_mb) << 20
        return cgroups.CaseCgroup(support, memory, limits.processes + 4, kind="session")
    except OSError as exc:
        raise SandboxFailure(f"cannot create the session's cgroup: {exc}") from exc


def _require_valid(spec: SessionSpec) -> None:
    """Raise ValueError (the caller's input) for a spec the sandbox would fail to start
    with: bad names, too many files, files larger than the session's disk."""
    if len(spec.files) > MAX_FILES:
        raise ValueError(f"files: at most {MAX_FILES} files")
    for name in spec.files:
        if not relative_path(name):
            raise ValueError(f"files: bad file name {name[:64]!r}")
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in spec.files.values())
    if size > spec.limits.disk_mb << 20:
        raise ValueError(f"files: {size} bytes do not fit limits.disk_mb ({spec.limits.disk_mb})")
    if not plain_name(spec.database):
        raise ValueError(f"database: {spec.database[:64]!r} is not a plain file name")
