"""The escape suite, against sessions: every escape of the one-shot suite run as a
session's command, then what only a long-lived sandbox adds — another session next door,
state kept between commands, an owner that dies. The package's autouse leftover check
runs after each test: nothing of a closed session may remain."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.sandbox import leftovers
from referee.sandbox.sessions import SessionLost

from ..conftest import REPO_ROOT, leftover_cgroups, sandboxed_pids
from ..test_escapes import ESCAPES, Escape
from .conftest import Open


@pytest.mark.parametrize("escape", ESCAPES, ids=lambda e: e.name)
def test_escape_is_contained_in_a_session(open_session: Open, escape: Escape) -> None:
    kind = "python" if escape.language == "python3" else escape.language
    session = open_session(kind)
    try:
        outcome = session.execute(escape.source, timeout_s=2)
    except SessionLost:
        return  # resource bombs may take the session down: said, and nothing escaped
    assert "ESCAPED" not in outcome.stdout, outcome
    # whatever the command did, the session answers the next one (or says it is lost)
    with_lost = session.lost is not None
    if not with_lost:
        probe = "print('alive')" if kind == "python" else "echo alive"
        assert session.execute(probe).stdout == "alive\n"


def test_sessions_cannot_see_or_touch_each_other(open_session: Open) -> None:
    first, second = open_session("python"), open_session("python")
    first.execute(
        "for place in ['/work/secret', '/tmp/secret2', '/dev/shm/secret3']:\n"
        "    open(place, 'w').write('hunter2')"
    )
    seen = second.execute(
        "import os\n"
        "[p for p in ['/work/secret', '/tmp/secret2', '/dev/shm/secret3'] if os.path.exists(p)]"
    )
    assert seen.display == [{"text/plain": "[]"}]
    # its own pid namespace: bwrap's init and its agent, nothing of the first session
    pids = second.execute("import os\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit())")
    assert pids.display == [{"text/plain": "[1, 2]"}]
    second.execute("import os, signal\ntry:\n    os.kill(-1, 9)\nexcept OSError:\n    pass")
    assert first.execute("open('/work/secret').read()").display == [{"text/plain": "'hunter2'"}]


def test_the_host_and_its_files_stay_out_of_reach(open_session: Open) -> None:
    session = open_session("bash")
    outcome = session.execute(
        f"ls {REPO_ROOT} 2>&1; cat /etc/shadow 2>&1; cat /proc/1/environ | tr '\\0' '\\n'; "
        "ls /box; id -u"
    )
    assert "pyproject.toml" not in outcome.stdout
    assert "root:" not in outcome.stdout
    assert "REFEREE" not in outcome.stdout
    assert outcome.stdout.strip().endswith("65534")


def test_the_protocol_pipes_are_not_handed_to_commands(open_session: Open) -> None:
    """What a session starts does not hold the host's pipes: only the agent does (a
    command that forges replies forges only its own session's)."""
    session = open_session("bash")
    # the agent's own fds, for contrast: its protocol pipes are there
    agent = session.execute("ls -l /proc/2/fd").stdout
    assert agent.count("pipe:[") >= 2, agent
    # a command's: its memfd stdio and the directory ls reads, never a pipe
    command = session.execute("ls -l /proc/self/fd").stdout
    assert "pipe:[" not in command, command


_OWNER = """
import json, sys
from referee.sandbox import SandboxSettings
from referee.sandbox.sessions import Launcher, SessionKind, SessionSpec
launcher = Launcher(SandboxSettings(backend="bwrap"))
session = launcher.start(SessionSpec(kind=SessionKind.BASH))
session.execute("sleep 1000 > /dev/null &")
print(json.dumps(session.pids()), flush=True)
sys.stdin.read()
"""


def test_sessions_die_with_their_owner(work_root: Path) -> None:
    """A gateway or worker killed with open sessions takes them along (bwrap's
    die-with-parent), and the next sweep removes their cgroups and directories."""
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "REFEREE_SANDBOX_WORK_ROOT": str(work_root)},
    )
    assert owner.stdout is not None
    pids = json.loads(owner.stdout.readline())
    assert pids, "the owner started no session"
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    leftovers.sweep(work_root)
    assert not list(work_root.glob(f"referee-box-{owner.pid}-*"))
    assert sandboxed_pids() == []
    assert leftover_cgroups() == []


@pytest.mark.parametrize(
    "forged",
    [
        "b'\\xff\\xff\\xff\\xff'",  # a 4 GiB reply announced
        "(lambda body: len(body).to_bytes(4, 'big') + body)(b'[1, 2]')",  # not an object
        "(lambda body: len(body).to_bytes(4, 'big') + body)(b'{\"status\": \"won\"}')",
    ],
    ids=["oversized", "not_an_object", "wrong_shape"],
)
def test_forged_replies_end_only_their_own_session(open_session: Open, forged: str) -> None:
    """The agent's reply pipe is reachable from the session's own code (its number is in
    sys.argv): what it writes there is refused, the session is lost, its neighbour is not."""
    victim, neighbour = open_session("python"), open_session("python")
    neighbour.execute("kept = 1")
    with pytest.raises(SessionLost, match="reply"):
        victim.execute(f"import os, sys, time\nos.write(int(sys.argv[3]), {forged})\ntime.sleep(5)")
    assert neighbour.execute("kept").display == [{"text/plain": "1"}]
