"""The code verifier paces a suite to its item timeout (`SUITE_SHARE`): a program that
loops, in a suite of more cases than fit in the item's time, used to make the item
``timeout`` (no reward, retryable: the commonest wrong program escaped its 0). Cases that
could not end in time are not started; they score 0, flagged ``time_budget``.

The executor's item timeout reaches verifiers through `item_timeout_s`, which the pool's
workers set for every message; here it is set directly, in the test's own thread."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from referee.sandbox import CaseOutcome, CaseStatus, Limits, Sandbox, SandboxSettings
from referee.verifiers import Item, Registry, Result, Status, score_items
from referee.verifiers.base import item_timeout_s
from referee.verifiers.code.checker import Checker, Judged
from tests.verifiers.code.conftest import code_item, fenced

SUITE = {"inputs": [f"{i}\n" for i in range(12)], "outputs": [f"{i}\n" for i in range(12)]}
ITEM_TIMEOUT_S = 2.0


@pytest.fixture
def paced() -> Iterator[None]:
    token = item_timeout_s.set(ITEM_TIMEOUT_S)
    yield
    item_timeout_s.reset(token)


def score(registry: Registry, program: str) -> Result:
    item = code_item(fenced(program), SUITE, time_limit_s=0.3)
    [result] = score_items([item], registry)
    return result


@pytest.mark.usefixtures("paced")
@pytest.mark.parametrize("program", ["while True: pass", "import time\ntime.sleep(60)"])
def test_a_program_that_never_ends_fails_in_time(registry: Registry, program: str) -> None:
    start = time.monotonic()
    result = score(registry, program)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert "time_budget" in result.details["flags"]
    assert result.details["counts"]["skipped"] > 0
    assert result.details["counts"]["timeout"] > 0


@pytest.mark.usefixtures("paced")
def test_a_right_program_runs_every_case_within_the_pace(registry: Registry) -> None:
    result = score(registry, "print(input())")
    assert (result.status, result.reward) == (Status.OK, 1.0)
    assert "time_budget" not in result.details.get("flags", ())


def test_limits_that_contradict_the_item_timeout_are_not_paced(registry: Registry) -> None:
    """A case limit past the share of the item timeout: pacing would run nothing and
    score a program it never ran; the item timeout answers instead (in a pool). Here
    0.3 s a case against 0.8 of a 0.3 s item timeout."""
    token = item_timeout_s.set(0.3)
    try:
        result = score(registry, "print(input())")
    finally:
        item_timeout_s.reset(token)
    assert (result.status, result.reward) == (Status.OK, 1.0)


def test_a_library_call_runs_every_case(registry: Registry) -> None:
    """No executor, no item timeout: nothing is paced (12 cases time out, none skipped)."""
    result = score(registry, "while True: pass")
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["counts"] == {"timeout": 12}


@pytest.mark.usefixtures("paced")
def test_being_slow_earns_nothing_the_cases_that_ran_did_not(registry: Registry) -> None:
    """A program right on its first three cases that loops on the rest scores 3 of 12,
    however many of the looping cases pacing left unstarted (it depends on the machine's
    speed): those count as failed, never as passed or left out of the total."""
    result = score(registry, "x = int(input())\nwhile x >= 3: pass\nprint(x)")
    assert (result.status, result.reward) == (Status.OK, 3 / 12)
    assert result.details["passed"] == 3 and result.details["total"] == 12


# Each constexpr variable runs to GCC's operation limit (about 6 s here), and GCC goes
# on after each error: the build takes 6 s a variable.
BUILDS_FOR_MINUTES = """
constexpr long long f(long long k) {
  long long s = 0;
  for (long long i = 0; i < 2000; ++i) for (long long j = 0; j < 2000; ++j) s += i ^ j ^ k;
  return s;
}
constexpr long long v1 = f(1), v2 = f(2), v3 = f(3), v4 = f(4), v5 = f(5), v6 = f(6);
#include <cstdio>
int main() { long long x; if (scanf("%lld", &x) == 1) printf("%lld\\n", x + (v1 & 0)); }
"""


@pytest.mark.usefixtures("paced")
def test_a_program_that_builds_for_minutes_fails_in_time(registry: Registry) -> None:
    item = code_item(fenced(BUILDS_FOR_MINUTES, "cpp"), SUITE, time_limit_s=0.3, language="cpp")
    start = time.monotonic()
    [result] = score_items([item], registry)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["flags"] == ["compile_timeout"]
    assert result.details["message"] == "the program's build ran out of time"


@pytest.mark.usefixtures("paced")
def test_a_program_that_builds_for_minutes_fails_its_cpp_asserts_in_time(
    registry: Registry,
) -> None:
    """C++ assert tests build the program and the test apart (two linked sandboxes):
    the program's build is cut at the item's latest start as a lone program's is."""
    program = BUILDS_FOR_MINUTES.replace("int main()", "int demo()")
    test = {"test": "int main() { assert(f(0) == f(0)); }"}
    item = code_item(fenced(program, "cpp"), test, time_limit_s=0.3, language="cpp")
    start = time.monotonic()
    [result] = score_items([item], registry)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["flags"] == ["compile_timeout"]


@pytest.mark.usefixtures("paced")
def test_a_function_that_never_returns_fails_its_linked_asserts_in_time(
    registry: Registry,
) -> None:
    """Assert tests run in a second sandbox linked to the program's; 12 of them at 0.3 s
    each outlast the 2 s item timeout unless paced like the other suites."""
    asserts = {"tests": [f"assert f({i}) == {i}" for i in range(12)]}
    item = code_item(fenced("def f(x):\n    while True: pass"), asserts, time_limit_s=0.3)
    start = time.monotonic()
    [result] = score_items([item], registry)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert "time_budget" in result.details["flags"]


# A sloppy special judge: it never ends on the output "hang" (each run has a 5 s limit).
HANGS_ON_HANG = """import sys, time
inp, exp, act = (open(p).read() for p in sys.argv[1:4])
while act.strip() == "hang":
    pass
if act.strip() == "slow":
    time.sleep(0.9)
time.sleep(float(inp.split()[1]) if len(inp.split()) > 1 else 0)
print(1.0 if act.split() == exp.split() else 0.0)
"""


def checked_item(program: str, delay: float = 0.0) -> Item:
    """12 cases judged by `HANGS_ON_HANG`, which sleeps ``delay`` on each."""
    ref = {
        "inputs": [f"{i} {delay}\n" for i in range(12)],
        "outputs": [f"{i}\n" for i in range(12)],
        "checker": HANGS_ON_HANG,
    }
    return code_item(fenced(program), ref, time_limit_s=0.3)


@pytest.mark.usefixtures("paced")
def test_output_on_which_the_checker_never_ends_fails_in_time(registry: Registry) -> None:
    """Twelve checker runs of 5 s each took a minute: a response could make its item
    ``timeout`` (masked, retried) through a sloppy checker. Runs are now cut at the
    item's checking time; the checker reads the expected output, so the output broke it:
    the cases it hung on score 0 (``checker_timeout``), the ones it had no time left for
    too (``time_budget``)."""
    start = time.monotonic()
    [result] = score_items([checked_item("input()\nprint('hang')")], registry)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert {"checker_timeout", "time_budget"} <= set(result.details["flags"])


@pytest.mark.usefixtures("paced")
def test_output_that_slows_the_checker_fails_in_time(registry: Registry) -> None:
    """Output on which the checker takes 0.9 s, inside its limit: it cannot judge 12
    cases in the item's time, yet it reads the expected outputs at once. The last runs
    started are cut to the time left and time out, while the expected outputs are read
    in less: the output is slow, not the checker. The cases it had no time for score 0,
    not a timeout."""
    start = time.monotonic()
    [result] = score_items([checked_item("input()\nprint('slow')")], registry)
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert "time_budget" in result.details["flags"]


@pytest.mark.usefixtures("paced")
def test_a_slow_checker_never_scores_a_right_program_0(registry: Registry) -> None:
    """A checker that takes 0.5 s a case cannot judge 12 cases within a 2 s item: the
    item is a timeout (no reward), never a 0 for a program that is right."""
    [result] = score_items([checked_item("print(input().split()[0])", 0.5)], registry)
    assert result.status == Status.TIMEOUT, result


@pytest.mark.usefixtures("paced")
def test_a_right_program_is_judged_within_the_pace(registry: Registry) -> None:
    [result] = score_items([checked_item("print(input().split()[0])")], registry)
    assert (result.status, result.reward) == (Status.OK, 1.0), result


def test_a_checker_slowed_by_the_output_is_told_from_a_slow_checker() -> None:
    """When no run of the first pass ran out of time (the last one started finished just
    in time, a matter of timing on a loaded machine), the slowest case is read again with
    its output and with the expected one, side by side: the expected one read in under
    half the time, the output was what was slow (its unjudged cases score 0); read as
    slowly, the checker is slow (a timeout). The first pass's own time does not count:
    a run slowed by the machine's load would blame a right output."""
    with Sandbox(SandboxSettings()) as sandbox:
        checker = Checker(sandbox, HANGS_ON_HANG, "python3", Limits(wall_s=5, cpu_s=5))
        first_pass = [CaseOutcome(status=CaseStatus.OK, stdout="0.0\n", wall_s=10.0)]
        # the checker sleeps 0.9 s on "slow" only
        assert checker._slowed([Judged("0 0\n", "0\n", "slow\n")], first_pass, None)
        # it sleeps 1 s on every case, whatever it reads: slow, not slowed
        assert not checker._slowed([Judged("0 1.0\n", "0\n", "slow\n")], first_pass, None)
        # a right output, written differently, whose first run the load slowed
        assert not checker._slowed([Judged("0 0\n", "0\n", "0 \n")], first_pass, None)
        # the expected output itself is never to blame
        assert not checker._slowed([Judged("0 0\n", "0\n", "0\n")], first_pass, None)


@pytest.mark.parametrize(
    ("output_s", "expected_s", "slowed"),
    [
        (0.012, 0.005, False),  # twice as long, by chance: 7 ms says nothing
        (0.9, 0.02, True),
        (0.9, 0.6, False),  # under twice as long
    ],
)
def test_only_a_clear_gap_blames_the_output(
    monkeypatch: pytest.MonkeyPatch, output_s: float, expected_s: float, slowed: bool
) -> None:
    """The side-by-side runs, timed: the output is blamed when the expected one is read
    in under half its time *and* at least `SLOWED_GAP_S` sooner (a right output read in
    12 ms beside the expected one in 5 ms was blamed once under the full suite)."""
    times = [
        CaseOutcome(status=CaseStatus.OK, stdout="0.0\n", wall_s=output_s),
        CaseOutcome(status=CaseStatus.OK, stdout="1.0\n", wall_s=expected_s),
    ]
    checker = Checker(None, HANGS_ON_HANG, "python3", Limits(wall_s=5, cpu_s=5))  # type: ignore[arg-type]
    monkeypatch.setattr(Checker, "_run", lambda self, cases, end_by: times)
    first_pass = [CaseOutcome(status=CaseStatus.OK, stdout="0.0\n", wall_s=1.0)]
    assert checker._slowed([Judged("0 0\n", "0\n", "1\n")], first_pass, None) is slowed
