"""The Python fast path's own machinery: one resident server that outlives the threads
using it, cases supervised concurrently by that server, and the checks the leftover
fixture relies on (so they can fail)."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from sandbox import Case, CaseStatus, Program, Sandbox, SandboxSettings, SandboxStatus

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
    server = fast_sandbox.resident_pids()[:4]  # bwrap, its init, the interpreter, the server
    assert len(server) == 4, server
    time.sleep(0.3)  # the death signal, had it been armed, arrives right away
    [case] = fast_sandbox.run(py("print(input())"), [Case(stdin="2\n")]).cases
    assert (case.status, case.stdout) == (CaseStatus.OK, "2\n"), case.stderr
    assert fast_sandbox.resident_pids()[:4] == server, "the server was restarted"


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
    """The leftover fixture's fast-path check sees a live case (else it proves nothing)."""
    running = threading.Thread(
        target=lambda: fast_sandbox.run(py("import time; time.sleep(30)"), [Case()])
    )
    running.start()
    deadline = time.monotonic() + FAST.wall_s
    while not fast_path_strays() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fast_path_strays(), "a running case is invisible to the leftover check"
    running.join()


def test_a_dead_server_is_replaced_and_the_case_still_runs(work_root: object) -> None:
    """If the server dies under a case, the case is re-run in a bwrap of its own (counted
    as a fallback), and the next run starts a new server."""
    with Sandbox(SandboxSettings(backend="bwrap", python_fast_path=True, limits=FAST)) as sb:
        sb.run(py("pass"), [Case()])
        first = sb.resident_pids()[:4]
        victim = threading.Timer(0.3, lambda: os.kill(first[0], 9))
        victim.start()
        [case] = sb.run(py("import time; time.sleep(0.6); print('done')"), [Case()]).cases
        assert (case.status, case.stdout) == (CaseStatus.OK, "done\n"), case.stderr
        assert sb.fast_path_fallbacks == 1
        sb.run(py("pass"), [Case()])
        assert sb.resident_pids()[:4] not in ([], first)


def test_idle_spares_are_bounded_and_named(fast_sandbox: Sandbox) -> None:
    """Between runs the server keeps at most min(parallelism, 4) spares, each carrying the
    spare name (a case would carry python3's), so the leftover check can tell them apart."""
    fast_sandbox.run(py("pass"), [Case()])
    limit = min(fast_sandbox.settings.parallelism, 4)
    deadline = time.monotonic() + 2.0
    while len(fast_sandbox.resident_pids()) < 4 + limit and time.monotonic() < deadline:
        time.sleep(0.01)  # spares are forked while the server is idle
    spares = fast_sandbox.resident_pids()[4:]
    assert len(spares) == limit
    for pid in spares:
        with open(f"/proc/{pid}/comm") as f:
            assert f.read().strip() == "referee-spare"
