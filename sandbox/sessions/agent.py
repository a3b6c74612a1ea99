"""The agent that runs INSIDE a session's sandbox (stdlib only; never imports `sandbox`).

`sandbox.sessions.launcher` starts it as ``python3 -E -s -c <this file's text> KIND IN OUT
OPTIONS`` in a bwrap sandbox of its own (the per-case isolation: no network, uid 65534, no
capabilities, read-only system, private size-limited ``/work``, the session's cgroup).
It answers requests from the host, one at a time, on the pipe ``IN`` with replies on
``OUT``: 4-byte big-endian length, then a JSON object.

What it keeps between requests, per ``KIND``:

- ``python``: one namespace (a persistent interpreter, Jupyter-like). The code runs in
  this process; the value of a last expression comes back as ``display``; an exception
  comes back as ``error`` and the session goes on.
- ``bash``: one ``bash`` process whose cwd, environment, variables and functions persist
  (each command is sourced by it); background jobs do not survive their command.
- ``sqlite``: one connection to a database file in ``/work``.

Every kind keeps ``/work``, whose files the host can put, get and list. Output of each
command (the agent's fds 1 and 2, inherited by what it starts) is collected in memfds
and cut at ``output_bytes``. After each command, every process it left behind is killed:
nothing runs between commands but the agent (and its shell).

A command over its time limit is stopped here (Python: an exception raised by a timer;
bash: its processes are killed, and the shell too if it does not come back; SQLite:
the statement is interrupted). If the agent itself stops answering, the host kills the
whole sandbox and reports the session lost. The code a session runs can reach this
process (Python shares it): whatever it forges only changes its own session's replies.
"""

from __future__ import annotations

import ast
import base64
import builtins
import contextlib
import json
import os
import select
import signal
import sqlite3
import stat
import struct
import sys
import time
import traceback
from typing import Any

WORK = "/work"
HEADER = struct.Struct(">I")
MAX_REQUEST = 256 << 20
MAX_ROWS = 1000
LISTED = 10_000
BASH_GRACE_S = 1.0


class Problem(Exception):
    """A request that cannot be done (a missing file, say): answered, never fatal."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ExecTimeout(BaseException):
    """Raised into Python code at its time limit; not an Exception, so a bare
    ``except Exception`` in the session's code does not swallow it."""


def read_exact(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_request(fd: int) -> dict[str, Any] | None:
    header = read_exact(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_REQUEST:
        return None
    body = read_exact(fd, size)
    return None if body is None else json.loads(body)


def write_reply(fd: int, reply: dict[str, Any]) -> None:
    body = json.dumps(reply).encode()
    data = HEADER.pack(len(body)) + body
    while data:
        data = data[os.write(fd, data) :]


class Capture:
    """The memfds behind fds 0, 1 and 2 (stdin, stdout, stderr) of every command."""

    def __init__(self, output_bytes: int) -> None:
        self.cap = output_bytes
        self.stdin = os.memfd_create("stdin")
        self.stdout = os.memfd_create("stdout")
        self.stderr = os.memfd_create("stderr")
        for fd, target in ((self.stdin, 0), (self.stdout, 1), (self.stderr, 2)):
            os.dup2(fd, target)  # shares the file offset with the memfd: reset below
        self.text_out = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115
        self.text_err = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115

    def begin(self, stdin: str) -> None:
        self._clear()
        # Text the last command left buffered (a write that failed: output over the file
        # size limit) is pushed out now, then dropped: never shown as this command's.
        for stream in (self.text_out, self.text_err):
            with contextlib.suppress(Exception):
                stream.flush()
        self._clear()
        os.write(self.stdin, stdin.encode())
        os.lseek(self.stdin, 0, os.SEEK_SET)
        sys.stdin = open(0, closefd=False, errors="replace")  # noqa: SIM115
        sys.stdout, sys.stderr = self.text_out, self.text_err

    def _clear(self) -> None:
        for fd in (self.stdout, self.stderr, self.stdin):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)

    def end(self) -> dict[str, Any]:
        for stream in (self.text_out, self.text_err):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = self.text_out, self.text_err
        out, cut_out = self._read(self.stdout)
        err, cut_err = self._read(self.stderr)
        return {"stdout": out, "stderr": err, "truncated": cut_out or cut_err}

    def _read(self, fd: int) -> tuple[str, bool]:
        size = os.fstat(fd).st_size
        data = os.pread(fd, min(size, self.cap), 0)
        return data.decode(errors="replace"), size > self.cap


def processes() -> list[tuple[int, bytes, int]]:
    """(pid, state, parent pid) of every process of this sandbox."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            found.append((int(name), fields[0], int(fields[1])))
        except (OSError, IndexError, ValueError):
            continue
    return found


def kill_strays(keep: set[int]) -> None:
    """Kill every process of the sandbox but ``keep`` (and pid 1, bwrap's init), and reap
    those that were this process's children (bwrap's init reaps the others). A child in
    ``keep`` is never reaped here: its owner waits for it."""
    me = os.getpid()
    keep = keep | {1, me}
    for _ in range(100):
        # A zombie whose parent is not this process is its parent's (or init's) to reap.
        found = [
            (pid, state)
            for pid, state, parent in processes()
            if pid not in keep and (state != b"Z" or parent == me)
        ]
        for pid, state in found:
            if state != b"Z":
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            else:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
        if not found:
            return
        time.sleep(0.002)


def error_of(exc: BaseException, cap: int) -> dict[str, Any]:
    """An exception as Jupyter shows it, its text cut at ``cap`` characters (a message
    of any size would otherwise make a reply larger than the host accepts)."""
    tb = exc.__traceback__
    lines = traceback.format_exception(type(exc), exc, tb.tb_next if tb else None)
    kept, left = [], cap
    for line in lines:
        if left <= 0:
            break
        kept.append(line[:left])
        left -= len(kept[-1])
    return {"ename": type(exc).__name__, "evalue": str(exc)[:cap], "traceback": kept}


class PythonKind:
    """A persistent namespace; code runs in this process."""

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        self.capture = capture
        self.display_bytes = int(options["output_bytes"])
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        # as PYTHONPATH does in one-shot runs
        sys.path[:0] = [WORK, *str(options["python_path"]).split(os.pathsep)]
        self.armed = False
        signal.signal(signal.SIGALRM, self._expired)

    def _expired(self, signum: int, frame: object) -> None:
        if self.armed:
            self.armed = False
            raise ExecTimeout

    def execute(self, code: str, timeout_s: float) -> dict[str, Any]:
        outcome: dict[str, Any] = {"status": "ok", "exit_code": 0, "display": [], "error": None}
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            self._run(code, outcome)
        except ExecTimeout:
            outcome.update(status="timeout", exit_code=None)
        finally:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
        kill_strays(set())
        return outcome

    def _run(self, code: str, outcome: dict[str, Any]) -> None:
        try:
            tree = ast.parse(code, "<exec>", "exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<exec>", "exec"), self.namespace)
            if isinstance(last, ast.Expr):
                shown = compile(ast.Expression(last.value), "<exec>", "eval")
                value = eval(shown, self.namespace)
                if value is not None:
                    text = repr(value)[: self.display_bytes]
                    outcome["display"] = [{"text/plain": text}]
        except SystemExit as exc:
            code_ = exc.code
            outcome["exit_code"] = code_ if isinstance(code_, int) else (0 if code_ is None else 1)
        except ExecTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 - reported, the session goes on
            outcome.update(exit_code=1, error=error_of(exc, self.display_bytes))


class BashKind:
    """One bash that sources each command, so its state persists."""

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        self.capture = capture
        self.command = os.memfd_create("command")
        self.pid = 0
        self.exited: int | None = None  # the shell's wait status, once reaped
        self.control = self.status = -1
        self._start()

    def _start(self) -> None:
        control_r, self.control = os.pipe()
        self.status, status_w = os.pipe()
        actions = [
            (os.POSIX_SPAWN_DUP2, control_r, 0),
            (os.POSIX_SPAWN_DUP2, status_w, 3),
        ]
        self.pid = os.posix_spawn(
            "/bin/bash", ["bash", "--noprofile", "--norc"], dict(os.environ), file_actions=actions
        )
        self.exited = None
        os.close(control_r)
        os.close(status_w)
        os.write(self.control, b"__referee_status() { return $1; }; __referee_rc=0\n")

    def _stop(self) -> int:
        """Kill the shell (if it still runs) and reap it: its exit code (negative: the
        signal that killed it)."""
        if self.exited is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            self.exited = os.waitpid(self.pid, 0)[1]
        os.close(self.control)
        os.close(self.status)
        return os.waitstatus_to_exitcode(self.exited)

    def execute(self, code: str, timeout_s: float) -> dict[str, Any]:
        os.ftruncate(self.command, 0)
        os.pwrite(self.command, code.encode(), 0)
        token = os.urandom(8).hex()
        me, cap = os.getpid(), self.capture
        line = (
            # $? is the last command's, as at a prompt
            f'__referee_status "$__referee_rc"; '
            f". /proc/{me}/fd/{self.command} 3>&- </proc/{me}/fd/{cap.stdin} "
            f">/proc/{me}/fd/{cap.stdout} 2>/proc/{me}/fd/{cap.stderr}; "
            # its background jobs are killed next: forgotten first, their end goes unsaid
            f"__referee_rc=$?; disown -a; printf '{token} %d\\n' \"$__referee_rc\" >&3\n"
        )
        outcome: dict[str, Any] = {"status": "ok", "display": [], "error": None}
        with contextlib.suppress(BrokenPipeError):  # the shell is gone: seen below
            os.write(self.control, line.encode())
        code_ = self._wait(token, time.monotonic() + timeout_s)
        if code_ is None:
            outcome["status"] = "timeout"
            kill_strays({self.pid})
            code_ = self._wait(token, time.monotonic() + BASH_GRACE_S)
        if isinstance(code_, int):
            outcome["exit_code"] = code_ if outcome["status"] == "ok" else None
        else:  # the shell exited (``exit``), or would not come back from a timeout
            exited = self._stop()
            outcome["exit_code"] = exited if outcome["status"] == "ok" else None
            outcome["state_lost"] = True
            self._start()
        kill_strays({self.pid})
        return outcome

    def _wait(self, token: str, deadline: float) -> int | str | None:
        """The command's exit code; "gone" when the shell ended; None at the deadline."""
        pending = b""
        prefix = token.encode() + b" "
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.status], [], [], min(left, 0.05))
            if not ready:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.exited = status
                    return "gone"
                continue
            chunk = os.read(self.status, 4096)
            if not chunk:
                return "gone"
            pending += chunk
            for row in pending.split(b"\n")[:-1]:
                if row.startswith(prefix):
                    with contextlib.suppress(ValueError):
                        return int(row[len(prefix) :])
            pending = pending.rpartition(b"\n")[2][-4096:]


class SqliteKind:
    """One connection to ``/work/<database>``; each command is one or more statements."""

    def __init__(self, capture: Capture, options: dict[str, Any]) -> None:
        self.capture = capture
        self.display_bytes = int(options["output_bytes"])
        self.connection = sqlite3.connect(
            os.path.join(WORK, options["database"]), isolation_level=None
        )

    def execute(self, code: str, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        self.connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        outcome: dict[str, Any] = {"status": "ok", "exit_code": 0, "display": [], "error": None}
        try:
            for statement in statements(code):
                cursor = self.connection.execute(statement)
                if cursor.description:
                    outcome["display"] = [table(cursor, self.display_bytes)]
        except sqlite3.Error as exc:
            if time.monotonic() > deadline:
                outcome.update(status="timeout", exit_code=None)
            else:
                outcome.update(exit_code=1, error=error_of(exc, self.display_bytes))
        finally:
            self.connection.set_progress_handler(None, 0)
        return outcome


def statements(code: str) -> list[str]:
    """``code`` cut into complete SQL statements (a ``;`` inside a string stays)."""
    found, current = [], ""
    for piece in code.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            found.append(current)
            current = ""
    if current.strip(" \t\r\n;"):
        found.append(current[:-1])
    return found


def table(cursor: sqlite3.Cursor, cap: int) -> dict[str, Any]:
    """The query's rows: at most `MAX_ROWS`, and as many as fit ``cap`` characters."""
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchmany(MAX_ROWS + 1)
    cells, lines, size = [], [], 0
    for row in rows[:MAX_ROWS]:
        cell = [base64.b64encode(v).decode() if isinstance(v, bytes) else v for v in row]
        line = "|".join("" if v is None else str(v) for v in cell)
        size += len(line) + 1
        if size > cap:
            break
        cells.append(cell)
        lines.append(line)
    data = {"columns": columns, "rows": cells, "truncated": len(cells) < len(rows)}
    return {"text/plain": "\n".join(lines), "application/json": data}


KINDS: dict[str, type[PythonKind | BashKind | SqliteKind]] = {
    "python": PythonKind,
    "bash": BashKind,
    "sqlite": SqliteKind,
}


def inside(path: str) -> str:
    """``path`` (relative to /work) as an absolute path that stays in /work."""
    full = os.path.realpath(os.path.join(WORK, path))
    if full != WORK and not full.startswith(WORK + "/"):
        raise Problem("outside", f"{path} resolves outside the session's directory")
    return full


def put(request: dict[str, Any]) -> dict[str, Any]:
    full = inside(request["path"])
    data = base64.b64decode(request["data"])
    try:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(data)
    except IsADirectoryError as exc:
        raise Problem("is_directory", f"{request['path']} is a directory") from exc
    except OSError as exc:
        raise Problem("no_space", f"cannot write {request['path']}: {exc.strerror}") from exc
    return {"size": len(data)}


def get(request: dict[str, Any]) -> dict[str, Any]:
    full, limit = inside(request["path"]), int(request["limit"])
    if os.path.isdir(full):
        raise Problem("is_directory", f"{request['path']} is a directory")
    try:
        with open(full, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError as exc:
        raise Problem("not_found", f"{request['path']} does not exist") from exc
    except OSError as exc:
        raise Problem("unreadable", f"cannot read {request['path']}: {exc.strerror}") from exc
    if len(data) > limit:
        raise Problem("too_large", f"{request['path']} is larger than {limit} bytes")
    return {"data": base64.b64encode(data).decode()}


def listing(request: dict[str, Any]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    for root, dirs, files in os.walk(WORK):
        for name in sorted(dirs) + sorted(files):
            full = os.path.join(root, name)
            info = os.lstat(full)
            kind = (
                "directory" if stat.S_ISDIR(info.st_mode)
                else "file" if stat.S_ISREG(info.st_mode)
                else "symlink" if stat.S_ISLNK(info.st_mode)
                else "other"
            )  # fmt: skip
            entries.append({"path": full[len(WORK) + 1 :], "size": info.st_size, "kind": kind})
            if len(entries) >= LISTED:
                return {"entries": entries, "truncated": True}
    return {"entries": entries, "truncated": False}


def snapshot(request: dict[str, Any]) -> dict[str, Any]:
    """Every regular file under /work (symlinks not followed), at most ``limit`` bytes."""
    limit, total, files = int(request["limit"]), 0, {}
    for root, _, names in os.walk(WORK):
        for name in names:
            full = os.path.join(root, name)
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
            with open(full, "rb") as handle:
                data = handle.read(limit - total + 1)
            total += len(data)
            if total > limit:
                raise Problem("too_large", f"the session's files hold more than {limit} bytes")
            files[full[len(WORK) + 1 :]] = base64.b64encode(data).decode()
    return {"files": files}


def main() -> None:
    kind, in_fd, out_fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    options = json.loads(sys.argv[4])
    for fd in (in_fd, out_fd):
        os.set_inheritable(fd, False)  # nothing the session starts holds the host's pipes
    os.chdir(WORK)
    capture = Capture(int(options["output_bytes"]))
    runner = KINDS[kind](capture, options)
    files = {"put": put, "get": get, "list": listing, "snapshot": snapshot}
    write_reply(out_fd, {"ready": os.getpid()})
    while True:
        request = read_request(in_fd)
        if request is None:
            return
        started = time.monotonic()
        try:
            if request["op"] == "exec":
                capture.begin(request["stdin"])
                reply = runner.execute(request["code"], float(request["timeout_s"]))
                reply.update(capture.end())
                reply["wall_s"] = time.monotonic() - started
            else:
                reply = files[request["op"]](request)
        except Problem as exc:
            reply = {"problem": exc.code, "message": str(exc)}
        except MemoryError:
            # The command's data fill the address space: not even its reply fits.
            write_reply(out_fd, {"lost": "the session ran out of memory (address space)"})
            return
        except Exception as exc:  # noqa: BLE001 - our own failure: said, then the end
            write_reply(out_fd, {"lost": f"the session's agent failed: {exc!r}"[:1000]})
            return
        write_reply(out_fd, reply)


main()
