"""One running session, seen from the host: requests to its agent, replies, and its end.

A `Session` is made by `sandbox.sessions.launcher.Launcher.start`. It talks to the agent
(`sandbox.sessions.agent`) over two pipes, one request at a time (a second concurrent
request raises `SessionBusy`), each with a deadline: a command's own time limit plus a
grace period, a file request's fixed one. A reply that does not come in time, that is
malformed or larger than the session could legitimately send, or an agent that dies,
ends the session: its sandbox is killed and every later request raises `SessionLost`
with the reason (out of memory, CPU budget spent, stopped answering, closed).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from referee.sandbox import cgroups
from referee.sandbox.sessions.types import (
    ExecOutcome,
    FileEntry,
    SessionBusy,
    SessionFileProblem,
    SessionLimits,
    SessionLost,
    SessionSpec,
)

HEADER = struct.Struct(">I")
EXEC_GRACE_S = 3.0
"""On top of a command's time limit: the agent stops it and answers within this."""
FILE_REQUEST_S = 30.0
"""A file request (put, get, list, snapshot) must be answered within this."""


@dataclass
class SandboxedAgent:
    """The host's handles on a started session sandbox. ``release`` gives back what the
    launcher lent it (its host identity); called once, when the session ends."""

    proc: subprocess.Popen[bytes]
    pidfd: int
    to_agent: int
    from_agent: int
    group: cgroups.CaseCgroup | None
    stderr: IO[bytes]
    release: Callable[[], None]


class Session:
    """A session's requests; thread-safe (one request at a time, `close` at any time)."""

    def __init__(self, spec: SessionSpec, agent: SandboxedAgent, max_file_bytes: int) -> None:
        self.spec = spec
        self.max_file_bytes = max_file_bytes
        self._agent: SandboxedAgent | None = agent
        self._lock = threading.Lock()
        self._end_lock = threading.Lock()
        self._retired: list[SandboxedAgent] = []  # ended, their fds still to close
        self._lost: str | None = None
        limits = spec.limits
        # JSON may spell a byte of output as six characters (\u0000); files come base64'd.
        self._max_reply = 12 * limits.output_bytes + 2 * max_file_bytes + (1 << 20)

    @property
    def limits(self) -> SessionLimits:
        return self.spec.limits

    @property
    def lost(self) -> str | None:
        """Why the session ended (None while it runs)."""
        return self._lost

    def ready(self, timeout_s: float) -> None:
        """Wait for the agent's first word; raises `SessionLost` if it never comes."""
        with self._request():
            self._receive(time.monotonic() + timeout_s)

    def execute(self, code: str, stdin: str = "", timeout_s: float = 10.0) -> ExecOutcome:
        """Run one command (Python code, a bash command, SQL: the session's kind)."""
        request = {"op": "exec", "code": code, "stdin": stdin, "timeout_s": timeout_s}
        with self._request():
            self._check_cpu()
            reply = self._call(request, timeout_s + EXEC_GRACE_S)
            with self._parsing():
                outcome = ExecOutcome.model_validate(reply)
            self._check_cpu()
        return outcome

    def put(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` (relative to the session's directory)."""
        if len(data) > self.max_file_bytes:
            raise SessionFileProblem("too_large", f"over {self.max_file_bytes} bytes")
        request = {"op": "put", "path": path, "data": base64.b64encode(data).decode()}
        with self._request():
            self._file_call(request)

    def get(self, path: str) -> bytes:
        """The content of ``path``; at most ``max_file_bytes``."""
        with self._request():
            reply = self._file_call({"op": "get", "path": path, "limit": self.max_file_bytes})
            with self._parsing():
                return base64.b64decode(reply["data"], validate=True)

    def files(self) -> tuple[list[FileEntry], bool]:
        """What the session's directory holds (depth first), and whether the list was cut."""
        with self._request():
            reply = self._file_call({"op": "list"})
            with self._parsing():
                entries = [FileEntry.model_validate(entry) for entry in reply["entries"]]
                return entries, bool(reply["truncated"])

    def snapshot(self, limit: int) -> dict[str, bytes]:
        """Every regular file of the session's directory, at most ``limit`` bytes in all."""
        with self._request():
            reply = self._file_call({"op": "snapshot", "limit": min(limit, self.max_file_bytes)})
            with self._parsing():
                found = reply["files"].items()
                files = {str(p): base64.b64decode(d, validate=True) for p, d in found}
        if sum(map(len, files.values())) > limit:
            message = f"the session's files hold more than {limit} bytes"
            raise SessionFileProblem("too_large", message)
        return files

    def pids(self) -> list[int]:
        """Host pids of the session's sandbox (bwrap and everything under it)."""
        agent = self._agent
        if agent is None or agent.proc.poll() is not None:
            return []
        pids = {agent.proc.pid}
        if agent.group is not None:
            pids.update(agent.group.pids_left())
        return sorted(pids)

    def close(self, reason: str = "the session was closed") -> None:
        """End the session: kill its sandbox, free what it held. Safe to call twice and
        while a request runs: that request sees its agent die and raises `SessionLost`,
        and the agent's pipes are closed only once it is done with them (an fd closed
        under a reader could be reused by another session's pipe meanwhile)."""
        with self._end_lock:
            agent, self._agent = self._agent, None
            if self._lost is None:
                self._lost = reason
            if agent is not None:
                self._retired.append(agent)
        if agent is None:
            return
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(agent.pidfd, signal.SIGKILL)
        if self._lock.acquire(blocking=False):
            try:
                self._reap()
            finally:
                self._lock.release()
        # else: the request running now reaps it as it ends (`_request`)

    def _reap(self) -> None:
        """Free what ended agents held; called with the request lock held."""
        with self._end_lock:
            retired, self._retired = self._retired, []
        for agent in retired:
            with contextlib.suppress(subprocess.TimeoutExpired):
                agent.proc.wait(timeout=10)
            if agent.group is not None:
                agent.group.close()
            for fd in (agent.pidfd, agent.to_agent, agent.from_agent):
                os.close(fd)
            agent.stderr.close()
            agent.release()

    @contextlib.contextmanager
    def _request(self) -> Iterator[None]:
        if not self._lock.acquire(blocking=False):
            raise SessionBusy("another request to this session is still running")
        try:
            if self._lost is not None:
                raise SessionLost(self._lost)
            yield
        finally:
            self._reap()
            self._lock.release()

    @contextlib.contextmanager
    def _parsing(self) -> Iterator[None]:
        """A reply that does not have the shape its request asks for ends the session."""
        try:
            yield
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # incl. ValidationError
            self._fail(f"the session's agent sent a malformed reply ({type(exc).__name__})")

    def _file_call(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self._call(request, FILE_REQUEST_S)
        if "problem" in reply:
            raise SessionFileProblem(reply["problem"], str(reply.get("message", "")))
        return reply

    def _call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        agent = self._live()
        body = json.dumps(request).encode()
        deadline = time.monotonic() + timeout_s
        view = memoryview(HEADER.pack(len(body)) + body)
        while view:  # the pipe is non-blocking: an agent that never reads cannot hang us
            left = max(deadline - time.monotonic(), 0)
            _, ready, _ = select.select([], [agent.to_agent], [], left)
            if not ready:
                self._fail("the session stopped reading its requests")
            try:
                view = view[os.write(agent.to_agent, view) :]
            except BlockingIOError:
                continue
            except OSError:
                self._fail(None)
        return self._receive(deadline)

    def _receive(self, deadline: float) -> dict[str, Any]:
        agent = self._live()
        (size,) = HEADER.unpack(self._read(agent, HEADER.size, deadline))
        if size > self._max_reply:
            most = self._max_reply
            self._fail(f"the session's agent sent a {size}-byte reply (the most is {most})")
        try:
            reply = json.loads(self._read(agent, size, deadline))
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self._fail("the session's agent sent a malformed reply")
        if "lost" in reply:
            self._fail(str(reply["lost"])[:1000])
        return reply

    def _read(self, agent: SandboxedAgent, size: int, deadline: float) -> bytes:
        data = bytearray()
        while len(data) < size:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([agent.from_agent], [], [], max(left, 0))
            if not ready:
                self._fail("the session stopped answering (a command that ignores its time limit)")
            try:
                chunk = os.read(agent.from_agent, min(size - len(data), 1 << 20))
            except OSError:
                chunk = b""
            if not chunk:
                self._fail(None)
            data += chunk
        return bytes(data)

    def _live(self) -> SandboxedAgent:
        agent = self._agent
        if agent is None:
            raise SessionLost(self._lost or "the session was closed")
        return agent

    def _check_cpu(self) -> None:
        agent = self._live()
        spent = agent.group.cpu_seconds() if agent.group is not None else None
        if spent is not None and spent > self.limits.cpu_s:
            self._fail(f"the session spent its CPU budget ({self.limits.cpu_s:g} s)")

    def _fail(self, reason: str | None) -> NoReturn:
        """End the session for ``reason`` (None: work out why its agent died) and raise."""
        agent = self._agent
        if reason is None and agent is not None:
            reason = _why_dead(agent, self.limits)
        self.close(reason or "the session was closed")
        raise SessionLost(self._lost or "the session was closed")


def _why_dead(agent: SandboxedAgent, limits: SessionLimits) -> str:
    """Why a session's agent ended, from what the host can see."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        agent.proc.wait(timeout=1)
    if agent.group is not None and agent.group.oom_killed():
        return f"the session ran out of memory ({limits.memory_mb} MB and its files)"
    spent = agent.group.cpu_seconds() if agent.group is not None else None
    if spent is not None and spent >= limits.cpu_s:
        return f"the session spent its CPU budget ({limits.cpu_s:g} s)"
    code = agent.proc.returncode
    said = os.pread(agent.stderr.fileno(), 500, 0).decode(errors="replace").strip()
    ended = "was killed" if code is None else f"ended (status {code})"
    return f"the session's sandbox {ended}" + (f": {said}" if said else "")
