"""The API's contract, one status at a time, on the real bwrap backend (and the process
backend where it matters): what each status means and what comes back with it."""

from __future__ import annotations

import base64
import time

import pytest

from referee.sandbox import (
    Case,
    CaseStatus,
    CompileStatus,
    Limits,
    Program,
    Sandbox,
    SandboxSettings,
    SandboxStatus,
)

from .conftest import FAST


def py(source: str) -> Program:
    return Program(language="python3", source=source)


STATUS_ROWS = [
    ("ok", "print('hi')", CaseStatus.OK),
    ("runtime_error", "raise ValueError('boom')", CaseStatus.RUNTIME_ERROR),
    ("exit_code", "import sys; sys.exit(7)", CaseStatus.RUNTIME_ERROR),
    ("wall_timeout", "import time; time.sleep(30)", CaseStatus.TIMEOUT),
    ("cpu_timeout", "while True: pass", CaseStatus.TIMEOUT),
    ("memory_limit", "x = [bytearray(1 << 20) for _ in range(1000)]", CaseStatus.MEMORY_LIMIT),
    (
        "output_limit",
        "import sys\nwhile True: sys.stdout.write('x' * 4096)",
        CaseStatus.OUTPUT_LIMIT,
    ),
    ("signal", "import ctypes; ctypes.string_at(0)", CaseStatus.SIGNAL),
]


@pytest.mark.parametrize(("name", "source", "status"), STATUS_ROWS, ids=[r[0] for r in STATUS_ROWS])
def test_status(any_sandbox: Sandbox, name: str, source: str, status: CaseStatus) -> None:
    report = any_sandbox.run(py(source), [Case()])
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is status, case
    if status is CaseStatus.TIMEOUT:
        assert case.wall_s < FAST.wall_s + 1.0
    if status is CaseStatus.SIGNAL:
        assert (case.signal, case.exit_code) == (11, None)


def test_stdin_argv_and_files(any_sandbox: Sandbox) -> None:
    source = "import sys\nprint(input(), sys.argv[1:], open('data.txt').read())"
    case = Case(stdin="in\n", argv=["a", "b"], files={"data.txt": "file"})
    [out] = any_sandbox.run(py(source), [case]).cases
    assert (out.status, out.stdout) == (CaseStatus.OK, "in ['a', 'b'] file\n"), out.stderr


def test_nested_case_files_and_writable_directories(any_sandbox: Sandbox) -> None:
    source = (
        "print(open('data/in/a.txt').read(), open('data/b.txt').read())\n"
        "open('data/in/new.txt', 'w').write('x')\nprint(open('data/in/new.txt').read())"
    )
    case = Case(files={"data/in/a.txt": "A", "data/b.txt": "B"})
    [out] = any_sandbox.run(py(source), [case]).cases
    assert (out.status, out.stdout) == (CaseStatus.OK, "A B\nx\n"), out.stderr


def test_process_backend_writes_nested_files() -> None:
    case = Case(files={"d/e/f.txt": "deep"})
    with Sandbox(SandboxSettings(backend="process", limits=FAST)) as sandbox:
        [out] = sandbox.run(py("print(open('d/e/f.txt').read())"), [case]).cases
    assert (out.status, out.stdout) == (CaseStatus.OK, "deep\n"), out.stderr


def test_program_files_are_importable(any_sandbox: Sandbox) -> None:
    program = Program(
        language="python3", source="import helper\nprint(helper.X)", files={"helper.py": "X = 42"}
    )
    [out] = any_sandbox.run(program, [Case()]).cases
    assert out.stdout == "42\n", out.stderr


def test_cases_keep_their_order_and_are_independent(any_sandbox: Sandbox) -> None:
    source = (
        "import os\nn = int(input())\nassert not os.path.exists('mark')\n"
        "open('mark', 'w').write('x')\nprint(n * n)"
    )
    cases = [Case(stdin=f"{i}\n") for i in range(8)]
    outs = any_sandbox.run(py(source), cases).cases
    assert [o.stdout for o in outs] == [f"{i * i}\n" for i in range(8)]


def test_ten_megabytes_of_output_is_capped_fast(any_sandbox: Sandbox) -> None:
    source = "import sys\nsys.stdout.write('y' * (10 << 20))"
    limits = FAST.model_copy(update={"output_bytes": 1 << 20, "wall_s": 5})
    start = time.monotonic()
    [out] = any_sandbox.run(py(source), [Case()], limits).cases
    assert out.status is CaseStatus.OUTPUT_LIMIT
    assert out.truncated and len(out.stdout) == 1 << 20
    assert time.monotonic() - start < 2.0, "capping must not wait for the deadline"


def test_output_under_the_cap_is_whole(any_sandbox: Sandbox) -> None:
    source = "import sys\nsys.stdout.write('z' * 500_000)\nsys.stderr.write('e' * 1000)"
    limits = FAST.model_copy(update={"output_bytes": 1 << 20})
    [out] = any_sandbox.run(py(source), [Case()], limits).cases
    assert (out.status, len(out.stdout), len(out.stderr)) == (CaseStatus.OK, 500_000, 1000)


def test_large_stdin_is_fed_while_output_is_read(any_sandbox: Sandbox) -> None:
    source = "import sys\nfor line in sys.stdin: sys.stdout.write(line)"
    text = "line\n" * 100_000
    limits = FAST.model_copy(update={"output_bytes": 1 << 20})
    [out] = any_sandbox.run(py(source), [Case(stdin=text)], limits).cases
    assert (out.status, out.stdout) == (CaseStatus.OK, text)


def test_compile_once_for_many_cases(bwrap_sandbox: Sandbox) -> None:
    source = '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);}'
    cases = [Case(stdin=f"{i} {i}\n") for i in range(5)]
    report = bwrap_sandbox.run(Program(language="cpp", source=source), cases)
    assert report.compile is not None and report.compile.status is CompileStatus.OK
    assert [c.stdout for c in report.cases] == [f"{2 * i}\n" for i in range(5)]


def test_unknown_language_is_the_callers_error(bwrap_sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="unknown language"):
        bwrap_sandbox.run(Program(language="cobol", source=""), [Case()])


def test_bad_file_name_is_the_callers_error(bwrap_sandbox: Sandbox) -> None:
    program = Program(language="python3", source="", files={"../x.py": ""})
    with pytest.raises(ValueError, match="bad program file name"):
        bwrap_sandbox.run(program, [Case()])


def test_a_broken_sandbox_is_not_a_program_failure() -> None:
    settings = SandboxSettings(backend="bwrap", bwrap_path="/nonexistent/bwrap")
    with Sandbox(settings) as sandbox:
        report = sandbox.run(py("print(1)"), [Case()])
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "apt-get install bubblewrap" in report.message
    assert report.cases == []
    assert not report.ok


def test_process_backend_runs_trusted_code() -> None:
    with Sandbox(SandboxSettings(backend="process", limits=FAST)) as sandbox:
        assert sandbox.backend.isolating is False
        report = sandbox.run(py("print(input())"), [Case(stdin="p\n")])
        [slow] = sandbox.run(py("while True: pass"), [Case()]).cases
    assert report.cases[0].stdout == "p\n"
    assert slow.status is CaseStatus.TIMEOUT


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_SANDBOX_BACKEND", "process")
    monkeypatch.setenv("REFEREE_SANDBOX_LIMITS__WALL_S", "1.5")
    settings = SandboxSettings()
    assert (settings.backend, settings.limits.wall_s) == ("process", 1.5)
    assert Limits().wall_s != 1.5


def test_an_empty_setting_is_an_unset_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_SANDBOX_RUNTIME_DIR", "")
    monkeypatch.setenv("REFEREE_SANDBOX_BWRAP_PATH", "")
    settings = SandboxSettings()
    assert settings.runtime_dir is None  # it was Path("."): every item not_configured
    assert settings.bwrap_path == SandboxSettings.model_fields["bwrap_path"].default


FETCHER = """
import os
os.makedirs("out", exist_ok=True)
open("out/a.txt", "w").write("alpha")
open("big.bin", "wb").write(b"x" * 100_000)
os.mkfifo("pipe")
os.symlink("/etc/hostname", "link")
os.makedirs("adir")
"""


@pytest.mark.parametrize("backend", ["bwrap", "process"])
def test_fetch_reads_regular_files_back(backend: str) -> None:
    """Fetched: regular files only (a FIFO is never waited on, a symlink never followed),
    within the output cap (a file past it is left out), missing ones skipped."""
    limits = FAST.model_copy(update={"output_bytes": 64 << 10})
    case = Case(fetch=["out/a.txt", "big.bin", "pipe", "link", "adir", "missing"])
    with Sandbox(SandboxSettings(backend=backend, limits=limits)) as sandbox:
        [out] = sandbox.run(py(FETCHER), [case]).cases
    assert out.status is CaseStatus.OK, out.stderr
    assert out.files == {"out/a.txt": base64.b64encode(b"alpha").decode()}


@pytest.mark.parametrize(
    ("source", "status", "code", "sig"),
    [
        ("open('f', 'w').write('1')\nraise SystemExit(3)", CaseStatus.RUNTIME_ERROR, 3, None),
        (
            "import os, signal\nopen('f', 'w').write('1')\nos.kill(os.getpid(), signal.SIGSEGV)",
            CaseStatus.SIGNAL,
            None,
            11,
        ),
    ],
)
def test_fetch_keeps_the_programs_ending(
    bwrap_sandbox: Sandbox, source: str, status: CaseStatus, code: int | None, sig: int | None
) -> None:
    """Under the fetching supervisor the program's exit code or signal is still its own."""
    [out] = bwrap_sandbox.run(py(source), [Case(fetch=["f"])]).cases
    assert (out.status, out.exit_code, out.signal) == (status, code, sig), out
    assert out.files == {"f": base64.b64encode(b"1").decode()}


def test_the_program_cannot_write_the_fetch_channel(bwrap_sandbox: Sandbox) -> None:
    """The supervisor's fd is closed in the program: it cannot forge fetched files."""
    source = (
        "import os\nopen('f', 'w').write('real')\n"
        "for fd in range(3, 64):\n"
        '    try:\n        os.write(fd, b\'{"f": "Zm9yZ2Vk"}\')\n    except OSError:\n        pass'
    )
    [out] = bwrap_sandbox.run(py(source), [Case(fetch=["f"])]).cases
    assert out.files == {"f": base64.b64encode(b"real").decode()}, out


def test_a_deadline_runs_only_the_cases_that_start_by_it(bwrap_sandbox: Sandbox) -> None:
    """Cases start in order; one not started by the deadline (the latest start) is not
    run, nor any after it: the report holds the prefix that ran."""
    limits = Limits(wall_s=0.5, cpu_s=0.5)
    cases = [Case(stdin="") for _ in range(12)]
    start = time.monotonic()
    report = bwrap_sandbox.run(py("while True: pass"), cases, limits, start + 0.7)
    assert time.monotonic() - start < 0.7 + 0.5 + 0.5
    assert 0 < len(report.cases) < 12
    assert {c.status for c in report.cases} == {CaseStatus.TIMEOUT}
    everything = bwrap_sandbox.run(py("print(1)"), cases, limits, time.monotonic() + 30)
    assert [c.stdout for c in everything.cases] == ["1\n"] * 12


def test_end_by_cuts_each_case_to_the_time_left(bwrap_sandbox: Sandbox) -> None:
    """Under ``end_by`` every case ends by then, whatever its own limit: a case's wall
    limit is cut to the time left when it starts, and no case starts with less than
    `MIN_CASE_S` left; cases that fit keep their whole limit."""
    limits = Limits(wall_s=5.0, cpu_s=5.0)
    cases = [Case(stdin="") for _ in range(6)]
    start = time.monotonic()
    report = bwrap_sandbox.run(py("while True: pass"), cases, limits, end_by=start + 1.0)
    assert time.monotonic() - start < 1.0 + 0.5
    assert 0 < len(report.cases) < 6
    assert all(c.status is CaseStatus.TIMEOUT and c.wall_s < 1.5 for c in report.cases)
    quick = bwrap_sandbox.run(py("print(1)"), cases, limits, end_by=time.monotonic() + 30)
    assert [c.stdout for c in quick.cases] == ["1\n"] * 6
