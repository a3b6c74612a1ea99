"""Sessions keep their state between commands, and every way a command can go wrong
leaves the session usable or says, explicitly, that it is lost."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from referee.sandbox.sessions import (
    Launcher,
    SessionBusy,
    SessionFileProblem,
    SessionKind,
    SessionLost,
    SessionSpec,
)

from .conftest import Open


@dataclass(frozen=True)
class Turn:
    code: str
    stdout: str = ""
    display: str | None = None
    exit_code: int | None = 0
    status: str = "ok"
    stdin: str = ""
    ename: str | None = None
    state_lost: bool = False
    timeout_s: float = 5.0


@dataclass(frozen=True)
class Script:
    name: str
    kind: str
    turns: tuple[Turn, ...]


SCRIPTS = [
    Script(
        "python_state_display_and_errors",
        "python",
        (
            Turn("x = 41\nprint('set')", stdout="set\n"),
            Turn("x + 1", display="42"),
            Turn("None"),  # no display for None, as a kernel
            Turn("1 / 0", exit_code=1, ename="ZeroDivisionError"),
            Turn("x", display="41"),  # the exception did not end anything
            Turn("import sys\nsys.exit(3)", exit_code=3),
            Turn("name = input()\nprint(name.upper())", stdin="ada\n", stdout="ADA\n"),
            Turn("import sys\nprint('e', file=sys.stderr)\nx", display="41"),
        ),
    ),
    Script(
        "python_timeout_keeps_the_namespace",
        "python",
        (
            Turn("kept = 'yes'"),
            Turn("while True:\n    pass", status="timeout", exit_code=None, timeout_s=0.5),
            Turn(
                "try:\n    while True: pass\nexcept Exception:\n    pass",
                status="timeout",
                exit_code=None,
                timeout_s=0.5,
            ),
            Turn("import time\ntime.sleep(60)", status="timeout", exit_code=None, timeout_s=0.5),
            Turn("kept", display="'yes'"),
        ),
    ),
    Script(
        "python_files_and_imports_from_the_directory",
        "python",
        (
            Turn("open('helper.py', 'w').write('def f():\\n    return 7\\n')", display="22"),
            Turn("import helper\nhelper.f()", display="7"),
            Turn("import os\nsorted(os.listdir('.'))", display="['__pycache__', 'helper.py']"),
        ),
    ),
    Script(
        "bash_keeps_cwd_env_and_functions",
        "bash",
        (
            Turn('mkdir -p d/e && cd d/e && export GREETING=hi && f() { echo "f:$1"; }'),
            Turn("pwd; echo $GREETING; f 3", stdout="/work/d/e\nhi\nf:3\n"),
            Turn("cat; echo", stdin="from stdin", stdout="from stdin\n"),
            Turn("false", exit_code=1),
            Turn("echo $?", stdout="1\n"),
            Turn("if then", exit_code=2),
            Turn("echo still", stdout="still\n"),
        ),
    ),
    Script(
        "bash_exit_and_stuck_loops_restart_the_shell",
        "bash",
        (
            Turn("cd /tmp; X=1"),
            Turn("exit 4", exit_code=4, state_lost=True),
            Turn('pwd; echo "[$X]"', stdout="/work\n[]\n"),
            Turn("cd /tmp; sleep 60", status="timeout", exit_code=None, timeout_s=0.5),
            Turn("pwd", stdout="/tmp\n"),  # a killed child: the shell itself stayed
            Turn(
                "while :; do :; done",
                status="timeout",
                exit_code=None,
                timeout_s=0.5,
                state_lost=True,
            ),
            Turn("pwd", stdout="/work\n"),
        ),
    ),
    Script(
        "sqlite_keeps_its_database",
        "sqlite",
        (
            Turn("create table t(a integer, b text); insert into t values (1, 'x;y'), (2, NULL)"),
            Turn("select a, b from t order by a", display="1|x;y\n2|"),
            Turn("select nope from t", exit_code=1, ename="OperationalError"),
            Turn("select count(*) from t", display="2"),
            Turn(
                "with recursive c(x) as (select 1 union all select x + 1 from c) "
                "select count(*) from c",
                status="timeout",
                exit_code=None,
                timeout_s=0.5,
            ),
            Turn("insert into t values (3, 'z'); select sum(a) from t", display="6"),
        ),
    ),
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_a_session_keeps_its_state_turn_after_turn(open_session: Open, script: Script) -> None:
    session = open_session(script.kind)
    for turn in script.turns:
        outcome = session.execute(turn.code, stdin=turn.stdin, timeout_s=turn.timeout_s)
        seen = (outcome.status, outcome.exit_code, outcome.state_lost)
        assert seen == (turn.status, turn.exit_code, turn.state_lost), (turn, outcome)
        if turn.stdout:
            assert outcome.stdout == turn.stdout, (turn, outcome)
        shown = outcome.display[0]["text/plain"] if outcome.display else None
        assert shown == turn.display, (turn, outcome)
        assert (outcome.error.ename if outcome.error else None) == turn.ename, (turn, outcome)


def test_fifty_turns_keep_their_state(open_session: Open) -> None:
    session = open_session("python")
    session.execute("total = 0")
    for turn in range(50):
        assert session.execute(f"total += {turn}").exit_code == 0
    assert session.execute("total").display == [{"text/plain": str(sum(range(50)))}]


def test_sql_rows_come_back_structured(open_session: Open) -> None:
    session = open_session("sqlite", database="shop.db")
    session.execute("create table p(name, price); insert into p values ('a', 1.5), ('b', x'00ff')")
    outcome = session.execute("select * from p")
    table = outcome.display[0]["application/json"]
    assert table == {
        "columns": ["name", "price"],
        "rows": [["a", 1.5], ["b", "AP8="]],
        "truncated": False,
    }
    assert "shop.db" in {entry.path for entry in session.files()[0]}


def test_background_processes_do_not_outlive_their_command(open_session: Open) -> None:
    for kind, start, count in [
        (
            "python",
            "import subprocess\nsubprocess.Popen(['sleep', '60'])",
            "import os\nlen([p for p in os.listdir('/proc') if p.isdigit()])",
        ),
        ("bash", "sleep 60 & disown; (setsid sleep 60 &)", "ls /proc | grep -c '^[0-9]'"),
    ]:
        session = open_session(kind)
        assert session.execute(start).status == "ok"
        counted = session.execute(count)
        alive = counted.display[0]["text/plain"] if kind == "python" else counted.stdout.strip()
        # bwrap's init and the agent (python); plus the shell, ls and grep (bash)
        assert int(alive) == (2 if kind == "python" else 5), (kind, counted)


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("python", "raise ValueError('x' * 5_000_000)"),
        (
            "sqlite",
            "with recursive c(x) as (select 1 union all select x + 1 from c "
            "limit 900) select x, printf('%.1000c', 'y') from c",
        ),
    ],
    ids=["huge_exception", "wide_rows"],
)
def test_large_answers_are_cut_not_fatal(open_session: Open, kind: str, code: str) -> None:
    """An exception message or query rows larger than a reply may be are cut to the
    output limit; the session answers and goes on."""
    session = open_session(kind)
    outcome = session.execute(code)
    if kind == "python":
        assert outcome.error is not None and len(outcome.error.evalue) == 64 << 10
    else:
        table = outcome.display[0]["application/json"]
        assert table["truncated"] and 0 < len(table["rows"]) < 900
    assert session.execute("select 1" if kind == "sqlite" else "1").status == "ok"


def test_output_is_cut_and_says_so(open_session: Open) -> None:
    session = open_session("python")
    outcome = session.execute("print('x' * 200_000)")
    assert outcome.truncated and len(outcome.stdout) == 64 << 10
    assert not session.execute("print('short')").truncated


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import os\nos._exit(0)", "ended"),
        (
            "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass",
            "stopped answering",
        ),
        (
            "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except BaseException:\n"
            "        pass",
            "stopped answering",
        ),
        ("x = []\nwhile True:\n    x.append(bytearray(1 << 20))", "memory"),
    ],
    ids=["exit", "ignores_alarm", "swallows_timeout", "memory"],
)
def test_a_session_that_cannot_answer_is_lost_explicitly(
    open_session: Open, code: str, reason: str
) -> None:
    session = open_session("python")
    try:
        outcome = session.execute(code, timeout_s=0.5)
    except SessionLost as exc:
        assert reason in exc.reason
    else:  # no memory cgroup on this host: the address-space limit answers instead
        assert reason == "memory" and outcome.error and outcome.error.ename == "MemoryError"
        return
    assert session.lost is not None
    with pytest.raises(SessionLost, match=reason):
        session.execute("1")


def test_one_request_at_a_time(open_session: Open) -> None:
    session = open_session("python")
    running = threading.Thread(target=session.execute, args=("import time\ntime.sleep(1)",))
    running.start()
    time.sleep(0.3)
    with pytest.raises(SessionBusy):
        session.execute("1")
    running.join()
    assert session.execute("2").display == [{"text/plain": "2"}]


def test_closing_during_a_command_ends_it(open_session: Open) -> None:
    session = open_session("python")
    failures: list[BaseException] = []

    def run() -> None:
        try:
            session.execute("import time\ntime.sleep(30)", timeout_s=30)
        except SessionLost as exc:
            failures.append(exc)

    running = threading.Thread(target=run)
    running.start()
    time.sleep(0.3)
    started = time.monotonic()
    session.close()
    running.join(timeout=5)
    assert not running.is_alive() and time.monotonic() - started < 5
    assert [type(f) for f in failures] == [SessionLost]


def test_files_go_in_and_out(open_session: Open) -> None:
    session = open_session("bash", files={"data/in.txt": "one\n"})
    session.put("data/more.bin", b"\x00\x01")
    assert session.execute("cat data/in.txt; wc -c < data/more.bin").stdout == "one\n2\n"
    session.execute("echo made > out.txt; ln -s /etc/passwd link; ln -s data dirlink")
    assert session.get("out.txt") == b"made\n"
    listed = {entry.path: entry.kind for entry in session.files()[0]}
    assert listed == {
        "data": "directory",
        "data/in.txt": "file",
        "data/more.bin": "file",
        "out.txt": "file",
        "link": "symlink",
        "dirlink": "symlink",
    }
    assert session.snapshot(1 << 20) == {
        "data/in.txt": b"one\n",
        "data/more.bin": b"\x00\x01",
        "out.txt": b"made\n",
    }  # symlinks are not followed


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.get("missing.txt"), "not_found"),
        (lambda s: s.get("data"), "is_directory"),
        (lambda s: s.get("link"), "outside"),
        (lambda s: s.put("link", b"x"), "outside"),
        (lambda s: s.put("x", b"x" * (2 << 20)), "too_large"),
        (lambda s: s.get("big"), "too_large"),
        (lambda s: s.snapshot(1000), "too_large"),
    ],
    ids=[
        "missing",
        "directory",
        "symlink_out",
        "put_through_symlink",
        "put_big",
        "get_big",
        "snapshot_big",
    ],
)
def test_file_problems_are_answered_and_the_session_goes_on(
    open_session: Open, call: object, code: str
) -> None:
    session = open_session("bash")
    session.execute("mkdir data; ln -s /etc/passwd link; head -c 1100000 /dev/zero > big")
    with pytest.raises(SessionFileProblem) as caught:
        call(session)  # type: ignore[operator]
    assert caught.value.code == code
    assert session.execute("echo ok").stdout == "ok\n"


def test_a_full_disk_is_a_file_problem(open_session: Open) -> None:
    session = open_session("python")
    fill = "for n in range(2):\n    open(f'fill{n}', 'wb').write(b'x' * (15 << 19))"
    filled = session.execute(fill)
    assert filled.error is None, filled  # 15 MB of the 16, each file under the 8 MB cap
    with pytest.raises(SessionFileProblem) as caught:
        session.put("more", b"y" * (900 << 10))
        session.put("more2", b"y" * (900 << 10))
    assert caught.value.code == "no_space"


@pytest.mark.parametrize(
    "spec",
    [
        {"files": {"../up": "x"}},
        {"files": {"/abs": "x"}},
        {"files": {"a//b": "x"}},
        {"kind": "sqlite", "database": "../db"},
        {"files": {f"f{n}": "" for n in range(513)}},  # one fd each, all open at once
        {"files": {"big": "x" * (17 << 20)}, "limits": {"disk_mb": 16}},
    ],
)
def test_a_spec_that_can_never_start_is_refused(
    launcher: Launcher, spec: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match=r"^(files|database): "):
        launcher.start(SessionSpec.model_validate({"kind": SessionKind.PYTHON, **spec}))
