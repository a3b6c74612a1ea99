"""The state verifier: a checker program judges files, through the real sandbox. Table
of cases, then the attacks a policy that controls the judged files can try."""

from __future__ import annotations

import base64
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from referee.verifiers import Result, Status
from referee.verifiers.base import item_timeout_s


def encoded(files: dict[str, bytes | str]) -> dict[str, str]:
    return {
        name: base64.b64encode(data.encode() if isinstance(data, str) else data).decode()
        for name, data in files.items()
    }


def database(sql: str) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "db"
        with sqlite3.connect(path) as db:
            db.executescript(sql)
        db.close()
        return path.read_bytes()


ANSWER_IS_42 = "import sys\nsys.exit(0 if open('answer.txt').read().strip() == '42' else 1)"
ROWS = (
    "import sqlite3\n"
    "n = sqlite3.connect('app.db').execute('select count(*) from users').fetchone()[0]\n"
    "raise SystemExit(0 if n == 2 else 1)"
)
FRACTION = (
    "import os\n"
    "wanted = ['a.txt', 'b.txt', 'c.txt', 'd.txt']\n"
    "print(sum(os.path.exists(w) for w in wanted) / len(wanted))"
)
BASH = {"language": "bash", "check": "grep -qx done status.txt"}
NESTED = "import sys\nsys.exit(open('out/deep/answer.txt').read() != '42')"
USERS = "create table users(n); insert into users values (1)"
USER_SITE = ".local/lib/python3.11/site-packages"

CASES: list[tuple[str, dict[str, bytes | str], Any, dict[str, Any], float]] = [
    # (name, files, reference, params, reward)
    ("right_answer", {"answer.txt": "42\n"}, ANSWER_IS_42, {}, 1.0),
    ("wrong_answer", {"answer.txt": "41\n"}, ANSWER_IS_42, {}, 0.0),
    ("missing_file", {}, ANSWER_IS_42, {}, 0.0),  # the checker's exception: exit 1
    ("database_state", {"app.db": database(USERS + ", (2);")}, ROWS, {}, 1.0),
    ("database_wrong", {"app.db": database(USERS + ";")}, ROWS, {}, 0.0),
    ("partial", {"a.txt": "", "c.txt": ""}, FRACTION, {"partial": True}, 0.5),
    ("bash_checker", {"status.txt": "done\n"}, BASH, {}, 1.0),
    ("nested_paths", {"out/deep/answer.txt": "42"}, NESTED, {}, 1.0),
]


@pytest.mark.parametrize(
    ("files", "reference", "params", "reward"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_state_cases(score, files, reference, params, reward) -> None:  # type: ignore[no-untyped-def]
    result: Result = score("state", "", reference, files=encoded(files), **params)
    assert result.status == Status.OK, result.error
    assert result.reward == reward, result.details


ATTACKS: list[tuple[str, dict[str, bytes | str]]] = [
    # modules the checker imports, placed where a careless interpreter would look
    ("shadow_stdlib", {"sys.py": "raise SystemExit(0)", "os.py": "raise SystemExit(0)"}),
    ("sitecustomize", {"sitecustomize.py": "import os; os._exit(0)"}),
    ("user_site", {f"{USER_SITE}/usercustomize.py": "import os; os._exit(0)"}),
    ("pth_file", {f"{USER_SITE}/x.pth": "import os; os._exit(0)"}),
    # the checker's own file, and what the sandbox mounts read-only
    ("overwrite_checker", {"main.py": "raise SystemExit(0)", "../box/main.py": "x"}),
]


@pytest.mark.parametrize(("name", "files"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_judged_files_cannot_take_over_the_checker(score, name, files) -> None:  # type: ignore[no-untyped-def]
    """The checker says 0 (no answer.txt); files that try to make it exit 0 instead must
    not run. A path out of the directory is refused outright."""
    result: Result = score("state", "", ANSWER_IS_42, files=encoded(files))
    if name == "overwrite_checker":
        assert result.status == Status.INVALID and result.error is not None
        assert "relative path" in result.error.message
        return
    assert (result.status, result.reward) == (Status.OK, 0.0), result


def test_one_state_cannot_pass_two_contradictory_checks(score) -> None:  # type: ignore[no-untyped-def]
    """The invariant: a fixed set of files passes ``answer == 42`` or ``answer != 42``,
    never both."""
    negated = "import sys\nsys.exit(1 if open('answer.txt').read().strip() == '42' else 0)"
    for answer in ["42", "41", "", "42\n42", "\x00"]:
        files = encoded({"answer.txt": answer})
        rewards = [
            score("state", "", check, files=files).reward for check in (ANSWER_IS_42, negated)
        ]
        assert sorted(rewards) == [0.0, 1.0], (answer, rewards)


@pytest.mark.parametrize(
    ("reference", "params", "status", "message"),
    [
        ("print('no number')", {"partial": True}, Status.INVALID, "reward in [0, 1]"),
        ("print(2.5)", {"partial": True}, Status.INVALID, "reward in [0, 1]"),
        ("print(float('nan'))", {"partial": True}, Status.INVALID, "reward in [0, 1]"),
        ({"language": "cpp", "check": "int main( {"}, {}, Status.INVALID, "does not compile"),
        ({"language": "cobol", "check": "x"}, {}, Status.INVALID, "unknown language"),
        ("import time\ntime.sleep(30)", {"time_limit_s": 0.5}, Status.TIMEOUT, "longer than"),
        (ANSWER_IS_42, {"files": {"a.txt": "%%%"}}, Status.INVALID, "not base64"),
        (ANSWER_IS_42, {"files": {"/etc/passwd": ""}}, Status.INVALID, "relative path"),
        (ANSWER_IS_42, {"files": {f"f{n}": "" for n in range(513)}}, Status.INVALID, "512"),
        (None, {}, Status.INVALID, "reference"),
    ],
    ids=[
        "no_number",
        "over_one",
        "nan",
        "no_compile",
        "language",
        "timeout",
        "base64",
        "absolute",
        "too_many_files",
        "no_reference",
    ],
)
def test_bad_items_get_a_clear_status(score, reference, params, status, message) -> None:  # type: ignore[no-untyped-def]
    result: Result = score("state", "", reference, **params)
    assert result.status == status, result
    assert result.error is not None and message in result.error.message, result.error


# The judged files are what the policy wrote: files that break a working checker (one
# that gives a verdict on an empty directory) fail; a status other than a score is what a
# trainer masks or retries, so a state must not be able to buy one.
SCALED = "print(float(open('answer.txt').read()) / 100)"
LOOPS = "while open('answer.txt').read() == 'loop':\n    pass\nprint(1.0)"


@pytest.mark.parametrize(
    ("check", "answer", "flag"),
    [
        (SCALED, "nan", "checker_failed"),  # not a reward
        (SCALED, "500", "checker_failed"),  # out of [0, 1]
        (SCALED, "50", None),  # the checker's own verdict: 0.5
        ("print('no number')", "50", "invalid"),  # garbage for every state: the checker's
    ],
)
def test_files_that_break_a_working_checker_fail(score, check: str, answer: str, flag) -> None:  # type: ignore[no-untyped-def]
    result: Result = score("state", "", check, files=encoded({"answer.txt": answer}), partial=True)
    if flag == "invalid":
        assert result.status == Status.INVALID and "reward in [0, 1]" in result.error.message  # type: ignore[union-attr]
    elif flag is None:
        assert (result.status, result.reward) == (Status.OK, 0.5)
    else:
        assert (result.status, result.reward) == (Status.OK, 0.0), result.error
        assert result.details["flags"] == [flag]


def test_files_that_make_a_checker_loop_fail_in_time(score) -> None:  # type: ignore[no-untyped-def]
    token = item_timeout_s.set(3.0)
    try:
        start = time.monotonic()
        looping = encoded({"answer.txt": "loop"})
        result: Result = score("state", "", LOOPS, files=looping, time_limit_s=1)
        assert time.monotonic() - start < 3.0
        assert (result.status, result.reward) == (Status.OK, 0.0), result.error
        assert result.details["flags"] == ["checker_timeout"]
        assert score("state", "", LOOPS, files=encoded({"answer.txt": "no"})).reward == 1.0
        # At the default limit (10 s) the first run is cut to 0.7 of 0.8 of the item
        # timeout, which leaves the empty directory the rest (it was timeout). At 3 s
        # that rest (0.72 s, less the first run's kill) fell under `MIN_RERUN_S` on a
        # loaded CI machine: this part runs at 6 s.
        item_timeout_s.set(6.0)
        start = time.monotonic()
        placed = score("state", "", LOOPS, files=looping)
        assert (placed.status, placed.reward) == (Status.OK, 0.0), placed.error
        assert placed.details["flags"] == ["checker_timeout"]
        assert time.monotonic() - start < 6.0
        item_timeout_s.set(3.0)
        slow = "import time\ntime.sleep(30)"
        timed_out = score("state", "", slow, files=encoded({"answer.txt": "no"}))
        assert timed_out.status == Status.TIMEOUT  # slow on any state: the checker's
    finally:
        item_timeout_s.reset(token)
