"""`Sandbox.run_linked`: two programs, two sandboxes, one channel between them."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings, SandboxStatus
from referee.sandbox.runner import channel_pipes
from tests.sandbox.conftest import FAST


@pytest.fixture(params=["bwrap_sandbox", "fast_sandbox"], ids=["bwrap", "fast-path"])
def linked(request: pytest.FixtureRequest) -> Sandbox:
    """A sandbox whose python3 linked runs go through two bwraps, or the fast path."""
    sandbox: Sandbox = request.getfixturevalue(request.param)
    return sandbox


ECHO_PROGRAM = """
import os
reader = os.fdopen(int(os.environ["REFEREE_CHANNEL_IN"]))
writer = os.fdopen(int(os.environ["REFEREE_CHANNEL_OUT"]), "w")
for line in reader:
    writer.write(line.upper())
    writer.flush()
"""

ASKING_PEER = """
import os, sys
reader = os.fdopen(int(os.environ["REFEREE_CHANNEL_IN"]))
writer = os.fdopen(int(os.environ["REFEREE_CHANNEL_OUT"]), "w")
for line in sys.stdin:
    writer.write(line)
    writer.flush()
    print(reader.readline().strip())
"""


def test_the_peer_gets_the_case_and_talks_to_the_program(linked: Sandbox) -> None:
    report = linked.run_linked(
        Program(language="python3", source=ECHO_PROGRAM),
        Program(language="python3", source=ASKING_PEER),
        [Case(stdin="abc\ndef\n"), Case(stdin="x\n")],
        FAST,
    )
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert [p.stdout for p in report.peers] == ["ABC\nDEF\n", "X\n"]
    assert [c.status.value for c in report.cases] == ["ok", "ok"]


def test_the_program_never_sees_the_case_nor_the_peer(linked: Sandbox) -> None:
    """The peer holds the case (stdin and files); the program, in its own pid, mount and
    network namespaces, finds neither: not on stdin, not in files, not in /proc."""
    snoop = (
        "import os, sys\n"
        "seen = sys.stdin.read()\n"
        "paths = [os.path.join(d, f) for r in ('/work', '/tmp', '/box', '/dev/shm')\n"
        "         for d, _, fs in os.walk(r) for f in fs]\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "paths += [f'/proc/{p}/{n}' for p in pids for n in ('cmdline', 'environ')]\n"
        "for path in paths:\n"
        "    try: seen += open(path, errors='ignore').read(1 << 16)\n"
        "    except Exception: pass\n"
        "print(('SEC' + 'RET') in seen, len(pids))\n"
    )
    peer = "import sys, time\nsys.stdin.read()\ntime.sleep(0.3)\n"
    report = linked.run_linked(
        Program(language="python3", source=snoop),
        Program(language="python3", source=peer),
        [Case(stdin="SECRET " * 100, files={"secret.txt": "SECRET"})],
        FAST,
    )
    # at most two processes (bwrap's init and the program itself; the fast path hides /proc
    # altogether): the peer is in another namespace
    seen, pids = report.cases[0].stdout.split()
    assert (seen, int(pids) <= 2) == ("False", True), report.cases[0].stderr


def test_the_peer_reads_eof_when_the_program_exits(linked: Sandbox) -> None:
    waiter = (
        "import os\n"
        "reader = os.fdopen(int(os.environ['REFEREE_CHANNEL_IN']))\n"
        "print(repr(reader.read()))\n"
    )
    report = linked.run_linked(
        Program(language="python3", source="import os\nos._exit(0)\n"),
        Program(language="python3", source=waiter),
        [Case()],
        FAST,
    )
    assert report.peers[0].stdout == "''\n"
    assert report.peers[0].wall_s < FAST.wall_s


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_no_channel_fd_is_left_open_in_the_host(linked: Sandbox) -> None:
    def run() -> None:
        linked.run_linked(
            Program(language="python3", source="pass"),
            Program(language="python3", source="pass"),
            [Case(), Case()],
            FAST,
        )

    run()  # the fast path's servers start here, with fds of their own that stay open
    before = _open_fds()
    for _ in range(3):
        run()
    assert _open_fds() - before == set()


OPEN_FD = 'if true < "$1" 2>/dev/null; then echo opened; else echo refused; fi'


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a process as another user needs root")
def test_a_channel_pipe_opens_only_for_a_holder() -> None:
    """The channel's pipes are mode 0666 (a JVM opens its inherited fd again by name),
    yet only a process holding one opens it: another user reaches no other process's
    ``/proc/PID/fd``, whatever the mode of what is there."""
    pipes = channel_pipes()
    fds = [fd for pipe in pipes for fd in pipe]
    try:

        def opened(path: str, held: tuple[int, ...]) -> str:
            argv = ["/bin/sh", "-c", OPEN_FD, "sh", path]
            done = subprocess.run(
                argv,
                user=65534,
                group=65534,
                pass_fds=held,
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            )
            return done.stdout.strip() or done.stderr

        reader = pipes[0][0]
        assert opened(f"/proc/self/fd/{reader}", (reader,)) == "opened"
        assert opened(f"/proc/{os.getpid()}/fd/{reader}", ()) == "refused"
    finally:
        for fd in fds:
            os.close(fd)


def test_the_fast_path_runs_both_sides_under_two_uids(fast_sandbox: Sandbox) -> None:
    """Linked python3 runs go through the fast path (no fallback to bwraps), on two servers
    of their own: with host identities (root), the program's and the peer's uids differ."""
    before = fast_sandbox.fast_path_fallbacks
    report = fast_sandbox.run_linked(
        Program(
            language="python3",
            source=ECHO_PROGRAM + "import os\nprint(os.environ['REFEREE_CHANNEL_IN'])",
        ),
        Program(language="python3", source=ASKING_PEER),
        [Case(stdin="ok\n")] * 4,
        FAST,
    )
    assert [p.stdout for p in report.peers] == ["OK\n"] * 4
    assert [c.stdout for c in report.cases] == ["3\n"] * 4  # where the fast path puts it
    assert fast_sandbox.fast_path_fallbacks == before
    if fast_sandbox.identities.active:
        assert len({_uid(pid) for pid in fast_sandbox.resident_pids()}) >= 2


def _uid(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


C_ECHO = r"""
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    int in = atoi(getenv("REFEREE_CHANNEL_IN")), out = atoi(getenv("REFEREE_CHANNEL_OUT"));
    char c;
    while (read(in, &c, 1) == 1) { c = toupper(c); if (write(out, &c, 1) != 1) return 1; }
    return 0;
}
"""


def test_compiled_sides_are_built_first(bwrap_sandbox: Sandbox) -> None:
    """A C program serving a python3 peer: built before the cases run, its source gone."""
    report = bwrap_sandbox.run_linked(
        Program(language="c", source=C_ECHO, keep_build=False),
        Program(language="python3", source=ASKING_PEER + "import os\nprint(os.listdir('.'))\n"),
        [Case(stdin="abc\n")],
        FAST,
    )
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert report.compile is not None and report.compile.status.value == "ok"
    assert report.peers[0].stdout.startswith("ABC\n"), report.peers[0].stderr
    assert [c.status.value for c in report.cases] == ["ok"]


def test_a_side_that_does_not_build_ends_the_run(bwrap_sandbox: Sandbox) -> None:
    echo = Program(language="c", source=C_ECHO, keep_build=False)
    broken = Program(language="c", source="int main(void) { return nope; }", keep_build=False)
    mine = bwrap_sandbox.run_linked(broken, echo, [Case()], FAST)
    theirs = bwrap_sandbox.run_linked(echo, broken, [Case()], FAST)
    for report, failed, built in (
        (mine, mine.compile, mine.peer_compile),
        (theirs, theirs.peer_compile, theirs.compile),
    ):
        assert failed is not None and failed.status.value == "compile_error"
        assert built is not None and built.status.value == "ok"
        assert "nope" in failed.output and report.cases == report.peers == []


def test_linked_runs_refuse_unknown_languages(bwrap_sandbox: Sandbox) -> None:
    python = Program(language="python3", source="pass")
    with pytest.raises(ValueError, match="unknown language"):
        bwrap_sandbox.run_linked(Program(language="cobol", source=""), python, [Case()])


def test_the_process_backend_links_too(work_root: Path) -> None:
    with Sandbox(SandboxSettings(backend="process", limits=FAST)) as sandbox:
        report = sandbox.run_linked(
            Program(language="python3", source=ECHO_PROGRAM),
            Program(language="python3", source=ASKING_PEER),
            [Case(stdin="hi\n")],
            FAST,
        )
    assert report.peers[0].stdout == "HI\n", report.peers[0].stderr


def test_the_docker_backend_says_it_cannot_link(work_root: Path) -> None:
    with Sandbox(SandboxSettings(backend="docker", limits=FAST)) as sandbox:
        before = _open_fds()
        report = sandbox.run_linked(
            Program(language="python3", source="pass"),
            Program(language="python3", source="pass"),
            [Case()],
            FAST,
        )
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "linked" in report.message
    assert _open_fds() - before == set()


def test_a_deadline_runs_only_the_linked_cases_that_start_by_it(linked: Sandbox) -> None:
    """As for `Sandbox.run`: cases start in order, and one not started by the deadline
    is not run, nor any after it; the report holds the prefix that ran, both sides."""
    limits = Limits(wall_s=0.5, cpu_s=0.5)
    looping, peer = (Program(language="python3", source=s) for s in ("while True: pass", "0"))
    cases = [Case() for _ in range(12)]
    start = time.monotonic()
    report = linked.run_linked(looping, peer, cases, limits, start + 0.7)
    # the deadline, one case's limit, and the sandboxes' start on a loaded 2-core machine
    # (2.4 s were seen with a 1 s margin); all 12 cases take 6 rounds of 0.5 s and more
    assert time.monotonic() - start < 0.7 + 0.5 + 2.0
    assert 0 < len(report.cases) == len(report.peers) < 12
    quick = Program(language="python3", source="0")
    everything = linked.run_linked(quick, peer, cases, limits, time.monotonic() + 30)
    assert len(everything.cases) == 12
