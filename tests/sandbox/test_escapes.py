"""The escape suite: programs that try to get out, each run through both isolating paths
for Python (bwrap per case and the fast path). Every row asserts containment (what the
program could not do, read from its own report on stdout), the status, and — through the
autouse `no_leftovers` fixture — that no process, cgroup or directory of the run is left.

A program prints ESCAPED when an attempt worked; containment means it never does.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.sandbox import Case, CaseStatus, Program, Sandbox, SandboxSettings, SandboxStatus
from tests.conftest import require

from .conftest import FAST, REPO_ROOT


@dataclass(frozen=True)
class Escape:
    name: str
    source: str
    statuses: frozenset[CaseStatus]
    language: str = "python3"


def attempt(body: str) -> str:
    """A Python program that prints ESCAPED if ``body`` runs without raising."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    return (
        f"import os, sys, socket, ctypes\ntry:\n{indented}\n    print('ESCAPED')\n"
        "except Exception as exc:\n    print('contained', type(exc).__name__)\n"
    )


OK = frozenset({CaseStatus.OK})
LIBC = "libc = ctypes.CDLL(None, use_errno=True)\n"

ESCAPES = [
    # network
    Escape("dns", attempt("socket.getaddrinfo('example.com', 80)"), OK),
    Escape("internet", attempt("socket.create_connection(('1.1.1.1', 53), timeout=1)"), OK),
    # filesystem
    Escape("read_shadow", attempt("open('/etc/shadow').read()"), OK),
    Escape("list_root", attempt("assert os.listdir('/root') is not None"), OK),
    Escape("read_project", attempt(f"os.listdir({str(REPO_ROOT)!r})"), OK),
    Escape("write_usr", attempt("open('/usr/escape', 'w').write('x')"), OK),
    Escape("write_box", attempt("open('/box/escape', 'w').write('x')"), OK),
    Escape("write_root_dir", attempt("open('/escape', 'w').write('x')"), OK),
    Escape("write_etc", attempt("open('/etc/escape', 'w').write('x')"), OK),
    Escape("write_dev", attempt("open('/dev/escape', 'w').write('x')"), OK),
    # processes
    Escape(
        "fork_bomb",
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        frozenset({CaseStatus.TIMEOUT, CaseStatus.RUNTIME_ERROR, CaseStatus.MEMORY_LIMIT}),
    ),
    Escape(
        "bash_fork_bomb",
        "f() { f | f & }; f; sleep 5",
        frozenset(
            {CaseStatus.TIMEOUT, CaseStatus.OK, CaseStatus.RUNTIME_ERROR, CaseStatus.MEMORY_LIMIT}
        ),
        language="bash",
    ),
    Escape(
        "kill_everything",
        "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
        "except OSError:\n    pass\nprint('still here')\n",
        frozenset({CaseStatus.OK, CaseStatus.SIGNAL}),
    ),
    # The host's pids cannot even be named from inside (pid namespace): attaching to the
    # test process's own host pid must fail.
    Escape(
        "ptrace_host",
        attempt(LIBC + f"assert libc.ptrace(16, {os.getpid()}, 0, 0) == 0, 'refused'"),
        OK,
    ),
    Escape(
        "daemon",
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
        "    if os.fork() == 0:\n        time.sleep(30)\n    os._exit(0)\nprint('parent')\n",
        OK,
    ),
    # resources
    Escape(
        "memory_bomb",
        "x = []\nwhile True:\n    x.append(bytearray(1 << 20))\n",
        frozenset({CaseStatus.MEMORY_LIMIT}),
    ),
    Escape(
        "disk_fill",
        attempt("f = open('big', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))"),
        frozenset({CaseStatus.OK, CaseStatus.SIGNAL}),
    ),
    Escape(
        "endless_output",
        "while True:\n    print('spam' * 100)\n",
        frozenset({CaseStatus.OUTPUT_LIMIT}),
    ),
    Escape("cpu_spin", "while True:\n    pass\n", frozenset({CaseStatus.TIMEOUT})),
    Escape("sleep_forever", "import time\ntime.sleep(10**6)\n", frozenset({CaseStatus.TIMEOUT})),
    # privilege
    Escape("setuid_root", attempt("os.setuid(0)"), OK),
    Escape(
        "mount_tmpfs",
        attempt(LIBC + "assert libc.mount(b'none', b'/mnt', b'tmpfs', 0, None) == 0, 'refused'"),
        OK,
    ),
    Escape(
        "remount_usr_rw",
        attempt(LIBC + "assert libc.mount(None, b'/usr', None, 32 | 4096, None) == 0, 'refused'"),
        OK,
    ),
    Escape("chroot", attempt(LIBC + "assert libc.chroot(b'/usr') == 0, 'refused'"), OK),
    # kernel knobs: a crashing program would run core_pattern's command on the host as root
    Escape("core_pattern", attempt("open('/proc/sys/kernel/core_pattern', 'w').write('|/x')"), OK),
    Escape("sysctl_fs", attempt("open('/proc/sys/fs/file-max', 'w').write('1')"), OK),
    Escape("sysctl_vm", attempt("open('/proc/sys/vm/drop_caches', 'w').write('3')"), OK),
    Escape("sethostname", attempt("socket.sethostname('escaped')"), OK),
]


@pytest.fixture(params=["bwrap", "pyfast"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    name = "bwrap_sandbox" if request.param == "bwrap" else "fast_sandbox"
    box: Sandbox = request.getfixturevalue(name)
    return box


@pytest.mark.parametrize("escape", ESCAPES, ids=lambda e: e.name)
def test_escape_is_contained(sandbox: Sandbox, escape: Escape) -> None:
    if escape.language != "python3" and sandbox.settings.python_fast_path:
        pytest.skip("not a Python program: the fast path does not apply")
    report = sandbox.run(Program(language=escape.language, source=escape.source), [Case()])
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert "ESCAPED" not in case.stdout, case
    assert case.status in escape.statuses, case
    if escape.statuses == OK:
        assert case.stdout.startswith(("contained", "still here", "parent")), case


@pytest.fixture
def loopback_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A real TCP server on the host's loopback; yields its port and accepted sockets."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()
    for conn in accepted:
        conn.close()


def test_host_loopback_is_unreachable(
    sandbox: Sandbox, loopback_server: tuple[int, list[socket.socket]]
) -> None:
    port, accepted = loopback_server
    probe = socket.create_connection(("127.0.0.1", port), timeout=2)  # the server does work
    probe.close()
    source = attempt(f"socket.create_connection(('127.0.0.1', {port}), timeout=1)")
    [case] = sandbox.run(Program(language="python3", source=source), [Case()]).cases
    assert case.stdout.startswith("contained"), case
    assert len(accepted) == 1, "only the test's own probe may have connected"


def test_no_host_secrets_in_the_environment(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_TEST_SECRET", "hunter2")
    source = "import os\nfor k, v in sorted(os.environ.items()): print(f'{k}={v}')"
    [case] = sandbox.run(Program(language="python3", source=source), [Case()]).cases
    assert case.status is CaseStatus.OK
    assert "hunter2" not in case.stdout
    env = dict(line.split("=", 1) for line in case.stdout.splitlines())
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PWD", "PYTHONPATH"}, env
    assert env.get("PYTHONPATH", "/opt/runtime/python") == "/opt/runtime/python"  # ours


def test_a_case_leaves_nothing_for_the_next(sandbox: Sandbox) -> None:
    """Every writable place a case can reach is its own: what one case writes to the work
    dir, /tmp, /dev/shm or /dev is not there for the next case of the same sandbox."""
    places = ["/work/left", "/tmp/left", "/dev/shm/left", "/dev/left"]
    writer = "\n".join(
        f"try:\n    open({p!r}, 'w').write('x')\n    print('wrote', {p!r})\n"
        "except OSError:\n    pass"
        for p in places
    )
    [first] = sandbox.run(Program(language="python3", source=writer), [Case()]).cases
    assert "wrote /dev/shm/left" in first.stdout, first  # else the check below proves little
    reader = f"import os\nprint([p for p in {places!r} if os.path.exists(p)])"
    [second] = sandbox.run(Program(language="python3", source=reader), [Case()]).cases
    assert (second.status, second.stdout) == (CaseStatus.OK, "[]\n"), second


def test_a_host_process_survives_kill_minus_one(sandbox: Sandbox) -> None:
    sentinel = subprocess.Popen(["sleep", "30"])
    try:
        source = "import os, signal\nos.kill(-1, signal.SIGKILL)\n"
        sandbox.run(Program(language="python3", source=source), [Case()])
        assert sentinel.poll() is None, "a host process was killed from inside the sandbox"
    finally:
        sentinel.send_signal(signal.SIGKILL)
        sentinel.wait()


def test_unshare_cannot_regain_privilege(bwrap_sandbox: Sandbox) -> None:
    """A nested namespace gives capabilities only over the sandbox's own view: the host's
    shadow file stays unreachable and nothing mounted there shows on the host."""
    require(shutil.which("unshare") is not None, "util-linux unshare not installed")
    source = (
        "unshare --user --map-root-user --mount sh -c "
        "'cat /etc/shadow; mount -t tmpfs none /usr && echo MOUNTED' ; echo done"
    )
    [case] = bwrap_sandbox.run(Program(language="bash", source=source), [Case()]).cases
    assert "root:" not in case.stdout
    assert not os.path.exists("/usr/escape")


@pytest.mark.parametrize("place", ["", "/tmp/", "/dev/shm/"], ids=["work", "tmp", "shm"])
def test_disk_fill_stops_at_the_work_dir_quota(sandbox: Sandbox, place: str) -> None:
    """Files under the per-file limit, written until the disk says no: the total stays
    within the private tmpfs quota (nothing is written to the host's disk at all), in
    every writable place. Without a memory cgroup (unprivileged servers) this quota is
    all that bounds the RAM a tmpfs holds."""
    source = (
        "written = 0\ntry:\n    for i in range(1000):\n"
        f"        with open(f'{place}f{{i}}', 'wb') as f:\n"
        "            for _ in range(4):\n"
        "                f.write(b'x' * (1 << 20))\n                written += 1\n"
        "except OSError as exc:\n    print(written, exc.errno)\n"
    )
    [case] = sandbox.run(Program(language="python3", source=source), [Case()]).cases
    written_mb, errno = map(int, case.stdout.split())
    assert written_mb <= FAST.disk_mb
    assert errno == 28  # ENOSPC: the quota, not the per-file limit, stopped it


REFUSED_FLAGS = [
    ("c", ["-wrapper", "/bin/sh,-c,id"]),
    ("c", ["-fplugin=/tmp/evil.so"]),
    ("c", ["-Wl,-rpath,/tmp"]),
    ("c", ["-B/tmp"]),
    ("c", ["@/tmp/flags"]),
    ("c", ["-specs=/tmp/evil"]),
    ("cpp", ["-o", "/tmp/out"]),
    ("go", ["-toolexec=/bin/sh"]),
    ("rust", ["-C", "linker=/bin/sh"]),
    ("rust", ["-Clinker=/bin/sh"]),
    ("java", ["-J-javaagent:/tmp/a.jar"]),
    ("java", ["-processorpath", "/tmp"]),
    ("python3", ["-X", "importtime"]),
]


@pytest.mark.parametrize(("language", "flags"), REFUSED_FLAGS)
def test_build_flags_that_run_programs_are_refused(
    bwrap_sandbox: Sandbox, language: str, flags: list[str]
) -> None:
    """Compilers take flags that run other programs at compile time: only a per-language
    allow-list of flags is accepted; the rest is the caller's error (ValueError)."""
    with pytest.raises(ValueError, match="build_flags"):
        bwrap_sandbox.run(Program(language=language, source="", build_flags=flags), [Case()])


def test_allowed_build_flags_work(bwrap_sandbox: Sandbox) -> None:
    source = '#include <stdio.h>\nint main(void){ printf("%d\\n", VALUE); return 0; }'
    program = Program(language="c", source=source, build_flags=["-O3", "-DVALUE=7", "-std=c11"])
    [case] = bwrap_sandbox.run(program, [Case()]).cases
    assert case.stdout == "7\n"


def test_a_build_cannot_write_past_the_disk_quota(bwrap_sandbox: Sandbox) -> None:
    """A compile writes into the program directory on the host's disk: a program whose
    build output is over the run's disk quota (a huge initialised array) is a compile
    error, and no file of it grew past the quota."""
    source = "char big[64 << 20] = {1};\nint main(void) { return big[0] - 1; }\n"
    limits = FAST.model_copy(update={"disk_mb": 16})
    report = bwrap_sandbox.run(Program(language="c", source=source), [Case()], limits)
    assert report.compile is not None
    assert report.compile.status.value == "compile_error", report.compile
    assert report.cases == []


_SPAWNS = r"""
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
static void *work(void *arg) { return arg; }
int main(void) {
    pthread_t thread; void *back = 0;
    int made = pthread_create(&thread, 0, work, (void *)42);
    if (made == 0) pthread_join(thread, &back);
    printf("thread %d %ld\n", made, (long)back);
    pid_t child = fork();
    if (child == 0) _exit(0);
    printf("fork %s\n", child < 0 ? strerror(errno) : "ESCAPED");
    long raw = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (raw == 0) _exit(0);
    printf("clone %s\n", raw < 0 ? strerror(errno) : "ESCAPED");
    pid_t spawned; char *argv[] = {"/bin/true", 0};
    int failed = posix_spawn(&spawned, "/bin/true", 0, 0, argv, environ);
    printf("spawn %s\n", failed ? strerror(failed) : "ESCAPED");
    return 0;
}
"""


@pytest.mark.parametrize("spawn", [True, False])
def test_a_program_kept_from_spawning_still_has_threads(
    bwrap_sandbox: Sandbox, spawn: bool
) -> None:
    """``Limits(spawn=False)`` (tests in the program's own process, which a fork could
    use as an oracle): fork, a raw clone of a process and posix_spawn fail with EPERM,
    threads work; with the default, all of them work."""
    limits = bwrap_sandbox.settings.limits.model_copy(update={"spawn": spawn})
    program = Program(language="c", source=_SPAWNS, build_flags=["-pthread"])
    report = bwrap_sandbox.run(program, [Case()], limits)
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is CaseStatus.OK, case
    lines = case.stdout.splitlines()
    assert lines[0] == "thread 0 42"
    denied = "Operation not permitted"
    expected = ["ESCAPED"] * 3 if spawn else [denied] * 3
    assert [line.split(" ", 1)[1] for line in lines[1:]] == expected, case.stdout


def test_a_run_kept_from_spawning_cannot_fetch_files(bwrap_sandbox: Sandbox) -> None:
    """Fetching files back runs the program under a supervisor, as its child."""
    limits = bwrap_sandbox.settings.limits.model_copy(update={"spawn": False})
    program = Program(language="python3", source="open('out.txt', 'w').write('x')")
    with pytest.raises(ValueError, match="fetch"):
        bwrap_sandbox.run(program, [Case(fetch=["out.txt"])], limits)


def test_java_kept_from_spawning_runs_threads_but_no_process(bwrap_sandbox: Sandbox) -> None:
    """The JVM starts its own threads; a ProcessBuilder (the oracle a test in the same
    process could be for another JVM) is refused."""
    source = (
        "public class Main { public static void main(String[] a) throws Exception {\n"
        '  Thread t = new Thread(() -> System.out.println("thread")); t.start(); t.join();\n'
        '  try { new ProcessBuilder("/bin/true").start().waitFor();\n'
        '        System.out.println("ESCAPED"); }\n'
        '  catch (java.io.IOException e) { System.out.println("refused"); }\n'
        "} }\n"
    )
    limits = bwrap_sandbox.settings.limits.model_copy(update={"spawn": False, "memory_mb": 512})
    report = bwrap_sandbox.run(Program(language="java", source=source), [Case()], limits)
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert report.cases[0].stdout == "thread\nrefused\n", report.cases[0]


_FILTERS = r"""
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    int named = prctl(PR_SET_NAME, "renamed", 0, 0, 0);
    printf("name %s\n", named == 0 ? "ok" : strerror(errno));
    long raw = syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, 0);
    printf("seccomp %s\n", raw == 0 ? "ESCAPED" : strerror(errno));
    int set = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    printf("prctl %s\n", set == 0 ? "ESCAPED" : strerror(errno));
    return 0;
}
"""


def test_a_program_kept_from_spawning_cannot_filter_its_own_calls(
    bwrap_sandbox: Sandbox,
) -> None:
    """A filter of its own that trapped ``exit_group`` would let a program see the raw
    call with which a failed in-process assertion ends it (`verifiers.code.native`), and
    carry on: ``seccomp`` and ``prctl(PR_SET_SECCOMP)`` fail with EPERM; other prctl
    options work. (Strict mode is asked for: had it worked, the next write would kill
    the program, and its output would say so.)"""
    limits = bwrap_sandbox.settings.limits.model_copy(update={"spawn": False})
    report = bwrap_sandbox.run(Program(language="c", source=_FILTERS), [Case()], limits)
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    denied = "Operation not permitted"
    assert case.stdout.splitlines() == ["name ok", f"seccomp {denied}", f"prctl {denied}"], case


def test_a_backend_that_cannot_keep_a_program_from_spawning_says_so(work_root: Path) -> None:
    """The Docker backend cannot apply the filter (its seccomp profile is the engine's):
    a run that needs it is ``unavailable``, naming bwrap, never run unconfined."""
    with Sandbox(SandboxSettings(python_fast_path=False)) as sandbox:
        sandbox.backend.confines_spawning = False  # what the docker backend declares
        limits = sandbox.settings.limits.model_copy(update={"spawn": False})
        report = sandbox.run(Program(language="c", source=_SPAWNS), [Case()], limits)
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "use bwrap" in report.message and report.cases == []
