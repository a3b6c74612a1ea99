"""The escape and isolation suites once more with the server as an unprivileged user (the
recommended deployment): run as root, this test creates a user and runs them as it; run
unprivileged, the main run already is that case."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO, require

USER = "referee-ci"
SUITES = [
    "tests/sandbox/test_escapes.py",
    "tests/sandbox/sessions/test_session_escapes.py",
    "tests/sandbox/test_linked.py",
    "tests/sandbox/test_identity.py",
    "tests/sandbox/test_leftovers.py",
    "tests/sandbox/test_pyfast.py::test_a_case_finds_nothing_of_earlier_requests_in_its_memory",
]


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        require(shutil.which("useradd") is not None, "useradd (passwd package) is missing")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
            capture_output=True,
            timeout=30,
        )
        return pwd.getpwnam(USER)


# Becomes the user, then runs this interpreter. An interpreter under a home other users
# cannot enter (pyenv under /root) is first bind-mounted where they can, in a mount
# namespace of this command's own: the host's permissions are not touched.
_LAUNCH = """
import os, subprocess, sys
prefix, uid, gid, home = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if not os.access(prefix, os.X_OK, effective_ids=False) or prefix.startswith("/root"):
    view = os.path.join(home, "python")
    os.mkdir(view)
    subprocess.run(["mount", "--bind", prefix, view], check=True)
    prefix = os.environ["PYTHONHOME"] = view
    os.environ["LD_LIBRARY_PATH"] = os.path.join(view, "lib")  # its libpython, by RPATH
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
python = os.path.join(prefix, "bin", os.path.basename(sys.argv[5]))
os.execv(python, [python, *sys.argv[6:]])
"""


def _as_user(user: pwd.struct_passwd, home: Path) -> list[str]:
    """argv that runs ``python ARGS`` as ``user`` (ARGS follow)."""
    require(shutil.which("unshare") is not None, "util-linux unshare is missing")
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        sys.executable,
        "-c",
        _LAUNCH,
        sys.base_prefix,
        str(user.pw_uid),
        str(user.pw_gid),
        str(home),
        sys.executable,
    ]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="unprivileged already: the main run covers it")
def test_the_isolation_suites_hold_when_the_server_is_unprivileged() -> None:
    user = _user()
    home = Path(tempfile.mkdtemp(prefix="referee-ci-home-"))
    os.chown(home, user.pw_uid, user.pw_gid)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "CI": os.environ.get("CI", ""),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    pytest_argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITES]
    try:
        done = subprocess.run(
            [*_as_user(user, home), *pytest_argv],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
