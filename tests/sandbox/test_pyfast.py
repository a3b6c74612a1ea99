"""The Python fast path's own machinery: one resident server that outlives the threads
using it, cases supervised concurrently by that server, and the checks the leftover
fixture relies on (so they can fail)."""

from __future__ import annotations

import array
import logging
import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from referee.sandbox import (
    Case,
    CaseOutcome,
    CaseStatus,
    Program,
    Sandbox,
    SandboxSettings,
    SandboxStatus,
)

from .conftest import FAST, fast_path_strays


def py(source: str) -> Program:
    return Program(language="python3", source=source)


def test_server_outlives_the_thread_that_started_it(fast_sandbox: Sandbox) -> None:
    """bwrap's die-with-parent follows the thread that forked it: a server started from a
    run's short-lived worker thread used to be killed with that thread."""
    fast_sandbox.close()  # the next run starts a new server, from the thread below
    started = threading.Thread(target=lambda: fast_sandbox.run(py("print(1)"), [Case()]))
    started.start()
    started.join()
    server = _pids(fast_sandbox)[:4]  # bwrap, its init, the interpreter, the server
    assert len(server) == 4, server
    time.sleep(0.3)  # the death signal, had it been armed, arrives right away
    [case] = fast_sandbox.run(py("print(input())"), [Case(stdin="2\n")]).cases
    assert (case.status, case.stdout) == (CaseStatus.OK, "2\n"), case.stderr
    assert _pids(fast_sandbox)[:4] == server, "the server was restarted"


def test_concurrent_cases_are_supervised_independently(fast_sandbox: Sandbox) -> None:
    """One server supervises every case: a case timing out, one spinning, one crashing and
    quick ones, all at once, each get their own status."""
    rows = [
        ("import time; time.sleep(30)", CaseStatus.TIMEOUT),
        ("while True: pass", CaseStatus.TIMEOUT),
        ("import ctypes; ctypes.string_at(0)", CaseStatus.SIGNAL),
        *[(f"print({i} * 2)", CaseStatus.OK) for i in range(9)],
    ]

    def run(source: str) -> CaseStatus:
        report = fast_sandbox.run(py(source), [Case()])
        assert report.sandbox_status is SandboxStatus.OK, report.message
        return report.cases[0].status

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(run, [source for source, _ in rows]))
    assert statuses == [status for _, status in rows]


def test_a_running_case_counts_as_a_stray(fast_sandbox: Sandbox) -> None:
    """The leftover fixture's fast-path check sees a live case (else it proves nothing),
    and what it sees is the case: gone once the case has been reported."""
    running = threading.Thread(
        target=lambda: fast_sandbox.run(py("import time; time.sleep(30)"), [Case()])
    )
    running.start()
    seen = _wait_for_strays(1)
    assert seen, "a running case is invisible to the leftover check"
    running.join()
    # Still a stray, not merely alive: a spare forked while the tree was read can be
    # counted once (seen in CI: three pids that were spares, alive after the case).
    assert not seen & fast_path_strays(), seen


def _wait_for_strays(count: int) -> set[int]:
    deadline = time.monotonic() + FAST.wall_s
    while len(strays := fast_path_strays()) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return strays


def _namespaces(pid: int) -> dict[str, str]:
    kinds = ("user", "mnt", "uts", "ipc", "net", "pid")
    return {kind: os.readlink(f"/proc/{pid}/ns/{kind}") for kind in kinds}


def _case_namespaces(count: int) -> list[dict[str, str]]:
    """The namespaces of ``count`` running cases (a case is two processes, its spare and
    the program, which share every namespace). A stray can be the short-lived middle
    process of a spare being forked, gone before its namespaces are read: sample again."""
    deadline = time.monotonic() + FAST.wall_s
    while time.monotonic() < deadline:
        try:
            found = [_namespaces(pid) for pid in _wait_for_strays(2 * count)]
        except FileNotFoundError:
            continue
        distinct = {tuple(sorted(ns.items())) for ns in found}
        if len(distinct) == count:
            return [dict(ns) for ns in distinct]
    return []


def test_each_case_has_namespaces_of_its_own(fast_sandbox: Sandbox) -> None:
    """Read from the host: two concurrent cases share no namespace with each other or with
    the server (a case cannot observe this itself: it has no capabilities to try)."""
    sleeper = py("import time; time.sleep(1)")
    threads = [threading.Thread(target=fast_sandbox.run, args=(sleeper, [Case()])) for _ in "ab"]
    for thread in threads:
        thread.start()
    cases = _case_namespaces(2)
    seen = [_namespaces(_pids(fast_sandbox)[3]), *cases]
    for thread in threads:
        thread.join()
    assert len(seen) == 3, seen
    for kind in seen[0]:
        assert len({ns[kind] for ns in seen}) == 3, (kind, seen)


def test_a_malformed_request_does_not_stop_the_server(fast_sandbox: Sandbox) -> None:
    """A request with the wrong number of fds is dropped with a complaint; the server,
    same pids, runs the next case."""
    fast_sandbox.run(py("pass"), [Case()])
    server = _pids(fast_sandbox)[:4]
    assert fast_sandbox._fast is not None and fast_sandbox._fast._sock is not None
    r, w = os.pipe()
    rights = (socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r, w]).tobytes())
    fast_sandbox._fast._sock.sendmsg([b'{"wall_s": 1}'], [rights])
    os.close(r)
    os.close(w)
    [case] = fast_sandbox.run(py("print('fine')"), [Case()]).cases
    assert (case.status, case.stdout) == (CaseStatus.OK, "fine\n"), case.stderr
    assert _pids(fast_sandbox)[:4] == server


def test_a_spare_killed_while_idle_is_replaced(fast_sandbox: Sandbox) -> None:
    """Spares that die unused are forgotten (not handed a case), and new ones forked."""
    spares = _wait_for_spares(fast_sandbox)
    assert len(spares) == min(fast_sandbox.settings.parallelism, 4)
    server = _pids(fast_sandbox)[:4]
    for pid in spares:
        os.kill(pid, signal.SIGKILL)
    for pid in spares:
        assert _wait_dead(pid)  # else one can still be dying when the next case arrives
    for _ in range(3):
        [case] = fast_sandbox.run(py("print('fine')"), [Case()]).cases
        assert (case.status, case.stdout) == (CaseStatus.OK, "fine\n"), case.stderr
    assert _pids(fast_sandbox)[:4] == server
    fresh = _wait_for_spares(fast_sandbox)
    assert len(fresh) == len(spares) and not set(spares) & set(fresh), (spares, fresh)


def test_a_dead_server_is_replaced_and_the_case_still_runs(work_root: object) -> None:
    """If the server dies under a case, the case is re-run in a bwrap of its own (counted
    as a fallback), and the next run starts a new server."""
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=True, limits=FAST)) as sb:
        sb.run(py("pass"), [Case()])
        first = _pids(sb)[:4]
        victim = threading.Timer(0.3, lambda: os.kill(first[0], 9))
        victim.start()
        [case] = sb.run(py("import time; time.sleep(0.6); print('done')"), [Case()]).cases
        assert (case.status, case.stdout) == (CaseStatus.OK, "done\n"), case.stderr
        assert sb.fast_path_fallbacks == 1
        sb.run(py("pass"), [Case()])
        assert _pids(sb)[:4] not in ([], first)


def test_idle_spares_are_bounded_and_named(fast_sandbox: Sandbox) -> None:
    """Between runs the server keeps at most min(parallelism, 4) spares, each carrying the
    spare name (a case would carry python3's), so the leftover check can tell them apart."""
    fast_sandbox.run(py("pass"), [Case()])
    limit = min(fast_sandbox.settings.parallelism, 4)
    deadline = time.monotonic() + 2.0
    while len(_pids(fast_sandbox)) < 5 + limit and time.monotonic() < deadline:
        time.sleep(0.01)  # spares are forked while the server is idle
    names = sorted(_comm(pid) for pid in _pids(fast_sandbox)[4:])
    assert names == ["referee-spare"] * limit + ["referee-zygote"]


def test_a_spare_that_dies_holding_a_request_is_a_sandbox_failure(work_root: object) -> None:
    """A spare killed after it was handed a case but before it took it never ran the
    program: that is the sandbox failing (the case is re-run in a bwrap of its own and
    counted), never the program "killed by a signal"."""
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=True, limits=FAST)) as sb:
        sb.run(py("pass"), [Case()])
        spares = _wait_for_spares(sb)
        assert spares
        for pid in spares:
            os.kill(pid, signal.SIGSTOP)  # alive, but cannot read the request
        result: list[object] = []
        running = threading.Thread(
            target=lambda: result.extend(sb.run(py("print(7)"), [Case()]).cases)
        )
        running.start()
        time.sleep(0.5)  # the request waits in a stopped spare's socket
        for pid in spares:
            os.kill(pid, signal.SIGKILL)
        running.join()
        [case] = result
        assert isinstance(case, CaseOutcome)
        assert (case.status, case.stdout) == (CaseStatus.OK, "7\n"), case.stderr
        assert sb.fast_path_fallbacks == 1


def _wait_dead(pid: int) -> bool:
    """True once ``pid`` is a zombie or gone (its exit visible to its parent); False if it
    is still alive after 2 s."""
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.005)
    return False


def _wait_for_spares(sandbox: Sandbox) -> list[int]:
    """The idle spares, once there are as many as the server keeps."""
    sandbox.run(py("pass"), [Case()])
    wanted = 4 + 1 + min(sandbox.settings.parallelism, 4)  # the server, zygote, spares
    deadline = time.monotonic() + 2.0
    while len(_pids(sandbox)) < wanted and time.monotonic() < deadline:
        time.sleep(0.01)
    return [p for p in _pids(sandbox)[4:] if _comm(p) == "referee-spare"]


def _pids(sandbox: Sandbox) -> list[int]:
    """The pids of the sandbox's fast-path server for programs (`ForkServer.server_pids`):
    linked runs start a second server, for their testers, which these tests leave out."""
    return sandbox._fast.server_pids() if sandbox._fast is not None else []


def _comm(pid: int) -> str:
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def test_a_server_that_stops_answering_is_replaced(work_root: object) -> None:
    """A server that misses a case's wall limit by the grace period is stopped; the case
    is re-run in a bwrap of its own (counted) and the next run gets a new server."""
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=True, limits=FAST)) as sb:
        sb.run(py("pass"), [Case()])
        first = _pids(sb)[:4]
        freeze = threading.Timer(0.2, lambda: os.kill(first[3], signal.SIGSTOP))
        freeze.start()
        [case] = sb.run(py("import time; time.sleep(0.5); print('x')"), [Case()]).cases
        assert (case.status, case.stdout) == (CaseStatus.OK, "x\n"), case.stderr
        assert sb.fast_path_fallbacks == 1
        for pid in first:
            assert _wait_dead(pid), "the stopped server outlived its sandbox"
        sb.run(py("pass"), [Case()])
        assert _pids(sb)[:4] not in ([], first)


# Counts the secret in this process's memory without ever building it: it arrives as two
# halves ("a|b") and a hit is a first half followed by the second. The fast path hides
# /proc, so the memory is found as an attacker would: Python's 1 MiB arenas from the
# addresses of live objects, and malloc's heap from mallinfo2 and sbrk, read with ctypes
# (each page probed first: write(2) reports an unmapped page instead of crashing).
MEMORY_SCAN = """
import ctypes, gc, sys
first, second = (part.encode() for part in sys.stdin.read().strip().split("|"))
regions = {(id(o) & ~((1 << 20) - 1), 1 << 20) for o in gc.get_objects()}
libc = ctypes.CDLL(None)
libc.sbrk.restype = ctypes.c_void_p
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = Info
top, size = libc.sbrk(0), libc.mallinfo2().arena
regions.add((top - size, size))
libc.write.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
import os
probe_r, probe_w = os.pipe()
def readable(page):  # write(2) to a pipe says EFAULT where reading would segfault
    if libc.write(probe_w, page, 4096) != 4096:
        return False
    os.read(probe_r, 4096)
    return True
found = 0
for start, length in sorted(regions):
    pages = [p for p in range(start & ~4095, start + length, 4096) if readable(p)]
    data = b"".join(ctypes.string_at(p, 4096) for p in pages)
    at = data.find(first)
    while at >= 0:
        found += data[at + len(first) : at + len(first) + len(second)] == second
        at = data.find(first, at + 1)
print(found)
"""


def test_a_case_finds_nothing_of_earlier_requests_in_its_memory(fast_sandbox: Sandbox) -> None:
    """Every case is forked from a process that never held a request: the source, files
    and inputs of earlier cases (other clients' code, a checker's expected output) are
    nowhere in a later case's address space."""
    first, second = "referee-remnant-", "7q3x" * 8
    secret = first + second
    for _ in range(6):  # enough requests for the spares to be replaced after them
        fast_sandbox.run(
            Program(language="python3", source=f"x = {secret!r}\nprint(len(x))\n"),
            [Case(stdin=secret * 50, files={"expected.txt": secret * 20})],
        )
    scans = [
        fast_sandbox.run(
            Program(language="python3", source=MEMORY_SCAN), [Case(stdin=f"{first}|{second}")]
        ).cases[0]
        for _ in range(6)
    ]
    assert all(c.status.value == "ok" for c in scans), scans
    assert {c.stdout.strip() for c in scans} == {"0"}


SIGNALLED = [
    ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\nprint('alive')", 15),
    ("import signal, time\nsignal.alarm(1)\ntime.sleep(3)\nprint('alive')", 14),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\nprint('alive')", 9),
    ("import os\nos.abort()", 6),
]


@pytest.mark.parametrize(("source", "number"), SIGNALLED)
@pytest.mark.parametrize("fast", [True, False])
def test_a_program_killed_by_a_signal_is_reported_as_such(
    fast_sandbox: Sandbox, bwrap_sandbox: Sandbox, fast: bool, source: str, number: int
) -> None:
    """The program is never its namespace's pid 1 (which ignores default-action signals):
    on the fast path as in a bwrap of its own, it dies by its signal, and says so."""
    sandbox = fast_sandbox if fast else bwrap_sandbox
    fallbacks = sandbox.fast_path_fallbacks
    [case] = sandbox.run(py(source), [Case()]).cases
    assert (case.status, case.signal, case.exit_code) == (CaseStatus.SIGNAL, number, None)
    assert "alive" not in case.stdout
    assert sandbox.fast_path_fallbacks == fallbacks  # the path under test ran it itself


def test_a_program_past_the_fast_paths_request_size_runs_in_bwrap_quietly(
    fast_sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    """A program the fast path's server cannot take in one request runs in a bwrap of its
    own, as planned: no warning, and no fallback counted (the autouse check would fail),
    so the fallback count still means the fast path broke."""
    padding = "# " + "x" * 120_000 + "\n"
    with caplog.at_level(logging.WARNING):
        [case] = fast_sandbox.run(py(padding + "print(6 * 7)"), [Case()]).cases
    assert (case.status, case.stdout) == (CaseStatus.OK, "42\n")
    assert not [r for r in caplog.records if "fast path" in r.getMessage()]
